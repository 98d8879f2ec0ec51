/**
 * The record of a run in shares, on the local search store (PGlite): a share
 * is recorded once (a second delivery of the same share is refused), the last
 * one finishes the run; and the API's side: a large replay is queued (202,
 * with where to see it), its record answered by GET.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { answerRecover, answerStatus, recoverApi, type RecoverApiDeps } from '../../../lib/core/recover/api'
import { emptyReport } from '../../../lib/core/recover/run'
import { recordRunFailure, recordRunStart, recordShare, runRecord } from '../../../lib/core/recover/runs'
import { runStatus } from '../../../lib/aws/recover-queue'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'

let store: LocalSearchStore | undefined
afterAll(async () => {
  await store?.close()
})

const RUN = 'recover-20261127T082000-0123abcd'

describe('a run in shares on the search store', () => {
  it('records each share once, with the totals, and the last one finishes the run', async () => {
    store = await openLocalSearchStore()
    const db = store.db
    await recordRunStart(db, RUN, Date.parse('2026-11-27T08:20:00Z'), false, { failureType: 'schema_violations', queued: true })
    expect(await runRecord(db, RUN)).toMatchObject({ runId: RUN, startedAt: '2026-11-27T08:20:00.000Z', dryRun: false, selection: { failureType: 'schema_violations' } })
    expect((await runRecord(db, RUN))!.finishedAt).toBeUndefined()
    const totals = { ...emptyReport(RUN, false), selected: 5_000, replayed: 5_000 }
    expect(await recordShare(db, RUN, 0, totals, false)).toBe(true)
    // the same share delivered again
    expect(await recordShare(db, RUN, 0, { ...totals, replayed: 10_000 }, false)).toBe(false)
    expect((await runRecord(db, RUN))!.report).toMatchObject({ replayed: 5_000, shares: 1 })
    expect(await recordShare(db, RUN, 1, { ...totals, selected: 7_000, replayed: 7_000 }, true, Date.parse('2026-11-27T08:25:00Z'))).toBe(true)
    expect(await runRecord(db, RUN)).toMatchObject({ finishedAt: '2026-11-27T08:25:00.000Z', report: { replayed: 7_000, shares: 2 } })
    // nothing more once finished
    expect(await recordShare(db, RUN, 2, totals, true)).toBe(false)
    expect(await runRecord(db, 'recover-20261127T082000-ffffffff')).toBeUndefined()
  })
})

describe('a run whose share failed every delivery', () => {
  it('is recorded as failed with the reason, keeps its totals, and takes no share after', async () => {
    store ??= await openLocalSearchStore()
    const db = store.db
    const run = 'recover-20261127T083000-0123abcd'
    await recordRunStart(db, run, Date.parse('2026-11-27T08:30:00Z'), false, { failureType: 'schema_violations', queued: true })
    expect(runStatus((await runRecord(db, run))!).state).toBe('running')
    expect(await recordShare(db, run, 0, { ...emptyReport(run, false), selected: 5_000, replayed: 5_000 }, false)).toBe(true)
    expect(await recordRunFailure(db, run, 1, 'share 1 failed 3 times and was moved to the dead-letter queue: timeout', Date.parse('2026-11-27T08:40:00Z'))).toBe(true)
    const status = runStatus((await runRecord(db, run))!)
    expect(status).toMatchObject({ state: 'failed', failure: { share: 1, reason: 'share 1 failed 3 times and was moved to the dead-letter queue: timeout' }, finishedAt: '2026-11-27T08:40:00.000Z', report: { replayed: 5_000, shares: 1 } })
    expect(await recordRunFailure(db, run, 1, 'again')).toBe(false)
    expect(await recordShare(db, run, 1, emptyReport(run, false), true)).toBe(false)
    // a run that finished is not failed afterwards
    expect(await recordRunFailure(db, RUN, 2, 'late')).toBe(false)
    expect(runStatus((await runRecord(db, RUN))!).state).toBe('done')
  })
})

describe('the API with a recovery worker', () => {
  const queued: unknown[] = []
  const ran: unknown[] = []
  const deps: RecoverApiDeps = {
    run: async (req) => (ran.push(req), { ...emptyReport(RUN, req.dryRun), selected: 1, fixed: 1, replayed: req.dryRun ? 0 : 1 }),
    queue: async (req) => (queued.push(req), { runId: RUN, selected: 12_000 }),
    status: async (id) => (id === RUN ? { runId: RUN, state: 'running', startedAt: '2026-11-27T08:20:00.000Z', dryRun: false, selection: {}, report: { shares: 1 } } : undefined),
  }

  it('queues a replay of a whole selection (202 with its run id and status path), not a preview nor one with a limit', async () => {
    expect(await answerRecover(deps, { failureType: 'schema_violations' })).toMatchObject({ status: 202, body: { runId: RUN, selected: 12_000, status: `/control-plane/recover/${RUN}` } })
    expect(queued).toHaveLength(1)
    expect(await answerRecover(deps, { failureType: 'schema_violations', dryRun: true })).toMatchObject({ status: 200 })
    expect(await answerRecover(deps, { limit: 10 })).toMatchObject({ status: 200 })
    expect(queued).toHaveLength(1)
    expect(ran).toHaveLength(2)
    // the steps document travels with the queued run as given
    const steps = { steps: [{ op: 'renameSchema', from: 'iglu:com.acme/x/jsonschema/1-0-1', to: '1-0-0' }] }
    await answerRecover(deps, { steps })
    expect(queued.at(-1)).toMatchObject({ stepsDocument: steps })
  })

  it('answers a run record by GET, 404 for an unknown or malformed id, 405 for another method', async () => {
    const api = recoverApi(deps)
    const get = (path: string, method = 'GET') => api({ method, path, headers: {}, query: {}, body: Buffer.alloc(0) } as never)
    const ok = await get(`/control-plane/recover/${RUN}`)
    expect(ok.statusCode).toBe(200)
    expect(JSON.parse(String(ok.body))).toMatchObject({ runId: RUN, state: 'running' })
    expect((await get('/control-plane/recover/recover-20261127T082000-ffffffff')).statusCode).toBe(404)
    expect((await get('/control-plane/recover/../../etc')).statusCode).toBe(404)
    expect((await get(`/control-plane/recover/${RUN}`, 'POST')).statusCode).toBe(405)
    expect(await answerStatus({ run: deps.run }, RUN)).toMatchObject({ status: 409 })
  })
})
