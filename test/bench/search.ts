/**
 * The search store.
 * (1) Loader throughput: enriched events per second loaded into the local
 *     store (PGlite over the wire, batches of 500 in one transaction each, as
 *     the loader function does), next to enrich's events per second on the
 *     same events in the same run: the loader should not be the bottleneck.
 * (2) Queries with 200,000 good events stored (spread over the last 7 days):
 *     p50/p99 of `_count`, a filtered `_search` page of 50, a
 *     `date_histogram` of the last 24 h, and `/micro/good` with a schema filter;
 *     (2b) the Tracking plans tab's views on the same events (a third tagged
 *     with one of 20 specifications): the list's counts, the detail, a draft
 *     tried against the newest 200 events (target p50 < 200 ms each).
 * (3) On a running stack (`npm start`'s settings), tracker send → visible
 *     through `_count`: p95 over 20 events sent one at a time.
 * (4) On the same stack with 13,000 events stored: p99 of `GET /health` and
 *     of collector requests while a slow search runs (30 wildcard terms on
 *     any field), against 200 ms.
 * `npm run bench -- search`
 */
import { buildSelfDescribingEvent, newTracker } from '@snowplow/node-tracker'
import { randomUUID } from 'node:crypto'
import { Enricher, type BatchContext } from '../../lib/core/enrich/enrich'
import { ENRICH_PROCESSOR } from '../../lib/core/enrich/version'
import { defaultResolver } from '../../lib/runtime/default-resolver'
import { documentsOf, loadBatch } from '../../lib/core/search/loader'
import { micro, microText } from '../../lib/core/search/micro'
import { count, search } from '../../lib/core/search/query'
import { countDocuments, migrate, schemaForPrefix, searchDb } from '../../lib/core/search/store'
import { encodeCollectorPayload } from '../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../lib/core/thrift/types'
import { newPostgresPassword, servePostgres } from '../../lib/local/postgres-server'
import { openPglite, startAutovacuum } from '../../lib/local/search-store'
import { startLocalStack } from '../../lib/local/stack'
import { postgresClient } from '../../lib/runtime/postgres'
import { lastSeen, observedCounts, observeSpec } from '../../lib/core/tracking-plans/observed'
import { tryDraft } from '../../lib/core/tracking-plans/try-draft'

const f = (n: number) => Math.round(n).toLocaleString('en')
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
const PD = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

function event(i: number, now: number): Record<string, string> {
  const common = {
    tv: 'js-3.24.0', p: 'web', aid: ['shop', 'blog', 'app'][i % 3]!, eid: `c6ef3124-b53a-4b13-a233-${String(i).padStart(12, '0')}`, dtm: String(now - i * 3000),
    duid: `85094061-f702-4b62-a46d-${String(i % 5000).padStart(12, '0')}`, url: `https://shop.example.com/products/${i % 500}`,
    cx: b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: WEB_PAGE, data: { id: `5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e${String(1000 + (i % 9000)).padStart(4, '0')}` } }] }),
  }
  // the event type does not follow the app id: every app has every kind of event
  const kind = Math.floor(i / 3) % 3
  if (kind === 0) return { ...common, e: 'pv', page: `Product ${i}` }
  if (kind === 1) return { ...common, e: 'ue', ue_px: b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { targetUrl: `https://example.com/${i}` } } }) }
  return { ...common, e: 'se', se_ca: 'shop', se_ac: 'add-to-basket', se_la: `sku-${i}`, se_va: '19.99' }
}

async function enrichedLines(n: number, now: number): Promise<{ lines: string[]; cpuMs: number }> {
  const batch: BatchContext = { etlTimestamp: now, newEventId: () => randomUUID() }
  const lines: string[] = []
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    const rec = encodeCollectorPayload({
      schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '203.0.113.9', timestamp: now - i * 3000, encoding: 'UTF-8', collector: 'floe-0.1.0-kinesis', userAgent: 'Mozilla/5.0',
      path: '/com.snowplowanalytics.snowplow/tp2', body: JSON.stringify({ schema: PD, data: [event(i, now)] }), contentType: 'application/json; charset=utf-8', headers: [], hostname: 'collector.example.com',
    })
    const out = await enricher.enrichRecord(rec, batch)
    for (const o of out.outputs) if (o.kind === 'good') lines.push((o as { tsv: string }).tsv)
  }
  const c = process.cpuUsage(t0)
  return { lines, cpuMs: (c.user + c.system) / 1000 }
}

