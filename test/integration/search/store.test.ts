/**
 * The search store on PGlite: migrations once, loads that a redelivery does
 * not duplicate, hostile values stored as values, retention, and data kept
 * across a reopen of the data directory.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { countDocuments, deleteIndex, migrate, MIGRATIONS, purgeOlderThan, searchDb, tablesOf } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, enricher, payload } from '../../unit/enrich/helpers'

const opened: LocalSearchStore[] = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => {})
})
const open = async (dir?: string) => {
  const s = await openLocalSearchStore(dir)
  opened.push(s)
  return s
}

async function lines(n: number, extra = ''): Promise<string[]> {
  const e = enricher()
  const b = batch()
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const o = await e.enrichRecord(payload({ path: '/i', querystring: `e=pv&p=web&tv=js-3&aid=app-${i % 3}${extra}` }), b)
    out.push((o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv)
  }
  return out
}

const badRow = (i: number, ts = '2025-04-30T10:05:00Z') => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { failure: { timestamp: ts, messages: [{ error: `e${i}` }] } } })

describe('search store (PGlite)', () => {
  it('applies each migration once', async () => {
    const s = await open()
    expect(await migrate(s.db)).toEqual([])
    const v = await s.db.sql.query<{ version: number }>('SELECT version FROM search_schema_migrations ORDER BY version')
    expect(v.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
  })

  it('loads good, failed and bad documents; a redelivered batch updates instead of duplicating', async () => {
    const s = await open()
    const all = await lines(11)
    const good = all.slice(0, 10)
    const recs = good.map((text, i) => ({ id: String(i), text }))
    expect(await loadBatch(s.db, 'good', recs, Date.now())).toEqual({ loaded: 10, rejected: [] })
    expect(await loadBatch(s.db, 'good', [...recs, ...recs.slice(0, 3)], Date.now())).toMatchObject({ loaded: 13 })
    expect(await countDocuments(s.db, 'good')).toBe(10)
    const failed = await loadBatch(s.db, 'incomplete', [{ id: 'f', text: all[10]! }], Date.now())
    expect(failed.loaded).toBe(1)
    // a failed event is kept out of the good index (its bad row is in bad), in a table of its own
    expect(await countDocuments(s.db, 'good')).toBe(10)
    expect((await s.db.sql.query<{ failed: boolean }>('SELECT failed FROM incomplete_events')).rows).toEqual([{ failed: true }])
    const bad = [badRow(1), badRow(2), badRow(1)].map((text, i) => ({ id: `b${i}`, text }))
    expect(await loadBatch(s.db, 'bad', [...bad, { id: 'x', text: 'garbage' }], Date.now())).toMatchObject({ loaded: 3, rejected: [{ id: 'x' }] })
    expect(await countDocuments(s.db, 'bad')).toBe(2)
    await deleteIndex(s.db, 'bad')
    expect(await countDocuments(s.db, 'bad')).toBe(0)
  })

  it('migrates a store made before arrival order: failed events move out of good, existing rows keep their order', async () => {
    const s = await open()
    const old = searchDb(s.db.sql, 'before_v2')
    const t = tablesOf(old)
    await s.db.sql.query('CREATE SCHEMA before_v2')
    await s.db.sql.query(`CREATE TABLE ${t.migrations} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
    for (const q of MIGRATIONS[0]!.statements(t)) await s.db.sql.query(q)
    await s.db.sql.query(`INSERT INTO ${t.migrations} (version) VALUES (1)`)
    const docs = await lines(3)
    for (const [i, line] of docs.entries()) {
      await s.db.sql.query(`INSERT INTO ${t.good} (id, collector_tstamp, failed, doc, line) VALUES ($1, '2025-04-30T10:00:00Z', $2, '{}', $3)`, [`e${i}`, i === 1, line])
    }
    expect(await migrate(old)).toEqual([2, 3, 4])
    expect((await s.db.sql.query<{ id: string }>(`SELECT id FROM ${t.good} ORDER BY collector_tstamp DESC, seq DESC`)).rows.map((r) => r.id)).toEqual(['e2', 'e0'])
    expect((await s.db.sql.query<{ id: string }>(`SELECT id FROM ${t.incomplete}`)).rows).toEqual([{ id: 'e1' }])
  })

  it('stores hostile text as a value', async () => {
    const s = await open()
    const hostile = "x'); DROP TABLE good_events; --"
    const [line] = await lines(1, `&page=${encodeURIComponent(hostile)}`)
    await loadBatch(s.db, 'good', [{ id: '1', text: line! }], Date.now())
    const r = await s.db.sql.query<{ title: string }>("SELECT doc->>'page_title' AS title FROM good_events")
    expect(r.rows).toEqual([{ title: hostile }])
  })

  it('deletes documents older than the retention', async () => {
    const s = await open()
    await loadBatch(s.db, 'bad', [{ id: 'old', text: badRow(1, '2020-01-01T00:00:00Z') }, { id: 'new', text: badRow(2, '2025-04-30T00:00:00Z') }], Date.now())
    await loadBatch(s.db, 'good', (await lines(2)).map((text, i) => ({ id: String(i), text })), Date.now())
    expect(await purgeOlderThan(s.db, 7, Date.UTC(2025, 4, 2))).toEqual({ good: 0, bad: 1 })
    expect(await purgeOlderThan(s.db, 1, Date.UTC(2025, 4, 2))).toEqual({ good: 2, bad: 1 })
  })

  it('keeps its data in its directory across a reopen', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'floe-search-')), 'search')
    const first = await open(dir)
    await loadBatch(first.db, 'good', (await lines(3)).map((text, i) => ({ id: String(i), text })), Date.now())
    await first.close()
    const again = await open(dir)
    expect(await countDocuments(again.db, 'good')).toBe(3)
  })
})
