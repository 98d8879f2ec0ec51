/**
 * A replay killed at any instant (claiming, after writing before marking,
 * marking) leaves every selected row replayed or selectable again: the dead
 * run is ended as interrupted with its pending claims released, and a second
 * run replays what is left. On the real search store (PGlite); the raw
 * stream is a list, and a kill is a port that never returns (nothing of the
 * killed process runs afterwards, not even its error handling).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventIdsOf, readBadRow, RECOVERY_HEADER } from '../../../lib/core/recover/events'
import { storedOutcome } from '../../../lib/core/recover/outcome'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { recover, type RecoverPorts } from '../../../lib/core/recover/run'
import { endDeadRuns, recordRunEnd, recordRunFailure, recordRunStart, runRecord, unfinishedRuns } from '../../../lib/core/recover/runs'
import { claimRows, finishRows, releasePending, releaseRows, selectPages, countSelection, RunEnded } from '../../../lib/core/recover/store'
import { NO_STEPS } from '../../../lib/core/recover/steps'
import { badDocument } from '../../../lib/core/search/documents'
import { searchDb, tablesOf, upsertBad, type SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { schemaViolation } from '../../support/bad-rows'

let store: LocalSearchStore
beforeAll(async () => {
  store = await openLocalSearchStore()
})
afterAll(async () => {
  await store?.close()
})

const ROWS = 600
const PAGE = 100
const NOW = Date.parse('2026-11-28T12:00:00Z')
const DEAD = 'host:1'
const ALIVE = 'host:2'

class Killed extends Error {}
type Step = 'claim' | 'write' | 'finish' | 'after-finish'

/** A fresh schema with `ROWS` schema_violations bad rows; answers their event ids. */
async function load(schema: string): Promise<{ db: SearchDb; eids: string[] }> {
  const db = searchDb(store.db.sql, schema)
  const { migrate } = await import('../../../lib/core/search/store')
  await migrate(db)
  const eids = Array.from({ length: ROWS }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
  const docs = eids.map((e) => {
    const d = badDocument(schemaViolation(e), NOW)
    if (!d.ok) throw new Error(d.error)
    return d.value
  })
  await upsertBad(db, docs)
  return { db, eids }
}

/** A run on the store writing to `raw`; killed at `kill.step` of page `kill.page` when given. */
async function run(db: SearchDb, runId: string, owner: string, raw: string[], kill?: { step: Step; page: number }, failWriteAt?: number) {
  await recordRunStart(db, runId, NOW, false, { failureType: 'schema_violations' }, owner)
  let page = 0
  let dead = false
  const die = (step: Step) => {
    if (kill && kill.step === step && kill.page === page) dead = true
    if (dead) throw new Killed(`killed at ${step} of page ${page}`)
  }
  const ports: RecoverPorts = {
    pages: () => selectPages(db, { failureType: 'schema_violations' }, PAGE),
    enrich: async (p) => p.map(() => ({ good: 1, bad: [] })),
    async claim(ids) {
      if (dead) throw new Killed('dead')
      const got = await claimRows(db, runId, ids)
      die('claim')
      return got
    },
    async finish(rows) {
      die('write') // the payloads are on the stream; the process dies before marking
      die('finish') // (the marking is one transaction: killed in it, it is rolled back)
      await finishRows(db, runId, rows)
      die('after-finish')
      page++
    },
    async release(ids) {
      if (dead) throw new Killed('a killed process releases nothing')
      await releaseRows(db, runId, ids)
    },
    async writeRaw(payloads) {
      if (dead) throw new Killed('dead')
      if (failWriteAt === page) throw new Error('the raw stream is unavailable')
      for (const p of payloads) {
        const cp = decodeCollectorPayload(p)
        if (!cp.ok) throw new Error(cp.error)
        raw.push(JSON.parse(cp.payload.body!).data[0].eid)
      }
    },
    writeBad: async () => undefined,
    now: () => NOW,
  }
  const report = await recover(ports, { runId, steps: NO_STEPS, dryRun: false, processor: { artifact: 'floe-enrich', version: 't' } })
  await recordRunEnd(db, runId, NOW, report)
  return report
}

async function claimsByState(db: SearchDb): Promise<Record<string, number>> {
  const r = await db.sql.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM ${tablesOf(db).recoveryClaims} GROUP BY state`)
  return Object.fromEntries(r.rows.map((x) => [x.state, Number(x.n)]))
}

describe('a replay killed at any instant', () => {
  for (const step of ['claim', 'write', 'finish', 'after-finish'] as const) {
    it(`killed at ${step} (page 2): the run is ended as interrupted, its pending rows released, and a second run replays the rest; every row replayed, none lost`, async () => {
      const { db, eids } = await load(`crash_${step.replace('-', '_')}`)
      const raw: string[] = []
      const first = 'recover-20261128T120000-0000000a'
      await expect(run(db, first, DEAD, raw, { step, page: 2 })).rejects.toThrow(Killed)
      // what the dead run left: pending claims (not after a completed marking), rows out of the selection
      const pendingLeft = step === 'after-finish' ? 0 : PAGE
      expect(await claimsByState(db)).toEqual({ replayed: 2 * PAGE + (step === 'after-finish' ? PAGE : 0), ...(pendingLeft ? { pending: pendingLeft } : {}) })
      expect(await unfinishedRuns(db)).toEqual([first])

      // the next start (or run) ends it: its process is gone
      const ended = await endDeadRuns(db, { now: NOW + 1000, ownerGone: (o) => o === DEAD })
      expect(ended).toEqual([{ runId: first, reason: expect.stringContaining(DEAD), released: pendingLeft }])
      expect((await runRecord(db, first))!.report).toMatchObject({ interrupted: { released: pendingLeft } })
      expect(await countSelection(db, { failureType: 'schema_violations' }, NOW)).toBe(ROWS - 2 * PAGE - (step === 'after-finish' ? PAGE : 0))

      const second = await run(db, 'recover-20261128T120100-0000000b', ALIVE, raw)
      expect(second.replayed).toBe(ROWS - 2 * PAGE - (step === 'after-finish' ? PAGE : 0))
      // every row replayed (a row written before the kill may be written again: the store keeps one event per id)
      expect(new Set(raw)).toEqual(new Set(eids))
      expect(raw.length - new Set(raw).size).toBe(step === 'write' || step === 'finish' ? PAGE : 0)
      expect(await claimsByState(db)).toEqual({ replayed: ROWS })
      const marked = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${tablesOf(db).bad} WHERE recovered IS NOT NULL`)
      expect(Number(marked.rows[0]!.n)).toBe(ROWS)
      expect(await unfinishedRuns(db)).toEqual([])
      expect(await countSelection(db, { failureType: 'schema_violations' }, NOW)).toBe(0)
    })
  }

  it('a run found dead by its heartbeat only (its owner unknown) is ended after STALE_AFTER_MS without a heartbeat, not before', async () => {
    const { db } = await load('crash_stale')
    const raw: string[] = []
    const dead = 'recover-20261128T120000-0000000c'
    await expect(run(db, dead, 'elsewhere:9', raw, { step: 'write', page: 0 })).rejects.toThrow(Killed)
    const beat = Date.parse((await runRecord(db, dead))!.heartbeat!)
    expect(await endDeadRuns(db, { now: beat + 60_000 })).toEqual([])
    expect(await endDeadRuns(db, { now: beat + 121_000 })).toMatchObject([{ runId: dead, released: PAGE }])
  })

  it('a run ended by another process while it still runs stops at its next claim or mark, and what it held is selectable again', async () => {
    const { db } = await load('crash_ended')
    const runId = 'recover-20261128T120000-0000000d'
    await recordRunStart(db, runId, NOW, false, {}, ALIVE)
    const ids = (await db.sql.query<{ id: string }>(`SELECT id FROM ${tablesOf(db).bad} ORDER BY id LIMIT 5`)).rows.map((r) => r.id)
    expect((await claimRows(db, runId, ids)).size).toBe(5)
    await endDeadRuns(db, { now: NOW, ownerGone: () => true })
    await expect(finishRows(db, runId, ids.map((id) => ({ id, eventIds: [] })))).rejects.toThrow(RunEnded)
    await expect(claimRows(db, runId, ids)).rejects.toThrow(RunEnded)
    expect(await countSelection(db, {}, NOW)).toBe(ROWS)
  })

  it('a queued run (AWS) is left to its queue: not ended by the heartbeat; a share that fails every delivery ends it failed, releasing its pending rows', async () => {
    const { db } = await load('crash_queued')
    const runId = 'recover-20261128T120000-00000011'
    await recordRunStart(db, runId, NOW, false, { queued: true })
    const ids = (await db.sql.query<{ id: string }>(`SELECT id FROM ${tablesOf(db).bad} ORDER BY id LIMIT 7`)).rows.map((r) => r.id)
    await claimRows(db, runId, ids)
    expect(await endDeadRuns(db, { now: NOW + 3_600_000, ownerGone: () => true })).toEqual([])
    expect(await countSelection(db, {}, NOW)).toBe(ROWS - 7)
    expect(await releasePending(db, runId)).toBe(7) // a redelivered share redoes its own pending rows
    await claimRows(db, runId, ids)
    expect(await recordRunFailure(db, runId, 1, 'share 1 failed 3 times')).toBe(true)
    expect((await runRecord(db, runId))!.report).toEqual({ failed: { share: 1, reason: 'share 1 failed 3 times', released: 7 } })
    expect(await countSelection(db, {}, NOW)).toBe(ROWS)
  })

  it('a write that fails ends the run failed with the reason; the page it could not write is given back at once', async () => {
    const { db } = await load('crash_write_fails')
    const runId = 'recover-20261128T120000-00000010'
    await expect(run(db, runId, ALIVE, [], undefined, 1)).rejects.toThrow('raw stream is unavailable')
    expect(await claimsByState(db)).toEqual({ replayed: PAGE })
    await recordRunFailure(db, runId, undefined, 'the raw stream is unavailable')
    expect((await runRecord(db, runId))!.report).toEqual({ failed: { reason: 'the raw stream is unavailable', released: 0 } })
    expect(await countSelection(db, { failureType: 'schema_violations' }, NOW)).toBe(ROWS - PAGE)
  })

  it("a run's outcome is read from the store by the event ids its claims keep, not from the preview", async () => {
    const { db, eids } = await load('outcome')
    const runId = 'recover-20261128T120000-0000000e'
    const report = await run(db, runId, ALIVE, [])
    // the preview said every event would be good
    expect(report).toMatchObject({ replayed: ROWS, wouldBeGood: ROWS })
    // enrich made 400 good events, 100 bad rows again (carrying the run), and 100 are still on their way
    const t = tablesOf(db)
    for (const e of eids.slice(0, 400)) await db.sql.query(`INSERT INTO ${t.good} (id, collector_tstamp, doc, line) VALUES ($1, now(), '{}'::jsonb, '')`, [e])
    const again = eids.slice(400, 500).map((e) => {
      const d = badDocument(schemaViolation(e, NOW + 60_000, 'crash', ['Host: localhost', `${RECOVERY_HEADER}: ${runId}`]), NOW)
      if (!d.ok) throw new Error(d.error)
      return d.value
    })
    await upsertBad(db, again)
    const o = await storedOutcome(db, runId, NOW, () => NOW)
    expect(o).toMatchObject({ nowGood: 400, failedAgain: 100, stillPending: 100, untracked: 0 })
    expect(o.failedAgainReasons).toEqual([{ count: 100, reason: expect.stringContaining('iglu:com.acme/click/jsonschema/1-0-0') }])
    // a run that replayed nothing of these has none of them
    expect(await storedOutcome(db, 'recover-20261128T120000-0000000f', NOW, () => NOW)).toMatchObject({ nowGood: 0, failedAgain: 0, stillPending: 0 })
  })

  it('the events of the bad rows are the ones replayed', () => {
    const r = readBadRow(schemaViolation('00000000-0000-4000-8000-000000000001'))
    expect(r.ok && eventIdsOf(r.event)).toEqual(['00000000-0000-4000-8000-000000000001'])
  })
})