// (1) loader throughput vs enrich
const now = Date.now()
const N1 = 10_000
await enrichedLines(2_000, now) // warm up: schemas resolved and cached, code compiled
const { lines, cpuMs } = await enrichedLines(N1, now)
const enrichRate = (lines.length / cpuMs) * 1000
const store = await openPglite()
const server = await servePostgres(store.pg, { password: newPostgresPassword() })
const sql = postgresClient(server.url)
const db = searchDb(sql, 'bench')
await migrate(db)
const BATCH = 500
const t1 = performance.now()
for (let i = 0; i < lines.length; i += BATCH) await loadBatch(db, 'good', lines.slice(i, i + BATCH).map((text, j) => ({ id: String(i + j), text })), now)
const loadRate = (lines.length / (performance.now() - t1)) * 1000
// the loader function's own work (documents and statements), without the database's
const c0 = process.cpuUsage()
for (let i = 0; i < lines.length; i += BATCH) for (const d of documentsOf('good', lines.slice(i, i + BATCH).map((text, j) => ({ id: String(i + j), text })), now).good) JSON.stringify(d.doc)
const c1 = process.cpuUsage(c0)
const ownRate = (lines.length / ((c1.user + c1.system) / 1000)) * 1000
console.log(`(1) ${f(lines.length)} enriched events`)
console.log(`    enrich:  ${f(enrichRate)} events/CPU-s (one core)`)
console.log(`    loader, its own work (documents, statements):        ${f(ownRate)} events/CPU-s, ratio to enrich ${(ownRate / enrichRate).toFixed(2)}`)
console.log(`    loader into the local store (PGlite in this process): ${f(loadRate)} events/s, ratio to enrich ${(loadRate / enrichRate).toFixed(2)}  (target ≥ 1: ${loadRate >= enrichRate ? 'met' : 'NOT met'})`)
console.log(`      (batches of ${BATCH}, one transaction each, over the wire; PGlite's own insert work is most of it)`)

// (2) queries over 200,000 events: the same lines with new ids and times spread over 7 days
const N2 = 200_000
const EID = 6 // event_id column
const TSTAMP = 3 // collector_tstamp column
const t2 = performance.now()
for (let start = lines.length; start < N2; start += BATCH) {
  const recs = []
  for (let i = start; i < Math.min(N2, start + BATCH); i++) {
    const cols = lines[i % lines.length]!.split('\t')
    cols[EID] = `a0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
    cols[TSTAMP] = new Date(now - Math.floor((i / N2) * 7 * 86_400_000)).toISOString().replace('T', ' ').replace('Z', '')
    recs.push({ id: String(i), text: cols.join('\t') })
  }
  await loadBatch(db, 'good', recs, now)
}
const maintenance = startAutovacuum(sql, { intervalMs: 3_600_000 })
const vacuumed = await maintenance.runOnce() // what the running stack's maintenance does within 30 s
await maintenance.stop()
console.log(`\n(2) ${f(await countDocuments(db, 'good'))} good events stored (filled in ${((performance.now() - t2) / 1000).toFixed(0)} s; then vacuumed and analysed: ${vacuumed.join(', ')})`)
const deps = { lookupSchema: async () => ({ ok: false as const, errors: [] }) }
const queries: [string, () => Promise<unknown>][] = [
  ['_count', () => count(db, 'good', { params: {} })],
  ['_search app_id:shop AND event:unstruct, page of 50', () => search(db, 'good', { params: { q: 'app_id:shop AND event:unstruct', size: '50', sort: 'collector_tstamp:desc' } })],
  ['_search matching nothing (worst case), page of 50', () => search(db, 'good', { params: { q: 'app_id:nope AND event:unstruct', size: '50', sort: 'collector_tstamp:desc' } })],
  ['date_histogram, last 24 h, 1 h buckets', () => search(db, 'good', { params: {}, body: { size: 0, query: { range: { collector_tstamp: { gte: 'now-24h' } } }, aggs: { h: { date_histogram: { field: 'collector_tstamp', fixed_interval: '1h' } } } } })],
  [
    '/micro/good schema filter, limit 50',
    async () => {
      const m = await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ schema: LINK_CLICK, limit: 50 }) }, deps)
      await microText(m) // the answer is read page by page as it is written
      return m
    },
  ],
]
for (const [name, q] of queries) {
  const r = (await q()) as { ok?: boolean; status?: number }
  if (r.ok === false || (r.status !== undefined && r.status !== 200)) throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`)
  for (let i = 0; i < 3; i++) await q()
  const ms: number[] = []
  for (let i = 0; i < 30; i++) {
    const t = performance.now()
    await q()
    ms.push(performance.now() - t)
  }
  console.log(`    ${name.padEnd(52)} p50 ${pct(ms, 50).toFixed(1)} ms  p99 ${pct(ms, 99).toFixed(1)} ms  (target p50 < 100 ms: ${pct(ms, 50) < 100 ? 'met' : 'NOT met'})`)
}

