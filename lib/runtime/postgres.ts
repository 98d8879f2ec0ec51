/**
 * The search store's SQL port over PostgreSQL's wire protocol (`pg`): what
 * functions use locally, where the store is PGlite served on a socket. One
 * connection per process by default: PGlite runs one statement at a time, and
 * a single connection keeps each transaction's statements together.
 */
import pg from 'pg'
import type { SqlClient } from '../core/search/store'

export interface PostgresClient extends SqlClient {
  close(): Promise<void>
}

export function postgresClient(url: string, maxConnections = 1, opts: { applicationName?: string } = {}): PostgresClient {
  const pool = new pg.Pool({ connectionString: url, max: maxConnections, idleTimeoutMillis: 0, connectionTimeoutMillis: 10_000, ...(opts.applicationName ? { application_name: opts.applicationName } : {}) })
  // An idle connection that breaks (the server restarted) is dropped from the pool, not thrown.
  pool.on('error', () => {})
  const over = (q: pg.Pool | pg.PoolClient, inTransaction: boolean): SqlClient => ({
    async query<T>(sql: string, params: readonly unknown[] = []) {
      const r = await q.query(sql, params as unknown[])
      return { rows: r.rows as T[] }
    },
    async transaction(fn) {
      if (inTransaction) return fn(over(q, true))
      const c = await pool.connect()
      // a connection that breaks between two statements (the server restarted) fails the next one; unheard, it would end the process
      let lost: Error | undefined
      const broken = (err: Error) => void (lost = err)
      c.on('error', broken)
      try {
        await c.query('BEGIN')
        const result = await fn(over(c, true))
        await c.query('COMMIT')
        return result
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.off('error', broken)
        c.release(lost) // a broken connection is closed, not given to the next caller
      }
    },
  })
  return { ...over(pool, false), close: () => pool.end() }
}
