/**
 * Enrich, one core, in process: events per second for a realistic mix
 * (page views with two contexts, self-describing events, structured events,
 * some invalid) against the same run's ceiling — a pass that only decodes the
 * Thrift record, parses the JSON body and writes a TSV line — plus the memory an
 * outcome retains (heap after full collections, with 5,000 outcomes held),
 * and the CPU time an event of each kind of the mix takes.
 * Both passes get the same records, consume their results and are timed in CPU
 * time, alternately, after the same warm-up.
 * A second configuration runs the same mix through the common production set
 * of enrichments (campaign attribution, referer parser, ua-parser, YAUAA, IP
 * lookups on MaxMind's City test database, event fingerprint, anonymised IP,
 * cookie extractor), with the CPU time each enrichment takes per event.
 * A third runs it with one JavaScript enrichment (a script reading two fields
 * and returning one context), against the run without it.
 * Then the API request enrichment against an API in a child process: with a
 * warm cache (CPU time, ratio to the run without it) and with no cache
 * (events per second with 256 events in flight, and the 99th percentile of
 * the time the step adds to an event).
 * `npm run bench -- enrich`; profile with `node --cpu-prof --import tsx test/bench/enrich.ts`.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Enricher } from '../../lib/core/enrich/enrich'
import type { Enrichment } from '../../lib/core/enrich/steps'
import { ENRICH_PROCESSOR } from '../../lib/core/enrich/version'
import { defaultResolver } from '../../lib/runtime/default-resolver'
import { decodeCollectorPayload, encodeCollectorPayload } from '../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../lib/core/thrift/types'
import { buildSteps, productionEnrichments, productionSteps } from '../support/enrichments'
import { apiRequestStep, lookupServices, p99, startBenchApi, timedStep, wallRate } from '../support/api-request-bench'

const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })

/** The production set, built as at start; each step timed (CPU) when `timing` is on. */
const set = productionEnrichments()
const productionSet = await productionSteps(resolver, set)
let timing = false
const stepMicros = new Map<string, number>()
const timed: Enrichment[] = productionSet.map((e) => ({
  id: e.id,
  order: e.order,
  run(ev, input) {
    if (!timing) return e.run(ev, input)
    const t0 = process.hrtime.bigint()
    const r = e.run(ev, input)
    stepMicros.set(e.id, (stepMicros.get(e.id) ?? 0) + Number(process.hrtime.bigint() - t0) / 1000)
    return r
  },
}))
const setEnricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: timed })

/** One JavaScript enrichment adding one context. */
const JS_SCRIPT = 'function process(event) { return [{ schema: "iglu:com.snowplowanalytics.iglu/anything-a/jsonschema/1-0-0", data: { appId: event.getApp_id(), path: event.getPage_urlpath() } }] }'
const jsConfig = { schema: 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'javascript_script_config', enabled: true, parameters: { script: Buffer.from(JS_SCRIPT).toString('base64') } } }
const jsEnricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: await buildSteps([{ source: 'javascript.json', text: JSON.stringify(jsConfig) }], resolver) })

/** A pool of current user agents (desktop, phone, tablet browsers and a robot), as real traffic repeats them. */
const UAS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
]
/** 2,000 visitors' addresses (10 events each on average), in ranges of MaxMind's City test database (found) and elsewhere (not found). */
const PREFIXES = ['175.16.199', '81.2.69', '89.160.20', '67.43.156', '216.160.83', '203.0.113', '198.51.100', '2.125.160']
const IPS = Array.from({ length: 2000 }, (_, i) => `${PREFIXES[i % PREFIXES.length]}.${Math.floor(i / PREFIXES.length) % 256}`)
const UA = UAS[0]!
const PD = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const ctx = (i: number) => ({
  schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0',
  data: [
    { schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: `5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e${String(1000 + (i % 9000)).padStart(4, '0')}` } },
    { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: `https://example.com/p/${i}`, elementId: 'nav', elementClasses: ['a', 'b'] } },
  ],
})
const common = (i: number) => ({
  tv: 'js-3.24.0', p: 'web', aid: 'shop', eid: `c6ef3124-b53a-4b13-a233-${String(i).padStart(12, '0')}`, dtm: String(1714470000000 + i), stm: String(1714470000100 + i),
  duid: '85094061-f702-4b62-a46d-20f7226b4741', sid: 'be9520e7-16a5-4d4e-afa1-8e269f99a1cf', vid: '3', res: '1920x1080', vp: '1280x900', ds: '1280x4000', cs: 'UTF-8',
  lang: 'en-GB', tz: 'Europe/London', cd: '24', cookie: '1', url: `https://shop.example.com/products/${i}?utm_source=news&utm_medium=email&utm_campaign=spring`,
  refr: ['https://www.google.com/search?q=shoes', 'https://www.facebook.com/', 'https://shop.example.com/', 'https://news.example.org/article'][i % 4]!,
})

