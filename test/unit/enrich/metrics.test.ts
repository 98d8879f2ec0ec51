import { createSocket } from 'node:dgram'
import { describe, expect, it } from 'vitest'
import { emfLine, Metrics, MetricsReporter, stdoutLines } from '../../../lib/core/enrich/metrics'
import { shred } from '../../../lib/core/enrich/shred'

describe('metrics', () => {
  it('stdout lines and deltas', () => {
    const m = new Metrics()
    m.add('raw', 3)
    m.add('good', 2)
    m.latencyOf(1000, 1500)
    expect(stdoutLines(m.take(), 'floe.enrich')).toEqual([
      'floe.enrich.raw = 3', 'floe.enrich.good = 2', 'floe.enrich.incomplete = 0', 'floe.enrich.bad = 0', 'floe.enrich.pii = 0', 'floe.enrich.dropped = 0', 'floe.enrich.invalid_enriched = 0', 'floe.enrich.latency = 500',
    ])
    expect(m.take().counters.raw).toBe(0)
  })

  it('StatsD datagrams reach a real UDP socket', async () => {
    const server = createSocket('udp4')
    const received: string[] = []
    await new Promise<void>((r) => server.bind(0, '127.0.0.1', () => r()))
    const port = server.address().port
    const got = new Promise<void>((resolve) => server.on('message', (msg) => {
      received.push(msg.toString())
      if (received.length >= 7) resolve()
    }))
    const m = new Metrics()
    const reporter = new MetricsReporter({ metrics: m, statsd: { hostname: '127.0.0.1', port, periodMs: 60_000, prefix: 'floe.enrich', tags: { app: 'enrich' } } })
    m.add('bad', 4)
    await reporter.flush()
    await got
    await reporter.stop()
    server.close()
    expect(received).toContain('floe.enrich.bad:4|c|#app:enrich')
    expect(received).toContain('floe.enrich.good:0|c|#app:enrich')
  })

  it('embedded metric format', () => {
    const doc = JSON.parse(emfLine({ counters: { raw: 1, good: 1, incomplete: 0, bad: 0, pii: 0, dropped: 0, invalid_enriched: 0 }, latencyMs: 12 }, 'floe.enrich', { function: 'enrich' }, 1000))
    expect(doc._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'floe.enrich', Dimensions: [['function']] })
    expect(doc).toMatchObject({ function: 'enrich', raw: 1, latency: 12 })
  })
})

describe('shredding (analytics SDK form)', () => {
  it('types, contexts and unstruct keys, geo_location', () => {
    const cols = Array<string>(131).fill('')
    cols[0] = 'app'; cols[3] = '2013-11-26 00:02:05.000'; cols[6] = 'c6ef3124-b53a-4b13-a233-0088f79dcbcb'; cols[10] = 'c'; cols[11] = 'e'
    cols[16] = '3'; cols[22] = '37.443604'; cols[23] = '-122.4124'; cols[57] = '42.5'; cols[93] = '1'
    cols[52] = '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[{"schema":"iglu:org.schema/WebPage/jsonschema/1-0-0","data":{"a":1}}]}'
    cols[58] = '{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"schema":"iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1","data":{"targetUrl":"x"}}}'
    cols[122] = '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[{"schema":"iglu:org.schema/WebPage/jsonschema/1-0-1","data":{"a":2}}]}'
    const j = shred(cols.join('\t'))
    expect(j).toMatchObject({
      app_id: 'app', collector_tstamp: '2013-11-26T00:02:05Z', domain_sessionidx: 3, se_value: 42.5, br_cookies: true, platform: null,
      contexts_org_schema_web_page_1: [{ a: 1 }, { a: 2 }], unstruct_event_com_snowplowanalytics_snowplow_link_click_1: { targetUrl: 'x' }, geo_location: '37.443604,-122.4124',
    })
    expect(() => shred('a\tb')).toThrow(/131/)
  })
})
