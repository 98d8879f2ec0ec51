/**
 * A recovery run too large for one invocation, in shares: each message of
 * the run's queue is one share (the run id, the request and the share
 * number). The worker replays one share (at most `API_ROW_LIMIT` bad rows:
 * the claims take them out of the selection, so the next share selects the
 * rows still left), adds its counts to the run's record and sends the next
 * share until the selection is exhausted. The record is the source of truth:
 * a message delivered again (SQS delivers at least once) for a share already
 * recorded replays nothing, and only sends the next share again when that
 * may have been lost (the queue drops a duplicate sent within its
 * deduplication window).
 */
import { API_ROW_LIMIT, type RecoverRequest, type RecoverResult } from './api'
import { emptyReport, MAX_REASONS, type RecoverReport } from './run'
import { parseRecoveryDocument } from './document'
import { NO_STEPS, type RecoverySteps } from './steps'
import type { Selection } from './store'

/** One share of a run, as sent to the queue (JSON). */
export interface ShareMessage {
  readonly runId: string
  /** 0 for the first share. */
  readonly share: number
  readonly selection: Selection
  readonly source: 'search' | 'archive'
  /** The recovery steps document as given (validated again by the worker). */
  readonly steps?: unknown
}

/** What the run's record holds while it runs and when it is done. */
export interface RunProgress {
  /** Shares recorded. */
  readonly shares: number
  readonly finished: boolean
  readonly report: RecoverReport
}

export interface WorkerPorts {
  /** The run's record; undefined when there is none (the run was never started here). */
  progress(runId: string): Promise<RunProgress | undefined>
  /** Releases the run's pending claims (left by an earlier delivery of the share that was cut short); answers how many. */
  releasePending(runId: string): Promise<number>
  /** Replays one share of at most `limit` rows with the run's id. */
  replay(req: RecoverRequest, runId: string): Promise<RecoverResult>
  /** Records share `share` done, with the totals so far; false when another delivery recorded it first. */
  record(runId: string, share: number, totals: RecoverReport, finished: boolean): Promise<boolean>
  /** Sends a share to the queue (deduplicated by run id and share number). */
  send(message: ShareMessage): Promise<void>
  /** Records the run failed at share `share` with the reason (nothing when it is finished already). */
  fail(runId: string, share: number, reason: string): Promise<void>
}

export type ShareOutcome =
  | { readonly kind: 'done' | 'continued'; readonly report: RecoverReport }
  | { readonly kind: 'duplicate' | 'unknownRun' | 'finishedAlready'; readonly resent?: boolean }

/** Counts of a share added to the totals; reasons merged, most frequent first. */
export function addReports(a: RecoverReport, b: RecoverReport): RecoverReport {
  const reasons = new Map<string, number>()
  for (const r of [...a.reasons, ...b.reasons]) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + r.count)
  return {
    runId: a.runId,
    dryRun: false,
    selected: a.selected + b.selected,
    unrecoverable: a.unrecoverable + b.unrecoverable,
    fixed: a.fixed + b.fixed,
    broken: a.broken + b.broken,
    wouldBeGood: a.wouldBeGood + b.wouldBeGood,
    stillFailing: a.stillFailing + b.stillFailing,
    replayed: a.replayed + b.replayed,
    claimedElsewhere: a.claimedElsewhere + b.claimedElsewhere,
    reasons: [...reasons].sort((x, y) => y[1] - x[1]).slice(0, MAX_REASONS).map(([reason, count]) => ({ reason, count })),
  }
}

/** Reads a queue message; throws on one that is not a share (it then ends in the dead-letter queue). */
export function parseShareMessage(body: string): { message: ShareMessage; steps: RecoverySteps } {
  const m = JSON.parse(body) as ShareMessage
  if (typeof m?.runId !== 'string' || !Number.isInteger(m.share) || m.share < 0 || typeof m.selection !== 'object' || (m.source !== 'search' && m.source !== 'archive')) {
    throw new Error('not a recovery share: {runId, share, selection, source, steps?}')
  }
  let steps = NO_STEPS
  if (m.steps !== undefined && m.steps !== null) {
    const s = parseRecoveryDocument(m.steps)
    if (!s.ok) throw new Error(`the recovery steps of run ${m.runId} do not validate: ${s.errors.join('; ')}`)
    steps = s.value
  }
  return { message: m, steps }
}

/** Processes one share of a run. */
export async function processShare(ports: WorkerPorts, message: ShareMessage, steps: RecoverySteps, shareSize = API_ROW_LIMIT): Promise<ShareOutcome> {
  const before = await ports.progress(message.runId)
  if (!before) return { kind: 'unknownRun' }
  if (before.finished) return { kind: 'finishedAlready' }
  if (before.shares > message.share) {
    // Recorded already: the next share was sent, unless the invocation ended between recording and sending.
    if (before.shares === message.share + 1) {
      await ports.send({ ...message, share: message.share + 1 })
      return { kind: 'duplicate', resent: true }
    }
    return { kind: 'duplicate' }
  }
  // A delivery cut short (the function timed out or was killed) left its claims pending: this delivery redoes them.
  await ports.releasePending(message.runId)
  const result = await ports.replay({ selection: message.selection, source: message.source, steps, dryRun: false, limit: shareSize }, message.runId)
  const share: RecoverReport = { ...emptyReport(message.runId, false), ...pickCounts(result) }
  const totals = addReports(before.report, share)
  // Rows left: the share was full (a share of the archive cannot count what is left, so a full one is followed by another).
  // A share that claimed nothing made no progress (what is left is not replayable): the run ends there.
  const progressed = result.fixed + result.broken + result.claimedElsewhere > 0
  const more = progressed && (result.more === true || (result.more === undefined && result.selected >= shareSize))
  const recorded = await ports.record(message.runId, message.share, totals, !more)
  if (!recorded) return { kind: 'duplicate' }
  if (!more) return { kind: 'done', report: totals }
  await ports.send({ ...message, share: message.share + 1 })
  return { kind: 'continued', report: totals }
}

/**
 * After a delivery of a share failed: when it was the last delivery the queue makes (the message goes to
 * the dead-letter queue next), the run is recorded as failed with the reason, so that its status says so
 * instead of running for ever. Answers whether it was recorded; a body that is not a share names no run.
 */
export async function giveUpShare(ports: WorkerPorts, body: string, reason: string, deliveries: number, maxDeliveries: number): Promise<boolean> {
  if (!(deliveries >= maxDeliveries)) return false
  let m: Partial<ShareMessage>
  try {
    m = JSON.parse(body) as Partial<ShareMessage>
  } catch {
    return false
  }
  if (typeof m?.runId !== 'string' || !Number.isInteger(m.share)) return false
  await ports.fail(m.runId, m.share!, `share ${m.share} failed ${deliveries} times and was moved to the dead-letter queue: ${reason}`)
  return true
}

function pickCounts(r: RecoverResult): Omit<RecoverReport, 'runId' | 'dryRun'> {
  const { selected, unrecoverable, fixed, broken, wouldBeGood, stillFailing, replayed, claimedElsewhere, reasons } = r
  return { selected, unrecoverable, fixed, broken, wouldBeGood, stillFailing, replayed, claimedElsewhere, reasons }
}