function event(i: number): Record<string, string> {
  switch (i % 10) {
    case 0: case 1: case 2: case 3:
      return { ...common(i), e: 'pv', page: `Product ${i}`, cx: Buffer.from(JSON.stringify(ctx(i))).toString('base64url') }
    case 4: case 5: case 6:
      return { ...common(i), e: 'ue', ue_px: Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: `https://example.com/${i}` } } })).toString('base64url'), cx: Buffer.from(JSON.stringify(ctx(i))).toString('base64url') }
    case 7: case 8:
      return { ...common(i), e: 'se', se_ca: 'shop', se_ac: 'add-to-basket', se_la: `sku-${i}`, se_va: '19.99' }
    default:
      // invalid: link_click without targetUrl
      return { ...common(i), e: 'ue', ue_pr: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { elementId: 'x' } } }) }
  }
}

const N = 20_000
const records = Array.from({ length: N }, (_, i) =>
  encodeCollectorPayload({
    schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: IPS[(i * 7919) % IPS.length]!, timestamp: 1714470000500 + i, encoding: 'UTF-8', collector: 'floe-0.1.0-kinesis', userAgent: UAS[i % UAS.length]!,
    path: '/com.snowplowanalytics.snowplow/tp2', body: JSON.stringify({ schema: PD, data: [event(i)] }), contentType: 'application/json; charset=utf-8',
    headers: ['Host: collector.example.com', `User-Agent: ${UAS[i % UAS.length]!}`, 'Accept: */*', 'application/json; charset=utf-8', `Cookie: sp=c5f3a09f-75f8-4309-bec5-fea560f78455; _ga=GA1.2.${i}`], hostname: 'collector.example.com',
    networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
  }),
)

/** The ceiling: decode, parse the body, write a TSV line of the parameters. */
function ceilingPass(rec: Uint8Array): string {
  const d = decodeCollectorPayload(rec)
  if (!d.ok) return ''
  const body = JSON.parse(d.payload.body!) as { data: Record<string, string>[] }
  const cols = Array<string>(131).fill('')
  const e = body.data[0]!
  let i = 0
  for (const k in e) cols[i++ % 131] = e[k]!
  return cols.join('\t')
}

/**
 * Events per second of wall time and per second of this process's CPU time.
 * On a shared machine the wall-clock rate understates what one core does; the
 * CPU-time rate is what the process got out of the core it ran on.
 */
async function timeIt(fn: () => Promise<number>): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const n = await fn()
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  const c = process.cpuUsage(c0)
  return { wall: n / wall, cpu: n / ((c.user + c.system) / 1e6) }
}

let sink = 0
const ceilingRun = async () => {
  for (const r of records) sink += ceilingPass(r).length
  return records.length
}
let good = 0
let failed = 0
const runWith = (e: Enricher) => async () => {
  const batch = { etlTimestamp: Date.now(), newEventId: () => '00000000-0000-4000-8000-000000000000' }
  good = 0
  failed = 0
  for (const r of records) {
    const o = await e.enrichRecord(r, batch)
    for (const out of o.outputs) {
      if (out.kind === 'good') good++
      else if (out.kind === 'bad') failed++
      sink += out.kind === 'bad' ? out.json.length : out.tsv.length
    }
  }
  return records.length
}
const enrichRun = runWith(enricher)
const setRun = runWith(setEnricher)
const jsRun = runWith(jsEnricher)

