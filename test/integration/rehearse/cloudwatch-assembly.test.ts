import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { synthesize } from '../../../lib/cli/rehearse'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import { lambdaMetricsFrom, startCloudWatchStandIn, type CloudWatchStandIn, type MetricsPort } from '../../../lib/local/rehearse/cloudwatch'
import { runAssembly, type RunningAssembly } from '../../../lib/local/rehearse/run'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

/** An API Gateway HTTP API event (payload 2.0), authenticated by the route's authorizer. */
function httpEvent(method: string, path: string, routeKey: string): unknown {
  const now = Date.now()
  return {
    version: '2.0', routeKey, rawPath: path, rawQueryString: '', headers: { host: 'api.example.com', accept: 'application/json', 'user-agent': 'rehearsal' },
    requestContext: { accountId: '000000000000', apiId: 'api', domainName: 'api.example.com', domainPrefix: 'api', http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'rehearsal' }, requestId: 'r1', routeKey, stage: '$default', time: new Date(now).toISOString(), timeEpoch: now, authorizer: { lambda: { authenticated: true, username: 'floe' } } },
    isBase64Encoded: false,
  }
}

/** The synthesized metrics function, run from its bundle with the stand-in as its CloudWatch, reports the rehearsal's own invocations. */
describe('the metrics function of the assembly with the CloudWatch stand-in', { timeout: 180_000 }, () => {
  const endpoints = sharedEndpoints()
  let dir: string
  let standIn: CloudWatchStandIn
  let run: RunningAssembly
  // The port needs the running assembly, which needs the stand-in's URL first.
  let port: MetricsPort = () => ({ timestamps: [], values: [] })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-cloudwatch-'))
    await synthesize(dir, () => {})
    const prefix = uniquePrefix('C')
    const stacks = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    standIn = await startCloudWatchStandIn({ metrics: (q) => port(q) })
    run = await runAssembly({
      dir, stacks, clients: testClients(), mappings: false,
      endpoints: { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3, cloudwatch: standIn.url },
      credentials: () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }),
    })
    port = lambdaMetricsFrom(() => run.report(), run.functions)
  }, 600_000)
  afterAll(async () => {
    await run?.stop()
    await standIn?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('GET /metrics answers 200 with the health function\'s 2 invocations', async () => {
    const health = run.functions.find((f) => f.logicalId.startsWith('HealthFunction'))!
    for (let i = 0; i < 2; i++) {
      const r = await run.host.invoke(health.logicalId, httpEvent('GET', '/health', 'GET /health'))
      expect(r.ok && (r.result as { statusCode: number }).statusCode, JSON.stringify(r)).toBe(200)
    }
    const metrics = run.functions.find((f) => f.routes.some((r) => r.routeKey === 'GET /metrics'))!
    const r = await run.host.invoke(metrics.logicalId, httpEvent('GET', '/metrics', 'GET /metrics'))
    expect(r.ok, JSON.stringify(r)).toBe(true)
    const answer = (r as { result: { statusCode: number; body: string } }).result
    expect(answer.statusCode, answer.body).toBe(200)
    const report = JSON.parse(answer.body) as { source: string; services: Record<string, { functionNames?: Record<string, string>; windows?: Record<string, { invocations: number }> }> }
    expect(report.source).toBe('cloudwatch')
    const service = Object.values(report.services).find((s) => Object.values(s.functionNames ?? {}).includes(health.name))
    expect(service, JSON.stringify(report.services)).toBeDefined()
    expect(service!.windows!['5m']!.invocations).toBe(2)
    expect(service!.windows!['1h']!.invocations).toBe(2)
  })
})
