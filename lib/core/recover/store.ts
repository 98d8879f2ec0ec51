/**
 * Recovery on the search store: selecting bad rows not recovered yet (by
 * query string on the bad index, failure type and time range), claiming
 * them for a run with one conditional insert per page (a row claimed by
 * another run is not returned, so concurrent runs never replay a row
 * twice), marking them, and keeping a record of each run.
 */
import { parseQueryString } from '../search/lucene'
import { condition, Statement } from '../search/query-sql'
import { tablesOf, type SearchDb } from '../search/store'
import type { Candidate } from './run'

export interface Selection {
  /** A query string on the bad index (as in the dashboard and `/search-store/bad/_search?q=`). */
  readonly query?: string
  /** `schema_violations`, `enrichment_failures`, … */
  readonly failureType?: string
  /** Epoch ms, inclusive. */
  readonly since?: number
  /** Epoch ms, exclusive. */
  readonly until?: number
}

export const FAILURE_TYPE = /^[a-z][a-z0-9_]{0,99}$/
/** Longest query string a selection takes. */
export const MAX_QUERY_LENGTH = 4096

/** Why a selection cannot be used, or undefined. */
export function selectionProblem(s: Selection): string | undefined {
  if (s.query !== undefined && s.query.length > MAX_QUERY_LENGTH) return `the query is longer than ${MAX_QUERY_LENGTH} characters`
  if (s.failureType !== undefined && !FAILURE_TYPE.test(s.failureType)) return `the failure type '${s.failureType.slice(0, 100)}' is not a bad row type (such as schema_violations)`
  for (const k of ['since', 'until'] as const) {
    const v = s[k]
    if (v !== undefined && !Number.isFinite(v)) return `${k} is not a time`
  }
  if (s.since !== undefined && s.until !== undefined && s.since >= s.until) return 'since must be before until'
  return undefined
}

/** The WHERE clause of a selection (not recovered, not claimed), after `after` in id order. */
function where(s: Selection, st: Statement, now: number): string {
  const parts = [condition(s.query ? parseQueryString(s.query) : { kind: 'all' }, st, now)]
  if (s.failureType !== undefined) parts.push(`failure_type = ${st.p(s.failureType)}`)
  if (s.since !== undefined) parts.push(`failure_timestamp >= ${st.p(new Date(s.since).toISOString())}::timestamptz`)
  if (s.until !== undefined) parts.push(`failure_timestamp < ${st.p(new Date(s.until).toISOString())}::timestamptz`)
  return parts.join(' AND ')
}

