/**
 * `GET /metrics` of a local stack: after requests to every service and the
 * stream triggers' work, each service has invocations, durations, CPU time,
 * network and stream figures; the Floe process is measured; Prometheus' text
 * format by `Accept` or `?format`; 400 for an unknown format, 401 without
 * credentials.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { LocalFunctionService, MetricsReport } from '../../../lib/core/metrics/report'
import { functions, serviceNames } from '../../../lib/infra/functions'
import { useLocalStack, withAuth } from '../../support/stack'
import { parseExposition } from '../../unit/metrics/exposition'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const url = (path: string) => `${stack.current.url}${path}`
const metrics = async (query = '', headers: Record<string, string> = {}) => {
  const r = await fetch(url(`/metrics${query}`), { headers: withAuth(headers) })
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() }
}

const UNKNOWN_SCHEMA = JSON.stringify({
  schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0',
  data: { schema: 'iglu:com.acme.metrics/not_there/jsonschema/1-0-0', data: {} },
})

let report: MetricsReport

beforeAll(async () => {
  // collector: a good event and one whose schema exists nowhere (a bad row, a failed event)
  expect((await fetch(url('/i?e=pv&p=web&tv=js-3.0.0&eid=8c5b4c1c-6d4e-4a29-9a69-2a1f5d6f0a01&url=https%3A%2F%2Fexample.com%2F'))).status).toBe(200)
  expect((await fetch(url(`/i?e=ue&p=web&tv=js-3.0.0&eid=8c5b4c1c-6d4e-4a29-9a69-2a1f5d6f0a02&ue_pr=${encodeURIComponent(UNKNOWN_SCHEMA)}`))).status).toBe(200)
  // enrich, then the loaders and the archive of what it wrote
  await stack.current.drain()
  await stack.current.drain()
  await fetch(url('/health'))
  await fetch(url('/registry-server/api/meta/health'))
  await fetch(url('/api/msc/v1/organizations/00000000-0000-4000-8000-000000000000/event-specs/v1'))
  for (const path of ['/search-store/good/_count', '/home', '/control-plane/version', '/metrics', '/micro/validate/i?e=pv&p=web&tv=js-3.0.0']) await fetch(url(path), { headers: withAuth() })
  const r = await metrics()
  expect(r.status).toBe(200)
  expect(r.type).toMatch(/^application\/json/)
  report = JSON.parse(r.body) as MetricsReport
}, 120_000)

describe('GET /metrics (JSON)', () => {
  it('reports every service and every function, with invocations for each after requests to them', () => {
    expect(report.source).toBe('local')
    const names = Object.keys(report.services)
    expect(names.slice(0, serviceNames.length)).toEqual([...serviceNames])
    for (const k of ['trackingDesign', 'controlPlane', 'authorizer', 'archive', 'health', 'metrics', 'microValidate']) expect(names).toContain(k)
    for (const k of ['dynamodb', 'kinesis', 's3', 'postgres']) expect(report.services[k]).toMatchObject({ kind: 'emulator' })
    const fnServices = Object.entries(report.services).filter(([, s]) => s.kind === 'function') as [string, LocalFunctionService][]
    expect(fnServices.flatMap(([, s]) => s.functions).sort()).toEqual([...new Set(Object.keys(functions))].sort().concat('searchLoader').sort())
    // the recovery worker is fed by a queue, which only a deployment has: locally recovery runs in the control plane
    const onlyOnAws = new Set(['recoverWorker'])
    for (const [name, s] of fnServices.filter(([n]) => !onlyOnAws.has(n))) {
      expect(s.invocations, name).toBeGreaterThan(0)
      expect(s.duration.sumMs, name).toBeGreaterThan(0)
      expect(s.duration.avgMs, name).toBeGreaterThan(0)
      expect(s.duration.p95Ms, name).toBeGreaterThan(0)
      expect(s.duration.maxMs, name).toBeGreaterThanOrEqual(s.duration.p95Ms!)
      expect(s.runsIn).toBe('floe')
    }
  })

  it('has network figures from the gateway and stream reads from the triggers', () => {
    const collector = report.services.collector as LocalFunctionService
    expect(collector.network.requests).toBe(2)
    expect(collector.network.requestBytes).toBeGreaterThan(200)
    expect(collector.network.responseBytes).toBeGreaterThan(43 * 2) // two GIFs with their headers
    expect(collector.network.responses).toEqual({ '2xx': 2 })
    const enrich = report.services.enrich as LocalFunctionService
    expect(enrich.streams.raw!.records).toBe(2)
    expect(enrich.streams.raw!.bytes).toBeGreaterThan(0)
    expect(enrich.network.requests).toBe(0)
    expect((report.services.esLoaderGood as LocalFunctionService).streams.good!.records).toBe(1)
    expect((report.services.esLoaderBad as LocalFunctionService).streams.bad!.records).toBe(1)
    expect((report.services.esLoaderBad as LocalFunctionService).streams.good).toBeUndefined()
    expect(Object.keys((report.services.archive as LocalFunctionService).streams).sort()).toEqual(['bad', 'good', 'incomplete', 'raw'])
    // the authorizer runs before every protected route
    expect((report.services.authorizer as LocalFunctionService).invocations).toBeGreaterThanOrEqual(4)
  })

  it('measures the Floe process, and CPU time inside invocations, saying that the process is shared', () => {
    expect(report.process!.pid).toBe(process.pid)
    expect(report.process!.memory.rssBytes).toBeGreaterThan(10 * 1024 * 1024)
    expect(report.process!.memory.heapUsedBytes).toBeGreaterThan(0)
    expect(report.process!.cpu.userSeconds).toBeGreaterThan(0)
    const enrich = report.services.enrich as LocalFunctionService
    expect(enrich.cpu.userSeconds + enrich.cpu.systemSeconds).toBeGreaterThan(0)
    expect(report.notes.join(' ')).toMatch(/concurrent invocations .* share each interval in proportion to their time in flight/)
    // this stack uses the test run's shared emulators, which another process started
    expect(report.services.dynamodb).toEqual({ kind: 'emulator', runsIn: 'external', process: null })
  })
})

describe('GET /metrics (Prometheus)', () => {
  it('answers the text format for Accept: text/plain', async () => {
    const r = await metrics('', { accept: 'text/plain' })
    expect(r.status).toBe(200)
    expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8')
    const parsed = parseExposition(r.body)
    expect(parsed.types.get('floe_function_invocations_total')).toBe('counter')
    const collector = parsed.samples.find((s) => s.name === 'floe_function_invocations_total' && s.labels.function === 'collector')
    expect(collector).toMatchObject({ labels: { function: 'collector', service: 'collector' } })
    expect(collector!.value).toBeGreaterThanOrEqual(2)
    expect(parsed.samples.find((s) => s.name === 'floe_function_invocations_total' && s.labels.service === 'esLoaderBad')).toMatchObject({ labels: { function: 'searchLoader' } })
    expect(parsed.samples.some((s) => s.name === 'floe_process_resident_memory_bytes' && s.labels.process === 'floe')).toBe(true)
  })

  it('answers the text format for ?format=prometheus, and JSON for ?format=json whatever Accept says', async () => {
    const p = await metrics('?format=prometheus', { accept: 'application/json' })
    expect(p.status).toBe(200)
    expect(p.type).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(p.body).toContain('# TYPE floe_function_invocations_total counter\n')
    const j = await metrics('?format=json', { accept: 'text/plain' })
    expect(j.status).toBe(200)
    expect(JSON.parse(j.body).source).toBe('local')
  })

  it('answers 400 for an unknown format, naming the formats', async () => {
    const r = await metrics('?format=xml')
    expect(r.status).toBe(400)
    expect(JSON.parse(r.body).message).toMatch(/unknown format 'xml': use format=json or format=prometheus/)
  })

  it('answers 401 without credentials', async () => {
    const r = await fetch(url('/metrics'))
    expect(r.status).toBe(401)
    expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm=/)
  })
})
