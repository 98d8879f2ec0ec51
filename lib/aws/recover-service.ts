/**
 * Recovery wired to the deployment: bad rows from the search store (or the
 * archive bucket), enrich built in-process from the deployment's own
 * configuration and registry for the verdicts, payloads written to the raw
 * stream and recovery errors to the bad stream. Used by the control plane's
 * `/control-plane/recover` and by `floe recover`.
 */
import { randomUUID } from 'node:crypto'
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { LICENSE_MESSAGE } from '../core/enrich/config'
import { loadFunctionConfig } from '../core/enrich/function-config'
import { enrichBatch } from '../core/enrich/runner'
import { ENRICH_PROCESSOR } from '../core/enrich/version'
import { NOTHING_SELECTED, RecoveryUnavailable, type RecoverRequest, type RecoverResult } from '../core/recover/api'
import { archiveCandidates, archiveKeyHour, hourMayMatch } from '../core/recover/archive'
import { recover, type Candidate, type RecoverReport, type Verdict } from '../core/recover/run'
import { followOutcome, recoverWaitMs, storeOutcomePorts, type Outcome } from '../core/recover/outcome'
import { recordRunEnd, recordRunFailure, recordRunOutcome, recordRunStart, type EndedRun } from '../core/recover/runs'
import { claimedAlready, claimRows, countSelection, finishRows, releaseRows, selectPages } from '../core/recover/store'
import type { SearchDb } from '../core/search/store'
import { envVar } from '../infra/resources'
import { database } from './database'
import { restartable } from '../runtime/restarts'
import { checkRegistryChanges } from '../runtime/registry-changes'
import { checkSpecChanges } from '../runtime/spec-changes'
import { bucketName, streamName, tableName } from '../runtime/resources'
import { clients } from './clients'
import { endDeadRecoveryRuns, faultPoint, thisOwner } from './recover-runs'
import { createRuntime, loadEnrichments, type EnrichKinesisRuntime } from './enrich-kinesis'
import { KinesisWriter } from './kinesis-writer'
import { recordedLicence } from './licence'

/** Bad rows read, fixed, judged and written together. */
export const PAGE_SIZE = 200

/** Enrich as the deployment configures it, for verdicts only (it writes nothing). */
async function buildEnricher(): Promise<EnrichKinesisRuntime> {
  let c = loadFunctionConfig()
  if (!c.ok && c.errors.includes(LICENSE_MESSAGE) && (await recordedLicence(clients().ddb, tableName('settings')))) c = loadFunctionConfig(process.env, { licenceRecorded: true })
  if (!c.ok) throw new RecoveryUnavailable(`enrich cannot run here, so the events cannot be judged: ${c.errors.join('; ')}`)
  const rt = createRuntime(c.config, { log: () => undefined })
  await loadEnrichments(rt)
  return rt
}

const enricher = restartable(['enrich', 'registry'], () => {
  const p = buildEnricher()
  p.catch(() => enricher.drop())
  return p
})

async function verdicts(payloads: readonly Uint8Array[]): Promise<Verdict[]> {
  const rt = await enricher.get()
  // The registry as the running enrich sees it: what was pushed before this page is seen (see lib/runtime/registry-changes.ts).
  await checkRegistryChanges(() => clients().ddb)
  // and the published specifications (lib/runtime/spec-changes.ts)
  await checkSpecChanges(() => clients().ddb)
  const outcomes = await enrichBatch(rt.enricher, payloads, { concurrency: rt.config.concurrency.enrich })
  return outcomes.map((o) => ({
    good: o.outputs.filter((x) => x.kind === 'good').length,
    bad: o.outputs.flatMap((x) => (x.kind === 'bad' ? [x.json] : [])),
  }))
}

/** Pages of archived bad rows the selection takes, leaving out rows some run claimed already. */
async function* archivePages(db: SearchDb, req: RecoverRequest, limit: number): AsyncIterable<Candidate[]> {
  const { s3 } = clients()
  const bucket = bucketName('archive')
  const prefix = `${streamName('bad')}/`
  let left = limit
  let pending: Candidate[] = []
  const flush = async function* (all: boolean) {
    while (pending.length >= PAGE_SIZE || (all && pending.length > 0)) {
      const page = pending.splice(0, PAGE_SIZE)
      const taken = await claimedAlready(db, page.map((c) => c.id))
      const fresh = page.filter((c) => !taken.has(c.id)).slice(0, left)
      left -= fresh.length
      if (fresh.length > 0) yield fresh
      if (left <= 0) return
    }
  }
  const seen = new Set<string>()
  let token: string | undefined
  do {
    const list = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const o of list.Contents ?? []) {
      const hour = o.Key === undefined ? undefined : archiveKeyHour(o.Key)
      if (hour === undefined || !hourMayMatch(hour, req.selection)) continue
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }))
      const body = await got.Body!.transformToByteArray()
      for (const c of archiveCandidates(body, req.selection)) {
        if (seen.has(c.id)) continue // a batch archived twice
        seen.add(c.id)
        pending.push(c)
      }
      yield* flush(false)
      if (left <= 0) return
    }
    token = list.IsTruncated ? list.NextContinuationToken : undefined
  } while (token)
  yield* flush(true)
}

