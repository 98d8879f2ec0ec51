import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CloudWatchClient, GetMetricDataCommand, ListMetricsCommand, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cloudWatchReport } from '../../../lib/aws/metrics'
import type { CloudWatchFunctionService } from '../../../lib/core/metrics/report'
import type { FunctionInventory } from '../../../lib/core/rehearse/inventory'
import { CLOUDWATCH_BODY_LIMIT, lambdaMetricsFrom, startCloudWatchStandIn, type CloudWatchStandIn, type MetricQuery } from '../../../lib/local/rehearse/cloudwatch'
import { FunctionHost } from '../../../lib/local/rehearse/functions'

const client = (url: string) => new CloudWatchClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 })

const END = new Date('2026-11-29T08:00:00Z')
const START = new Date(END.getTime() - 3600_000)
const stat = (name: string, fn = 'floe-fn') => ({ Metric: { Namespace: 'AWS/Lambda', MetricName: name, Dimensions: [{ Name: 'FunctionName', Value: fn }] }, Period: 300, Stat: 'Sum' })

describe('CloudWatch stand-in, with the SDK client', () => {
  let standIn: CloudWatchStandIn
  const seen: MetricQuery[] = []
  beforeAll(async () => {
    standIn = await startCloudWatchStandIn({
      metrics: (q) => {
        seen.push(q)
        if (q.metricName !== 'Invocations') return { timestamps: [], values: [] }
        return { timestamps: [new Date(END.getTime() - 600_000), new Date(END.getTime() - 300_000)], values: [4, 7] }
      },
    })
  })
  afterAll(() => standIn?.close())

  it('answers GetMetricData: every query Complete, with its Id, its Label, the port\'s data points newest first', async () => {
    const out = await client(standIn.url).send(new GetMetricDataCommand({
      StartTime: START, EndTime: END,
      MetricDataQueries: [{ Id: 'inv', MetricStat: stat('Invocations') }, { Id: 'err', Label: 'errors', MetricStat: stat('Errors') }, { Id: 'hidden', MetricStat: stat('Throttles'), ReturnData: false }],
    }))
    expect(out.MetricDataResults).toEqual([
      { Id: 'inv', Label: 'Invocations', StatusCode: 'Complete', Timestamps: [new Date(END.getTime() - 300_000), new Date(END.getTime() - 600_000)], Values: [7, 4] },
      { Id: 'err', Label: 'errors', StatusCode: 'Complete', Timestamps: [], Values: [] },
    ])
    expect(out.NextToken).toBeUndefined()
    const q = seen.find((x) => x.id === 'inv')!
    expect(q).toMatchObject({ namespace: 'AWS/Lambda', metricName: 'Invocations', dimensions: [{ name: 'FunctionName', value: 'floe-fn' }], period: 300, stat: 'Sum' })
    expect([q.startTime, q.endTime]).toEqual([START, END])
  })

  it('pages past MaxDatapoints with NextToken (the query cut off is PartialData)', async () => {
    const cw = client(standIn.url)
    const first = await cw.send(new GetMetricDataCommand({ StartTime: START, EndTime: END, MaxDatapoints: 1, ScanBy: 'TimestampAscending', MetricDataQueries: [{ Id: 'inv', MetricStat: stat('Invocations') }] }))
    expect(first.MetricDataResults).toEqual([{ Id: 'inv', Label: 'Invocations', StatusCode: 'PartialData', Timestamps: [new Date(END.getTime() - 600_000)], Values: [4] }])
    expect(first.NextToken).toBeTruthy()
    const second = await cw.send(new GetMetricDataCommand({ StartTime: START, EndTime: END, MaxDatapoints: 1, ScanBy: 'TimestampAscending', NextToken: first.NextToken, MetricDataQueries: [{ Id: 'inv', MetricStat: stat('Invocations') }] }))
    expect(second.MetricDataResults).toEqual([{ Id: 'inv', Label: 'Invocations', StatusCode: 'Complete', Timestamps: [new Date(END.getTime() - 300_000)], Values: [7] }])
    expect(second.NextToken).toBeUndefined()
  })

  it('refuses more than 500 queries as CloudWatch does (ValidationError)', async () => {
    const queries = Array.from({ length: 501 }, (_, i) => ({ Id: `q${i}`, MetricStat: stat('Invocations') }))
    const err = await client(standIn.url).send(new GetMetricDataCommand({ StartTime: START, EndTime: END, MetricDataQueries: queries })).then(() => undefined, (e: unknown) => e as { name: string; Code?: string; $metadata: { httpStatusCode?: number }; message: string })
    expect(err?.name).toBe('ValidationException')
    expect(err?.Code).toBe('ValidationError')
    expect(err?.$metadata.httpStatusCode).toBe(400)
    expect(err?.message).toMatch(/less than or equal to 500/)
  })

  it('accepts PutMetricData and lists no metrics', async () => {
    const cw = client(standIn.url)
    const put = await cw.send(new PutMetricDataCommand({ Namespace: 'Floe/Test', MetricData: [{ MetricName: 'm', Value: 1, Timestamp: END }] }))
    expect(put.$metadata.httpStatusCode).toBe(200)
    const list = await cw.send(new ListMetricsCommand({ Namespace: 'AWS/Lambda' }))
    expect(list.Metrics ?? []).toEqual([])
  })

  it('answers any other operation with UnknownOperationException (400)', async () => {
    const { DescribeAlarmsCommand } = await import('@aws-sdk/client-cloudwatch')
    const err = await client(standIn.url).send(new DescribeAlarmsCommand({})).then(() => undefined, (e: unknown) => e as { name: string; $metadata: { httpStatusCode?: number } })
    expect(err?.name).toBe('UnknownOperationException')
    expect(err?.$metadata.httpStatusCode).toBe(400)
  })

  it('refuses a body over 1 MiB with 413', async () => {
    const status = (body: Buffer, declare: boolean) => new Promise<number>((resolve, reject) => {
      const u = new URL(standIn.url)
      const req = request({ host: u.hostname, port: u.port, method: 'POST', headers: { 'x-amz-target': 'GraniteServiceVersion20100801.PutMetricData', 'content-type': 'application/x-amz-json-1.0', ...(declare ? { 'content-length': body.length } : {}) } }, (res) => { res.resume(); resolve(res.statusCode!) })
      req.on('error', reject)
      req.end(body)
    })
    const big = Buffer.alloc(CLOUDWATCH_BODY_LIMIT + 1, 0x20)
    expect(await status(big, true)).toBe(413)
    expect(await status(big, false)).toBe(413) // chunked, no length declared
    expect(await status(Buffer.from('{}'), true)).toBe(200)
  })
})

