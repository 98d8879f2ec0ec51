/**
 * The search store's schema and statements: one set of SQL for PostgreSQL
 * wherever it runs (PGlite locally, Aurora through the RDS Data API on AWS),
 * behind the small `SqlClient` port each adapter implements. Values are
 * always parameters (`$1`, …), never SQL text. Schema changes are versioned
 * migrations, applied in order, each once.
 */
import type { BadDocument, GoodDocument } from './documents'

export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[] }>
  /** Runs `fn` in one transaction (all or nothing). */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>
}

export type SearchIndex = 'good' | 'bad'

export const MIGRATIONS: readonly { readonly version: number; readonly statements: readonly string[] }[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE good_events (
        id text PRIMARY KEY,
        collector_tstamp timestamptz NOT NULL,
        app_id text,
        event_type text,
        event_name text,
        schema_uri text,
        failed boolean NOT NULL DEFAULT false,
        doc jsonb NOT NULL,
        loaded_at timestamptz NOT NULL DEFAULT now()
      )`,
      'CREATE INDEX good_events_collector_tstamp ON good_events (collector_tstamp DESC)',
      'CREATE INDEX good_events_event_type ON good_events (event_type)',
      'CREATE INDEX good_events_schema_uri ON good_events (schema_uri)',
      'CREATE INDEX good_events_app_id ON good_events (app_id)',
      `CREATE TABLE bad_rows (
        id text PRIMARY KEY,
        failure_timestamp timestamptz NOT NULL,
        failure_type text,
        doc jsonb NOT NULL,
        loaded_at timestamptz NOT NULL DEFAULT now()
      )`,
      'CREATE INDEX bad_rows_failure_timestamp ON bad_rows (failure_timestamp DESC)',
      'CREATE INDEX bad_rows_failure_type ON bad_rows (failure_type)',
    ],
  },
]

export const TABLES: Record<SearchIndex, string> = { good: 'good_events', bad: 'bad_rows' }
/** The time column each index is searched and aged by. */
export const TIME_COLUMNS: Record<SearchIndex, string> = { good: 'collector_tstamp', bad: 'failure_timestamp' }

/** Applies the migrations not applied yet (in one transaction each); returns the versions applied now. */
export async function migrate(db: SqlClient): Promise<number[]> {
  await db.query('CREATE TABLE IF NOT EXISTS search_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
  const done = new Set((await db.query<{ version: number }>('SELECT version FROM search_schema_migrations')).rows.map((r) => Number(r.version)))
  const applied: number[] = []
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue
    await db.transaction(async (tx) => {
      for (const s of m.statements) await tx.query(s)
      // a concurrent start may have applied it: the primary key makes the second one fail and roll back
      await tx.query('INSERT INTO search_schema_migrations (version) VALUES ($1)', [m.version])
    })
    applied.push(m.version)
  }
  return applied
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Rows per INSERT statement (each takes a few parameters; PostgreSQL allows 65,535). */
const ROWS_PER_STATEMENT = 500

/** Inserts or updates good documents by id (a redelivered event replaces its earlier copy). */
export async function upsertGood(db: SqlClient, docs: readonly GoodDocument[]): Promise<void> {
  for (let i = 0; i < docs.length; i += ROWS_PER_STATEMENT) {
    const chunk = dedupe(docs.slice(i, i + ROWS_PER_STATEMENT))
    const params: unknown[] = []
    const rows = chunk.map((d) => {
      const n = params.length
      params.push(d.id, iso(d.collectorTstamp), d.appId, d.eventType, d.eventName, d.schema, d.failed, JSON.stringify(d.doc))
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, $${n + 8}::jsonb)`
    })
    await db.query(
      `INSERT INTO good_events (id, collector_tstamp, app_id, event_type, event_name, schema_uri, failed, doc) VALUES ${rows.join(', ')}
       ON CONFLICT (id) DO UPDATE SET collector_tstamp = EXCLUDED.collector_tstamp, app_id = EXCLUDED.app_id, event_type = EXCLUDED.event_type,
         event_name = EXCLUDED.event_name, schema_uri = EXCLUDED.schema_uri, failed = EXCLUDED.failed, doc = EXCLUDED.doc, loaded_at = now()`,
      params,
    )
  }
}

/** Inserts bad rows by id (the same row twice is stored once). */
export async function upsertBad(db: SqlClient, docs: readonly BadDocument[]): Promise<void> {
  for (let i = 0; i < docs.length; i += ROWS_PER_STATEMENT) {
    const chunk = dedupe(docs.slice(i, i + ROWS_PER_STATEMENT))
    const params: unknown[] = []
    const rows = chunk.map((d) => {
      const n = params.length
      params.push(d.id, iso(d.timestamp), d.failureType, JSON.stringify(d.doc))
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3}, $${n + 4}::jsonb)`
    })
    await db.query(`INSERT INTO bad_rows (id, failure_timestamp, failure_type, doc) VALUES ${rows.join(', ')} ON CONFLICT (id) DO NOTHING`, params)
  }
}

/** One row per id within a statement (PostgreSQL refuses to update a row twice in one INSERT); the last copy wins. */
function dedupe<T extends { id: string }>(docs: readonly T[]): T[] {
  const byId = new Map<string, T>()
  for (const d of docs) byId.set(d.id, d)
  return [...byId.values()]
}

export async function countDocuments(db: SqlClient, index: SearchIndex): Promise<number> {
  const r = await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${TABLES[index]}`)
  return Number(r.rows[0]!.n)
}

/** Empties an index. */
export async function deleteIndex(db: SqlClient, index: SearchIndex): Promise<void> {
  await db.query(`DELETE FROM ${TABLES[index]}`)
}

/** Deletes the documents older than `days` (by each index's time field); returns how many went. */
export async function purgeOlderThan(db: SqlClient, days: number, now: number): Promise<Record<SearchIndex, number>> {
  const cutoff = iso(now - days * 86_400_000)
  const out = { good: 0, bad: 0 }
  for (const index of ['good', 'bad'] as const) {
    const r = await db.query<{ n: string | number }>(`WITH gone AS (DELETE FROM ${TABLES[index]} WHERE ${TIME_COLUMNS[index]} < $1::timestamptz RETURNING 1) SELECT count(*) AS n FROM gone`, [cutoff])
    out[index] = Number(r.rows[0]!.n)
  }
  return out
}
