/**
 * The metrics function's CloudWatch path. There is no CloudWatch server to run
 * locally, so GetMetricData is answered by a stub client that records the
 * requests and answers as CloudWatch does (data points per period, newest
 * first, in pages); the CDK template is checked for what the function needs
 * on AWS (the names of the functions and streams, the IAM permission).
 */
import { GetMetricDataCommand, type GetMetricDataCommandInput, type MetricDataResult } from '@aws-sdk/client-cloudwatch'
import { describe, expect, it } from 'vitest'
import { cloudWatchReport, type MetricDataClient } from '../../../lib/aws/metrics'
import { METRICS_TARGETS_ENV, targetsFromEnv, type MetricsTargets } from '../../../lib/core/metrics/cloudwatch'
import { toPrometheus } from '../../../lib/core/metrics/prometheus'
import type { CloudWatchFunctionService } from '../../../lib/core/metrics/report'
import { functions } from '../../../lib/infra/functions'
import { logicalId } from '../../../lib/infra/stacks'
import { resourcesNamed, synthTemplates } from '../../support/synth'
import { parseExposition } from '../../unit/metrics/exposition'

const NOW = new Date('2025-06-01T12:34:56.789Z')
const END = new Date('2025-06-01T12:34:00.000Z')
const START = new Date('2025-06-01T11:34:00.000Z')

const env = {
  [METRICS_TARGETS_ENV]: JSON.stringify({
    self: 'metrics',
    functions: { collector: 'FloeApp-Collector-1', enrich: 'FloeApp-Enrich-2', searchLoader: 'FloeApp-SearchLoader-3', health: 'FloeApp-Health-4' },
    streams: { raw: 'FloeData-Raw-1', bad: 'FloeData-Bad-2' },
  } satisfies MetricsTargets),
  AWS_LAMBDA_FUNCTION_NAME: 'FloeApp-Metrics-5',
}

/**
 * What CloudWatch holds in the stub: per physical name, metric and statistic,
 * the value of the hour and of each 5-minute period (newest first). Anything
 * else has no data points.
 */
const data: Record<string, { hour: number; fiveMinutes: number[] }> = {
  'FloeApp-Collector-1|Invocations|Sum': { hour: 120, fiveMinutes: [7, 30, 20] },
  'FloeApp-Collector-1|Errors|Sum': { hour: 2, fiveMinutes: [0, 1, 1] },
  'FloeApp-Collector-1|Duration|Sum': { hour: 2400, fiveMinutes: [140] },
  'FloeApp-Collector-1|Duration|Average': { hour: 20, fiveMinutes: [20] },
  'FloeApp-Collector-1|Duration|p95': { hour: 55.5, fiveMinutes: [41.25] },
  'FloeApp-Collector-1|Duration|Maximum': { hour: 120, fiveMinutes: [60] },
  'FloeApp-Collector-1|ConcurrentExecutions|Maximum': { hour: 4, fiveMinutes: [2] },
  'FloeApp-SearchLoader-3|Invocations|Sum': { hour: 50, fiveMinutes: [5] },
  'FloeApp-SearchLoader-3|IteratorAge|Maximum': { hour: 1500, fiveMinutes: [250] },
  'FloeApp-Metrics-5|Invocations|Sum': { hour: 3, fiveMinutes: [1] },
  'FloeData-Raw-1|IncomingRecords|Sum': { hour: 100, fiveMinutes: [9, 50] },
  'FloeData-Raw-1|IncomingBytes|Sum': { hour: 64000, fiveMinutes: [5000] },
}

