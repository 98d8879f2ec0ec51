import { describe, expect, it } from 'vitest'
import type { RecoverRequest, RecoverResult } from '../../../lib/core/recover/api'
import { emptyReport } from '../../../lib/core/recover/run'
import { NO_STEPS } from '../../../lib/core/recover/steps'
import { giveUpShare, processShare, parseShareMessage, type RunProgress, type ShareMessage, type WorkerPorts } from '../../../lib/core/recover/worker'

/**
 * A deployment in memory: bad rows (some not replayable), claims, the run's
 * record with the same conditional update as the search store's, and a FIFO
 * queue that drops a message whose deduplication id it has seen.
 */
function world(rows: number, unreplayable = 0) {
  const claimed = new Map<number, string>()
  /** Claims of a delivery cut short after writing (pending: out of the selection, not marked). */
  const pending = new Map<number, string>()
  let cutNext = false
  const replays: number[] = []
  const records = new Map<string, RunProgress>()
  const queue: ShareMessage[] = []
  const seen = new Set<string>()
  let failSend = 0
  const failed = new Map<string, { share: number; reason: string }>()
  const ports: WorkerPorts = {
    async fail(runId, share, reason) {
      const now = records.get(runId)
      if (!now || now.finished) return
      records.set(runId, { ...now, finished: true })
      failed.set(runId, { share, reason })
    },
    progress: async (runId) => records.get(runId),
    async releasePending(runId) {
      let n = 0
      for (const [i, r] of pending) if (r === runId) pending.delete(i), n++
      return n
    },
    async replay(req: RecoverRequest, runId: string): Promise<RecoverResult> {
      const open = [...Array(rows + unreplayable).keys()].filter((i) => !claimed.has(i) && !pending.has(i))
      if (cutNext) {
        // the invocation is killed after claiming and writing its first rows, before marking them
        cutNext = false
        for (const i of open.slice(unreplayable, unreplayable + 100)) pending.set(i, runId), replays.push(i)
        throw new Error('Task timed out after 900 seconds')
      }
      const page = open.slice(0, req.limit)
      const r = emptyReport(runId, false)
      for (const i of page) {
        r.selected++
        if (i < unreplayable) {
          r.unrecoverable++
          continue
        }
        claimed.set(i, runId)
        replays.push(i)
        r.fixed++
        r.wouldBeGood++
        r.replayed++
      }
      r.reasons = r.unrecoverable ? [{ reason: 'not replayable: size_violation', count: r.unrecoverable }] : []
      const left = [...Array(rows + unreplayable).keys()].filter((i) => !claimed.has(i)).length
      return { ...r, ...(r.selected >= req.limit! ? { more: left > 0 } : {}) }
    },
    async record(runId, share, totals, finished) {
      const now = records.get(runId)!
      if (now.finished || now.shares !== share) return false
      records.set(runId, { shares: share + 1, finished, report: totals })
      return true
    },
    async send(m) {
      if (failSend > 0) {
        failSend--
        throw new Error('SQS is unavailable')
      }
      const id = `${m.runId}.${m.share}`
      if (seen.has(id)) return
      seen.add(id)
      queue.push(m)
    },
  }
  const start = (runId: string) => {
    records.set(runId, { shares: 0, finished: false, report: emptyReport(runId, false) })
    return ports.send({ runId, share: 0, selection: { failureType: 'schema_violations' }, source: 'search' })
  }
  /** Delivers every queued message until the queue is empty; answers the outcomes. */
  const drain = async (shareSize: number) => {
    const outcomes: string[] = []
    for (let m = queue.shift(); m; m = queue.shift()) outcomes.push((await processShare(ports, m, NO_STEPS, shareSize)).kind)
    return outcomes
  }
  return { ports, records, failed, queue, replays, claimed, pending, start, drain, failNextSend: () => (failSend = 1), cutNextReplay: () => (cutNext = true) }
}

