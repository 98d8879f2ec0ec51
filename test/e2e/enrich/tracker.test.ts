import { buildPageView, buildSelfDescribingEvent, buildStructEvent, newTracker } from '@snowplow/node-tracker'
import { describe, expect, it } from 'vitest'
import { shred } from '../../../lib/core/enrich/shred'
import { testClients, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stack = useLocalStack({
  environment: {
    ACCEPT_LIMITED_USE_LICENSE: 'yes',
    FLOE_IGLU_CENTRAL_URL: '',
  },
})
const kinesis = () => testClients().kinesis

const WEB_PAGE = (id: string) => ({ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id } })
const LINK_CLICK = (url: string) => ({ schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: url, elementId: 'a1' } })

function tracker(appId: string, eventMethod: 'get' | 'post', encodeBase64: boolean) {
  const url = new URL(stack.current.url)
  let ok = 0
  let failures = 0
  const waiters: { n: number; resolve: () => void }[] = []
  const t = newTracker(
    { namespace: `ns-${appId}`, appId, encodeBase64 },
    {
      endpoint: url.hostname,
      port: Number(url.port),
      protocol: 'http',
      eventMethod,
      bufferSize: 1,
      onRequestSuccess: (b) => {
        ok += b.length
        for (const w of waiters.filter((w) => ok >= w.n)) w.resolve()
      },
      onRequestFailure: () => {
        failures++
      },
    },
  )
  return { t, delivered: (n: number) => (ok >= n ? Promise.resolve() : new Promise<void>((r) => waiters.push({ n, resolve: r }))), failures: () => failures }
}

const byApp = (lines: string[], appId: string) => lines.map((l) => l.split('\t')).filter((c) => c[0] === appId)

