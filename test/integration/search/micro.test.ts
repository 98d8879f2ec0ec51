/**
 * The Micro API on PGlite, route by route: shapes, filters, ordering, the
 * explorer routes, the schema route, errors, and reset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { micro, microText, type MicroDeps } from '../../../lib/core/search/micro'
import type { SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, COLLECTED, enricher, tp2 } from '../../unit/enrich/helpers'

const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
const CLIENT_SESSION = 'iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1'
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const contexts = (...entities: { schema: string; data: unknown }[]) => b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: entities })
const webPage = { schema: WEB_PAGE, data: { id: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11' } }
const session = { schema: CLIENT_SESSION, data: { userId: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f12', sessionId: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f13', sessionIndex: 1, previousSessionId: null, storageMechanism: 'COOKIE_1' } }
const linkClick = (data: object) => b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data } })

let store: LocalSearchStore
let db: SearchDb
const deps: MicroDeps = {
  lookupSchema: async (vendor, name, format, version) =>
    vendor === 'com.acme' && name === 'thing' ? { ok: true, schema: { self: { vendor, name, format, version } } } : { ok: false, errors: { message: 'not found', lookupHistory: [{ repository: 'floe', errors: ['NotFound'] }] } },
}
const call = async (method: string, path: string, body: unknown = '') => {
  const answer = await micro(db, { method, path, body: typeof body === 'string' ? body : JSON.stringify(body) }, deps)
  const { stream: _, ...r } = { ...answer, body: await microText(answer) }
  return { ...r, json: () => JSON.parse(r.body) }
}

beforeAll(async () => {
  store = await openLocalSearchStore()
  db = store.db
  const e = enricher()
  const b = batch()
  const sent = [
    'e=pv&aid=shop&page=Home&url=https%3A%2F%2Fshop.example.com%2F&cx=' + contexts(webPage),
    'e=se&aid=shop&se_ca=Checkout&se_ac=Add&se_va=2&cx=' + contexts(webPage, session),
    'e=ue&aid=blog&ue_px=' + linkClick({ targetUrl: 'https://example.com/out' }) + '&cx=' + contexts(session),
    'e=ue&aid=blog&ue_px=' + linkClick({ elementId: 'no-target' }), // invalid: a failed event and a bad row
  ]
  const good: string[] = []
  const failed: string[] = []
  const bad: string[] = []
  for (const [i, q] of sent.entries()) {
    const o = await e.enrichRecord(tp2(`p=web&tv=js-3&uid=u${i}&${q}`, { timestamp: COLLECTED + i * 1000 }), b)
    for (const x of o.outputs) {
      if (x.kind === 'good') good.push(x.tsv)
      else if (x.kind === 'incomplete') failed.push(x.tsv)
      else if (x.kind === 'bad') bad.push(x.json)
    }
  }
  expect([good.length, failed.length, bad.length]).toEqual([3, 1, 1])
  await loadBatch(db, 'good', good.map((text, i) => ({ id: `g${i}`, text })), COLLECTED)
  await loadBatch(db, 'incomplete', failed.map((text, i) => ({ id: `f${i}`, text })), COLLECTED)
  await loadBatch(db, 'bad', bad.map((text, i) => ({ id: `b${i}`, text })), COLLECTED)
}, 60_000)
afterAll(async () => {
  await store?.close()
})

describe('/micro', () => {
  it('/micro/all counts good (not failed) and bad events', async () => {
    const r = await call('GET', '/micro/all')
    expect(r).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } })
    expect(r.json()).toEqual({ total: 4, good: 3, bad: 1 })
    expect((await call('POST', '/micro/all')).json()).toEqual({ total: 4, good: 3, bad: 1 })
  })

  it('/micro/good lists good events newest first, with the raw event, schema, contexts and the non-lossy event', async () => {
    const all = (await call('GET', '/micro/good')).json()
    expect(all.map((g: any) => g.eventType)).toEqual(['unstruct', 'struct', 'page_view'])
    const [click, struct] = all
    expect(click).toMatchObject({ eventType: 'unstruct', schema: LINK_CLICK, contexts: [CLIENT_SESSION], incomplete: false })
    expect(click.event).toMatchObject({ app_id: 'blog', event: 'unstruct', user_id: 'u2', unstruct_event: { data: { schema: LINK_CLICK, data: { targetUrl: 'https://example.com/out' } } }, contexts: { data: [session] } })
    // the analytics SDK's shape: the 1-0-0 contexts schema, {} when there are none
    expect(click.event.contexts).toEqual({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [session] })
    expect(click.event.derived_contexts).toEqual({})
    expect(Object.keys(click.event).some((k) => k.startsWith('contexts_'))).toBe(false) // non-lossy: not shredded
    expect(click.rawEvent).toMatchObject({ api: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' }, parameters: { e: 'ue', aid: 'blog', uid: 'u2' } })
    expect(struct.contexts).toEqual([WEB_PAGE, CLIENT_SESSION])
    expect(struct.event.se_value).toBe(2)
    expect(all[2].event.unstruct_event).toBeNull()
  })

  it('/micro/good filters by event type, schema, contexts (all of them) and limit', async () => {
    const good = async (body: object) => (await call('POST', '/micro/good', body)).json().map((g: any) => g.eventType)
    expect(await good({ event_type: 'struct' })).toEqual(['struct'])
    expect(await good({ schema: LINK_CLICK })).toEqual(['unstruct'])
    expect(await good({ schema: 'iglu:com.snowplowanalytics.snowplow/page_view/jsonschema/1-0-0' })).toEqual(['page_view'])
    expect(await good({ contexts: [WEB_PAGE] })).toEqual(['struct', 'page_view'])
    expect(await good({ contexts: [WEB_PAGE, CLIENT_SESSION] })).toEqual(['struct'])
    expect(await good({ contexts: ['iglu:com.acme/none/jsonschema/1-0-0'] })).toEqual([])
    expect(await good({ limit: 2 })).toEqual(['unstruct', 'struct'])
    expect(await good({ contexts: [CLIENT_SESSION], limit: 1 })).toEqual(['unstruct'])
    expect(await good({})).toHaveLength(3)
  })

  it('/micro/bad lists bad rows with their raw event and errors, the bad row last', async () => {
    const bad = (await call('GET', '/micro/bad')).json()
    expect(bad).toHaveLength(1)
    expect(bad[0].collectorPayload).toBeNull()
    expect(bad[0].rawEvent).toMatchObject({ api: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' }, parameters: { e: 'ue', aid: 'blog' } })
    // Micro's sink: its lead text, then the bad row
    expect(bad[0].errors).toHaveLength(2)
    expect(bad[0].errors[0]).toBe('Error while validating the event.')
    expect(JSON.parse(bad[0].errors[1]).schema).toMatch(/^iglu:com\.snowplowanalytics\.snowplow\.badrows\/schema_violations\//)
    expect((await call('POST', '/micro/bad', { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' })).json()).toHaveLength(1)
    expect((await call('POST', '/micro/bad', { vendor: 'com.acme' })).json()).toHaveLength(0)
    expect((await call('POST', '/micro/bad', { limit: 0 })).json()).toHaveLength(0)
  })

  it('/micro/events filters case-insensitively, by validity and time, sorts and pages', async () => {
    const ev = async (body: object) => (await call('POST', '/micro/events', body)).json()
    expect(await ev({ filters: [{ column: 'app_id', values: ['SHOP'] }] })).toMatchObject({ totalItems: 2, totalPages: 1 })
    expect(await ev({ filters: [{ column: 'app_id', values: ['shop', 'Blog'] }, { column: 'event', values: ['unstruct'] }] })).toMatchObject({ totalItems: 2 })
    const failed = await ev({ validEvents: false })
    expect(failed.totalItems).toBe(1)
    expect(failed.events[0].contexts_com_snowplowanalytics_snowplow_failure_1).toBeDefined()
    expect((await ev({ validEvents: true })).totalItems).toBe(3)
    expect((await ev({ timeRange: { start: new Date(COLLECTED + 1000).toISOString(), end: new Date(COLLECTED + 3000).toISOString() } })).totalItems).toBe(2)
    const sorted = await ev({ sorting: { column: 'user_id', desc: false }, pageSize: 2, page: 2 })
    expect(sorted).toMatchObject({ totalItems: 4, totalPages: 2 })
    expect(sorted.events.map((e: any) => e.user_id)).toEqual(['u2', 'u3'])
    expect((await ev({})).events[0].user_id).toBe('u3') // newest first
    // filters on entities and self-describing events, and empty values, are passed over (not "match nothing")
    expect(await ev({ filters: [{ column: 'contexts_com_snowplowanalytics_snowplow_web_page_1', values: ['x'] }] })).toMatchObject({ totalItems: 4 })
    expect(await ev({ filters: [{ column: 'unstruct_event_com_snowplowanalytics_snowplow_link_click_1', values: ['x'] }] })).toMatchObject({ totalItems: 4 })
    expect(await ev({ filters: [{ column: 'app_id', values: [''] }] })).toMatchObject({ totalItems: 4 })
    expect(await ev({ filters: [{ column: 'app_id', values: ['', 'shop'] }] })).toMatchObject({ totalItems: 2 })
    expect(await ev({ filters: [{ column: 'app_id', values: ['none'] }] })).toEqual({ events: [], totalPages: 1, totalItems: 0 })
    expect((await call('POST', '/micro/events', { pageSize: 101 })).status).toBe(400)
    expect((await call('POST', '/micro/events', { validEvents: 'yes' })).status).toBe(400)
    expect((await call('POST', '/micro/events', { timeRange: { start: 'last week' } })).status).toBe(400)
  })

  it('/micro/columns, /micro/columnStats and /micro/timeline', async () => {
    const cols = (await call('GET', '/micro/columns')).json()
    expect(cols).toContain('app_id')
    expect(cols).toContain('contexts_com_snowplowanalytics_snowplow_web_page_1')
    expect(cols).toEqual([...cols].sort())
    // the dotted fields of entities and self-describing events
    expect(cols).toContain('contexts_com_snowplowanalytics_snowplow_web_page_1.id')
    expect(cols).toContain('contexts_com_snowplowanalytics_snowplow_client_session_1.sessionIndex')
    expect(cols).toContain('unstruct_event_com_snowplowanalytics_snowplow_link_click_1.targetUrl')
    const stats = (await call('POST', '/micro/columnStats', { columns: ['app_id', 'contexts_com_snowplowanalytics_snowplow_web_page_1', 'event_id'] })).json()
    expect(stats.app_id).toEqual({ sortable: true, filterable: true, values: ['blog', 'shop'] })
    expect(stats.contexts_com_snowplowanalytics_snowplow_web_page_1).toEqual({ sortable: false, filterable: false })
    expect(stats.event_id.values).toHaveLength(4)
    // timestamps: sortable, not filterable, no values
    const times = (await call('POST', '/micro/columnStats', { columns: ['collector_tstamp', 'dvce_created_tstamp'] })).json()
    expect(times).toEqual({ collector_tstamp: { sortable: true, filterable: false }, dvce_created_tstamp: { sortable: true, filterable: false } })
    const buckets = [{ start: new Date(COLLECTED).toISOString(), end: new Date(COLLECTED + 2000).toISOString() }, { start: new Date(COLLECTED + 2000).toISOString(), end: new Date(COLLECTED + 4000).toISOString() }]
    expect((await call('POST', '/micro/timeline', { buckets })).json()).toEqual({ points: [{ validEvents: 2, failedEvents: 0, bucket: buckets[0] }, { validEvents: 1, failedEvents: 1, bucket: buckets[1] }] })
    expect((await call('POST', '/micro/timeline', { buckets: 'all' })).status).toBe(400)
  })

  it('/micro/iglu answers with the resolver’s schema or its lookup history', async () => {
    const ok = await call('GET', '/micro/iglu/com.acme/thing/jsonschema/1-0-0')
    expect(ok.status).toBe(200)
    expect(ok.json().self).toEqual({ vendor: 'com.acme', name: 'thing', format: 'jsonschema', version: '1-0-0' })
    const missing = await call('GET', '/micro/iglu/com.acme/other/jsonschema/1-0-0')
    expect(missing.status).toBe(404)
    expect(missing.json().lookupHistory).toBeDefined()
    const badVersion = await call('GET', '/micro/iglu/com.acme/thing/jsonschema/1.0')
    expect(badVersion).toMatchObject({ status: 404, headers: { 'content-type': 'application/json' } })
    expect(badVersion.json()).toBe('Schema lookup should be in format iglu/{vendor}/{schemaName}/jsonschema/{model}-{revision}-{addition}')
  })

  it('answers bad requests, wrong methods and unknown routes clearly', async () => {
    expect(await call('POST', '/micro/good', '{"limit":')).toMatchObject({ status: 400, body: expect.stringContaining('not valid JSON') })
    expect(await call('POST', '/micro/good', { limit: -1 })).toMatchObject({ status: 400, body: expect.stringContaining('limit') })
    expect(await call('POST', '/micro/good', { contexts: 'x' })).toMatchObject({ status: 400 })
    expect(await call('POST', '/micro/good', [])).toMatchObject({ status: 400 })
    expect(await call('GET', '/micro/events')).toMatchObject({ status: 405, headers: { allow: 'POST' } })
    const other = await call('GET', '/micro/ui')
    expect(other.status).toBe(404)
    // a JSON string, as Micro answers
    expect(other.headers['content-type']).toBe('application/json')
    // Micro 4.5.2's text, word for word
    expect(other.json()).toBe('Supported endpoints: /micro/all, /micro/good, /micro/bad, /micro/events, /micro/reset, /micro/columns, /micro/columnStats, /micro/timeline, /micro/iglu, /micro/ui')
    expect((await call('POST', '/micro/nothing/here')).json()).toBe(other.json())
  })

  it('/micro/reset empties the store', async () => {
    const r = await call('POST', '/micro/reset')
    expect(r).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } })
    expect(r.json()).toBe('Reset completed')
    expect((await call('GET', '/micro/all')).json()).toEqual({ total: 0, good: 0, bad: 0 })
    expect((await call('GET', '/micro/good')).json()).toEqual([])
    expect((await call('POST', '/micro/events', {})).json()).toEqual({ events: [], totalPages: 1, totalItems: 0 })
  })
})
