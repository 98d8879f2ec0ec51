/**
 * Recovery runs larger than one request, on AWS: the control plane records
 * the run and sends its first share to the `recoverRuns` queue; the
 * `recoverWorker` function replays one share per message (see
 * `lib/core/recover/worker.ts`). Where the queue is not granted (the local
 * runtime has no queues), nothing is queued and the request runs in-process.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs'
import { API_ROW_LIMIT, RecoveryUnavailable, type QueuedRun, type RecoverRequest, type RunStatus } from '../core/recover/api'
import { storedOutcome } from '../core/recover/outcome'
import { emptyReport } from '../core/recover/run'
import { recordRunFailure, recordRunStart, recordShare, runRecord, type RunRecord } from '../core/recover/runs'
import { countSelection, releasePending } from '../core/recover/store'
import type { ShareMessage, WorkerPorts } from '../core/recover/worker'
import { envVar, queues } from '../infra/resources'
import { queueUrl } from '../runtime/resources'
import { database } from './database'
import { endDeadRecoveryRuns } from './recover-runs'
import { newRunId, runRecovery } from './recover-service'

let sqs: SQSClient | undefined

/** Deliveries of a share before the queue moves it to its dead-letter queue. */
export const SHARE_DELIVERIES = queues.recoverRuns.maxReceiveCount

/** Sends a share; FIFO: one message group per run, deduplicated by run and share. */
export async function sendShare(m: ShareMessage, url = queueUrl('recoverRuns'), client: SQSClient = (sqs ??= new SQSClient({}))): Promise<void> {
  if (!url) throw new Error('the recoverRuns queue is not granted to this function')
  await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(m), MessageGroupId: m.runId, MessageDeduplicationId: `${m.runId}.${m.share}` }))
}

const hasSearchStore = () => process.env[envVar('database', 'search')] !== undefined

/** Queues a replay when this function has the queue and the selection is larger than one request takes (the archive: always). */
export async function queueRecovery(req: RecoverRequest): Promise<QueuedRun | undefined> {
  if (!queueUrl('recoverRuns') || req.dryRun) return undefined
  if (!hasSearchStore()) throw new RecoveryUnavailable('this deployment has no search store: recovery keeps its claims there')
  const db = await database('search')
  let selected: number | undefined
  if (req.source === 'search') {
    selected = await countSelection(db, req.selection)
    if (selected <= API_ROW_LIMIT) return undefined
  }
  const runId = newRunId()
  await recordRunStart(db, runId, Date.now(), false, { ...req.selection, source: req.source, steps: req.steps.name, queued: true })
  await sendShare({ runId, share: 0, selection: req.selection, source: req.source, steps: req.stepsDocument })
  return { runId, ...(selected !== undefined ? { selected } : {}) }
}

/** A run's record, for `GET /control-plane/recover/<run id>`. */
export async function recoveryStatus(runId: string): Promise<RunStatus | undefined> {
  if (!hasSearchStore()) throw new RecoveryUnavailable('this deployment has no search store: runs are recorded there')
  const db = await database('search')
  // a run whose process died is ended first (interrupted), so that its status says so
  await endDeadRecoveryRuns(db)
  const r = await runRecord(db, runId)
  if (!r) return undefined
  if (r.dryRun) return runStatus(r)
  // nowGood, failedAgain, stillPending: read from the store now, by the event ids the run's replayed claims keep
  const { followedMs: _, ...outcome } = await storedOutcome(db, runId, Date.parse(r.startedAt))
  return { ...runStatus(r), outcome }
}

/** A run's status from its record: a run that failed or was interrupted says so, with the reason. */
export function runStatus(r: RunRecord): RunStatus {
  const failed = r.report?.failed as { share?: number; reason: string } | undefined
  const interrupted = r.report?.interrupted as { reason: string; released?: number } | undefined
  const state = failed ? 'failed' : interrupted ? 'interrupted' : r.finishedAt ? 'done' : 'running'
  const failure = failed ?? interrupted
  return { runId: r.runId, state, ...(failure ? { failure } : {}), startedAt: r.startedAt, finishedAt: r.finishedAt, dryRun: r.dryRun, selection: r.selection, report: r.report }
}

/** The worker's ports on this deployment. */
export function workerPorts(): WorkerPorts {
  return {
    async progress(runId) {
      const r = await runRecord(await database('search'), runId)
      if (!r) return undefined
      const report = { ...emptyReport(runId, false), ...(r.report ?? {}) }
      return { shares: Number(r.report?.shares ?? 0), finished: r.finishedAt !== undefined, report }
    },
    // a share's own events are not followed here: the run's status reads them from the store
    replay: (req, runId) => runRecovery(req, { runId, record: false, followUntil: 0 }),
    releasePending: async (runId) => releasePending(await database('search'), runId),
    record: async (runId, share, totals, finished) => recordShare(await database('search'), runId, share, totals, finished),
    send: (m) => sendShare(m),
    fail: async (runId, share, reason) => {
      await recordRunFailure(await database('search'), runId, share, reason)
    },
  }
}
