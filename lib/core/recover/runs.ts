/**
 * The record of each recovery run in the search store (`recovery_runs`):
 * its selection, its owner (the process running it) and heartbeat (beaten
 * with each claim and mark), its report, and how it ended. A run whose
 * process died (its owner is gone, or no heartbeat for `STALE_AFTER_MS`) is
 * ended as `interrupted` and its pending claims released, so its rows are
 * selectable again; this is done by the next run, the next local start and
 * the run's status.
 */
import { tablesOf, type SearchDb } from '../search/store'

/** A run without a heartbeat for this long is taken for dead (a page of a run beats it every few seconds). */
export const STALE_AFTER_MS = 2 * 60_000

const iso = (ms: number) => new Date(ms).toISOString()

export async function recordRunStart(db: SearchDb, runId: string, at: number, dryRun: boolean, selection: unknown, owner?: string): Promise<void> {
  await db.sql.query(`INSERT INTO ${tablesOf(db).recoveryRuns} (id, started_at, dry_run, selection, owner, heartbeat) VALUES ($1, $2::timestamptz, $3, $4::jsonb, $5, $2::timestamptz)`, [
    runId,
    iso(at),
    dryRun,
    JSON.stringify(selection),
    owner ?? null,
  ])
}

/** Ends a run with its report; false when it was ended before (by another process that found it dead). */
export async function recordRunEnd(db: SearchDb, runId: string, at: number, report: unknown): Promise<boolean> {
  const r = await db.sql.query<{ id: string }>(`UPDATE ${tablesOf(db).recoveryRuns} SET finished_at = $2::timestamptz, report = $3::jsonb WHERE id = $1 AND finished_at IS NULL RETURNING id`, [runId, iso(at), JSON.stringify(report)])
  return r.rows.length === 1
}

/** Adds to a finished run's report (what became of its replayed events, read from the store afterwards). */
export async function recordRunOutcome(db: SearchDb, runId: string, outcome: object): Promise<void> {
  await db.sql.query(`UPDATE ${tablesOf(db).recoveryRuns} SET report = COALESCE(report, '{}'::jsonb) || $2::jsonb WHERE id = $1`, [runId, JSON.stringify(outcome)])
}

/** Ends a run with `key` ({reason, …}) in its report and its pending claims released, in one transaction; false when it had ended already. */
async function endWith(db: SearchDb, runId: string, at: number, key: 'failed' | 'interrupted', detail: Record<string, unknown>): Promise<{ ended: boolean; released: number }> {
  const t = tablesOf(db)
  return db.sql.transaction(async (tx) => {
    const released = (await tx.query<{ id: string }>(`DELETE FROM ${t.recoveryClaims} WHERE run_id = $1 AND state = 'pending' RETURNING id`, [runId])).rows.length
    const r = await tx.query<{ id: string }>(
      `UPDATE ${t.recoveryRuns} SET finished_at = $2::timestamptz, report = COALESCE(report, '{}'::jsonb) || jsonb_build_object($3::text, $4::jsonb)
       WHERE id = $1 AND finished_at IS NULL RETURNING id`,
      [runId, iso(at), key, JSON.stringify({ ...detail, released })],
    )
    return { ended: r.rows.length === 1, released }
  })
}

/**
 * Ends a run that cannot go on, with the reason kept in its report
 * (`failed: {share?, reason, released}`: the share of a queued run) and its pending claims released;
 * nothing when it is finished already.
 */
export async function recordRunFailure(db: SearchDb, runId: string, share: number | undefined, reason: string, at = Date.now()): Promise<boolean> {
  return (await endWith(db, runId, at, 'failed', { ...(share !== undefined ? { share } : {}), reason })).ended
}

/** Ends a run whose process died as `interrupted: {reason, released}`, releasing its pending claims. */
export async function recordRunInterrupted(db: SearchDb, runId: string, reason: string, at = Date.now()): Promise<{ ended: boolean; released: number }> {
  return endWith(db, runId, at, 'interrupted', { reason })
}

/** A run ended because its process died. */
export interface EndedRun {
  readonly runId: string
  readonly reason: string
  /** Pending claims released (their rows are selectable again). */
  readonly released: number
}

export interface DeadRunCheck {
  /** The time now (epoch ms). */
  readonly now: number
  /** How long without a heartbeat makes a run dead (default `STALE_AFTER_MS`). */
  readonly staleAfterMs?: number
  /** Whether the owner of a run is known to be gone (locally: its process has exited); undefined: only the heartbeat tells. */
  readonly ownerGone?: (owner: string) => boolean
}