/**
 * The rehearsal's own counts through the stand-in: a function run by the
 * function host from a bundle, invoked 3 times (one of them failing), read
 * back by the metrics function's code (`cloudWatchReport`) over the SDK.
 */
describe('CloudWatch stand-in fed by the function host', { timeout: 60_000 }, () => {
  let dir: string
  let host: FunctionHost
  let standIn: CloudWatchStandIn
  const fn: FunctionInventory = {
    stack: 'Rehearsal', logicalId: 'CollectorFunction1A2B', name: 'Rehearsal-CollectorFunction1A2B-XYZ', arn: 'arn:aws:lambda:us-east-1:000000000000:function:Rehearsal-CollectorFunction1A2B-XYZ',
    handler: 'index.handler', runtime: 'nodejs22.x', memoryMb: 128, timeoutSeconds: 10, assetPath: 'asset.collector', environment: {}, triggers: [], routes: [], problems: [],
  }
  const other: FunctionInventory = { ...fn, logicalId: 'EnrichFunction3C4D', name: 'Rehearsal-EnrichFunction3C4D-XYZ', arn: `${fn.arn}-enrich` }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-cloudwatch-'))
    mkdirSync(join(dir, 'asset.collector'))
    writeFileSync(join(dir, 'asset.collector', 'index.mjs'), "export const handler = async (e) => { if (e.fail) throw new Error('asked to fail'); return { statusCode: 200 } }\n")
    host = new FunctionHost([fn, other], { assemblyDir: dir, credentials: () => ({ accessKeyId: 'test', secretAccessKey: 'test' }), endpoints: {} })
    standIn = await startCloudWatchStandIn({ metrics: lambdaMetricsFrom(() => host.report(), [fn, other]) })
  })
  afterAll(async () => {
    await host?.stop()
    await standIn?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a function invoked 3 times shows 3 invocations (and its 1 error) in the metrics report', async () => {
    for (const event of [{}, {}, { fail: true }]) await host.invoke(fn.logicalId, event)
    expect(host.report().find((c) => c.logicalId === fn.logicalId)).toMatchObject({ invocations: 3, errors: 1 })
    const report = await cloudWatchReport({
      client: client(standIn.url),
      targets: { functions: { collector: fn.name, enrich: other.name }, streams: {} },
      now: new Date(),
    })
    const collector = report.services.collector as CloudWatchFunctionService
    expect(collector.functionNames).toEqual({ collector: fn.name })
    for (const w of ['5m', '1h'] as const) {
      expect(collector.windows[w]).toMatchObject({ invocations: 3, errors: 1, throttles: 0 })
    }
    const enrich = report.services.enrich as CloudWatchFunctionService
    expect(enrich.windows['5m']).toMatchObject({ invocations: 0, errors: 0 })
  })
})
