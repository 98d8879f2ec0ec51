import { describe, expect, it } from 'vitest'
import { functions, serviceNames } from '../../../lib/infra/functions'
import { chooseFormat, answerMetrics } from '../../../lib/core/metrics/http'
import { percentile, shapeLocal, type InvocationCounters, type LocalFunctionService, type ProcessFigures } from '../../../lib/core/metrics/report'
import { functionServices, functionsOfService, kebabName, mappedServices, serviceOfInvocation, servicesOf } from '../../../lib/core/metrics/services'
import { parseProcIo, parseProcStat, parseProcStatus, parseUptime } from '../../../lib/core/metrics/proc'
import type { HttpRequest } from '../../../lib/http/types'

const keys = Object.keys(functions)

describe('services of functions', () => {
  it('covers every service of the seed, in its order, each with functions that declare it', () => {
    expect(mappedServices).toEqual([...serviceNames])
    for (const [fn, shares] of Object.entries(functionServices)) {
      expect(keys).toContain(fn)
      for (const s of shares!) expect((functions as Record<string, { services?: readonly string[] }>)[fn]!.services ?? []).toContain(s.service)
    }
  })

  it('reports the other functions under their own key', () => {
    for (const fn of ['trackingDesign', 'controlPlane', 'authorizer', 'archive', 'health', 'metrics']) {
      expect(servicesOf(fn)).toEqual([fn])
      expect(functionsOfService(fn, keys)).toEqual([fn])
    }
    expect(functionsOfService('dashboard', keys)).toEqual(['ui'])
    expect(functionsOfService('nope', keys)).toEqual([])
  })

  it('splits the search loader by the stream that triggered it', () => {
    expect(serviceOfInvocation('searchLoader', 'good')).toBe('esLoaderGood')
    expect(serviceOfInvocation('searchLoader', 'incomplete')).toBe('esLoaderGood')
    expect(serviceOfInvocation('searchLoader', 'bad')).toBe('esLoaderBad')
    expect(serviceOfInvocation('searchLoader')).toBe('esLoaderGood')
    expect(serviceOfInvocation('enrich', 'raw')).toBe('enrich')
    expect(serviceOfInvocation('archive', 'bad')).toBe('archive')
  })

  it('names functions in kebab case', () => {
    expect(kebabName('trackingDesign')).toBe('tracking-design')
    expect(kebabName('searchLoader')).toBe('search-loader')
    expect(kebabName('ui')).toBe('ui')
    expect(kebabName('TrackingDesign')).toBe('tracking-design')
  })
})

describe('the local report', () => {
  const proc: ProcessFigures = { pid: 7, command: 'floe (node)', uptimeSeconds: 1, cpu: { userSeconds: 1, systemSeconds: 1 }, memory: { rssBytes: 1, peakRssBytes: 1 }, io: null, threads: 1 }
  const c = (fn: string, service: string, over: Partial<InvocationCounters> = {}): InvocationCounters => ({
    function: fn,
    service,
    invocations: 2,
    errors: 0,
    durationSumMs: 30,
    durationMaxMs: 20,
    recentDurationsMs: [10, 20],
    cpuUserMicros: 1_500_000,
    cpuSystemMicros: 500_000,
    network: { requests: 2, requestBytes: 300, responseBytes: 500, responses: { '2xx': 2 } },
    streams: {},
    ...over,
  })

  it('has an entry per service (seed order first, then the other functions), emulators last, and notes on what is shared', () => {
    const r = shapeLocal({
      now: new Date(0),
      since: new Date(0),
      functions: keys,
      serviceOrder: serviceNames,
      counters: [c('collector', 'collector'), c('searchLoader', 'esLoaderGood', { streams: { good: { records: 5, bytes: 50, batches: 1 } } }), c('searchLoader', 'esLoaderBad', { errors: 1 })],
      recentLimit: 1000,
      process: proc,
      emulators: { dynamodb: { kind: 'emulator', runsIn: 'external', process: null }, kinesis: { kind: 'emulator', runsIn: 'floe', process: null } },
    })
    expect(Object.keys(r.services)).toEqual([...serviceNames, 'health', 'archive', 'trackingDesign', 'microValidate', 'authorizer', 'controlPlane', 'recoverWorker', 'metrics', 'dynamodb', 'kinesis'])
    expect(r.source).toBe('local')
    const collector = r.services.collector as LocalFunctionService
    expect(collector).toMatchObject({ kind: 'function', functions: ['collector'], runsIn: 'floe', invocations: 2, errors: 0, duration: { sumMs: 30, avgMs: 15, p95Ms: 20, maxMs: 20 }, cpu: { userSeconds: 1.5, systemSeconds: 0.5 } })
    expect(collector.network).toEqual({ requests: 2, requestBytes: 300, responseBytes: 500, responses: { '2xx': 2 } })
    expect(r.services.esLoaderGood).toMatchObject({ functions: ['searchLoader'], invocations: 2, streams: { good: { records: 5, bytes: 50, batches: 1 } } })
    expect(r.services.esLoaderBad).toMatchObject({ functions: ['searchLoader'], errors: 1 })
    expect(r.services.health).toMatchObject({ invocations: 0, duration: { sumMs: 0, avgMs: null, p95Ms: null, maxMs: null } })
    expect(r.services.kinesis).toEqual({ kind: 'emulator', runsIn: 'floe', process: null })
    expect(r.notes.join('\n')).toMatch(/concurrent invocations .* share each interval in proportion to their time in flight/)
    expect(r.notes.join('\n')).toMatch(/kinesis runs inside the Floe process/)
    expect(r.notes.join('\n')).toMatch(/dynamodb was not started by this stack/)
    expect(JSON.parse(JSON.stringify(r))).toEqual(r)
  })

  it('computes the 95th percentile by nearest rank', () => {
    expect(percentile([], 95)).toBeNull()
    expect(percentile([5], 95)).toBe(5)
    expect(percentile(Array.from({ length: 100 }, (_, i) => 100 - i), 95)).toBe(95)
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 1000], 95)).toBe(19)
  })
})

