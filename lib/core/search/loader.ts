/**
 * The loaders' core: a batch of stream records (`good` and `incomplete`
 * enriched TSV lines, `bad` rows, `raw` collector payloads for the Micro
 * API's `rawEvent`) becomes upserts into the search store.
 * A record that is not what its stream carries is reported back (counted and
 * logged by the shell), never retried: it cannot load later either.
 */
import { badDocument, goodDocument, type BadDocument, type GoodDocument } from './documents'
import { rawRowsOf, type RawRows } from './raw-events'
import { upsertBad, upsertGood, upsertRaw, type SearchDb } from './store'

export type LoaderStream = 'good' | 'incomplete' | 'bad' | 'raw'

export interface LoaderRecord {
  /** Where it came from, for messages (e.g. a sequence number). */
  readonly id: string
  readonly text: string
  /** The record's bytes (`raw`: binary Thrift; `text` is then not read). */
  readonly data?: Uint8Array
}

export interface Rejected {
  readonly id: string
  readonly error: string
  /** The record's first 200 characters. */
  readonly sample: string
}

export interface LoadOutcome {
  readonly loaded: number
  readonly rejected: readonly Rejected[]
}

/** Documents of a batch, and what could not become one. */
export function documentsOf(stream: LoaderStream, records: readonly LoaderRecord[], now: number): { good: GoodDocument[]; bad: BadDocument[]; rejected: Rejected[] } {
  const good: GoodDocument[] = []
  const bad: BadDocument[] = []
  const rejected: Rejected[] = []
  for (const r of records) {
    const d = stream === 'bad' ? badDocument(r.text, now) : goodDocument(r.text, stream === 'incomplete')
    if (!d.ok) rejected.push({ id: r.id, error: d.error, sample: r.text.slice(0, 200) })
    else if (stream === 'bad') bad.push(d.value as BadDocument)
    else good.push(d.value as GoodDocument)
  }
  return { good, bad, rejected }
}

/** What the collector received, from `raw` records: payloads that hold no tracker event with an id give nothing (enrich reports the unreadable ones). */
export function rawRowsOfBatch(records: readonly LoaderRecord[]): RawRows {
  const out: RawRows = { payloads: [], events: [] }
  for (const r of records) {
    const rows = rawRowsOf(r.data ?? Buffer.from(r.text, 'utf8'))
    for (const p of rows.payloads) out.payloads.push(p)
    for (const e of rows.events) out.events.push(e)
  }
  return out
}

/** Loads a batch; the writes are one transaction, so a failed batch leaves nothing half-written and can be retried whole. */
export async function loadBatch(db: SearchDb, stream: LoaderStream, records: readonly LoaderRecord[], now: number): Promise<LoadOutcome> {
  if (stream === 'raw') {
    const rows = rawRowsOfBatch(records)
    if (rows.events.length > 0) await db.sql.transaction(async (sql) => upsertRaw({ ...db, sql }, rows))
    return { loaded: rows.events.length, rejected: [] }
  }
  const { good, bad, rejected } = documentsOf(stream, records, now)
  if (good.length + bad.length > 0) {
    await db.sql.transaction(async (sql) => {
      const tx = { ...db, sql }
      if (good.length) await upsertGood(tx, good)
      if (bad.length) await upsertBad(tx, bad)
    })
  }
  return { loaded: good.length + bad.length, rejected }
}