export interface RunOptions {
  readonly runId?: string
  readonly progress?: (r: RecoverReport) => void
  /** Records the run's start and end in recovery_runs (default true; a share of a queued run is recorded by the worker). */
  readonly record?: boolean
  /**
   * Follows the replayed events in the search store until this time at most
   * (epoch ms; the wait `FLOE_RECOVER_WAIT_SECONDS` ends it sooner); 0: not
   * followed. Default: the wait from now.
   */
  readonly followUntil?: number
  /** Called after each look at the store while following. */
  readonly following?: (o: Outcome) => void
  /** Called when a run whose process died was ended before this one. */
  readonly ended?: (e: EndedRun) => void
}

/** A new run id: `recover-<UTC time>-<8 hex digits>`. */
export const newRunId = () => `recover-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${randomUUID().slice(0, 8)}`

/** Runs a recovery on this deployment. */
export async function runRecovery(req: RecoverRequest, opts: RunOptions = {}): Promise<RecoverResult> {
  if (process.env[envVar('database', 'search')] === undefined) throw new RecoveryUnavailable('this deployment has no search store: recovery keeps its claims there')
  const db = await database('search')
  const runId = opts.runId ?? newRunId()
  const record = opts.record !== false && !req.dryRun
  const limit = req.limit ?? Number.POSITIVE_INFINITY
  const kinesis = new KinesisWriter(clients().kinesis)
  let previewError: string | undefined
  const startedAt = Date.now()
  // what a run that died left: its pending claims become selectable again first
  if (!req.dryRun) for (const e of await endDeadRecoveryRuns(db, startedAt)) opts.ended?.(e)
  if (record) await recordRunStart(db, runId, startedAt, req.dryRun, { ...req.selection, source: req.source, steps: req.steps.name }, thisOwner())
  const replayed: (readonly string[])[] = []
  const fault = faultPoint()
  let page = 0
  let report: RecoverReport
  try {
    report = await recover(
      {
        pages: () => (req.source === 'archive' ? archivePages(db, req, limit) : selectPages(db, req.selection, PAGE_SIZE, limit)),
        async enrich(payloads) {
          try {
            return await verdicts(payloads)
          } catch (err) {
            if (!(err instanceof RecoveryUnavailable)) throw err
            if (req.dryRun) throw err
            previewError = err.message
            return payloads.map(() => ({ good: 0, bad: [] }))
          }
        },
        async claim(ids) {
          const got = await claimRows(db, runId, ids)
          fault('claimed', page)
          return got
        },
        async finish(rows) {
          await finishRows(db, runId, rows)
          fault('marked', page++)
        },
        release: (ids) => releaseRows(db, runId, ids),
        async writeRaw(payloads) {
          await kinesis.write(streamName('raw'), payloads.map((data) => ({ partitionKey: randomUUID(), data })))
          fault('written', page)
        },
        writeBad: (lines) => kinesis.write(streamName('bad'), lines.map((l) => ({ partitionKey: randomUUID(), data: Buffer.from(l, 'utf8') }))),
        now: Date.now,
      },
      { runId, steps: req.steps, dryRun: req.dryRun, processor: ENRICH_PROCESSOR, progress: opts.progress, replayed: (ids) => replayed.push(...ids) },
    )
  } catch (err) {
    // the run ends here, failed with the reason; its pending claims go back
    if (record) await recordRunFailure(db, runId, undefined, (err as Error).message).catch(() => undefined)
    throw err
  }
  if (record) await recordRunEnd(db, runId, Date.now(), report)
  let outcome: Outcome | undefined
  const until = opts.followUntil ?? Date.now() + recoverWaitMs()
  if (!req.dryRun && report.replayed > 0 && until > Date.now() && recoverWaitMs() > 0) {
    const ids = replayed.flat()
    const untracked = replayed.filter((x) => x.length === 0).length
    outcome = await followOutcome(storeOutcomePorts(db, { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }), runId, ids, startedAt, {
      until: Math.min(until, Date.now() + recoverWaitMs()),
      untracked,
      progress: opts.following,
    })
    if (record) await recordRunOutcome(db, runId, outcome)
  }
  let more: boolean | undefined
  if (Number.isFinite(limit) && req.source === 'search' && report.selected >= limit) more = (await countSelection(db, req.selection)) > (req.dryRun ? report.selected : 0)
  return {
    ...report,
    ...(outcome ?? {}),
    ...(previewError ? { previewError, stillFailing: 0 } : {}),
    ...(more !== undefined ? { more } : {}),
    ...(report.selected === 0 ? { message: NOTHING_SELECTED } : {}),
  }
}
