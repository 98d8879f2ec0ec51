/**
 * The search store on this machine: PostgreSQL in WebAssembly (PGlite), its
 * data under `${FLOE_DATA_DIR}/search/` (kept across restarts and kills), or
 * in memory when no directory is given (tests). The same SQL runs here and
 * on Aurora (see `lib/core/search/store.ts`).
 */
import { mkdirSync } from 'node:fs'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import { migrate, type SqlClient } from '../core/search/store'

const client = (q: PGlite | Transaction): SqlClient => ({
  query: async <T>(sql: string, params: readonly unknown[] = []) => ({ rows: (await q.query<T>(sql, [...params])).rows }),
  transaction: async (fn) => ('transaction' in q ? (q as PGlite).transaction((tx) => fn(client(tx))) : fn(client(q))),
})

export interface LocalSearchStore {
  readonly db: SqlClient
  close(): Promise<void>
}

/** Opens (creating and migrating as needed) the store in `dir`, or in memory. */
export async function openLocalSearchStore(dir?: string): Promise<LocalSearchStore> {
  if (dir) mkdirSync(dir, { recursive: true })
  const pg = await PGlite.create(dir)
  const db = client(pg)
  await migrate(db)
  return { db, close: () => pg.close() }
}