// Warm up (schema cache, JIT: the enrich path has many functions, and V8 takes
// a few passes of 20,000 events to optimise them all), then alternate the
// two passes so both see the same machine conditions; best and median of each.
for (let i = 0; i < 3; i++) {
  await ceilingRun()
  await enrichRun()
  await setRun()
  await jsRun()
}
const ceilings: { wall: number; cpu: number }[] = []
const enriches: { wall: number; cpu: number }[] = []
const sets: { wall: number; cpu: number }[] = []
const jss: { wall: number; cpu: number }[] = []
for (let i = 0; i < 5; i++) {
  ceilings.push(await timeIt(ceilingRun))
  enriches.push(await timeIt(enrichRun))
  sets.push(await timeIt(setRun))
  jss.push(await timeIt(jsRun))
}
// Where the set's time goes: one more pass with each enrichment timed.
timing = true
await setRun()
timing = false
const best = (xs: { wall: number; cpu: number }[]) => ({ wall: Math.max(...xs.map((x) => x.wall)), cpu: Math.max(...xs.map((x) => x.cpu)) })
const median = (xs: { cpu: number }[]) => [...xs.map((x) => x.cpu)].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ceiling = best(ceilings)
const enrich = best(enriches)
const rate = enrich.cpu
const ratio = enrich.cpu / ceiling.cpu
// CPU time per event of each kind in the mix (same records, grouped by kind).
const KINDS = ['page view, 2 contexts', 'self-describing, 2 contexts', 'structured', 'invalid (failed event + bad row)'] as const
const kindOf = (i: number) => (i % 10 < 4 ? 0 : i % 10 < 7 ? 1 : i % 10 < 9 ? 2 : 3)
const byKind = KINDS.map((_, k) => records.filter((_, i) => kindOf(i) === k))
const perKind = byKind.map((rs) => {
  const batch = { etlTimestamp: Date.now(), newEventId: () => '00000000-0000-4000-8000-000000000000' }
  let best = Infinity
  for (let round = 0; round < 3; round++) {
    const c0 = process.cpuUsage()
    for (const r of rs) {
      const o = enricher.enrichRecord(r, batch)
      if (!(o instanceof Promise)) sink += o.outputs.length
      else throw new Error('a cached schema was looked up again')
    }
    const c = process.cpuUsage(c0)
    best = Math.min(best, (c.user + c.system) / rs.length)
  }
  return best
})

// Retained memory: heap after a full collection with 5,000 outcomes held, minus before.
// (Without collections on both sides the difference mostly counts garbage.)
setFlagsFromString('--expose-gc')
const gcOnce = runInNewContext('gc') as () => void
// several full collections: weak maps (kept validation answers) need more than one to let go
const gc = () => {
  for (let i = 0; i < 4; i++) gcOnce()
}
const batch = { etlTimestamp: Date.now(), newEventId: () => '00000000-0000-4000-8000-000000000000' }
const slice = records.slice(0, 5000)
gc()
const before = process.memoryUsage().heapUsed
const kept = []
for (const r of slice) kept.push(await enricher.enrichRecord(r, batch))
gc()
const perEvent = (process.memoryUsage().heapUsed - before) / kept.length

