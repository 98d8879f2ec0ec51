/**
 * The search store's schema and statements: one set of SQL for PostgreSQL
 * wherever it runs (PGlite locally, Aurora through the RDS Data API on AWS),
 * behind the small `SqlClient` port each adapter implements. Values are
 * always parameters (`$1`, …), never SQL text. Schema changes are versioned
 * migrations, applied in order, each once.
 *
 * Every statement names its tables with their PostgreSQL schema (a
 * `SearchDb` carries it), so several stacks can share one server, each in
 * its own schema, without relying on a per-connection `search_path`.
 */
import { SPEC_CONTEXT_KEY, specIdsOfBadRow, type BadDocument, type GoodDocument } from './documents'
import type { RawRows } from './raw-events'
import { badRowWords } from './words'

export interface SqlClient {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[] }>
  /** Runs `fn` in one transaction (all or nothing). */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>
}

export type SearchIndex = 'good' | 'bad'

/** A SQL client and the PostgreSQL schema holding the store's tables. */
export interface SearchDb {
  readonly sql: SqlClient
  readonly schema: string
}

/** The qualified table names of a store. */
export interface SearchTables {
  readonly good: string
  readonly bad: string
  /** Failed events (the `incomplete` stream): kept out of the good index, read by the Micro API's `/micro/events` and timeline. */
  readonly incomplete: string
  /** What the collector received, for `/micro/good`'s `rawEvent` (see ./raw-events.ts): per payload, and per tracker event. */
  readonly rawPayloads: string
  readonly rawEvents: string
  readonly migrations: string
  /** Bad rows claimed by recovery runs, by bad row id (rows of the search store and of the archive alike). */
  readonly recoveryClaims: string
  /** Recovery runs: when, what was asked, what came out. */
  readonly recoveryRuns: string
  /** One row: a counter the loaders raise in each transaction that stores events or bad rows (see ./store-watch.ts). */
  readonly changes: string
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** A store in `schema` (default `public`); the name must be a plain lower-case identifier. */
export function searchDb(sql: SqlClient, schema = 'public'): SearchDb {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid search store schema name '${schema}': lower-case letters, digits and _ (not first), at most 63`)
  return { sql, schema }
}

/** A PostgreSQL schema name from a resource name prefix (`floe-t1-` → `floe_t1`). */
export function schemaForPrefix(prefix: string): string {
  const s = prefix.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '')
  return s === '' ? 'public' : /^[0-9]/.test(s) ? `s_${s}`.slice(0, 63) : s.slice(0, 63)
}

export function tablesOf(db: SearchDb): SearchTables {
  const q = `"${db.schema}"`
  return { good: `${q}.good_events`, bad: `${q}.bad_rows`, incomplete: `${q}.incomplete_events`, rawPayloads: `${q}.raw_payloads`, rawEvents: `${q}.raw_events`, migrations: `${q}.search_schema_migrations`, recoveryClaims: `${q}.recovery_claims`, recoveryRuns: `${q}.recovery_runs`, changes: `${q}.store_changes` }
}

export interface Migration {
  readonly version: number
  readonly statements: (t: SearchTables) => readonly string[]
  /** Run after the statements, in the same transaction (data that SQL alone cannot compute). */
  readonly then?: (tx: SqlClient, t: SearchTables) => Promise<void>
}

/** Rows per batch when a migration fills a new column. */
const BACKFILL_BATCH = 500

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: (t) => [
      `CREATE TABLE ${t.good} (
        id text PRIMARY KEY,
        collector_tstamp timestamptz NOT NULL,
        app_id text,
        event_type text,
        event_name text,
        schema_uri text,
        failed boolean NOT NULL DEFAULT false,
        doc jsonb NOT NULL,
        line text NOT NULL,
        loaded_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX good_events_collector_tstamp ON ${t.good} (collector_tstamp DESC, id)`,
      `CREATE INDEX good_events_event_type ON ${t.good} (event_type)`,
      `CREATE INDEX good_events_schema_uri ON ${t.good} (schema_uri)`,
      `CREATE INDEX good_events_app_id ON ${t.good} (app_id)`,
      `CREATE TABLE ${t.bad} (
        id text PRIMARY KEY,
        failure_timestamp timestamptz NOT NULL,
        failure_type text,
        doc jsonb NOT NULL,
        line text NOT NULL,
        loaded_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX bad_rows_failure_timestamp ON ${t.bad} (failure_timestamp DESC, id)`,
      `CREATE INDEX bad_rows_failure_type ON ${t.bad} (failure_type)`,
    ],
  },
  {
    // The words of each bad row, for bare words in queries (see ./words.ts); filled for the rows already stored.
    version: 2,
    statements: (t) => [`ALTER TABLE ${t.bad} ADD COLUMN words jsonb NOT NULL DEFAULT '[]'::jsonb`, `CREATE INDEX bad_rows_words ON ${t.bad} USING gin (words jsonb_path_ops)`],
    async then(tx, t) {
      for (let after = ''; ; ) {
        const r = await tx.query<{ id: string; line: string }>(`SELECT id, line FROM ${t.bad} WHERE id > $1 ORDER BY id LIMIT ${BACKFILL_BATCH}`, [after])
        for (const row of r.rows) {
          let words: string[] = []
          try {
            words = badRowWords(JSON.parse(row.line))
          } catch {
            // stored rows are JSON; one that is not keeps no words
          }
          await tx.query(`UPDATE ${t.bad} SET words = $2::jsonb WHERE id = $1`, [row.id, JSON.stringify(words)])
        }
        if (r.rows.length < BACKFILL_BATCH) break
        after = r.rows.at(-1)!.id
      }
    },
  },
  {
    // Arrival order (`seq`, given at insert: a batch's records in stream order) breaks ties between events sent together,
    // which share their collector time: newest first is then the last one sent first, as in Snowplow Micro.
    // Failed events move out of the good index into their own table.
    version: 3,
    statements: (t) => [
      `ALTER TABLE ${t.good} ADD COLUMN seq bigint GENERATED BY DEFAULT AS IDENTITY`,
      `CREATE INDEX good_events_arrival ON ${t.good} (collector_tstamp DESC, seq DESC)`,
      `ALTER TABLE ${t.bad} ADD COLUMN seq bigint GENERATED BY DEFAULT AS IDENTITY`,
      `CREATE INDEX bad_rows_arrival ON ${t.bad} (failure_timestamp DESC, seq DESC)`,
      `CREATE TABLE ${t.incomplete} (LIKE ${t.good} INCLUDING DEFAULTS)`,
      `ALTER TABLE ${t.incomplete} ADD PRIMARY KEY (id)`,
      `ALTER TABLE ${t.incomplete} ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY`,
      `CREATE INDEX incomplete_events_arrival ON ${t.incomplete} (collector_tstamp DESC, seq DESC)`,
      `INSERT INTO ${t.incomplete} (id, collector_tstamp, app_id, event_type, event_name, schema_uri, failed, doc, line, loaded_at)
         SELECT id, collector_tstamp, app_id, event_type, event_name, schema_uri, failed, doc, line, loaded_at FROM ${t.good} WHERE failed ORDER BY seq`,
      `DELETE FROM ${t.good} WHERE failed`,
    ],
  },
  {
    // Recovery: a bad row replayed by a recovery run is marked (the time and the run) and left out of the bad index;
    // claims are kept by bad row id, so rows read from the archive are claimed once too.
    version: 4,
    statements: (t) => [
      `ALTER TABLE ${t.bad} ADD COLUMN recovered timestamptz`,
      `ALTER TABLE ${t.bad} ADD COLUMN recovery_run text`,
      `CREATE INDEX bad_rows_not_recovered ON ${t.bad} (id) WHERE recovered IS NULL`,
      `CREATE TABLE ${t.recoveryClaims} (id text PRIMARY KEY, run_id text NOT NULL, claimed_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${t.recoveryRuns} (id text PRIMARY KEY, started_at timestamptz NOT NULL, finished_at timestamptz, dry_run boolean NOT NULL, selection jsonb NOT NULL, report jsonb)`,
    ],
  },
  {
    // The event specifications of each event (its `event_specification` entities) and of each bad row (the
    // specification whose rules an enrichment failure reports broken), for the tracking plans' counts.
    version: 5,
    statements: (t) => [
      `ALTER TABLE ${t.good} ADD COLUMN spec_ids jsonb NOT NULL DEFAULT '[]'::jsonb`,
      `ALTER TABLE ${t.incomplete} ADD COLUMN spec_ids jsonb NOT NULL DEFAULT '[]'::jsonb`,
      `ALTER TABLE ${t.bad} ADD COLUMN spec_ids jsonb NOT NULL DEFAULT '[]'::jsonb`,
      `UPDATE ${t.good} SET spec_ids = COALESCE((SELECT jsonb_agg(DISTINCT lower(e->>'id')) FROM jsonb_array_elements(doc->'${SPEC_CONTEXT_KEY}') e WHERE e->>'id' IS NOT NULL), '[]'::jsonb)
         WHERE jsonb_typeof(doc->'${SPEC_CONTEXT_KEY}') = 'array'`,
      `CREATE INDEX good_events_spec_ids ON ${t.good} USING gin (spec_ids jsonb_path_ops)`,
      `CREATE INDEX good_events_tagged ON ${t.good} (collector_tstamp DESC) WHERE spec_ids <> '[]'::jsonb`,
      `CREATE INDEX bad_rows_spec_ids ON ${t.bad} USING gin (spec_ids jsonb_path_ops)`,
      `CREATE INDEX bad_rows_spec_failures ON ${t.bad} (failure_timestamp DESC) WHERE spec_ids <> '[]'::jsonb`,
    ],
    async then(tx, t) {
      for (let after = ''; ; ) {
        const r = await tx.query<{ id: string; line: string }>(`SELECT id, line FROM ${t.bad} WHERE id > $1 AND failure_type = 'enrichment_failures' ORDER BY id LIMIT ${BACKFILL_BATCH}`, [after])
        for (const row of r.rows) {
          let ids: string[] = []
          try {
            ids = specIdsOfBadRow(JSON.parse(row.line))
          } catch {
            // stored rows are JSON; one that is not names no specification
          }
          if (ids.length > 0) await tx.query(`UPDATE ${t.bad} SET spec_ids = $2::jsonb WHERE id = $1`, [row.id, JSON.stringify(ids)])
        }
        if (r.rows.length < BACKFILL_BATCH) break
        after = r.rows.at(-1)!.id
      }
    },
  },
  {
    // The requests as the collector received them (./raw-events.ts). JSON kept as text, not jsonb: it is only
    // read back whole, and text keeps the parameters' order and bytes as sent (PostgreSQL compresses long values).
    version: 6,
    statements: (t) => [
      `CREATE TABLE ${t.rawPayloads} (
        id text PRIMARY KEY,
        collector_tstamp timestamptz NOT NULL,
        context text NOT NULL
      )`,
      `CREATE INDEX raw_payloads_collector_tstamp ON ${t.rawPayloads} (collector_tstamp)`,
      `CREATE TABLE ${t.rawEvents} (
        event_id text NOT NULL,
        collector_tstamp timestamptz NOT NULL,
        payload_id text NOT NULL,
        parameters text NOT NULL,
        PRIMARY KEY (event_id, collector_tstamp)
      )`,
      `CREATE INDEX raw_events_collector_tstamp ON ${t.rawEvents} (collector_tstamp)`,
    ],
  },
  {
    // Crash-safe recovery: a claim is `pending` (the row is out of other runs' selections, not marked recovered)
    // until the run's payloads are written, then `replayed`; claims kept before are replayed ones. A run has an
    // owner (the process) and a heartbeat, so that a run whose process died is ended and its pending claims released.
    // A replayed claim keeps the event ids of its payload, so that a run's outcome can be read from the store.
    version: 7,
    statements: (t) => [
      `ALTER TABLE ${t.recoveryClaims} ADD COLUMN state text NOT NULL DEFAULT 'replayed'`,
      // the event ids a replayed row's payload carries: what the run's outcome is read by
      `ALTER TABLE ${t.recoveryClaims} ADD COLUMN event_ids jsonb`,
      `CREATE INDEX recovery_claims_pending ON ${t.recoveryClaims} (run_id) WHERE state = 'pending'`,
      `ALTER TABLE ${t.recoveryRuns} ADD COLUMN owner text`,
      `ALTER TABLE ${t.recoveryRuns} ADD COLUMN heartbeat timestamptz`,
      `CREATE INDEX recovery_runs_unfinished ON ${t.recoveryRuns} (started_at) WHERE finished_at IS NULL`,
    ],
  },
  {
    // What `/micro/wait` watches: raised in the loaders' transactions, so a reader sees it change exactly when
    // their rows become visible (a sequence would move before the commit, and max(seq) can miss a slower commit).
    version: 8,
    statements: (t) => [`CREATE TABLE ${t.changes} (id integer PRIMARY KEY, version bigint NOT NULL)`, `INSERT INTO ${t.changes} (id, version) VALUES (1, 0)`],
  },
]

/** The time column each index is searched and aged by. */
export const TIME_COLUMNS: Record<SearchIndex, string> = { good: 'collector_tstamp', bad: 'failure_timestamp' }

/**
 * Applies the migrations not applied yet (in one transaction each); returns
 * the versions applied now. Concurrent first starts are safe: the loser's
 * transaction fails on the version's primary key and rolls back, and it
 * carries on once the version is there.
 */
export async function migrate(db: SearchDb, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const t = tablesOf(db)
  const ensure = async () => {
    await db.sql.query(`CREATE SCHEMA IF NOT EXISTS "${db.schema}"`)
    await db.sql.query(`CREATE TABLE IF NOT EXISTS ${t.migrations} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
  }
  await ensure().catch(ensure) // two first starts may race on CREATE … IF NOT EXISTS
  const versions = async () => new Set((await db.sql.query<{ version: number }>(`SELECT version FROM ${t.migrations}`)).rows.map((r) => Number(r.version)))
  const done = await versions()
  const applied: number[] = []
  for (const m of migrations) {
    if (done.has(m.version)) continue
    try {
      await db.sql.transaction(async (tx) => {
        for (const s of m.statements(t)) await tx.query(s)
        await m.then?.(tx, t)
        await tx.query(`INSERT INTO ${t.migrations} (version) VALUES ($1)`, [m.version])
      })
    } catch (err) {
      if (!(await versions()).has(m.version)) throw err
      continue
    }
    applied.push(m.version)
  }
  return applied
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Rows per INSERT statement (each takes a few parameters; PostgreSQL allows 65,535). */
const ROWS_PER_STATEMENT = 500

/**
 * Inserts or updates good documents by id (a redelivered event replaces its
 * earlier copy and keeps its place); failed ones go to the incomplete table.
 * Rows are inserted in the order given, which is their arrival order.
 */
export async function upsertGood(db: SearchDb, docs: readonly GoodDocument[]): Promise<void> {
  const t = tablesOf(db)
  const good = docs.filter((d) => !d.failed)
  await upsertInto(db, t.good, good)
  // a recovered event replaces its failed copy: one event_id, one document
  for (let i = 0; i < good.length; i += ROWS_PER_STATEMENT) {
    const ids = good.slice(i, i + ROWS_PER_STATEMENT).map((d) => d.id)
    await db.sql.query(`DELETE FROM ${t.incomplete} WHERE id IN (${ids.map((_, j) => `$${j + 1}`).join(', ')})`, ids)
  }
  await upsertInto(db, t.incomplete, docs.filter((d) => d.failed))
}

async function upsertInto(db: SearchDb, table: string, docs: readonly GoodDocument[]): Promise<void> {
  for (let i = 0; i < docs.length; i += ROWS_PER_STATEMENT) {
    const chunk = dedupe(docs.slice(i, i + ROWS_PER_STATEMENT))
    const params: unknown[] = []
    const rows = chunk.map((d) => {
      const n = params.length
      params.push(d.id, iso(d.collectorTstamp), d.appId, d.eventType, d.eventName, d.schema, d.failed, JSON.stringify(d.doc), d.line, JSON.stringify(d.specIds ?? []))
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, $${n + 8}::jsonb, $${n + 9}, $${n + 10}::jsonb)`
    })
    await db.sql.query(
      `INSERT INTO ${table} (id, collector_tstamp, app_id, event_type, event_name, schema_uri, failed, doc, line, spec_ids) VALUES ${rows.join(', ')}
       ON CONFLICT (id) DO UPDATE SET collector_tstamp = EXCLUDED.collector_tstamp, app_id = EXCLUDED.app_id, event_type = EXCLUDED.event_type,
         event_name = EXCLUDED.event_name, schema_uri = EXCLUDED.schema_uri, failed = EXCLUDED.failed, doc = EXCLUDED.doc, line = EXCLUDED.line, spec_ids = EXCLUDED.spec_ids, loaded_at = now()`,
      params,
    )
  }
}

/** Inserts bad rows by id (the same row twice is stored once). */
export async function upsertBad(db: SearchDb, docs: readonly BadDocument[]): Promise<void> {
  for (let i = 0; i < docs.length; i += ROWS_PER_STATEMENT) {
    const chunk = dedupe(docs.slice(i, i + ROWS_PER_STATEMENT))
    const params: unknown[] = []
    const rows = chunk.map((d) => {
      const n = params.length
      params.push(d.id, iso(d.timestamp), d.failureType, JSON.stringify(d.doc), d.line, JSON.stringify(d.words), JSON.stringify(d.specIds ?? []))
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3}, $${n + 4}::jsonb, $${n + 5}, $${n + 6}::jsonb, $${n + 7}::jsonb)`
    })
    await db.sql.query(`INSERT INTO ${tablesOf(db).bad} (id, failure_timestamp, failure_type, doc, line, words, spec_ids) VALUES ${rows.join(', ')} ON CONFLICT (id) DO NOTHING`, params)
  }
}

/** Inserts what the collector received (a redelivered record changes nothing; an event id sent again at the same time: the last copy wins). */
export async function upsertRaw(db: SearchDb, rows: RawRows): Promise<void> {
  const t = tablesOf(db)
  for (let i = 0; i < rows.payloads.length; i += ROWS_PER_STATEMENT) {
    const chunk = dedupe(rows.payloads.slice(i, i + ROWS_PER_STATEMENT))
    const params: unknown[] = []
    const values = chunk.map((p) => {
      const n = params.length
      params.push(p.id, iso(p.collectorTstamp), p.context)
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3})`
    })
    await db.sql.query(`INSERT INTO ${t.rawPayloads} (id, collector_tstamp, context) VALUES ${values.join(', ')} ON CONFLICT (id) DO NOTHING`, params)
  }
  for (let i = 0; i < rows.events.length; i += ROWS_PER_STATEMENT) {
    const byKey = new Map<string, RawRows['events'][number]>()
    for (const e of rows.events.slice(i, i + ROWS_PER_STATEMENT)) byKey.set(`${e.eventId} ${e.collectorTstamp}`, e)
    const params: unknown[] = []
    const values = [...byKey.values()].map((e) => {
      const n = params.length
      params.push(e.eventId, iso(e.collectorTstamp), e.payloadId, e.parameters)
      return `($${n + 1}, $${n + 2}::timestamptz, $${n + 3}, $${n + 4})`
    })
    await db.sql.query(
      `INSERT INTO ${t.rawEvents} (event_id, collector_tstamp, payload_id, parameters) VALUES ${values.join(', ')}
       ON CONFLICT (event_id, collector_tstamp) DO UPDATE SET payload_id = EXCLUDED.payload_id, parameters = EXCLUDED.parameters`,
      params,
    )
  }
}

/** One row per id within a statement (PostgreSQL refuses to update a row twice in one INSERT); the last copy wins. */
function dedupe<T extends { id: string }>(docs: readonly T[]): T[] {
  const byId = new Map<string, T>()
  for (const d of docs) byId.set(d.id, d)
  return [...byId.values()]
}

export async function countDocuments(db: SearchDb, index: SearchIndex): Promise<number> {
  const r = await db.sql.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${tablesOf(db)[index]}`)
  return Number(r.rows[0]!.n)
}

/** Empties an index. */
export async function deleteIndex(db: SearchDb, index: SearchIndex): Promise<void> {
  await db.sql.query(`DELETE FROM ${tablesOf(db)[index]}`)
  if (index === 'good') for (const table of [tablesOf(db).rawEvents, tablesOf(db).rawPayloads]) await db.sql.query(`DELETE FROM ${table}`)
  if (index === 'bad') await db.sql.query(`DELETE FROM ${tablesOf(db).incomplete}`) // a failed event goes with its bad row
}

/** Deletes the documents older than `days` (by each index's time field); returns how many went. */
export async function purgeOlderThan(db: SearchDb, days: number, now: number): Promise<Record<SearchIndex, number>> {
  const cutoff = iso(now - days * 86_400_000)
  const out = { good: 0, bad: 0 }
  for (const index of ['good', 'bad'] as const) {
    const r = await db.sql.query<{ n: string | number }>(`WITH gone AS (DELETE FROM ${tablesOf(db)[index]} WHERE ${TIME_COLUMNS[index]} < $1::timestamptz RETURNING 1) SELECT count(*) AS n FROM gone`, [cutoff])
    out[index] = Number(r.rows[0]!.n)
  }
  const t = tablesOf(db)
  for (const table of [t.incomplete, t.rawEvents, t.rawPayloads]) await db.sql.query(`DELETE FROM ${table} WHERE collector_tstamp < $1::timestamptz`, [cutoff])
  return out
}
