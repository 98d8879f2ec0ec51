/**
 * `_count` and `_search` on PGlite against an oracle: every query's hits are
 * the documents a plain JavaScript predicate picks, both through the typed
 * columns and through the document alone (the two translations must agree);
 * paging, sorting, `_source`, totals and aggregations are shaped as
 * Elasticsearch 7 shapes them; refusals are 400s naming the construct; hostile
 * strings are values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { goodDocument, withNulls } from '../../../lib/core/search/documents'
import { loadBatch } from '../../../lib/core/search/loader'
import { count, search, type SearchRequest } from '../../../lib/core/search/query'
import { type SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, COLLECTED, enricher, tp2 } from '../../unit/enrich/helpers'

const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const N = 24

let store: LocalSearchStore
let db: SearchDb
type Doc = Record<string, any>
const docs: Doc[] = []
const NOW = COLLECTED + N * 60_000

beforeAll(async () => {
  store = await openLocalSearchStore()
  db = store.db
  const e = enricher()
  const b = batch()
  const lines: string[] = []
  for (let i = 0; i < N; i++) {
    const q = new URLSearchParams({ p: 'web', tv: 'js-3', aid: ['shop', 'blog', 'app'][i % 3]!, url: `https://${i % 4 === 3 ? 'promo' : 'www'}.example.com/p/${i}` })
    if (i < 10) q.set('uid', `user-${i % 5}`)
    if (i % 2 === 0) q.set('cx', b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: WEB_PAGE, data: { id: `5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e000${i % 3}` } }] }))
    if (i % 4 === 1) q.set('e', 'se'), q.set('se_ca', `cat-${i % 2}`), q.set('se_ac', 'act'), q.set('se_va', String(i)), q.set('se_la', i === 5 ? "it's 50% off_now \\ really" : `label ${i}`)
    else if (i % 4 === 2) q.set('e', 'ue'), q.set('ue_px', b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { targetUrl: `https://out.example.com/${i}`, elementClasses: ['a', `c${i % 3}`] } } }))
    else q.set('e', 'pv'), q.set('page', i % 8 === 0 ? 'Home' : `Page ${i}`)
    const o = await e.enrichRecord(tp2(q.toString(), { timestamp: COLLECTED + i * 60_000 }), b)
    const good = o.outputs.find((x) => x.kind === 'good') as { tsv: string } | undefined
    if (!good) throw new Error(`event ${i} did not enrich: ${JSON.stringify(o.outputs)}`)
    lines.push(good.tsv)
    docs.push(withNulls((goodDocument(good.tsv, false) as { ok: true; value: { doc: Doc } }).value.doc))
  }
  const r = await loadBatch(db, 'good', lines.map((text, i) => ({ id: String(i), text })), NOW)
  expect(r).toMatchObject({ loaded: N })
  await loadBatch(db, 'bad', [0, 1, 2].map((i) => ({ id: `b${i}`, text: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: { timestamp: new Date(COLLECTED + i * 3_600_000).toISOString(), messages: [{ error: `e${i}` }] }, processor: { artifact: 'floe', version: '1' } } }) })), NOW)
}, 60_000)
afterAll(async () => {
  await store?.close()
})

const ids = (pick: (d: Doc) => boolean) => docs.filter(pick).map((d) => d.event_id as string).sort()
const vals = (d: Doc, path: string): unknown[] => {
  let cur: unknown[] = [d]
  for (const seg of path.split('.')) cur = cur.flatMap((x) => (Array.isArray(x) ? x : [x])).flatMap((x) => (x && typeof x === 'object' && seg in (x as object) ? [(x as Doc)[seg]] : []))
  return cur.flatMap((x) => (Array.isArray(x) ? x : [x]))
}
const has = (path: string, v: unknown) => (d: Doc) => vals(d, path).some((x) => x === v)

async function hits(req: SearchRequest, columns: boolean): Promise<string[]> {
  const r = await search(db, 'good', { ...req, params: { size: '1000', ...req.params } }, { columns }, NOW)
  if (!r.ok) throw new Error(JSON.stringify(r.error))
  return r.value.hits.hits.map((h) => h._id).sort()
}

const cases: [string, SearchRequest, (d: Doc) => boolean][] = [
  ['match all', { params: {} }, () => true],
  ['term on a column', { params: {}, body: { query: { term: { app_id: 'shop' } } } }, has('app_id', 'shop')],
  ['q on a column', { params: { q: 'app_id:blog' } }, has('app_id', 'blog')],
  ['q on the event type', { params: { q: 'event:struct' } }, has('event', 'struct')],
  ['terms', { params: {}, body: { query: { terms: { app_id: ['shop', 'app'] } } } }, (d) => d.app_id === 'shop' || d.app_id === 'app'],
  ['a number as a string', { params: { q: 'se_value:5' } }, has('se_value', 5)],
  ['a number', { params: {}, body: { query: { term: { se_value: 9 } } } }, has('se_value', 9)],
  ['a boolean', { params: { q: 'br_cookies:true' } }, has('br_cookies', true)],
  ['phrase with quotes and LIKE characters', { params: { q: `se_label:"it's 50% off_now \\\\ really"` } }, has('se_label', "it's 50% off_now \\ really")],
  ['a field inside a context array', { params: { q: 'contexts_com_snowplowanalytics_snowplow_web_page_1.id:"5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e0001"' } }, has('contexts_com_snowplowanalytics_snowplow_web_page_1.id', '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e0001')],
  ['an array of strings', { params: {}, body: { query: { term: { 'unstruct_event_com_snowplowanalytics_snowplow_link_click_1.elementClasses': 'c2' } } } }, has('unstruct_event_com_snowplowanalytics_snowplow_link_click_1.elementClasses', 'c2')],
  ['any field', { params: { q: 'Home' } }, (d) => d.page_title === 'Home'],
  ['wildcard', { params: { q: 'page_url:*promo*' } }, (d) => String(d.page_url).includes('promo')],
  ['wildcard on a column', { params: {}, body: { query: { wildcard: { app_id: 'sh?p' } } } }, has('app_id', 'shop')],
  ['wildcard, LIKE characters literal', { params: {}, body: { query: { wildcard: { se_label: '*50% off_*' } } } }, (d) => String(d.se_label).includes('50% off_')],
  ['wildcard, case-insensitive', { params: {}, body: { query: { wildcard: { page_title: { value: 'HOM*', case_insensitive: true } } } } }, (d) => /^hom/i.test(String(d.page_title ?? ''))],
  ['prefix', { params: {}, body: { query: { prefix: { page_url: 'https://promo.' } } } }, (d) => String(d.page_url).startsWith('https://promo.')],
  ['prefix on a column', { params: {}, body: { query: { prefix: { app_id: 'bl' } } } }, (d) => d.app_id === 'blog'],
  ['exists', { params: { q: '_exists_:user_id' } }, (d) => d.user_id !== null],
  ['exists on a column', { params: {}, body: { query: { exists: { field: 'event_name' } } } }, (d) => d.event_name !== null],
  ['exists on a context field', { params: { q: '_exists_:contexts_com_snowplowanalytics_snowplow_web_page_1' } }, (d) => 'contexts_com_snowplowanalytics_snowplow_web_page_1' in d],
  ['numeric range', { params: { q: 'se_value:[5 TO 13}' } }, (d) => typeof d.se_value === 'number' && d.se_value >= 5 && d.se_value < 13],
  ['comparison', { params: { q: 'se_value:>9' } }, (d) => typeof d.se_value === 'number' && d.se_value > 9],
  ['time range on the column', { params: {}, body: { query: { range: { collector_tstamp: { gte: new Date(COLLECTED + 5 * 60_000).toISOString(), lt: 'now-10m' } } } } }, (d) => Date.parse(d.collector_tstamp) >= COLLECTED + 5 * 60_000 && Date.parse(d.collector_tstamp) < NOW - 600_000],
  ['time range on another timestamp', { params: {}, body: { query: { range: { etl_tstamp: { lte: '2025-04-30' } } } } }, () => true],
  ['time range rounding', { params: { q: 'collector_tstamp:{* TO now-20m/h]' } }, (d) => Date.parse(d.collector_tstamp) <= Math.floor((NOW - 1_200_000) / 3_600_000) * 3_600_000 + 3_599_999],
  ['bool', { params: {}, body: { query: { bool: { must: [{ term: { event: 'page_view' } }], must_not: [{ term: { app_id: 'app' } }], filter: { exists: { field: 'user_id' } } } } } }, (d) => d.event === 'page_view' && d.app_id !== 'app' && d.user_id !== null],
  ['must_not on a nullable column', { params: {}, body: { query: { bool: { must_not: { term: { event_name: 'page_view' } } } } } }, (d) => d.event_name !== 'page_view'],
  ['should with minimum_should_match 2', { params: {}, body: { query: { bool: { should: [{ term: { app_id: 'shop' } }, { term: { event: 'page_view' } }, { exists: { field: 'user_id' } }], minimum_should_match: 2 } } } }, (d) => [d.app_id === 'shop', d.event === 'page_view', d.user_id !== null].filter(Boolean).length >= 2],
  ['OR and NOT in q', { params: { q: '(app_id:shop OR app_id:blog) AND NOT event:unstruct' } }, (d) => (d.app_id === 'shop' || d.app_id === 'blog') && d.event !== 'unstruct'],
  ['default operator AND', { params: { q: 'app_id:shop event:page_view', default_operator: 'AND' } }, (d) => d.app_id === 'shop' && d.event === 'page_view'],
  ['ids', { params: {}, body: { query: { ids: { values: [] as string[] } } } }, () => false],
  ['match_none', { params: {}, body: { query: { match_none: {} } } }, () => false],
]

describe('queries against an oracle', () => {
  for (const [name, req, pick] of cases) {
    it(name, async () => {
      const expected = ids(pick)
      const viaColumns = await hits(req, true)
      const viaDocument = await hits(req, false)
      expect(viaColumns).toEqual(expected)
      expect(viaDocument).toEqual(expected)
      const c = await count(db, 'good', { params: Object.fromEntries(Object.entries(req.params).filter(([k]) => k !== 'size')), body: req.body }, { columns: true }, NOW)
      expect(c.ok && c.value.count).toBe(expected.length)
    })
  }
  it('has cases that select something and cases that do not', () => {
    const sizes = cases.map(([, , pick]) => ids(pick).length)
    expect(sizes.filter((n) => n > 0 && n < N).length).toBeGreaterThan(20)
  })
  it('matches ids', async () => {
    const id = docs[3]!.event_id as string
    expect(await hits({ params: {}, body: { query: { ids: { values: [id, 'nope'] } } } }, true)).toEqual([id])
  })
})

describe('search responses', () => {
  const ok = async (req: SearchRequest) => {
    const r = await search(db, 'good', req, { columns: true }, NOW)
    if (!r.ok) throw new Error(JSON.stringify(r.error))
    return r.value as any
  }

  it('pages, sorts newest first by default, and by any field with sort values', async () => {
    const first = await ok({ params: { size: '5' } })
    expect(first).toMatchObject({ timed_out: false, _shards: { total: 1, failed: 0 }, hits: { total: { value: N, relation: 'eq' }, max_score: null } })
    expect(first.hits.hits.map((h: any) => h._source.collector_tstamp)).toEqual([...docs].reverse().slice(0, 5).map((d) => d.collector_tstamp))
    const next = await ok({ params: { size: '5', from: '5' } })
    expect(next.hits.hits[0]._source.collector_tstamp).toBe(docs[N - 6]!.collector_tstamp)
    const bySeValue = await ok({ params: { q: 'event:struct' }, body: { sort: [{ se_value: { order: 'desc' } }, 'collector_tstamp'], size: 3 } })
    expect(bySeValue.hits.hits.map((h: any) => h.sort[0])).toEqual([21, 17, 13])
    expect(typeof bySeValue.hits.hits[0].sort[1]).toBe('number')
    const byParam = await ok({ params: { sort: 'collector_tstamp:asc', size: '1' } })
    expect(byParam.hits.hits[0]._source.collector_tstamp).toBe(docs[0]!.collector_tstamp)
    const missingLast = await ok({ params: { sort: 'user_id:desc', size: String(N) } })
    expect(missingLast.hits.hits.at(-1).sort).toEqual([null])
  })

  it('filters _source with includes, excludes and wildcards', async () => {
    const one = async (req: SearchRequest) => (await ok({ ...req, params: { size: '1', q: 'event:unstruct', ...req.params } })).hits.hits[0]
    expect(Object.keys((await one({ params: { _source: 'app_id,event*' } }))._source).sort()).toEqual(['app_id', 'event', 'event_fingerprint', 'event_format', 'event_id', 'event_name', 'event_vendor', 'event_version'])
    expect((await one({ params: {}, body: { _source: false } }))._source).toBeUndefined()
    const nested = await one({ params: {}, body: { _source: { includes: ['unstruct_event_*.targetUrl'] } } })
    expect(nested._source).toEqual({ unstruct_event_com_snowplowanalytics_snowplow_link_click_1: { targetUrl: expect.stringMatching(/^https:\/\/out/) } })
    const without = await one({ params: { _source_excludes: 'contexts_*,unstruct_*' } })
    expect(Object.keys(without._source).some((k) => k.startsWith('contexts_') || k.startsWith('unstruct_'))).toBe(false)
    expect(without._source.app_id).toBeDefined()
  })

  it('counts totals up to track_total_hits, exactly when asked, and as a number for rest_total_hits_as_int', async () => {
    expect((await ok({ params: { size: '0', track_total_hits: '10' } })).hits.total).toEqual({ value: 10, relation: 'gte' })
    expect((await ok({ params: { size: '0' }, body: { track_total_hits: true } })).hits.total).toEqual({ value: N, relation: 'eq' })
    expect((await ok({ params: { size: '0', track_total_hits: 'false' } })).hits.total).toBeUndefined()
    expect((await ok({ params: { size: '0', rest_total_hits_as_int: 'true' } })).hits.total).toBe(N)
  })

  it('aggregates: terms, date_histogram with empty buckets, value_count, cardinality, min and max', async () => {
    const r = await ok({
      params: { size: '0' },
      body: {
        aggs: {
          apps: { terms: { field: 'app_id', size: 2 } },
          labels: { terms: { field: 'se_category', order: { _key: 'asc' } } },
          classes: { terms: { field: 'unstruct_event_com_snowplowanalytics_snowplow_link_click_1.elementClasses' } },
          values: { terms: { field: 'se_value', size: 2, order: { _key: 'desc' } } },
          per_5m: { date_histogram: { field: 'collector_tstamp', fixed_interval: '5m' } },
          per_hour: { date_histogram: { field: 'collector_tstamp', calendar_interval: 'hour', extended_bounds: { min: 'now-3h', max: 'now' } } },
          n: { value_count: { field: 'user_id' } },
          users: { cardinality: { field: 'user_id' } },
          lo: { min: { field: 'se_value' } },
          hi: { max: { field: 'collector_tstamp' } },
          first_etl: { min: { field: 'etl_tstamp' } },
        },
      },
    })
    const a = r.aggregations
    expect(a.apps).toEqual({ doc_count_error_upper_bound: 0, sum_other_doc_count: N / 3, buckets: [{ key: 'app', doc_count: N / 3 }, { key: 'blog', doc_count: N / 3 }] })
    expect(a.labels.buckets).toEqual([{ key: 'cat-0', doc_count: 0 }, { key: 'cat-1', doc_count: N / 4 }].filter((b) => b.doc_count > 0))
    expect(a.classes.buckets).toEqual([{ key: 'a', doc_count: N / 4 }, ...['c0', 'c1', 'c2'].map((key) => ({ key, doc_count: 2 }))])
    expect(a.values.buckets).toEqual([{ key: 21, doc_count: 1 }, { key: 17, doc_count: 1 }])
    expect(a.per_5m.buckets).toHaveLength(5)
    expect(a.per_5m.buckets[0]).toEqual({ key: COLLECTED, key_as_string: new Date(COLLECTED).toISOString(), doc_count: 5 })
    expect(a.per_5m.buckets.reduce((s: number, b: any) => s + b.doc_count, 0)).toBe(N)
    expect(a.per_hour.buckets.map((b: any) => [b.key, b.doc_count])).toEqual([3, 2, 1, 0].map((h) => [COLLECTED - h * 3_600_000, h === 0 ? N : 0])) // extended to now-3h
    expect(a.n).toEqual({ value: 10 })
    expect(a.users).toEqual({ value: 5 })
    expect(a.lo).toEqual({ value: 1 })
    expect(a.hi).toEqual({ value: Date.parse(docs.at(-1)!.collector_tstamp), value_as_string: new Date(docs.at(-1)!.collector_tstamp).toISOString() })
    expect(a.first_etl.value).toBe(Date.parse(docs[0]!.etl_tstamp))
  })

  it('histograms and ranges the bad index on data.failure.timestamp', async () => {
    const r = await search(db, 'bad', { params: { size: '0' }, body: { query: { range: { 'data.failure.timestamp': { gte: new Date(COLLECTED + 3_600_000).toISOString() } } }, aggs: { h: { date_histogram: { field: 'data.failure.timestamp', fixed_interval: '1h' } }, types: { terms: { field: 'schema' } } } } }, { columns: true }, NOW)
    expect(r.ok && (r.value as any).hits.total.value).toBe(2)
    expect(r.ok && (r.value as any).aggregations.h.buckets.map((b: any) => b.doc_count)).toEqual([1, 1])
    expect(r.ok && (r.value as any).aggregations.types.buckets[0].key).toMatch(/schema_violations/)
    expect(await hitsBad({ params: { q: 'data.failure.messages.error_str:e1' } })).toBe(1)
  })
  const hitsBad = async (req: SearchRequest) => {
    const r = await count(db, 'bad', req)
    return r.ok ? r.value.count : -1
  }
})

describe('refusals and hostile input', () => {
  const error = async (req: SearchRequest) => {
    const r = await search(db, 'good', req, { columns: true }, NOW)
    if (r.ok) throw new Error('accepted')
    return r.error
  }
  it('refuses constructs outside the subset with 400s naming them', async () => {
    expect(await error({ params: { from: '9995', size: '10' } })).toMatchObject({ status: 400, reason: expect.stringMatching(/Result window is too large/) })
    expect(await error({ params: { scroll: '1m' } })).toMatchObject({ reason: expect.stringContaining('unrecognized parameter: [scroll]') })
    expect(await error({ params: {}, body: { search_after: [1] } })).toMatchObject({ reason: expect.stringContaining('[search_after] is not supported') })
    expect(await error({ params: {}, body: { aggs: { x: { avg: { field: 'se_value' } } } } })).toMatchObject({ reason: expect.stringContaining('[avg]') })
    expect(await error({ params: {}, body: { aggs: { x: { terms: { field: 'app_id' }, aggs: { y: { max: { field: 'se_value' } } } } } } })).toMatchObject({ reason: expect.stringContaining('sub-aggregations') })
    expect(await error({ params: {}, body: { aggs: { x: { date_histogram: { field: 'dvce_created_tstamp', fixed_interval: '1h' } } } } })).toMatchObject({ reason: expect.stringContaining('collector_tstamp') })
    expect(await error({ params: {}, body: { aggs: { x: { date_histogram: { field: 'collector_tstamp', fixed_interval: '1s', extended_bounds: { min: 'now-1d', max: 'now' } } } } } })).toMatchObject({ type: 'too_many_buckets_exception' })
    expect(await error({ params: { q: 'a:1' }, body: { query: { match_all: {} } } })).toMatchObject({ reason: expect.stringContaining('both') })
    expect(await error({ params: {}, body: { query: { range: { collector_tstamp: { gte: 'last tuesday' } } } } })).toMatchObject({ reason: expect.stringContaining('failed to parse date') })
    expect(await error({ params: {}, body: { query: { term: { app_id: 'a\u0000b' } } } })).toMatchObject({ reason: expect.stringContaining('NUL') })
    expect(await error({ params: {}, body: { query: { term: { ['a\ud800']: 'x' } } } })).toMatchObject({ reason: expect.stringContaining('surrogate') })
    expect(await error({ params: { size: '-1' } })).toMatchObject({ status: 400 })
  })

  it('takes hostile strings as values and field names, never as SQL or path text', async () => {
    const hostile = ["x'); DROP TABLE good_events; --", '$1', '%', '_', '\\', '"', "' OR 1=1 --", '@ == @', ') || (true', '$.**', 'lax $']
    for (const h of hostile) {
      for (const body of [{ query: { term: { app_id: h } } }, { query: { term: { [h]: h } } }, { query: { wildcard: { [h]: `*${h}*` } } }, { query: { prefix: { page_url: h } } }, { query: { range: { [h]: { gte: h } } } }, { aggs: { t: { terms: { field: h } } } }, { sort: [{ [h]: 'asc' }] }]) {
        const r = await search(db, 'good', { params: {}, body }, { columns: true }, NOW)
        expect(r.ok, `${h} in ${JSON.stringify(body)}`).toBe(true)
        if ('query' in body) expect(r.ok && (r.value as any).hits.total.value, `${h} in ${JSON.stringify(body)}`).toBe(0)
      }
    }
    const c = await count(db, 'good', { params: {} })
    expect(c.ok && c.value.count).toBe(N)
  })
})