describe('enrich end to end: node tracker → collector → raw → enrich → good/incomplete/bad', () => {
  it('every event comes out exactly once on the right output, with its fields', async () => {
    const get = tracker('e2e-get', 'get', true)
    const post = tracker('e2e-post', 'post', false)
    const pageId = '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11'
    for (const d of [get, post]) {
      d.t.track(buildPageView({ pageUrl: 'https://shop.example.com:8443/a/b?x=1#top', pageTitle: 'A page', referrer: 'http://ref.example.org/r' }), [WEB_PAGE(pageId), LINK_CLICK('http://ctx.example/')])
      d.t.track(buildStructEvent({ category: 'cat', action: 'act', label: 'lab', property: 'prop', value: 42.5 }))
      d.t.track(buildSelfDescribingEvent({ event: LINK_CLICK('https://example.com/target') }), [WEB_PAGE(pageId)])
      // invalid: link_click without its required targetUrl
      d.t.track(buildSelfDescribingEvent({ event: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { elementId: 'no-target' } } }))
      // invalid context: web_page id is not a UUID
      d.t.track(buildPageView({ pageUrl: 'https://shop.example.com/bad-ctx' }), [WEB_PAGE('not-a-uuid')])
      // unknown schema
      d.t.track(buildSelfDescribingEvent({ event: { schema: 'iglu:com.acme/unknown/jsonschema/1-0-0', data: { a: 1 } } }))
    }
    await Promise.all([get.delivered(6), post.delivered(6)])
    expect(get.failures() + post.failures()).toBe(0)

    // malformed requests straight to the gateway
    const malformed = [
      fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"not":"self-desc"}' }),
      fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }),
      fetch(`${stack.current.url}/i?aid=e2e-malformed&e=pv&dtm=notanumber`),
      fetch(`${stack.current.url}/com.acme/v9?aid=e2e-vendor&e=pv`),
    ]
    for (const r of await Promise.all(malformed)) expect(r.status).toBeLessThan(500)

    await stack.current.drain()
    const names = stack.current.names.streams
    const [good, incomplete, bad] = await Promise.all([readTexts(kinesis(), names.good), readTexts(kinesis(), names.incomplete), readTexts(kinesis(), names.bad)])

    for (const app of ['e2e-get', 'e2e-post']) {
      const g = byApp(good, app)
      // page view, struct, link click: good, once each
      expect(g.map((c) => c[5]).sort()).toEqual(['page_view', 'struct', 'unstruct'])
      const pv = g.find((c) => c[5] === 'page_view')!
      expect(pv.length).toBe(131)
      expect(pv[29]).toBe('https://shop.example.com:8443/a/b?x=1#top')
      expect(pv.slice(32, 38)).toEqual(['https', 'shop.example.com', '8443', '/a/b', 'x=1', 'top'])
      expect(pv.slice(38, 41)).toEqual(['http', 'ref.example.org', '80'])
      expect(pv[11]).toBe('floe-enrich-0.1.0')
      expect(pv[10]).toMatch(/^floe-/)
      expect(pv[13]).toBe('127.0.0.1')
      expect(pv.slice(125, 129)).toEqual(['com.snowplowanalytics.snowplow', 'page_view', 'jsonschema', '1-0-0'])
      const json = shred(pv.join('\t'))
      expect(json.contexts_com_snowplowanalytics_snowplow_web_page_1).toEqual([{ id: pageId }])
      expect(json.contexts_com_snowplowanalytics_snowplow_link_click_1).toEqual([{ targetUrl: 'http://ctx.example/', elementId: 'a1' }])
      const se = g.find((c) => c[5] === 'struct')!
      expect([se[53], se[54], se[55], se[56], se[57]]).toEqual(['cat', 'act', 'lab', 'prop', '42.5'])
      const ue = g.find((c) => c[5] === 'unstruct')!
      expect(ue.slice(125, 129)).toEqual(['com.snowplowanalytics.snowplow', 'link_click', 'jsonschema', '1-0-1'])
      expect(JSON.parse(ue[58]!)).toEqual({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: LINK_CLICK('https://example.com/target') })

      // the three invalid events: a failed event each, and a schema_violations bad row each
      const inc = byApp(incomplete, app)
      expect(inc).toHaveLength(3)
      for (const c of inc) expect(JSON.parse(c[122]!).data[0].schema).toBe('iglu:com.snowplowanalytics.snowplow/failure/jsonschema/1-0-0')
      const rows = bad.map((b) => JSON.parse(b)).filter((b) => b.data.payload?.enriched?.app_id === app)
      expect(rows.map((r) => r.schema)).toEqual(Array(3).fill('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1'))
      const kinds = rows.map((r) => r.data.failure.messages[0].error.error).sort()
      expect(kinds).toEqual(['ResolutionError', 'ValidationError', 'ValidationError'])
    }

    const badRows = bad.map((b) => JSON.parse(b))
    const tpv = badRows.filter((r) => r.schema.endsWith('/tracker_protocol_violations/jsonschema/1-0-1'))
    expect(tpv.map((r) => r.data.failure.messages[0])).toEqual(
      expect.arrayContaining([
        { json: { not: 'self-desc' }, error: 'INVALID_DATA_PAYLOAD' },
        { field: 'contentType', value: 'text/plain', expectation: 'expected one of application/json, application/json; charset=utf-8, application/json; charset=UTF-8' },
      ]),
    )
    const dtm = badRows.find((r) => r.data.payload?.enriched?.app_id === 'e2e-malformed')
    expect(dtm.data.failure.messages[0].error.dataReports[0]).toMatchObject({ path: 'dtm', keyword: 'atomic_field_parse_error' })
    const vendor = badRows.find((r) => r.schema.endsWith('/adapter_failures/jsonschema/1-0-0') && r.data.failure.vendor === 'com.acme')
    expect(vendor.data.failure.messages).toEqual([{ field: 'vendor/version', value: 'com.acme/v9', expectation: 'vendor/version combination is not supported' }])
    expect(byApp(good, 'e2e-malformed')).toHaveLength(0)
  })
})