/** How many bad rows a selection holds now (not recovered). Throws a `Refusal` for a query the store refuses. */
export async function countSelection(db: SearchDb, s: Selection, now = Date.now()): Promise<number> {
  const st = new Statement('bad', { columns: true })
  const r = await db.sql.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${tablesOf(db).bad} WHERE ${where(s, st, now)}`, st.params)
  return Number(r.rows[0]!.n)
}

/** The selected bad rows, a page at a time in id order; at most `limit` in all. */
export async function* selectPages(db: SearchDb, s: Selection, pageSize: number, limit = Number.POSITIVE_INFINITY, now = Date.now()): AsyncIterable<Candidate[]> {
  let after = ''
  let left = limit
  while (left > 0) {
    const st = new Statement('bad', { columns: true })
    const w = where(s, st, now)
    const n = Math.min(pageSize, left)
    const r = await db.sql.query<{ id: string; line: string }>(`SELECT id, line FROM ${tablesOf(db).bad} WHERE ${w} AND id > ${st.p(after)} ORDER BY id LIMIT ${st.p(n)}`, st.params)
    if (r.rows.length === 0) return
    left -= r.rows.length
    after = r.rows.at(-1)!.id
    yield r.rows
    if (r.rows.length < n) return
  }
}

const placeholders = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(', ')

/**
 * Claims bad rows for a run: those no run claimed before. The claim and the
 * mark on the bad row are one transaction; answers the ids claimed.
 */
export async function claimRows(db: SearchDb, runId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const t = tablesOf(db)
  return db.sql.transaction(async (tx) => {
    const values = ids.map((_, i) => `($${i + 2}, $1)`).join(', ')
    const r = await tx.query<{ id: string }>(`INSERT INTO ${t.recoveryClaims} (id, run_id) VALUES ${values} ON CONFLICT (id) DO NOTHING RETURNING id`, [runId, ...ids])
    const claimed = r.rows.map((x) => x.id)
    if (claimed.length > 0) {
      await tx.query(`UPDATE ${t.bad} SET recovered = now(), recovery_run = $1 WHERE recovered IS NULL AND id IN (${placeholders(2, claimed.length)})`, [runId, ...claimed])
    }
    return new Set(claimed)
  })
}

/** Gives back rows a run claimed (their replay was not written). */
export async function releaseRows(db: SearchDb, runId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  const t = tablesOf(db)
  await db.sql.transaction(async (tx) => {
    await tx.query(`DELETE FROM ${t.recoveryClaims} WHERE run_id = $1 AND id IN (${placeholders(2, ids.length)})`, [runId, ...ids])
    await tx.query(`UPDATE ${t.bad} SET recovered = NULL, recovery_run = NULL WHERE recovery_run = $1 AND id IN (${placeholders(2, ids.length)})`, [runId, ...ids])
  })
}

/** The ids among `ids` some run claimed already (for rows read from the archive). */
export async function claimedAlready(db: SearchDb, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const r = await db.sql.query<{ id: string }>(`SELECT id FROM ${tablesOf(db).recoveryClaims} WHERE id IN (${placeholders(1, ids.length)})`, ids)
  return new Set(r.rows.map((x) => x.id))
}

export async function recordRunStart(db: SearchDb, runId: string, at: number, dryRun: boolean, selection: unknown): Promise<void> {
  await db.sql.query(`INSERT INTO ${tablesOf(db).recoveryRuns} (id, started_at, dry_run, selection) VALUES ($1, $2::timestamptz, $3, $4::jsonb)`, [runId, new Date(at).toISOString(), dryRun, JSON.stringify(selection)])
}

export async function recordRunEnd(db: SearchDb, runId: string, at: number, report: unknown): Promise<void> {
  await db.sql.query(`UPDATE ${tablesOf(db).recoveryRuns} SET finished_at = $2::timestamptz, report = $3::jsonb WHERE id = $1`, [runId, new Date(at).toISOString(), JSON.stringify(report)])
}

/** Ends a run that cannot go on, with the reason kept in its report (`failed: {share, reason}`); nothing when it is finished already. */
export async function recordRunFailure(db: SearchDb, runId: string, share: number, reason: string, at = Date.now()): Promise<boolean> {
  const r = await db.sql.query<{ id: string }>(
    `UPDATE ${tablesOf(db).recoveryRuns} SET finished_at = $4::timestamptz, report = COALESCE(report, '{}'::jsonb) || jsonb_build_object('failed', jsonb_build_object('share', $2::int, 'reason', $3::text))
     WHERE id = $1 AND finished_at IS NULL RETURNING id`,
    [runId, share, reason, new Date(at).toISOString()],
  )
  return r.rows.length === 1
}

/** A run's record: its selection, its report so far, and, for a run in shares, how many are done. */
export interface RunRecord {
  readonly runId: string
  readonly startedAt: string
  readonly finishedAt?: string
  readonly dryRun: boolean
  readonly selection: unknown
  readonly report?: Record<string, unknown> & { shares?: number }
}

export async function runRecord(db: SearchDb, runId: string): Promise<RunRecord | undefined> {
  const r = await db.sql.query<{ id: string; started_at: unknown; finished_at: unknown; dry_run: boolean; selection: unknown; report: unknown }>(
    `SELECT id, started_at, finished_at, dry_run, selection, report FROM ${tablesOf(db).recoveryRuns} WHERE id = $1`,
    [runId],
  )
  const row = r.rows[0]
  if (!row) return undefined
  const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
  const iso = (v: unknown) => (v === null || v === undefined ? undefined : new Date(v as string).toISOString())
  return { runId: row.id, startedAt: iso(row.started_at)!, finishedAt: iso(row.finished_at), dryRun: row.dry_run, selection: json(row.selection), report: json(row.report) ?? undefined }
}

/**
 * Records share `share` of a run done with the totals so far (and the run
 * finished with the last one), only if the record holds `share` shares:
 * answers false when another delivery of the same share recorded it first.
 */
export async function recordShare(db: SearchDb, runId: string, share: number, totals: object, finished: boolean, at = Date.now()): Promise<boolean> {
  const r = await db.sql.query<{ id: string }>(
    `UPDATE ${tablesOf(db).recoveryRuns} SET report = $3::jsonb, finished_at = CASE WHEN $4 THEN $5::timestamptz ELSE NULL END
     WHERE id = $1 AND finished_at IS NULL AND COALESCE((report->>'shares')::int, 0) = $2 RETURNING id`,
    [runId, share, JSON.stringify({ ...totals, shares: share + 1 }), finished, new Date(at).toISOString()],
  )
  return r.rows.length === 1
}
