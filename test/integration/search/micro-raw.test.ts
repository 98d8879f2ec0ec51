/**
 * `/micro/good`'s `rawEvent` is the request as the collector received it, as
 * Snowplow Micro shows it: the tracker's parameters exactly as sent (per event
 * of a POST batch), the request's headers, IP, user agent, time and referer.
 * The same records go through enrich (good stream) and the loader (raw stream).
 */
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { micro, microText } from '../../../lib/core/search/micro'
import { purgeOlderThan, tablesOf, type SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, COLLECTED, enricher, payload, tp2 } from '../../unit/enrich/helpers'

const WEB_PAGE = { schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11' } }
// as the tracker writes it with base64 off: the contexts JSON as one string, its spacing its own
const CO = '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0", "data":[' + JSON.stringify(WEB_PAGE) + ']}'
const EID = ['7c2b7bd0-5a06-4e0c-9a6b-0d1f3c6a0a01', '7c2b7bd0-5a06-4e0c-9a6b-0d1f3c6a0a02', '7c2b7bd0-5a06-4e0c-9a6b-0d1f3c6a0a03', '7C2B7BD0-5A06-4E0C-9A6B-0D1F3C6A0A04']
const HEADERS = ['Host: collector.example.com', 'Content-Language: de-DE, en-CA', 'Origin: https://shop.example.com', 'Cookie: sp=0bd07c74-75d7-4fa4-a1e4-4b6e3c7d5e01']
const NUID = '0bd07c74-75d7-4fa4-a1e4-4b6e3c7d5e01'

/** A tracker's POST: two events in one payload_data batch. */
const post = payload({
  path: '/com.snowplowanalytics.snowplow/tp2',
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify({
    schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4',
    data: [
      { e: 'pv', aid: 'post', p: 'web', tv: 'js-4.10.1', eid: EID[0], url: 'https://shop.example.com/', page: 'Home', res: '1920x1080', vp: '1280x720', ds: '1280x4000', cookie: '1', cd: '24', co: CO, stm: String(COLLECTED) },
      { e: 'se', aid: 'post', p: 'web', tv: 'js-4.10.1', eid: EID[1], se_ca: 'Checkout', se_ac: 'Add', co: CO, stm: String(COLLECTED) },
    ],
  }),
  headers: HEADERS,
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120',
  refererUri: 'https://shop.example.com/',
  networkUserId: NUID,
  timestamp: COLLECTED,
})
/** A GET with base64 contexts. */
const cx = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [WEB_PAGE] })).toString('base64url')
const get = tp2(`e=pv&aid=get&p=web&tv=js-4.10.1&eid=${EID[2]}&page=Get+page&cx=${cx}&vp=800x600`, { path: '/i', timestamp: COLLECTED + 1000, headers: ['Host: collector.example.com'] })
/** A webhook event: no tracker event id, enrich gives it one. */
const webhook = payload({ path: '/com.snowplowanalytics.iglu/v1', querystring: 'schema=iglu%3Acom.snowplowanalytics.snowplow%2Fweb_page%2Fjsonschema%2F1-0-0&id=5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11', timestamp: COLLECTED + 2000 })
/** An upper-case `eid`, in a gzip-framed record. */
const upper = tp2(`e=pv&aid=upper&p=web&tv=js-4.10.1&eid=${EID[3]}&res=1x1`, { timestamp: COLLECTED + 3000 })

/** A compressed record as the collector writes one: gzip of a version header, then each payload after its length. */
function framed(p: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeInt32BE(p.length)
  return gzipSync(Buffer.concat([Buffer.from([1, 1]), length, p]))
}

let store: LocalSearchStore
let db: SearchDb
const good = async (body: unknown = {}) => JSON.parse(await microText(await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify(body) }, { lookupSchema: async () => ({ ok: false, errors: {} }) }))) as any[]

beforeAll(async () => {
  store = await openLocalSearchStore()
  db = store.db
  const e = enricher()
  const records = [post, get, webhook, upper]
  const lines: string[] = []
  for (const r of records) {
    const o = await e.enrichRecord(r, batch())
    for (const x of o.outputs) if (x.kind === 'good') lines.push(x.tsv)
    else throw new Error(`not good: ${JSON.stringify(x)}`)
  }
  expect(lines).toHaveLength(5)
  const raw = [post, get, webhook, framed(upper)].map((data, i) => ({ id: `r${i}`, text: '', data }))
  await loadBatch(db, 'raw', raw, COLLECTED)
  await loadBatch(db, 'raw', raw, COLLECTED) // a redelivered batch changes nothing
  await loadBatch(db, 'good', lines.map((text, i) => ({ id: `g${i}`, text })), COLLECTED)
}, 60_000)
afterAll(async () => {
  await store?.close()
})

