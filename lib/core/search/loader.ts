/**
 * The loaders' core: a batch of stream records (`good` and `incomplete`
 * enriched TSV lines, `bad` rows, `raw` collector payloads for the Micro
 * API's `rawEvent`) becomes upserts into the search store.
 * A record that is not what its stream carries is reported back (counted and
 * logged by the shell), never retried: it cannot load later either.
 */
import { badDocument, goodDocument, type BadDocument, type GoodDocument } from './documents'
import { rawRowsOf, type RawRows } from './raw-events'
import { fallbackForm, sanitizeColumn } from './sanitize'
import { upsertBad, upsertGood, upsertRaw, type SearchDb } from './store'
import { writingTransaction } from './store-watch'

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

/** A document the store refused even sanitized, stored in its fallback form (see `fallbackForm`). */
export interface Fallback {
  readonly id: string
  readonly error: string
}

export interface LoadOutcome {
  readonly loaded: number
  readonly rejected: readonly Rejected[]
  /** Documents stored in their fallback form (none in a normal batch). */
  readonly fallbacks?: readonly Fallback[]
}

/**
 * Whether an error says the store cannot be reached or cannot take writes
 * now (a broken or refused connection, the server shutting down, out of
 * resources, a paused cluster), as opposed to refusing what was sent: such a
 * batch is retried whole later, never split or stored in another form.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : String(err)
  if (/^E[A-Z]+$/.test(code)) return true // ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, …: the socket
  if (/^(08|53|57|58)/.test(code)) return true // connection, resources, operator intervention, system
  const sqlState = /SQLState: ([0-9A-Z]{5})/.exec(message)?.[1]
  if (sqlState) return /^(08|53|57|58)/.test(sqlState)
  if (typeof e?.name === 'string' && /Resuming|Unavailable|Throttl|InternalServer|Timeout|Forbidden|AccessDenied|Credentials/i.test(e.name)) return true
  return /connection|connect|terminated|timeout|timed out|ECONN|socket|not (?:yet )?accepting|shutting down|starting up/i.test(message)
}

/** One transaction; it raises the store's change counter, which wakes `/micro/wait` (./store-watch.ts). */
async function write(db: SearchDb, good: readonly GoodDocument[], bad: readonly BadDocument[]): Promise<void> {
  await writingTransaction(db, async (sql) => {
    const tx = { ...db, sql }
    if (good.length) await upsertGood(tx, good)
    if (bad.length) await upsertBad(tx, bad)
  })
}

/**
 * Writes documents in one transaction; when the store refuses them (not when
 * it is unavailable), splits the batch in two and writes each half the same
 * way, so the records beside a refused one are stored as they are, and a
 * single refused record is stored in its fallback form. Only when that form
 * too is refused, or the store is unavailable, does the error reach the
 * caller (the batch is then retried: nothing is dropped).
 */
async function writeIsolating(db: SearchDb, good: readonly GoodDocument[], bad: readonly BadDocument[], fallbacks: Fallback[]): Promise<void> {
  try {
    await write(db, good, bad)
    return
  } catch (err) {
    if (isStoreUnavailable(err)) throw err
    if (good.length + bad.length > 1) {
      if (good.length > 1 || bad.length > 1) {
        const g = Math.ceil(good.length / 2)
        const b = Math.ceil(bad.length / 2)
        await writeIsolating(db, good.slice(0, g), bad.slice(0, b), fallbacks)
        await writeIsolating(db, good.slice(g), bad.slice(b), fallbacks)
      } else {
        await writeIsolating(db, good, [], fallbacks)
        await writeIsolating(db, [], bad, fallbacks)
      }
      return
    }
    const error = String((err as Error)?.message ?? err)
    const g = good.map((d) => ({ ...fallbackForm(d, error, ['appId', 'eventType', 'eventName', 'schema']), specIds: [] }))
    const b = bad.map((d) => ({ ...fallbackForm(d, error, ['failureType']), words: [], specIds: [] }))
    try {
      await write(db, g, b)
    } catch {
      throw err
    }
    fallbacks.push({ id: (good[0] ?? bad[0])!.id, error })
  }
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
    // the event id is a tracker's parameter, as sent: a key the store takes
    for (const e of rows.events) out.events.push({ ...e, eventId: sanitizeColumn(e.eventId, new Set())! })
  }
  return out
}

/**
 * Loads a batch; the writes are one transaction (split only around a record
 * the store refuses, see `writeIsolating`), so a batch that fails leaves
 * nothing half-written and can be retried whole.
 */
export async function loadBatch(db: SearchDb, stream: LoaderStream, records: readonly LoaderRecord[], now: number): Promise<LoadOutcome> {
  if (stream === 'raw') {
    const rows = rawRowsOfBatch(records)
    if (rows.events.length > 0) await db.sql.transaction(async (sql) => upsertRaw({ ...db, sql }, rows))
    return { loaded: rows.events.length, rejected: [] }
  }
  const { good, bad, rejected } = documentsOf(stream, records, now)
  const fallbacks: Fallback[] = []
  if (good.length + bad.length > 0) await writeIsolating(db, good, bad, fallbacks)
  return { loaded: good.length + bad.length, rejected, ...(fallbacks.length > 0 ? { fallbacks } : {}) }
}