console.log(`events: ${N} (${good} good, ${failed} bad per pass; mix: 40% page views with 2 contexts, 30% self-describing with 2 contexts, 20% structured, 10% invalid)`)
const f = (n: number) => Math.round(n).toLocaleString('en')
console.log(`ceiling (decode + JSON.parse + TSV join): ${f(ceiling.cpu)} events/CPU-s best of 5 (${f(ceiling.wall)} events/s wall clock)`)
console.log(`enrich:                                    ${f(enrich.cpu)} events/CPU-s best of 5 (${f(enrich.wall)} events/s wall clock)`)
console.log(`ratio enrich / ceiling (CPU time):         ${ratio.toFixed(3)} (medians: ${f(median(enriches))} / ${f(median(ceilings))} = ${(median(enriches) / median(ceilings)).toFixed(3)})`)
console.log(`memory per enriched outcome (retained):    ${Math.round(perEvent).toLocaleString('en')} bytes`)
console.log(`CPU per event by kind (best of 3):         ${KINDS.map((k, i) => `${k} ${perKind[i]!.toFixed(1)} µs`).join('; ')}`)
console.log(`targets: ≥ 20,000 events/s/core ${rate >= 20_000 ? 'met' : 'NOT met'}; ≥ 0.3 of the ceiling ${ratio >= 0.3 ? 'met' : 'NOT met'}`)
const withSet = best(sets)
const setRatio = withSet.cpu / enrich.cpu
console.log(`\nwith the production set (${productionSet.map((e) => e.id).join(', ')}; referer database: ${set.referers}; ${UAS.length} user agents, ${IPS.length} addresses):`)
console.log(`enrich + set:                              ${f(withSet.cpu)} events/CPU-s best of 5 (${f(withSet.wall)} events/s wall clock)`)
console.log(`ratio with / without the set (CPU time):   ${setRatio.toFixed(3)} (medians: ${f(median(sets))} / ${f(median(enriches))} = ${(median(sets) / median(enriches)).toFixed(3)})`)
const steps = [...stepMicros].sort((a, b) => b[1] - a[1])
console.log(`CPU per event by enrichment (one pass):    ${steps.map(([id, us]) => `${id} ${(us / N).toFixed(2)} µs`).join('; ')}`)
console.log(`targets with the set: ≥ 10,000 events/s/core ${withSet.cpu >= 10_000 ? 'met' : 'NOT met'}; ≥ 0.5 of the run without ${setRatio >= 0.5 ? 'met' : 'NOT met'}`)
const withJs = best(jss)
const jsRatio = withJs.cpu / enrich.cpu
console.log(`\nwith one JavaScript enrichment adding one context (QuickJS sandbox; the script reads app_id and page_urlpath):`)
console.log(`enrich + JavaScript:                       ${f(withJs.cpu)} events/CPU-s best of 5 (${f(withJs.wall)} events/s wall clock)`)
console.log(`ratio with / without it (CPU time):        ${jsRatio.toFixed(3)} (medians: ${f(median(jss))} / ${f(median(enriches))} = ${(median(jss) / median(enriches)).toFixed(3)}); CPU per event added: ${(1e6 / withJs.cpu - 1e6 / enrich.cpu).toFixed(1)} µs`)
console.log(`target with JavaScript: ≥ 0.5 of the run without ${jsRatio >= 0.5 ? 'met' : 'NOT met'}`)
if (sink < 0 || kept.length < 0) console.log(sink)

// The API request enrichment: warm cache (one answer per visitor address, all kept) and no cache.
const api = await startBenchApi()
const services = lookupServices()
const uri = `${api.url}/geo/{{k}}?app={{app}}`
const warmEnricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: [await apiRequestStep(resolver, uri, 'user_ipaddress', { size: 5000, ttl: 3600 }, services)] })
const warmRun = runWith(warmEnricher)
for (let i = 0; i < 2; i++) await warmRun()
const plains: { wall: number; cpu: number }[] = []
const warms: { wall: number; cpu: number }[] = []
for (let i = 0; i < 5; i++) {
  plains.push(await timeIt(enrichRun))
  warms.push(await timeIt(warmRun))
}
const warmRatio = best(warms).cpu / best(plains).cpu
const latencies: number[] = []
const coldEnricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: [timedStep(await apiRequestStep(resolver, uri, 'event_id', { size: 0, ttl: 0 }, services), latencies)] })
const coldRecords = records.slice(0, 5000)
await wallRate(coldEnricher, coldRecords.slice(0, 1000), 256)
latencies.length = 0
const coldRate = await wallRate(coldEnricher, coldRecords, 256)
const plainRate = await wallRate(enricher, coldRecords, 256)
console.log(`\nwith the API request enrichment (one context from a local API in another process):`)
console.log(`warm cache (2,000 addresses, all kept):    ${f(best(warms).cpu)} events/CPU-s best of 5; ratio with / without ${warmRatio.toFixed(3)} (medians: ${(median(warms) / median(plains)).toFixed(3)}); target ≥ 0.5 ${warmRatio >= 0.5 ? 'met' : 'NOT met'}`)
console.log(`no cache (one request per event, 256 in flight): ${f(coldRate)} events/s wall clock (without the enrichment: ${f(plainRate)}); added latency per event p99 ${p99(latencies).toFixed(1)} ms, median ${[...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)]!.toFixed(1)} ms (${latencies.length} events)`)
api.stop()
await services.close()