/** A GetMetricData stand-in: answers every query from `data`, in pages of `pageSize` results. */
function stubClient(pageSize = 25): MetricDataClient & { inputs: GetMetricDataCommandInput[] } {
  const inputs: GetMetricDataCommandInput[] = []
  return {
    inputs,
    async send(command: GetMetricDataCommand) {
      expect(command).toBeInstanceOf(GetMetricDataCommand)
      const input = command.input
      inputs.push(input)
      const from = Number(input.NextToken ?? 0)
      const page = input.MetricDataQueries!.slice(from, from + pageSize)
      const results: MetricDataResult[] = page.map((q) => {
        const m = q.MetricStat!
        const d = data[`${m.Metric!.Dimensions![0]!.Value}|${m.Metric!.MetricName}|${m.Stat}`]
        if (!d) return { Id: q.Id, Timestamps: [], Values: [], StatusCode: 'Complete' }
        if (m.Period === 3600) return { Id: q.Id, Timestamps: [input.StartTime!], Values: [d.hour], StatusCode: 'Complete' }
        const ts = d.fiveMinutes.map((_, i) => new Date(input.EndTime!.getTime() - (i + 1) * 300_000))
        return { Id: q.Id, Timestamps: ts, Values: d.fiveMinutes, StatusCode: 'Complete' }
      })
      const next = from + pageSize < input.MetricDataQueries!.length ? String(from + pageSize) : undefined
      return { MetricDataResults: results, NextToken: next }
    },
  }
}

describe('the CloudWatch request', () => {
  it('asks for both windows in one request: Lambda metrics per function, Kinesis metrics per stream, over the last hour to the minute', async () => {
    const client = stubClient(1000)
    await cloudWatchReport({ client, targets: targetsFromEnv(env), now: NOW })
    expect(client.inputs).toHaveLength(1)
    const input = client.inputs[0]!
    expect(input.StartTime).toEqual(START)
    expect(input.EndTime).toEqual(END)
    const queries = input.MetricDataQueries!
    // 5 functions (with the metrics function itself) × 9 + 2 streams × 2, for each of the 2 windows
    expect(queries).toHaveLength(2 * (5 * 9 + 2 * 2))
    expect(new Set(queries.map((q) => q.Id)).size).toBe(queries.length)
    for (const q of queries) {
      expect(q.Id).toMatch(/^[a-z][a-zA-Z0-9_]*$/)
      expect([300, 3600]).toContain(q.MetricStat!.Period)
      expect(q.ReturnData).toBe(true)
    }
    const lambda = queries.filter((q) => q.MetricStat!.Metric!.Namespace === 'AWS/Lambda')
    const names = new Set(lambda.map((q) => q.MetricStat!.Metric!.Dimensions![0]!.Value))
    expect([...names].sort()).toEqual(['FloeApp-Collector-1', 'FloeApp-Enrich-2', 'FloeApp-Health-4', 'FloeApp-Metrics-5', 'FloeApp-SearchLoader-3'])
    expect(new Set(lambda.map((q) => q.MetricStat!.Metric!.Dimensions![0]!.Name))).toEqual(new Set(['FunctionName']))
    const collector = lambda.filter((q) => q.MetricStat!.Metric!.Dimensions![0]!.Value === 'FloeApp-Collector-1' && q.MetricStat!.Period === 300)
    expect(collector.map((q) => `${q.MetricStat!.Metric!.MetricName}:${q.MetricStat!.Stat}`).sort()).toEqual(
      ['ConcurrentExecutions:Maximum', 'Duration:Average', 'Duration:Maximum', 'Duration:Sum', 'Duration:p95', 'Errors:Sum', 'Invocations:Sum', 'IteratorAge:Maximum', 'Throttles:Sum'].sort(),
    )
    const kinesis = queries.filter((q) => q.MetricStat!.Metric!.Namespace === 'AWS/Kinesis')
    expect(kinesis.map((q) => `${q.MetricStat!.Metric!.Dimensions![0]!.Name}=${q.MetricStat!.Metric!.Dimensions![0]!.Value}:${q.MetricStat!.Metric!.MetricName}:${q.MetricStat!.Stat}:${q.MetricStat!.Period}`).sort()).toEqual(
      [
        'StreamName=FloeData-Bad-2:IncomingBytes:Sum:300',
        'StreamName=FloeData-Bad-2:IncomingBytes:Sum:3600',
        'StreamName=FloeData-Bad-2:IncomingRecords:Sum:300',
        'StreamName=FloeData-Bad-2:IncomingRecords:Sum:3600',
        'StreamName=FloeData-Raw-1:IncomingBytes:Sum:300',
        'StreamName=FloeData-Raw-1:IncomingBytes:Sum:3600',
        'StreamName=FloeData-Raw-1:IncomingRecords:Sum:300',
        'StreamName=FloeData-Raw-1:IncomingRecords:Sum:3600',
      ],
    )
  })

  it('follows NextToken pages', async () => {
    const client = stubClient(25)
    const report = await cloudWatchReport({ client, targets: targetsFromEnv(env), now: NOW })
    expect(client.inputs.length).toBe(Math.ceil(98 / 25))
    expect(client.inputs.slice(1).map((i) => i.NextToken)).toEqual(['25', '50', '75'])
    expect((report.services.collector as CloudWatchFunctionService).windows['1h'].invocations).toBe(120)
  })

  it('needs the names of what it reports on', () => {
    expect(() => targetsFromEnv({})).toThrow(/FLOE_METRICS_TARGETS is not set/)
    expect(targetsFromEnv(env).functions.metrics).toBe('FloeApp-Metrics-5')
  })
})

