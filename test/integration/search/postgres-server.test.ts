/**
 * PGlite over the wire: `pg` clients on separate connections run
 * parameterised statements and transactions at the same time without their
 * exchanges interleaving, a client that disconnects mid-transaction has it
 * rolled back, the search store works through it in its own schema, the
 * maintenance PGlite lacks (autovacuum) runs on PostgreSQL's thresholds, and
 * only user `postgres` with the server's password gets in.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { countDocuments, migrate, MIGRATIONS, schemaForPrefix, searchDb } from '../../../lib/core/search/store'
import { loadBatch } from '../../../lib/core/search/loader'
import { needsVacuum, openPglite, startAutovacuum } from '../../../lib/local/search-store'
import { servePostgres, type PostgresServer } from '../../../lib/local/postgres-server'
import { postgresClient } from '../../../lib/runtime/postgres'
import { batch, enricher, payload } from '../../unit/enrich/helpers'

let store: Awaited<ReturnType<typeof openPglite>>
let server: PostgresServer
beforeAll(async () => {
  store = await openPglite()
  server = await servePostgres(store.pg, { password: 'test-password' })
})
afterAll(async () => {
  await server?.close()
  await store?.close()
})

describe('PGlite over the wire', () => {
  it('refuses a wrong password, a missing one and another user; lets the URL in, with pg and psql', async () => {
    const attempt = async (url: string) => {
      const c = new pg.Client({ connectionString: url })
      c.on('error', () => {})
      try {
        await c.connect()
        return (await c.query<{ x: number }>('SELECT 7 AS x')).rows[0]!.x
      } catch (err) {
        return (err as { code?: string }).code
      } finally {
        await c.end().catch(() => {})
      }
    }
    const u = new URL(server.url)
    expect(u.username).toBe('postgres')
    expect(u.password).toBe('test-password')
    expect(await attempt(server.url)).toBe(7)
    expect(await attempt(server.url.replace(':test-password@', ':wrong@'))).toBe('28P01')
    expect(await attempt(server.url.replace(':test-password@', '@'))).toBe('28P01')
    expect(await attempt(server.url.replace('postgres:test-password@', 'admin:test-password@'))).toBe('28P01')
    const psql = ['/usr/bin/psql', '/usr/local/bin/psql'].find((p) => existsSync(p))
    if (psql) {
      const run = (url: string) =>
        new Promise<{ code: number; out: string }>((resolve) => execFile(psql, [url, '-AtXc', 'SELECT 40 + 2'], { env: { ...process.env, PGPASSWORD: '', PGCONNECT_TIMEOUT: '10' } }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: `${stdout}${stderr}` })))
      expect(await run(server.url)).toEqual({ code: 0, out: '42\n' })
      expect((await run(server.url.replace(':test-password@', ':wrong@'))).out).toMatch(/password authentication failed/)
    }
  })

  it('keeps concurrent connections’ extended-protocol exchanges and transactions apart', async () => {
    await store.pg.exec('CREATE TABLE wire_t (k text PRIMARY KEY, n int)')
    const clients = Array.from({ length: 6 }, () => new pg.Client({ connectionString: server.url }))
    await Promise.all(clients.map((c) => c.connect()))
    try {
      await Promise.all(
        clients.map(async (c, i) => {
          for (let j = 0; j < 30; j++) {
            const r = await c.query('SELECT $1::int * 2 AS v, $2::text AS s', [i * 100 + j, `c${i}-${j}`])
            expect(r.rows[0]).toEqual({ v: (i * 100 + j) * 2, s: `c${i}-${j}` })
          }
          await c.query('BEGIN')
          await c.query('INSERT INTO wire_t VALUES ($1, $2)', [`k${i}`, i])
          const seen = await c.query<{ n: string }>('SELECT count(*) AS n FROM wire_t')
          if (i % 2 === 0) await c.query('COMMIT')
          else await c.query('ROLLBACK')
          return Number(seen.rows[0]!.n)
        }),
      )
      const r = await clients[0]!.query<{ k: string }>('SELECT k FROM wire_t ORDER BY k')
      expect(r.rows.map((x) => x.k)).toEqual(['k0', 'k2', 'k4'])
    } finally {
      await Promise.all(clients.map((c) => c.end()))
    }
  })

  it('rolls back the transaction of a client that goes away, and serves the others', async () => {
    await store.pg.exec('CREATE TABLE wire_gone (k text)')
    const quitter = new pg.Client({ connectionString: server.url })
    quitter.on('error', () => {})
    await quitter.connect()
    await quitter.query('BEGIN')
    await quitter.query('INSERT INTO wire_gone VALUES ($1)', ['lost'])
    // the other connection waits for the session (its start-up included) until the first goes away
    const other = new pg.Client({ connectionString: server.url })
    const waiting = other.connect().then(() => other.query<{ n: string }>('SELECT count(*) AS n FROM wire_gone'))
    ;(quitter as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
    expect(Number((await waiting).rows[0]!.n)).toBe(0)
    await other.end()
  })

  it('serves the search store, each stack in its own schema', async () => {
    const sql = postgresClient(server.url)
    try {
      const a = searchDb(sql, schemaForPrefix('floe-a1'))
      const b = searchDb(sql, schemaForPrefix('floe-b1'))
      expect(a.schema).toBe('floe_a1')
      expect(await migrate(a)).toEqual(MIGRATIONS.map((m) => m.version))
      expect(await migrate(b)).toEqual(MIGRATIONS.map((m) => m.version))
      expect(await migrate(a)).toEqual([])
      const o = await enricher().enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3' }), batch())
      const line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
      expect(await loadBatch(a, 'good', [{ id: '1', text: line }], Date.now())).toEqual({ loaded: 1, rejected: [] })
      expect(await countDocuments(a, 'good')).toBe(1)
      expect(await countDocuments(b, 'good')).toBe(0)
    } finally {
      await sql.close()
    }
  })

  it('vacuums and analyses a table once enough has changed, as autovacuum would, taking its turn with the other sessions', async () => {
    expect(needsVacuum({ schema: 's', table: 't', live: 0, dead: 0, insertedSinceVacuum: 1001, modifiedSinceAnalyze: 0 })).toBe(true)
    expect(needsVacuum({ schema: 's', table: 't', live: 100_000, dead: 100, insertedSinceVacuum: 2000, modifiedSinceAnalyze: 5000 })).toBe(false)
    expect(needsVacuum({ schema: 's', table: 't', live: 100_000, dead: 0, insertedSinceVacuum: 0, modifiedSinceAnalyze: 10_051 })).toBe(true)
    const sql = postgresClient(server.url)
    const maintenance = postgresClient(server.url)
    const auto = startAutovacuum(maintenance, { intervalMs: 3_600_000 })
    try {
      const db = searchDb(sql, 'vacuumed')
      await migrate(db)
      await sql.query('CREATE TABLE vacuumed.filler (n int)')
      let during!: Promise<string[]>
      const n = await sql.transaction(async (tx) => {
        await tx.query('INSERT INTO vacuumed.filler SELECT generate_series(1, 2000)')
        during = auto.runOnce() // started inside the transaction: waits for its end
        return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM vacuumed.filler')).rows[0]!.n
      })
      expect(n).toBe(2000)
      expect(await during).toContain('"vacuumed"."filler"')
      const stats = await sql.query<{ analyzed: boolean }>("SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE schemaname = 'vacuumed' AND relname = 'filler'")
      expect(stats.rows[0]!.analyzed).toBe(true)
      expect(await auto.runOnce()).not.toContain('"vacuumed"."filler"')
    } finally {
      await auto.stop()
      await maintenance.close()
      await sql.close()
    }
  })

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => searchDb(postgresClient(server.url), 'x"; DROP')).toThrow(/invalid search store schema name/)
    expect(schemaForPrefix('9-Test.Stack')).toBe('s_9_test_stack')
  })
})