describe('/proc parsing', () => {
  it('reads CPU ticks, threads and start time from stat, even with spaces and parentheses in the name', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3))
    fields[0] = 'S'
    const stat = parseProcStat(`123 (java (x) y) ${fields.join(' ')}\n`)
    expect(stat).toEqual({ comm: 'java (x) y', state: 'S', utimeTicks: 14, stimeTicks: 15, threads: 20, startTimeTicks: 22 })
  })

  it('reads memory from status, bytes from io and the uptime', () => {
    expect(parseProcStatus('Name:\tjava\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t37\n')).toEqual({ rssBytes: 1024 * 1024, peakRssBytes: 2048 * 1024, threads: 37 })
    expect(parseProcStatus('Name:\tzombie\n')).toEqual({ rssBytes: null, peakRssBytes: null, threads: null })
    expect(parseProcIo('rchar: 10\nwchar: 20\nsyscr: 1\n')).toEqual({ readBytes: 10, writtenBytes: 20 })
    expect(parseProcIo('')).toBeNull()
    expect(parseUptime('1234.56 999.00\n')).toBe(1234.56)
  })
})

describe('format negotiation', () => {
  it('is JSON by default, Prometheus for Accept: text/plain or format=prometheus; format wins over Accept', () => {
    expect(chooseFormat({}, undefined)).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({}, '*/*')).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({}, 'application/json')).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({}, 'text/plain')).toEqual({ ok: true, format: 'prometheus' })
    expect(chooseFormat({}, 'text/plain; version=0.0.4')).toEqual({ ok: true, format: 'prometheus' })
    // Prometheus' own scrape header
    expect(chooseFormat({}, 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1')).toEqual({ ok: true, format: 'prometheus' })
    // a browser
    expect(chooseFormat({}, 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({}, 'application/json, text/plain;q=0.5')).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({ format: 'prometheus' }, 'application/json')).toEqual({ ok: true, format: 'prometheus' })
    expect(chooseFormat({ format: 'json' }, 'text/plain')).toEqual({ ok: true, format: 'json' })
    expect(chooseFormat({ format: 'xml' }, undefined)).toEqual({ ok: false, message: expect.stringMatching(/unknown format 'xml': use format=json or format=prometheus/) })
  })

  it('answers 400 for an unknown format without collecting anything', async () => {
    let collected = false
    const req = { method: 'GET', path: '/metrics', headers: {}, query: { format: 'yaml' }, rawQuery: 'format=yaml', cookies: [], body: Buffer.alloc(0), sourceIp: '', params: {}, timeEpochMs: 0 } satisfies HttpRequest
    const res = await answerMetrics(req, () => {
      collected = true
      throw new Error('not called')
    })
    expect(res.statusCode).toBe(400)
    expect(JSON.parse(res.body as string).message).toMatch(/unknown format 'yaml'/)
    expect(collected).toBe(false)
  })
})