/**
 * Ends the runs whose process died: not finished, not a queued run (the
 * queue redelivers its shares, and a share that fails every delivery ends
 * it as failed), and either owned by a process known to be gone or without
 * a heartbeat for `staleAfterMs`. Answers the runs ended.
 */
export async function endDeadRuns(db: SearchDb, check: DeadRunCheck): Promise<EndedRun[]> {
  const stale = check.now - (check.staleAfterMs ?? STALE_AFTER_MS)
  const r = await db.sql.query<{ id: string; owner: string | null; beat: unknown }>(
    `SELECT id, owner, COALESCE(heartbeat, started_at) AS beat FROM ${tablesOf(db).recoveryRuns}
     WHERE finished_at IS NULL AND NOT dry_run AND COALESCE(selection->>'queued', 'false') <> 'true'`,
  )
  const ended: EndedRun[] = []
  for (const row of r.rows) {
    const beat = new Date(row.beat as string).getTime()
    let reason: string | undefined
    if (row.owner !== null && check.ownerGone?.(row.owner)) reason = `its process (${row.owner}) ended before the run did`
    else if (beat < stale) reason = `no sign of life since ${iso(beat)} (its process ${row.owner ?? ''} stopped or was killed)`.replace(' ()', '')
    if (!reason) continue
    const e = await recordRunInterrupted(db, row.id, reason, check.now)
    if (e.ended) ended.push({ runId: row.id, reason, released: e.released })
  }
  return ended
}

/** A run's record: its selection, its report so far, and, for a run in shares, how many are done. */
export interface RunRecord {
  readonly runId: string
  readonly startedAt: string
  readonly finishedAt?: string
  readonly dryRun: boolean
  readonly selection: unknown
  readonly owner?: string
  readonly heartbeat?: string
  readonly report?: Record<string, unknown> & { shares?: number }
}

export async function runRecord(db: SearchDb, runId: string): Promise<RunRecord | undefined> {
  const r = await db.sql.query<{ id: string; started_at: unknown; finished_at: unknown; dry_run: boolean; selection: unknown; report: unknown; owner: string | null; heartbeat: unknown }>(
    `SELECT id, started_at, finished_at, dry_run, selection, report, owner, heartbeat FROM ${tablesOf(db).recoveryRuns} WHERE id = $1`,
    [runId],
  )
  const row = r.rows[0]
  if (!row) return undefined
  const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
  const toIso = (v: unknown) => (v === null || v === undefined ? undefined : new Date(v as string).toISOString())
  return {
    runId: row.id,
    startedAt: toIso(row.started_at)!,
    finishedAt: toIso(row.finished_at),
    dryRun: row.dry_run,
    selection: json(row.selection),
    ...(row.owner !== null ? { owner: row.owner } : {}),
    ...(row.heartbeat !== null && row.heartbeat !== undefined ? { heartbeat: toIso(row.heartbeat) } : {}),
    report: json(row.report) ?? undefined,
  }
}

/** The runs not finished (`running`), oldest first. */
export async function unfinishedRuns(db: SearchDb): Promise<string[]> {
  const r = await db.sql.query<{ id: string }>(`SELECT id FROM ${tablesOf(db).recoveryRuns} WHERE finished_at IS NULL ORDER BY started_at`)
  return r.rows.map((x) => x.id)
}

/**
 * Records share `share` of a run done with the totals so far (and the run
 * finished with the last one), only if the record holds `share` shares:
 * answers false when another delivery of the same share recorded it first.
 */
export async function recordShare(db: SearchDb, runId: string, share: number, totals: object, finished: boolean, at = Date.now()): Promise<boolean> {
  const r = await db.sql.query<{ id: string }>(
    `UPDATE ${tablesOf(db).recoveryRuns} SET report = $3::jsonb, finished_at = CASE WHEN $4 THEN $5::timestamptz ELSE NULL END, heartbeat = $5::timestamptz
     WHERE id = $1 AND finished_at IS NULL AND COALESCE((report->>'shares')::int, 0) = $2 RETURNING id`,
    [runId, share, JSON.stringify({ ...totals, shares: share + 1 }), finished, iso(at)],
  )
  return r.rows.length === 1
}