describe('the report from a GetMetricData answer', () => {
  it('has each window per service: the hour, and the newest 5-minute period', async () => {
    const report = await cloudWatchReport({ client: stubClient(), targets: targetsFromEnv(env), now: NOW })
    expect(report).toMatchObject({ source: 'cloudwatch', generatedAt: NOW.toISOString(), windows: { '5m': { start: '2025-06-01T12:29:00.000Z', end: END.toISOString() }, '1h': { start: START.toISOString(), end: END.toISOString() } } })
    expect(Object.keys(report.services)).toEqual(['collector', 'enrich', 'esLoaderGood', 'esLoaderBad', 'health', 'metrics'])
    const collector = report.services.collector as CloudWatchFunctionService
    expect(collector).toEqual({
      kind: 'function',
      functions: ['collector'],
      functionNames: { collector: 'FloeApp-Collector-1' },
      windows: {
        '5m': { invocations: 7, errors: 0, throttles: 0, duration: { sumMs: 140, avgMs: 20, p95Ms: 41.25, maxMs: 60 }, concurrentExecutionsMax: 2, iteratorAgeMaxMs: null },
        '1h': { invocations: 120, errors: 2, throttles: 0, duration: { sumMs: 2400, avgMs: 20, p95Ms: 55.5, maxMs: 120 }, concurrentExecutionsMax: 4, iteratorAgeMaxMs: null },
      },
    })
    // no data points: nothing ran
    expect((report.services.enrich as CloudWatchFunctionService).windows['5m']).toEqual({ invocations: 0, errors: 0, throttles: 0, duration: { sumMs: 0, avgMs: null, p95Ms: null, maxMs: null }, concurrentExecutionsMax: null, iteratorAgeMaxMs: null })
    // one function, two services: the same figures under each
    for (const [name, other] of [['esLoaderGood', 'esLoaderBad'], ['esLoaderBad', 'esLoaderGood']] as const) {
      const s = report.services[name] as CloudWatchFunctionService
      expect(s.functions).toEqual(['searchLoader'])
      expect(s.sharedWith).toEqual([other])
      expect(s.windows['1h']).toMatchObject({ invocations: 50, iteratorAgeMaxMs: 1500 })
    }
    expect((report.services.metrics as CloudWatchFunctionService).functionNames).toEqual({ metrics: 'FloeApp-Metrics-5' })
    expect(report.streams).toEqual({
      raw: { name: 'FloeData-Raw-1', windows: { '5m': { incomingRecords: 9, incomingBytes: 5000 }, '1h': { incomingRecords: 100, incomingBytes: 64000 } } },
      bad: { name: 'FloeData-Bad-2', windows: { '5m': { incomingRecords: 0, incomingBytes: 0 }, '1h': { incomingRecords: 0, incomingBytes: 0 } } },
    })
  })

  it('renders as gauges per window; a function of two services is one series naming both', async () => {
    const report = await cloudWatchReport({ client: stubClient(), targets: targetsFromEnv(env), now: NOW })
    const parsed = parseExposition(toPrometheus(report))
    expect(parsed.types.get('floe_function_invocations')).toBe('gauge')
    const find = (name: string, labels: Record<string, string>) => parsed.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    expect(find('floe_function_invocations', { function: 'collector', service: 'collector', window: '5m' }).map((s) => s.value)).toEqual([7])
    expect(find('floe_function_duration_seconds', { function: 'collector', window: '1h', stat: 'p95' }).map((s) => s.value)).toEqual([0.0555])
    expect(find('floe_function_invocations', { function: 'searchLoader', window: '1h' })).toEqual([{ name: 'floe_function_invocations', labels: { function: 'searchLoader', service: 'esLoaderGood,esLoaderBad', window: '1h' }, value: 50 }])
    expect(find('floe_function_iterator_age_max_seconds', { function: 'searchLoader', window: '5m' }).map((s) => s.value)).toEqual([0.25])
    expect(find('floe_stream_incoming_records', { stream: 'raw', window: '1h' }).map((s) => s.value)).toEqual([100])
    // no data point, no sample
    expect(find('floe_function_duration_seconds', { function: 'enrich', stat: 'avg' })).toEqual([])
  })
})