describe('a recovery run in shares', () => {
  it('replays a selection larger than one share in shares, each row once, and records the totals', async () => {
    const w = world(12_345)
    await w.start('recover-20261127T080000-00000001')
    const outcomes = await w.drain(5_000)
    expect(outcomes).toEqual(['continued', 'continued', 'done'])
    expect(w.replays).toHaveLength(12_345)
    expect(new Set(w.replays).size).toBe(12_345)
    const rec = w.records.get('recover-20261127T080000-00000001')!
    expect(rec).toMatchObject({ shares: 3, finished: true })
    expect(rec.report).toMatchObject({ selected: 12_345, fixed: 12_345, replayed: 12_345, wouldBeGood: 12_345 })
  })

  it('ends on a share that was not full, and on one exactly full when nothing is left', async () => {
    const w = world(10_000)
    await w.start('recover-20261127T080000-00000002')
    expect(await w.drain(5_000)).toEqual(['continued', 'done'])
    expect(w.records.get('recover-20261127T080000-00000002')!.report.replayed).toBe(10_000)
  })

  it('replays nothing for a message delivered again, and sends the next share again only when it may have been lost', async () => {
    const w = world(7_000)
    const runId = 'recover-20261127T080000-00000003'
    await w.start(runId)
    const first = w.queue[0]!
    expect(await w.drain(5_000)).toEqual(['continued', 'done'])
    // the first share delivered again after the run ended
    expect((await processShare(w.ports, first, NO_STEPS, 5_000)).kind).toBe('finishedAlready')
    expect(w.replays).toHaveLength(7_000)

    // the invocation fails after recording its share but before sending the next: SQS delivers the share again
    const v = world(7_000)
    const id = 'recover-20261127T080000-00000004'
    await v.start(id)
    const share0 = v.queue.shift()!
    v.failNextSend()
    await expect(processShare(v.ports, share0, NO_STEPS, 5_000)).rejects.toThrow('SQS is unavailable')
    expect(v.replays).toHaveLength(5_000)
    expect(await processShare(v.ports, share0, NO_STEPS, 5_000)).toEqual({ kind: 'duplicate', resent: true })
    expect(v.replays).toHaveLength(5_000)
    expect(await v.drain(5_000)).toEqual(['done'])
    expect(v.replays).toHaveLength(7_000)
    expect(new Set(v.replays).size).toBe(7_000)
    expect(v.records.get(id)!.report).toMatchObject({ selected: 7_000, replayed: 7_000 })
    // a stale copy of share 0 once share 1 is recorded sends nothing
    const sent: ShareMessage[] = []
    expect(await processShare({ ...v.ports, progress: async () => ({ shares: 2, finished: false, report: emptyReport(id, false) }), send: async (m) => void sent.push(m) }, share0, NO_STEPS, 5_000)).toEqual({ kind: 'duplicate' })
    expect(sent).toEqual([])
  })

  it('ends a run whose share claimed nothing (only rows that cannot be replayed are left) instead of looping', async () => {
    const w = world(0, 6_000)
    await w.start('recover-20261127T080000-00000005')
    expect(await w.drain(5_000)).toEqual(['done'])
    expect(w.records.get('recover-20261127T080000-00000005')).toMatchObject({ finished: true, report: { selected: 5_000, unrecoverable: 5_000, replayed: 0 } })
  })

  it('drops a message of a run it has no record of, and refuses a message that is not a share', async () => {
    const w = world(10)
    expect((await processShare(w.ports, { runId: 'recover-20261127T080000-0000000f', share: 0, selection: {}, source: 'search' }, NO_STEPS)).kind).toBe('unknownRun')
    expect(w.replays).toEqual([])
    expect(() => parseShareMessage('{"runId":"x"}')).toThrow('not a recovery share')
    expect(() => parseShareMessage(JSON.stringify({ runId: 'x', share: 0, selection: {}, source: 'search', steps: { steps: [{ op: 'nope' }] } }))).toThrow('do not validate')
    expect(parseShareMessage(JSON.stringify({ runId: 'x', share: 1, selection: {}, source: 'archive' })).message.share).toBe(1)
  })

  it('records the run failed when the last delivery of a share fails, not before, and ignores a body that names no run', async () => {
    const w = world(10)
    const run = 'recover-20261127T080000-00000010'
    await w.start(run)
    const body = JSON.stringify(w.queue[0])
    expect(await giveUpShare(w.ports, body, 'the search store is unavailable', 1, 3)).toBe(false)
    expect(await giveUpShare(w.ports, body, 'the search store is unavailable', 2, 3)).toBe(false)
    expect(w.failed.size).toBe(0)
    expect(await giveUpShare(w.ports, body, 'the search store is unavailable', 3, 3)).toBe(true)
    expect(w.failed.get(run)).toEqual({ share: 0, reason: 'share 0 failed 3 times and was moved to the dead-letter queue: the search store is unavailable' })
    expect(w.records.get(run)!.finished).toBe(true)
    // a redelivery from the dead-letter queue finds the run ended
    expect((await processShare(w.ports, w.queue[0]!, NO_STEPS)).kind).toBe('finishedAlready')
    expect(await giveUpShare(w.ports, 'not json', 'bad', 3, 3)).toBe(false)
    expect(await giveUpShare(w.ports, '{"share":0}', 'bad', 3, 3)).toBe(false)
    expect(await giveUpShare(w.ports, body, 'x', Number.NaN, 3)).toBe(false)
  })

  it('a share delivered again after its invocation was killed mid-way redoes the rows it left pending: each row replayed, none lost', async () => {
    const w = world(700)
    await w.start('recover-20261127T081500-0000000c')
    w.cutNextReplay()
    const m = w.queue.shift()!
    await expect(processShare(w.ports, m, NO_STEPS, 500)).rejects.toThrow('timed out')
    expect(w.pending.size).toBe(100)
    // SQS delivers the message again
    w.queue.unshift(m)
    expect(await w.drain(500)).toEqual(['continued', 'done'])
    expect(w.pending.size).toBe(0)
    expect(w.claimed.size).toBe(700)
    // the 100 written before the kill were written again (the store keeps each event once by id)
    expect(new Set(w.replays).size).toBe(700)
    expect(w.records.get('recover-20261127T081500-0000000c')).toMatchObject({ finished: true, report: { replayed: 700 } })
  })
})
