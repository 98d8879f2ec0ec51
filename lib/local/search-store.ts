/**
 * The search store on this machine: PostgreSQL in WebAssembly (PGlite), its
 * data under `${FLOE_DATA_DIR}/search/` (kept across restarts and kills), or
 * in a temporary directory removed on close (tests). The same SQL runs here
 * and on Aurora (see `lib/core/search/store.ts`).
 *
 * A new data directory is a copy of an initialised template kept in the
 * system's temporary directory (one per PGlite version): `initdb` runs once
 * per machine instead of at every start, which saves seconds and half a
 * gigabyte of memory.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
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

/** An initialised, empty data directory for this PGlite version, created once. */
async function template(): Promise<string> {
  // the package's exports hide package.json: read it next to its entry point (dist/…)
  const version = (JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version
  const dir = join(tmpdir(), `floe-pglite-${version}`)
  if (existsSync(join(dir, 'PG_VERSION'))) return dir
  const building = `${dir}.${process.pid}-${Date.now()}`
  const pg = await PGlite.create(building)
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
    cpSync(await template(), where, { recursive: true })
  }
  const pg = await PGlite.create(where)
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