// (2b) the Tracking plans tab's views over the same 200,000 events: a third of them (the self-describing ones)
// tagged with one of 20 specifications (spec_ids set in place, as the loader sets them from the
// event_specification entities), and 2,000 bad rows naming a broken rule of one of them
const SPECS = Array.from({ length: 20 }, (_, k) => `5bec0000-0000-4000-8000-${String(k).padStart(12, '0')}`)
const tb = performance.now()
await sql.query(`UPDATE "bench".good_events SET spec_ids = jsonb_build_array(('5bec0000-0000-4000-8000-' || lpad((abs(hashtext(id)) % 20)::text, 12, '0'))) WHERE event_type = 'unstruct'`)
const badRecs = Array.from({ length: 2_000 }, (_, i) => {
  const spec = SPECS[i % SPECS.length]!
  const row = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/enrichment_failures/jsonschema/2-0-0', data: { processor: { artifact: 'floe', version: '0' }, failure: { timestamp: new Date(now - i * 30_000).toISOString(), messages: [{ enrichment: { schemaKey: 'iglu:com.snowplowanalytics.snowplow.enrichments/event_spec_enrichment_config/jsonschema/1-0-0', identifier: 'event-specification' }, message: { error: `event specification "Spec ${i % 20}" (${spec}, version 1): event ${LINK_CLICK}: $.targetUrl: must match pattern "^https://shop" (${i})` } }] }, payload: {} } }
  return { id: `bad${i}`, text: JSON.stringify(row) }
})
for (let i = 0; i < badRecs.length; i += BATCH) await loadBatch(db, 'bad', badRecs.slice(i, i + BATCH), now)
await sql.query('ANALYZE "bench".good_events')
await sql.query('ANALYZE "bench".bad_rows')
const tagged = (await sql.query<{ n: string }>(`SELECT count(*) AS n FROM "bench".good_events WHERE spec_ids <> '[]'::jsonb`)).rows[0]!.n
console.log(`\n(2b) the Tracking plans tab: ${f(Number(tagged))} of the events tagged with 20 specifications, 2,000 bad rows naming them (set up in ${((performance.now() - tb) / 1000).toFixed(0)} s)`)
const draft = { name: 'Link click', event: { source: LINK_CLICK, schema: { type: 'object', properties: { targetUrl: { type: 'string', pattern: '^https://shop' } }, required: ['targetUrl'] } } }
const tabViews: [string, () => Promise<unknown>][] = [
  ['list: counts of every specification (hour, day, broken)', () => observedCounts(db, now)],
  ['list: "never seen" check of a published specification', () => lastSeen(db, 'a-specification-never-seen')],
  ['detail: counts, histogram, entities, broken rules', () => observeSpec(db, SPECS[3]!, [WEB_PAGE], now)],
  ['try a draft against the newest 200 events', () => tryDraft(db, SPECS[3]!, draft, 200)],
]
for (const [name, q] of tabViews) {
  for (let i = 0; i < 3; i++) await q()
  const ms: number[] = []
  for (let i = 0; i < 30; i++) {
    const t = performance.now()
    await q()
    ms.push(performance.now() - t)
  }
  console.log(`    ${name.padEnd(56)} p50 ${pct(ms, 50).toFixed(1)} ms  p99 ${pct(ms, 99).toFixed(1)} ms  (target p50 < 200 ms: ${pct(ms, 50) < 200 ? 'met' : 'NOT met'})`)
}
const seen = await observeSpec(db, SPECS[3]!, [WEB_PAGE], now)
const tried = await tryDraft(db, SPECS[3]!, draft, 200)
console.log(`    (one specification: ${f(seen.day)} tagged in the last day, ${f(seen.brokenDay)} bad rows, ${seen.brokenRules.length} distinct broken rules read; the draft: ${tried.ok ? `${tried.matched} match, ${tried.violated} violate` : tried.message})`)
await sql.close()
await server.close()
await store.close()

