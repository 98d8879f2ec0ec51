/**
 * The search store on this machine: PostgreSQL in WebAssembly (PGlite), its
 * data under `${FLOE_DATA_DIR}/search/` (kept across restarts and kills), or
 * in a temporary directory removed on close (tests). The same SQL runs here
 * and on Aurora (see `lib/core/search/store.ts`).
 *
 * A new data directory is a copy of an initialised template kept in the
 * user's cache in the system's temporary directory (one per PGlite version):
 * `initdb` runs once per user instead of at every start, which saves seconds
 * and half a gigabyte of memory.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { PrivateNodeFS } from './pglite-private-fs'
import { closeTree } from './private-files'
import { defaultCacheRoot, unsafeDirProblem } from './dynamodb/launcher'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import { migrate, searchDb, type SearchDb, type SqlClient } from '../core/search/store'

const require = createRequire(import.meta.url)

export const pgliteClient = (q: PGlite | Transaction): SqlClient => ({
  query: async <T>(sql: string, params: readonly unknown[] = []) => ({ rows: (await q.query<T>(sql, [...params])).rows }),
  transaction: async (fn) => ('transaction' in q ? (q as PGlite).transaction((tx) => fn(pgliteClient(tx))) : fn(pgliteClient(q))),
})

/**
 * An initialised, empty data directory for this PGlite version, created once in this user's cache
 * (`<tmp>/floe-<uid>/`, used only when it is ours and closed to others: a template another user
 * could write would become every new store). Undefined when there is no such cache.
 */
async function template(): Promise<string | undefined> {
  // the package's exports hide package.json: read it next to its entry point (dist/…)
  const version = (JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version
  const root = defaultCacheRoot()
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 })
    if (unsafeDirProblem(root)) return undefined
  } catch {
    return undefined
  }
  const dir = join(root, `pglite-${version}`)
  if (existsSync(join(dir, 'PG_VERSION'))) return dir
  const building = `${dir}.${process.pid}-${Date.now()}`
  const pg = await PGlite.create({ fs: new PrivateNodeFS(building) })
  await pg.close()
  try {
    renameSync(building, dir)
  } catch {
    rmSync(building, { recursive: true, force: true }) // another process made it first
  }
  return dir
}

/** Opens PGlite on `dir` (initialising it from the template when new), or on a temporary directory. */
export async function openPglite(dir?: string): Promise<{ pg: PGlite; close(): Promise<void> }> {
  const temporary = dir === undefined
  const where = dir ?? mkdtempSync(join(tmpdir(), 'floe-search-'))
  if (!existsSync(join(where, 'PG_VERSION'))) {
    mkdirSync(where, { recursive: true })
    // without a template, PGlite initialises the directory itself (slower)
    const from = await template()
    if (from !== undefined) cpSync(from, where, { recursive: true })
    // the data is its user's only, whatever the template's modes
    closeTree(where)
  }
  const pg = await PGlite.create({ fs: new PrivateNodeFS(where) })
  return {
    pg,
    async close() {
      await pg.close()
      if (temporary) rmSync(where, { recursive: true, force: true })
    },
  }
}

export interface LocalSearchStore {
  readonly pg: PGlite
  readonly db: SearchDb
  close(): Promise<void>
}

/** Opens (creating and migrating as needed) the store in `dir`, or in a temporary directory. */
export async function openLocalSearchStore(dir?: string, schema?: string): Promise<LocalSearchStore> {
  const { pg, close } = await openPglite(dir)
  const db = searchDb(pgliteClient(pg), schema)
  await migrate(db)
  return { pg, db, close }
}

/** A table's activity since it was last vacuumed and analysed, as PostgreSQL's statistics report it. */
export interface TableActivity {
  readonly schema: string
  readonly table: string
  readonly live: number
  readonly dead: number
  readonly insertedSinceVacuum: number
  readonly modifiedSinceAnalyze: number
}

/** Whether PostgreSQL's autovacuum would vacuum and analyse the table now (its default thresholds). */
export function needsVacuum(t: TableActivity): boolean {
  return t.dead > 50 + 0.2 * t.live || t.insertedSinceVacuum > 1000 + 0.2 * t.live || t.modifiedSinceAnalyze > 50 + 0.1 * t.live
}

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`

/**
 * PGlite runs no autovacuum daemon: without it a table is never analysed
 * (the planner guesses) and its visibility map never set (no index-only
 * scans: counting 200,000 events takes 6 times longer). This does the
 * daemon's job on PostgreSQL's own thresholds, every `intervalMs`, through a
 * client of the served store, so it takes its turn with the other sessions.
 */
export function startAutovacuum(sql: SqlClient, opts: { intervalMs?: number; log?: (line: string) => void } = {}): { runOnce(): Promise<string[]>; stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve()
  let stopped = false
  const runOnce = async (): Promise<string[]> => {
    // statistics reach the views at most once a second unless flushed
    await sql.query('SELECT pg_stat_force_next_flush()')
    const r = await sql.query<Record<string, string | number>>(
      `SELECT schemaname, relname, n_live_tup, n_dead_tup, n_ins_since_vacuum, n_mod_since_analyze FROM pg_stat_user_tables`,
    )
    const done: string[] = []
    for (const row of r.rows) {
      const t: TableActivity = { schema: String(row.schemaname), table: String(row.relname), live: Number(row.n_live_tup), dead: Number(row.n_dead_tup), insertedSinceVacuum: Number(row.n_ins_since_vacuum), modifiedSinceAnalyze: Number(row.n_mod_since_analyze) }
      if (stopped || !needsVacuum(t)) continue
      const name = `${quoteIdent(t.schema)}.${quoteIdent(t.table)}`
      await sql.query(`VACUUM (ANALYZE) ${name}`)
      done.push(name)
    }
    return done
  }
  const timer = setInterval(() => {
    running = running.then(runOnce).catch((err: Error) => opts.log?.(`search store maintenance: ${err.message}`))
  }, opts.intervalMs ?? 30_000)
  timer.unref()
  return {
    runOnce: () => (running = running.then(runOnce)) as Promise<string[]>,
    async stop() {
      stopped = true
      clearInterval(timer)
      await running.catch(() => {})
    },
  }
}
