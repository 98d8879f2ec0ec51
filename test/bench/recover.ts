/**
 * Recovery of failed events.
 * (1) Preview cost per event against enrich's own: bad rows made by enrich
 *     (a self-describing event whose schema no repository had), then, with
 *     the schema available, the preview's work per bad row (read it, apply a
 *     rename step, build and encode the collector payload, enrich it) next
 *     to enrich's own work on the original payload, in the same run.
 * (2) Bad rows recovered per second on a local stack (its own emulators):
 *     bad rows in the search store, replayed by `runRecovery` (select, fix,
 *     judge, claim and mark, write to the raw stream), end to end.
 * `npm run bench -- recover`
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { Enricher, type BatchContext } from '../../lib/core/enrich/enrich'
import { ENRICH_PROCESSOR } from '../../lib/core/enrich/version'
import { fixEvent, readBadRow, toCollectorPayload } from '../../lib/core/recover/events'
import { parseSteps } from '../../lib/core/recover/steps'
import { encodeCollectorPayload } from '../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../lib/core/thrift/types'
import { defaultResolver } from '../../lib/runtime/default-resolver'

const N = Number(process.env.BENCH_RECOVER_N ?? 2000)
const f = (n: number, d = 0) => n.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d })
const VENDOR = 'com.acme.bench'
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'

// A static repository holding 1-0-0 only; the events use 1-0-1, renamed by the steps.
const dir = mkdtempSync(join(tmpdir(), 'floe-bench-recover-'))
mkdirSync(join(dir, VENDOR, 'click', 'jsonschema'), { recursive: true })
writeFileSync(join(dir, VENDOR, 'click', 'jsonschema', '1-0-0'), JSON.stringify({
  $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
  self: { vendor: VENDOR, name: 'click', format: 'jsonschema', version: '1-0-0' },
  type: 'object', properties: { label: { type: 'string' }, n: { type: 'integer' } }, additionalProperties: false,
}))
const enricher = new Enricher({ resolver: defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '', FLOE_IGLU_DIRS: dir } }), processor: ENRICH_PROCESSOR, emitFailed: true })
const steps = parseSteps({ steps: [{ op: 'renameSchema', from: `iglu:${VENDOR}/click/jsonschema/1-0-1`, to: '1-0-0' }] })
if (!steps.ok) throw new Error(steps.errors.join('; '))

function payload(i: number, version: string): Buffer {
  const ev = {
    e: 'ue', p: 'web', tv: 'js-3.24.0', aid: 'bench', eid: randomUUID(), dtm: String(Date.now()), url: `https://shop.example.com/p/${i % 100}`,
    ue_px: Buffer.from(JSON.stringify({ schema: UE, data: { schema: `iglu:${VENDOR}/click/jsonschema/${version}`, data: { label: `b${i}`, n: i } } })).toString('base64url'),
  }
  return encodeCollectorPayload({
    schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: Date.now(), encoding: 'UTF-8', collector: 'bench', path: '/com.snowplowanalytics.snowplow/tp2',
    contentType: 'application/json', userAgent: 'Mozilla/5.0', headers: ['Host: bench'],
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [ev] }),
  })
}

const batch: BatchContext = { etlTimestamp: Date.now(), newEventId: randomUUID }
const broken = Array.from({ length: N }, (_, i) => payload(i, '1-0-1'))
const originals = Array.from({ length: N }, (_, i) => payload(i, '1-0-0'))
const badRows: string[] = []
for (const p of broken) for (const o of (await enricher.enrichRecord(p, batch)).outputs) if (o.kind === 'bad') badRows.push(o.json)
if (badRows.length !== N) throw new Error(`expected ${N} bad rows, got ${badRows.length}`)

async function timeEnrich(records: readonly Buffer[]): Promise<number> {
  const t0 = performance.now()
  let good = 0
  for (const r of records) for (const o of (await enricher.enrichRecord(r, batch)).outputs) if (o.kind === 'good') good++
  if (good !== records.length) throw new Error(`expected ${records.length} good events, got ${good}`)
  return performance.now() - t0
}
async function timePreview(rows: readonly string[]): Promise<number> {
  const t0 = performance.now()
  let good = 0
  for (const line of rows) {
    const read = readBadRow(line)
    if (!read.ok) throw new Error(read.reason)
    const fixed = fixEvent(read.event, steps.ok ? steps.value : (undefined as never))
    if (!fixed.ok) throw new Error(fixed.error)
    for (const o of (await enricher.enrichRecord(encodeCollectorPayload(toCollectorPayload(fixed.event, 'bench')), batch)).outputs) if (o.kind === 'good') good++
  }
  if (good !== rows.length) throw new Error(`expected ${rows.length} good events, got ${good}`)
  return performance.now() - t0
}

// warm both paths, then alternate three rounds each and keep the best
await timeEnrich(originals.slice(0, 200))
await timePreview(badRows.slice(0, 200))
let enrichMs = Infinity
let previewMs = Infinity
for (let round = 0; round < 3; round++) {
  enrichMs = Math.min(enrichMs, await timeEnrich(originals))
  previewMs = Math.min(previewMs, await timePreview(badRows))
}
console.log(`(1) per event, ${f(N)} events: enrich ${f((enrichMs * 1000) / N)} µs · preview (read bad row, rename step, payload, enrich) ${f((previewMs * 1000) / N)} µs · ratio ${f(previewMs / enrichMs, 2)}×`)

// (2) on a local stack
const { startLocalStack } = await import('../../lib/local/stack')
const { database } = await import('../../lib/aws/database')
const { loadBatch } = await import('../../lib/core/search/loader')
const stack = await startLocalStack({
  environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_IGLU_DIRS: dir, FLOE_LOG_LEVEL: 'warn', FLOE_USERNAME: 'floe', FLOE_PASSWORD: 'BenchPassword2024' },
  namePrefix: `benchrecover${process.pid}`,
  // the replayed payloads stay in the raw stream: the run alone is measured (not followed in the store)
  triggers: false,
})
try {
  const db = await database('search')
  await loadBatch(db, 'bad', badRows.map((text, i) => ({ id: String(i), text })), Date.now())
  const { runRecovery } = await import('../../lib/aws/recover-service')
  const t0 = performance.now()
  const r = await runRecovery({ selection: { query: undefined }, source: 'search', steps: steps.ok ? steps.value : (undefined as never), dryRun: false }, { followUntil: 0 })
  const s = (performance.now() - t0) / 1000
  if (r.replayed !== N || r.wouldBeGood !== N) throw new Error(`replayed ${r.replayed}, would be good ${r.wouldBeGood}, of ${N}`)
  console.log(`(2) local stack: ${f(N)} bad rows recovered in ${f(s, 2)} s: ${f(N / s)} bad rows/s (select, fix, judge, claim and mark, write to raw)`)
} finally {
  await stack.stop()
}
process.exit(0)
