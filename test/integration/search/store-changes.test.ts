/**
 * The search store's change counter (what `/micro/wait` watches) moves with
 * the loaders' rows and only with them: one step per committed batch of
 * events or bad rows, none for a transaction that rolls back, none for the
 * raw requests (nobody waits on them); and a loader killed (SIGKILL) in the
 * middle of its batch leaves rows and counter together: both, or neither.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { countDocuments, migrate, searchDb, type SearchDb } from '../../../lib/core/search/store'
import { storeVersion, writingTransaction } from '../../../lib/core/search/store-watch'
import { projectRoot } from '../../../lib/local/handlers'
import { newPostgresPassword } from '../../../lib/local/postgres-server'
import { startSearchServer, type SearchServer } from '../../../lib/local/search-server'
import { postgresClient, type PostgresClient } from '../../../lib/runtime/postgres'
import { batch, enricher, tp2 } from '../../unit/enrich/helpers'

const SCHEMA = 'changes'
let dir: string
let server: SearchServer
let sql: PostgresClient
let db: SearchDb
let line: string

/** `n` distinct good events (their event ids differ). */
const lines = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => {
    const cols = line.split('\t')
    cols[6] = `c0000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`
    return cols.join('\t')
  })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'floe-changes-'))
  server = await startSearchServer({ dir, password: newPostgresPassword() })
  sql = postgresClient(server.url)
  db = searchDb(sql, SCHEMA)
  await migrate(db)
  const o = await enricher().enrichRecord(tp2('e=pv&p=web&tv=test-1&aid=changes', { timestamp: Date.now() }), batch())
  line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
}, 120_000)
afterAll(async () => {
  await sql?.close()
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the change counter', () => {
  it('moves once per committed batch of events or bad rows, not for a rollback, not for raw requests', async () => {
    const v0 = Number(await storeVersion(db))
    await loadBatch(db, 'good', lines(3).map((text, i) => ({ id: String(i), text })), Date.now())
    expect(Number(await storeVersion(db))).toBe(v0 + 1)
    const badRow = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: { timestamp: new Date().toISOString(), messages: [] }, payload: {} } })
    await loadBatch(db, 'bad', [{ id: 'b', text: badRow }], Date.now())
    expect(Number(await storeVersion(db))).toBe(v0 + 2)
    await loadBatch(db, 'raw', [{ id: 'r', text: '', data: Buffer.from('not thrift') }], Date.now())
    expect(Number(await storeVersion(db))).toBe(v0 + 2)
    await expect(
      writingTransaction(db, async (tx) => {
        await tx.query(`DELETE FROM "${SCHEMA}".good_events`)
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    expect(Number(await storeVersion(db))).toBe(v0 + 2)
    expect(await countDocuments(db, 'good')).toBe(3)
  })

  it('a loader killed (SIGKILL) anywhere in its batch leaves rows and counter together; the batch sent again stores both', async () => {
    const job = JSON.stringify({ url: server.url, schema: SCHEMA, stream: 'good', lines: lines(3000, 1000) })
    /** Runs the loader in a process of its own; with `killAfterMs`, kills it that long after it starts writing. */
    const run = (killAfterMs?: number) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/load-search-batch.mts')], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'inherit'] })
        let out = ''
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString()
          // the fault is injected at a point in time: before, during or after the transaction
          if (killAfterMs !== undefined && out.includes('writing')) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
        })
        child.once('exit', () => resolve(out))
        child.stdin.end(job)
      })
    const state = async () => ({ version: Number(await storeVersion(db)), rows: await countDocuments(db, 'good') })
    for (const killAfterMs of [0, 100, 300, 800]) {
      const before = await state()
      const out = await run(killAfterMs)
      const after = await state()
      // the batch's 3,000 events with the 3 of the first test (a batch stored already is replaced, not added)
      const stored = { version: before.version + 1, rows: 3003 }
      // never rows without the counter's step, nor the step without the rows
      expect([before, stored]).toContainEqual(after)
      if (out.includes('loaded')) expect(after).toEqual(stored)
    }
    expect(await run()).toContain('loaded 3000')
    expect(await countDocuments(db, 'good')).toBe(3003)
  }, 120_000)
})