describe('/micro/good rawEvent: the request as received', () => {
  it('keeps every parameter of each event of a POST batch exactly as sent', async () => {
    const events = await good()
    const pv = events.find((g) => g.event.app_id === 'post' && g.eventType === 'page_view')
    expect(pv.rawEvent.parameters).toEqual({ e: 'pv', aid: 'post', p: 'web', tv: 'js-4.10.1', eid: EID[0], url: 'https://shop.example.com/', page: 'Home', res: '1920x1080', vp: '1280x720', ds: '1280x4000', cookie: '1', cd: '24', co: CO, stm: String(COLLECTED) })
    expect(pv.rawEvent.parameters.co).toBe(CO) // the JSON string the tracker sent, not a re-serialisation
    const se = events.find((g) => g.event.app_id === 'post' && g.eventType === 'struct')
    expect(se.rawEvent.parameters).toEqual({ e: 'se', aid: 'post', p: 'web', tv: 'js-4.10.1', eid: EID[1], se_ca: 'Checkout', se_ac: 'Add', co: CO, stm: String(COLLECTED) })
  })

  it('keeps the request: headers, IP, user agent, referer, time, network user id, content type, source', async () => {
    const pv = (await good()).find((g) => g.event.app_id === 'post' && g.eventType === 'page_view')
    expect(pv.rawEvent).toEqual({
      api: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' },
      parameters: expect.any(Object),
      contentType: 'application/json; charset=utf-8',
      source: { name: 'test-collector', encoding: 'UTF-8', hostname: 'collector.snplow.net' },
      context: { timestamp: new Date(COLLECTED).toISOString(), ipAddress: '175.16.199.0', useragent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120', refererUri: 'https://shop.example.com/', headers: HEADERS, userId: NUID },
    })
    // the shape of the tracker's own integration suite's check
    expect(pv.rawEvent.context.headers.map((h: string) => h.toLowerCase())).toContain('content-language: de-de, en-ca')
  })

  it('a GET: the query string parameters, base64 contexts as sent', async () => {
    const g = (await good()).find((x) => x.event.app_id === 'get')
    expect(g.rawEvent.api).toEqual({ vendor: 'com.snowplowanalytics.snowplow', version: 'tp1' })
    expect(g.rawEvent.parameters).toEqual({ e: 'pv', aid: 'get', p: 'web', tv: 'js-4.10.1', eid: EID[2], page: 'Get page', cx, vp: '800x600' })
    expect(g.rawEvent.contentType).toBeNull()
  })

  it('an upper-case eid in a compressed record is found under the enriched (lower-case) event id', async () => {
    const u = (await good()).find((x) => x.event.app_id === 'upper')
    expect(u.event.event_id).toBe(EID[3]!.toLowerCase())
    expect(u.rawEvent.parameters).toEqual({ e: 'pv', aid: 'upper', p: 'web', tv: 'js-4.10.1', eid: EID[3], res: '1x1' })
  })

  it('an event without a tracker event id (a webhook) keeps the parameters rebuilt from the enriched event', async () => {
    const w = (await good()).find((x) => x.eventType === 'unstruct')
    expect(w.rawEvent).toMatchObject({ api: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' }, parameters: { e: 'ue' }, context: { headers: [] } })
  })

  it('filters and limits still apply; each payload is stored once, each event once', async () => {
    expect((await good({ event_type: 'struct' })).map((g) => g.rawEvent.parameters.eid)).toEqual([EID[1]])
    expect((await good({ limit: 1 })).map((g) => g.event.app_id)).toEqual(['upper'])
    const t = tablesOf(db)
    const n = async (table: string) => Number((await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n)
    expect([await n(t.rawPayloads), await n(t.rawEvents)]).toEqual([3, 4])
  })

  it('retention and reset remove them with the events', async () => {
    const t = tablesOf(db)
    const n = async (table: string) => Number((await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n)
    await purgeOlderThan(db, 1, COLLECTED + 86_400_000 + 500) // a day after the POST's time, before the GET's: the POST goes
    expect([await n(t.rawPayloads), await n(t.rawEvents)]).toEqual([2, 2])
    expect((await micro(db, { method: 'GET', path: '/micro/reset', body: '' }, { lookupSchema: async () => ({ ok: false, errors: {} }) })).status).toBe(200)
    expect([await n(t.rawPayloads), await n(t.rawEvents)]).toEqual([0, 0])
  })
})
