/**
 * The loaders' core: a batch of stream records (`good` and `incomplete`
 * enriched TSV lines, `bad` rows) becomes upserts into the search store.
 * A record that is not what its stream carries is reported back (counted and
 * logged by the shell), never retried: it cannot load later either.
 */
import { badDocument, goodDocument, type BadDocument, type GoodDocument } from './documents'
import { upsertBad, upsertGood, type SearchDb } from './store'

export type LoaderStream = 'good' | 'incomplete' | 'bad'

export interface LoaderRecord {
  /** Where it came from, for messages (e.g. a sequence number). */
  readonly id: string
  readonly text: string
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

/** Loads a batch; the writes are one transaction, so a failed batch leaves nothing half-written and can be retried whole. */
export async function loadBatch(db: SearchDb, stream: LoaderStream, records: readonly LoaderRecord[], now: number): Promise<LoadOutcome> {
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