// (3) send → visible on a running stack with npm start's trigger settings
const stack = await startLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_LOG_LEVEL: 'warn', FLOE_USERNAME: 'floe', FLOE_PASSWORD: 'BenchPassword2024' }, namePrefix: `benchsearch${process.pid}` })
try {
  const url = new URL(stack.url)
  const t = newTracker({ namespace: 'bench', appId: 'bench', encodeBase64: false }, { endpoint: url.hostname, port: Number(url.port), protocol: 'http', eventMethod: 'post', bufferSize: 1 })
  const countNow = async () => ((await (await fetch(`${stack.url}/search-store/good/_count`, { headers: { authorization: `Basic ${Buffer.from('floe:BenchPassword2024').toString('base64')}` } })).json()) as { count: number }).count
  const lat: number[] = []
  for (let i = 0; i < 20; i++) {
    const before = await countNow()
    const t0 = performance.now()
    t.track(buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { targetUrl: `https://example.com/${i}` } } }))
    while ((await countNow()) <= before) await new Promise((r) => setTimeout(r, 20))
    lat.push(performance.now() - t0)
  }
  console.log(`\n(3) tracker send → visible through _count, 20 events: p50 ${f(pct(lat, 50))} ms, p95 ${f(pct(lat, 95))} ms (target p95 < 2,000 ms: ${pct(lat, 95) < 2000 ? 'met' : 'NOT met'})`)

  // (4) /health and the collector while a slow search runs
  const N4 = 13_000
  const sql4 = postgresClient(stack.endpoints.postgres!)
  const db4 = searchDb(sql4, schemaForPrefix(`benchsearch${process.pid}`))
  for (let start = 0; start < N4; start += BATCH) {
    const recs = []
    for (let i = start; i < Math.min(N4, start + BATCH); i++) {
      const cols = lines[i % lines.length]!.split('\t')
      cols[EID] = `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
      recs.push({ id: `s${i}`, text: cols.join('\t') })
    }
    await loadBatch(db4, 'good', recs, Date.now())
  }
  await sql4.close()
  const auth = { authorization: `Basic ${Buffer.from('floe:BenchPassword2024').toString('base64')}` }
  const q = Array.from({ length: 30 }, (_, i) => `*x${i}y*`).join(' OR ')
  const ts = performance.now()
  let settled = false
  const slow = fetch(`${stack.url}/search-store/good/_search?q=${encodeURIComponent(q)}`, { headers: auth }).then(async (r) => {
    await r.arrayBuffer()
    settled = true
    return r.status
  })
  const health: number[] = []
  const collector: number[] = []
  for (let i = 0; i < 2_000 && !settled; i++) {
    let t = performance.now()
    await (await fetch(`${stack.url}/health`)).arrayBuffer()
    health.push(performance.now() - t)
    t = performance.now()
    await (await fetch(`${stack.url}/i?e=pv&eid=bench-${i}&url=http%3A%2F%2Fa.test%2F`)).arrayBuffer()
    collector.push(performance.now() - t)
  }
  const status = await slow
  const p99h = pct(health, 99)
  const p99c = pct(collector, 99)
  console.log(`\n(4) a slow search (30 wildcard terms over ${f(N4)} events) answered ${status} after ${f(performance.now() - ts)} ms; meanwhile:`)
  console.log(`    GET /health        ${String(health.length).padStart(5)} requests  p99 ${p99h.toFixed(1)} ms  (target < 200 ms: ${p99h < 200 ? 'met' : 'NOT met'})`)
  console.log(`    collector GET /i   ${String(collector.length).padStart(5)} requests  p99 ${p99c.toFixed(1)} ms  (target < 200 ms: ${p99c < 200 ? 'met' : 'NOT met'})`)
} finally {
  await stack.stop()
}
