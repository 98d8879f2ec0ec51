/**
 * The local search store's server: PGlite and its wire server in a worker
 * thread. This thread stays free while a statement runs; a statement that
 * runs past the limit ends the worker, which starts again on the same port
 * and data; closing waits until PGlite has flushed.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { startSearchServer } from '../../../lib/local/search-server'
import { within } from '../../support/process'

const dir = mkdtempSync(join(tmpdir(), 'floe-search-server-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function client(url: string): Promise<pg.Client> {
  for (let attempt = 0; ; attempt++) {
    const c = new pg.Client({ connectionString: url })
    c.on('error', () => {})
    try {
      await c.connect()
      return c
    } catch (err) {
      if (attempt >= 100) throw err
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

describe('the search store in its worker thread', () => {
  it('keeps this thread free during a statement, ends one over the limit, starts again on the same data, and flushes on close', async () => {
    const logs: string[] = []
    let startedAgain!: () => void
    const answersAgain = new Promise<void>((resolve) => (startedAgain = resolve))
    const log = (l: string) => {
      logs.push(l)
      if (l.startsWith('search store: started again')) startedAgain()
    }
    const server = await startSearchServer({ dir, password: 'pw-1', statementLimitMs: 1_500, log })
    try {
      const c = await client(server.url)
      await c.query('CREATE TABLE kept (v text)')
      await c.query("INSERT INTO kept VALUES ('before')")
      // this thread's timers run while PGlite sleeps in the worker
      let ticks = 0
      const timer = setInterval(() => ticks++, 20)
      const slow = c.query('SELECT pg_sleep(30)').then(
        () => 'finished',
        (err: Error) => err.message,
      )
      const outcome = await slow
      clearInterval(timer)
      expect(outcome).toMatch(/terminated|ECONNRESET|closed/i)
      expect(ticks).toBeGreaterThan(10)
      expect(server.restarts()).toBe(1)
      expect(logs.join('\n')).toMatch(/a statement ran longer than 1500 ms/)
      // the new worker is there once it says so
      await within(answersAgain, 90_000, () => `the search store did not start again:\n${logs.join('\n')}`)
      const again = await client(server.url)
      expect((await again.query('SELECT v FROM kept')).rows).toEqual([{ v: 'before' }])
      await again.query("INSERT INTO kept VALUES ('after')")
      await again.end()
      await c.end().catch(() => {})
    } finally {
      await server.close()
    }
    // closed cleanly: a new server on the same directory sees everything
    const reopened = await startSearchServer({ dir, password: 'pw-2' })
    try {
      const c = await client(reopened.url)
      expect((await c.query('SELECT v FROM kept ORDER BY v')).rows.map((r) => r.v)).toEqual(['after', 'before'])
      await c.end()
    } finally {
      await reopened.close()
    }
  }, 120_000)
})
