import { describe, expect, it } from 'vitest'
import { testClients, useLocalStack } from '../../support/stack'
import { eventsOf, readPayloads, readStream } from '../../support/streams'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { envVar } from '../../../lib/infra/resources'

const TP2 = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const stack = useLocalStack({
  triggers: false,
  environment: { FLOE_COLLECTOR_CONFIG: JSON.stringify({ streams: { maxBytes: 4000 } }) },
})
const kinesis = () => testClients().kinesis

describe('collector through the local gateway', () => {
  it('POST tp2 → 200 ok, one CollectorPayload on the raw stream with the cookie id', async () => {
    const body = JSON.stringify({ schema: TP2, data: [{ e: 'pv', eid: 'it-post-1', p: 'web', tv: 'test' }] })
    const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8', origin: 'http://app.test', cookie: 'sp=c5f3a09f-75f8-4309-bec5-fea560f78455' },
      body,
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('ok')
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test')
    expect(res.headers.get('access-control-allow-credentials')).toBe('true')
    expect(res.headers.get('set-cookie')).toMatch(/^sp=c5f3a09f-75f8-4309-bec5-fea560f78455; Expires=/)
    const payloads = await readPayloads(kinesis(), stack.current.names.streams.raw)
    const p = payloads.find((x) => x.body?.includes('it-post-1'))
    expect(p).toMatchObject({
      schema: COLLECTOR_PAYLOAD_SCHEMA,
      ipAddress: '127.0.0.1',
      encoding: 'UTF-8',
      collector: 'floe-0.1.0-kinesis',
      path: '/com.snowplowanalytics.snowplow/tp2',
      querystring: 'x=1',
      body,
      contentType: 'application/json; charset=utf-8',
      networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
    })
    expect(p!.headers).toContain('Cookie: sp=c5f3a09f-75f8-4309-bec5-fea560f78455')
    expect(p!.headers!.at(-1)).toBe('application/json; charset=utf-8')
    expect(Math.abs(p!.timestamp! - Date.now())).toBeLessThan(60_000)
  })

  it('GET /i → the pixel, the event on the raw stream', async () => {
    const res = await fetch(`${stack.current.url}/i?e=pv&eid=it-get-1&url=http%3A%2F%2Fa.test%2F`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/gif')
    expect(Buffer.from(await res.arrayBuffer()).length).toBe(43)
    const events = eventsOf(await readPayloads(kinesis(), stack.current.names.streams.raw))
    expect(events.filter((e) => e.eid === 'it-get-1')).toEqual([{ e: 'pv', eid: 'it-get-1', url: 'http://a.test/' }])
  })

  it('OPTIONS preflight on any path', async () => {
    const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test')
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, SP-Anonymous')
  })

  it('an oversized batch is split over several raw records; an oversized event is a size_violation on the bad stream', async () => {
    const data = [
      ...Array.from({ length: 20 }, (_, i) => ({ e: 'pv', eid: `it-split-${i}`, page: 'x'.repeat(300) })),
      { e: 'pv', eid: 'it-huge', page: 'y'.repeat(5000) },
    ]
    const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ schema: TP2, data }),
    })
    expect(res.status).toBe(200)
    const payloads = (await readPayloads(kinesis(), stack.current.names.streams.raw)).filter((p) => p.body?.includes('it-split-'))
    expect(payloads.length).toBeGreaterThan(1)
    expect(eventsOf(payloads).map((e) => e.eid)).toEqual(data.slice(0, 20).map((e) => e.eid))
    const bad = (await readStream(kinesis(), stack.current.names.streams.bad)).map((b) => JSON.parse(b.toString('utf8')))
    const row = bad.find((r) => r.data.payload.includes('it-huge'))
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0')
    expect(row.data.failure.maximumAllowedSizeBytes).toBe(4000)
  })

  it('/health is served by the health function; /sink-health and /robots.txt by the collector; unknown paths 404', async () => {
    expect((await fetch(`${stack.current.url}/health`)).status).toBe(200)
    expect(await (await fetch(`${stack.current.url}/sink-health`)).text()).toBe('ok')
    expect(await (await fetch(`${stack.current.url}/robots.txt`)).text()).toMatch(/^User-agent: \*/)
    expect((await fetch(`${stack.current.url}/no/such/path`)).status).toBe(404)
    expect((await fetch(`${stack.current.url}/r/tp2?u=http%3A%2F%2Fa.test`, { redirect: 'manual' })).status).toBe(404)
  })

  it('answers 503 when the stream cannot be written, and reports it on /sink-health until a write succeeds', async () => {
    const key = envVar('stream', 'raw')
    const original = process.env[key]!
    process.env[key] = `${original}-missing`
    try {
      const res = await fetch(`${stack.current.url}/i?e=pv&eid=it-503`, { headers: { origin: 'http://app.test' } })
      expect(res.status).toBe(503)
      expect(res.headers.get('access-control-allow-origin')).toBe('http://app.test')
      expect((await fetch(`${stack.current.url}/sink-health`)).status).toBe(503)
    } finally {
      process.env[key] = original
    }
    expect((await fetch(`${stack.current.url}/i?e=pv&eid=it-503-after`)).status).toBe(200)
    expect((await fetch(`${stack.current.url}/sink-health`)).status).toBe(200)
    const eids = eventsOf(await readPayloads(kinesis(), stack.current.names.streams.raw)).map((e) => e.eid)
    expect(eids).not.toContain('it-503')
    expect(eids).toContain('it-503-after')
  })

  it('bodies over 2 MiB → 413', async () => {
    const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024 + 1),
    })
    expect(res.status).toBe(413)
  })
})