describe('the metrics function in the CDK app', () => {
  const { app } = synthTemplates()
  const metricsFn = () => {
    const found = Object.values(resourcesNamed(app, 'AWS::Lambda::Function', `${logicalId('metrics')}Function`))
    expect(found).toHaveLength(1)
    return found[0].Properties
  }

  it('gets the physical names of every other function and of every stream', () => {
    const value = metricsFn().Environment.Variables[METRICS_TARGETS_ENV]
    const parts: unknown[] = value['Fn::Join'][1]
    const refs = parts.filter((p): p is { Ref: string } => typeof p === 'object' && p !== null && 'Ref' in p).map((p) => p.Ref)
    const imports = parts.filter((p): p is { 'Fn::ImportValue': string } => typeof p === 'object' && p !== null && 'Fn::ImportValue' in p)
    const others = Object.keys(functions).filter((k) => k !== 'metrics')
    expect(refs).toHaveLength(others.length)
    for (const k of others) expect(refs.some((r) => r.startsWith(`${logicalId(k)}Function`))).toBe(true)
    expect(imports).toHaveLength(5)
    const text = parts.map((p) => (typeof p === 'string' ? p : 'x')).join('')
    const parsed = JSON.parse(text) as MetricsTargets
    expect(parsed.self).toBe('metrics')
    expect(Object.keys(parsed.functions).sort()).toEqual(others.sort())
    expect(Object.keys(parsed.streams).sort()).toEqual(['bad', 'good', 'incomplete', 'pii', 'raw'])
  })

  it('may call cloudwatch:GetMetricData, and only it may', () => {
    const policies = Object.entries(app.findResources('AWS::IAM::Policy'))
    const statements = policies.flatMap(([id, p]) => (p.Properties.PolicyDocument.Statement as { Action: unknown }[]).map((s) => ({ id, ...s })))
    const cw = statements.filter((s) => JSON.stringify(s.Action).includes('cloudwatch:'))
    expect(cw).toHaveLength(1)
    expect(cw[0]).toMatchObject({ Action: 'cloudwatch:GetMetricData', Effect: 'Allow', Resource: '*' })
    expect(cw[0]!.id.startsWith(`${logicalId('metrics')}Role`)).toBe(true)
  })
})
