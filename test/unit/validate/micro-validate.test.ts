/**
 * `/micro/validate`'s core with a real enricher (the project's schemas, no
 * network) behind the `enrich` port: the collector path after the prefix,
 * each event's outcome in the order sent, a payload over the collector's
 * size limit answered as its size_violation bad row, the paths that record
 * no event, enrich unavailable or too slow.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_COLLECTOR_CONFIG, loadCollectorConfig } from '../../../lib/core/collector/config'
import { enrichBatch } from '../../../lib/core/enrich/runner'
import { MAX_ANSWER_BYTES, ValidateTimeout, ValidateUnavailable, validateRequest, type ValidatePorts } from '../../../lib/core/validate/micro-validate'
import type { HttpRequest } from '../../../lib/http/types'
import { enricher } from '../enrich/helpers'

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5)
const e = enricher()
const ports = (over: Partial<ValidatePorts> = {}): ValidatePorts => ({
  collectorConfig: () => DEFAULT_COLLECTOR_CONFIG,
  enrich: (payloads) => enrichBatch(e, payloads, { concurrency: 4, now: NOW }),
  now: () => NOW,
  uuid: () => '6f1c2b1e-0000-4000-8000-000000000001',
  ...over,
})

function request(method: string, pathAndQuery: string, body = '', headers: Record<string, string> = {}): HttpRequest {
  const [path, rawQuery = ''] = pathAndQuery.split('?')
  const query = Object.fromEntries(new URLSearchParams(rawQuery))
  return { method, path: path!, rawQuery, query, headers: { host: 'stack.example', ...headers }, cookies: [], body: Buffer.from(body), sourceIp: '203.0.113.9', params: {}, timeEpochMs: NOW }
}

const tp2 = (events: object[]) =>
  request('POST', '/micro/validate/com.snowplowanalytics.snowplow/tp2', JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events }), { 'content-type': 'application/json; charset=UTF-8' })
const answer = async (req: HttpRequest, p = ports()) => {
  const r = await validateRequest(req, p)
  return { status: r.statusCode, body: JSON.parse(String(r.body)) }
}

describe('validateRequest', () => {
  it('answers each event of a POST batch in the order sent: the event as /micro/good shows it, or the bad row', async () => {
    const unknown = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/nowhere/jsonschema/1-0-0', data: {} } })
    const r = await answer(tp2([
      { e: 'pv', p: 'web', tv: 'js-4', aid: 'a1', eid: '11111111-1111-4111-8111-111111111111', url: 'https://shop.example/' },
      { e: 'ue', p: 'web', tv: 'js-4', aid: 'a2', eid: '22222222-2222-4222-8222-222222222222', ue_pr: unknown },
      { e: 'se', p: 'web', tv: 'js-4', aid: 'a3', eid: '33333333-3333-4333-8333-333333333333', se_ca: 'c', se_ac: 'a' },
    ]))
    expect(r.status).toBe(200)
    expect(r.body.results.map((x: any) => x.valid)).toEqual([true, false, true])
    const [pv, bad, se] = r.body.results
    expect(pv.event).toMatchObject({ app_id: 'a1', event: 'page_view', event_id: '11111111-1111-4111-8111-111111111111', page_url: 'https://shop.example/', user_ipaddress: '203.0.113.9', collector_tstamp: new Date(NOW).toISOString().replace('.000Z', 'Z'), contexts: {}, unstruct_event: null })
    expect(se.event).toMatchObject({ app_id: 'a3', event: 'struct', se_category: 'c' })
    expect(bad.badRow.schema).toMatch(/^iglu:com\.snowplowanalytics\.snowplow\.badrows\/schema_violations\//)
    expect(bad.badRow.data.payload.enriched.event_id).toBe('22222222-2222-4222-8222-222222222222')
  })

  it('takes the collector paths under the prefix: GET /i, custom paths, and webhooks', async () => {
    const get = await answer(request('GET', '/micro/validate/i?e=pv&p=web&tv=js-4&aid=px&url=https%3A%2F%2Fa.example%2F'))
    expect(get.body.results).toMatchObject([{ valid: true, event: { app_id: 'px', event: 'page_view' } }])
    const custom = loadCollectorConfig({ paths: { '/acme/track': '/com.snowplowanalytics.snowplow/tp2' } })
    const mapped = await answer({ ...tp2([{ e: 'pv', p: 'web', tv: 'js-4', aid: 'c' }]), path: '/micro/validate/acme/track' }, ports({ collectorConfig: () => custom }))
    expect(mapped.body.results).toMatchObject([{ valid: true, event: { app_id: 'c' } }])
    const iglu = await answer(request('GET', '/micro/validate/com.snowplowanalytics.iglu/v1?schema=iglu%3Acom.snowplowanalytics.snowplow%2Fweb_page%2Fjsonschema%2F1-0-0&id=5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11'))
    expect(iglu.body.results).toMatchObject([{ valid: true, event: { event: 'unstruct', event_name: 'web_page' } }])
  })

  it('answers a payload over the collector size limit as its size_violation bad row, without enriching', async () => {
    const small = loadCollectorConfig({ streams: { maxBytes: 1_000 } })
    let enriched = 0
    const big = tp2([{ e: 'pv', p: 'web', tv: 'js-4', page: 'x'.repeat(3_000) }])
    const r = await answer(big, ports({ collectorConfig: () => small, enrich: async (p) => ((enriched += p.length), []) }))
    expect(r.body.results).toMatchObject([{ valid: false, badRow: { schema: expect.stringMatching(/size_violation/) } }])
    expect(enriched).toBe(0)
  })

  it('refuses what records no event, with the collector status where it has one', async () => {
    for (const [method, path, status] of [
      ['GET', '/micro/validate', 404],
      ['GET', '/micro/validate/', 404],
      ['GET', '/micro/validate/health', 404],
      ['GET', '/micro/validate/robots.txt', 404],
      ['OPTIONS', '/micro/validate/com.snowplowanalytics.snowplow/tp2', 404],
      ['POST', '/micro/validate/i', 404],
      ['GET', '/micro/validate/r/tp2?u=https%3A%2F%2Fa.example', 404],
      ['GET', '/micro/validateX/i', 404],
    ] as const) {
      const r = await answer(request(method, path))
      expect(r.status, `${method} ${path}`).toBe(status)
      expect(r.body.message).toMatch(/micro\/validate/)
    }
    const tooBig = await answer(request('POST', '/micro/validate/com.snowplowanalytics.snowplow/tp2', 'x'.repeat(DEFAULT_COLLECTOR_CONFIG.networking.dropPayloadSize + 1)))
    expect(tooBig.status).toBe(413)
  })

  it('answers 503 when enrich cannot run, 504 past the budget, and 413 for an answer too large to send', async () => {
    const req = tp2([{ e: 'pv', p: 'web', tv: 'js-4' }])
    expect(await answer(req, ports({ enrich: async () => Promise.reject(new ValidateUnavailable('enrich cannot run: no licence')) }))).toEqual({ status: 503, body: { message: 'enrich cannot run: no licence' } })
    expect((await answer(req, ports({ enrich: async () => Promise.reject(new ValidateTimeout('too slow')) }))).status).toBe(504)
    const many = tp2(Array.from({ length: 4_000 }, (_, i) => ({ e: 'pv', p: 'web', tv: 'js-4', aid: `a${i}` })))
    const big = await answer(many)
    expect(big.status).toBe(413)
    expect(big.body.message).toContain(String(MAX_ANSWER_BYTES))
  })
})
