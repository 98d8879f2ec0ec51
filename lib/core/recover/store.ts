/**
 * Recovery on the search store: selecting bad rows not recovered yet (by
 * query string on the bad index, failure type and time range), claiming
 * them for a run with one conditional insert per page (a row claimed by
 * another run is not returned, so concurrent runs never replay a row
 * twice), and marking them. A claim is made in two steps, so that a run
 * killed at any instant leaves each row replayed or selectable again: it is
 * `pending` while the payloads are written (the row is out of every
 * selection, not marked), then `replayed` with the row marked recovered, in
 * one transaction. The pending claims of a run that died are released (see
 * ./runs.ts). Run records are kept in ./runs.ts.
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
function where(s: Selection, st: Statement, now: number, bad: string, claims: string): string {
  const parts = [condition(s.query ? parseQueryString(s.query) : { kind: 'all' }, st, now)]
  if (s.failureType !== undefined) parts.push(`failure_type = ${st.p(s.failureType)}`)
  if (s.since !== undefined) parts.push(`failure_timestamp >= ${st.p(new Date(s.since).toISOString())}::timestamptz`)
  if (s.until !== undefined) parts.push(`failure_timestamp < ${st.p(new Date(s.until).toISOString())}::timestamptz`)
  // a row claimed by a run (pending or replayed) is that run's
  parts.push(`NOT EXISTS (SELECT 1 FROM ${claims} c WHERE c.id = ${bad}.id)`)
  return parts.join(' AND ')
}

/** How many bad rows a selection holds now (not recovered). Throws a `Refusal` for a query the store refuses. */
export async function countSelection(db: SearchDb, s: Selection, now = Date.now()): Promise<number> {
  const st = new Statement('bad', { columns: true })
  const r = await db.sql.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${tablesOf(db).bad} WHERE ${where(s, st, now, tablesOf(db).bad, tablesOf(db).recoveryClaims)}`, st.params)
  return Number(r.rows[0]!.n)
}

/** The selected bad rows, a page at a time in id order; at most `limit` in all. */
export async function* selectPages(db: SearchDb, s: Selection, pageSize: number, limit = Number.POSITIVE_INFINITY, now = Date.now()): AsyncIterable<Candidate[]> {
  let after = ''
  let left = limit
  while (left > 0) {
    const st = new Statement('bad', { columns: true })
    const w = where(s, st, now, tablesOf(db).bad, tablesOf(db).recoveryClaims)
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

/** Claims of a run that are taken but not yet replayed (the run's process may have died before writing). */
export const PENDING = 'pending'
/** Claims whose payloads were written: their bad rows are marked recovered. */
export const REPLAYED = 'replayed'

/** The run was ended (by another process that found it dead) while it was still going: it must stop. */
export class RunEnded extends Error {}

/**
 * Claims bad rows for a run: those no run claimed before, as `pending` (out
 * of other runs' selections; not marked recovered). Answers the ids claimed;
 * throws `RunEnded` when the run is no longer running (another process ended
 * it as interrupted), and beats the run's heartbeat.
 */
export async function claimRows(db: SearchDb, runId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const t = tablesOf(db)
  return db.sql.transaction(async (tx) => {
    const live = await tx.query<{ id: string }>(`UPDATE ${t.recoveryRuns} SET heartbeat = now() WHERE id = $1 AND finished_at IS NULL RETURNING id`, [runId])
    if (live.rows.length === 0) throw new RunEnded(`recovery run ${runId} is not running (it was ended by another process); nothing more is claimed`)
    const values = ids.map((_, i) => `($${i + 2}, $1, '${PENDING}')`).join(', ')
    const r = await tx.query<{ id: string }>(`INSERT INTO ${t.recoveryClaims} (id, run_id, state) VALUES ${values} ON CONFLICT (id) DO NOTHING RETURNING id`, [runId, ...ids])
    return new Set(r.rows.map((x) => x.id))
  })
}

/**
 * After a run's payloads for `rows` were written: their claims become
 * `replayed` (keeping the event ids of each payload; null for a row the
 * steps broke, which has none) and their bad rows are
 * marked recovered (one transaction). Throws `RunEnded` when some claim is
 * no longer the run's (another process released it: those rows are
 * selectable again, and a later run replays them once more, which the store
 * keeps once by event id).
 */
export async function finishRows(db: SearchDb, runId: string, rows: readonly { readonly id: string; readonly eventIds: readonly string[] | null }[]): Promise<void> {
  if (rows.length === 0) return
  const t = tablesOf(db)
  const lost = await db.sql.transaction(async (tx) => {
    const values = rows.map((_, i) => `($${2 * i + 2}, $${2 * i + 3}::jsonb)`).join(', ')
    const r = await tx.query<{ id: string }>(
      `UPDATE ${t.recoveryClaims} c SET state = '${REPLAYED}', event_ids = v.event_ids FROM (VALUES ${values}) AS v (id, event_ids)
       WHERE c.id = v.id AND c.run_id = $1 AND c.state = '${PENDING}' RETURNING c.id`,
      [runId, ...rows.flatMap((x) => [x.id, x.eventIds === null ? null : JSON.stringify(x.eventIds)])],
    )
    const done = r.rows.map((x) => x.id)
    if (done.length > 0) await tx.query(`UPDATE ${t.bad} SET recovered = now(), recovery_run = $1 WHERE recovered IS NULL AND id IN (${placeholders(2, done.length)})`, [runId, ...done])
    await tx.query(`UPDATE ${t.recoveryRuns} SET heartbeat = now() WHERE id = $1`, [runId])
    return rows.length - done.length
  })
  if (lost > 0) throw new RunEnded(`recovery run ${runId} lost ${lost} claim(s) to another process (it was ended as interrupted): those rows are selectable again`)
}

/** The event ids of a run's replayed rows (what its outcome is read by); `untracked`: replayed payloads without one. */
export async function replayedEventIds(db: SearchDb, runId: string): Promise<{ ids: string[]; untracked: number }> {
  const t = tablesOf(db)
  const r = await db.sql.query<{ e: string | null }>(
    `SELECT e FROM ${t.recoveryClaims} c LEFT JOIN LATERAL jsonb_array_elements_text(c.event_ids) e ON true WHERE c.run_id = $1 AND c.state = '${REPLAYED}' AND c.event_ids IS NOT NULL`,
    [runId],
  )
  return { ids: r.rows.flatMap((x) => (x.e === null ? [] : [x.e])), untracked: r.rows.filter((x) => x.e === null).length }
}

/** Gives back pending claims of a run (their replay was not written): the rows are selectable again. */
export async function releaseRows(db: SearchDb, runId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  const t = tablesOf(db)
  await db.sql.query(`DELETE FROM ${t.recoveryClaims} WHERE run_id = $1 AND state = '${PENDING}' AND id IN (${placeholders(2, ids.length)})`, [runId, ...ids])
}

/** Releases every pending claim of a run (a run that died, or a share delivered again); answers how many. */
export async function releasePending(db: SearchDb, runId: string): Promise<number> {
  const r = await db.sql.query<{ id: string }>(`DELETE FROM ${tablesOf(db).recoveryClaims} WHERE run_id = $1 AND state = '${PENDING}' RETURNING id`, [runId])
  return r.rows.length
}

/** The ids among `ids` some run claimed already (for rows read from the archive). */
export async function claimedAlready(db: SearchDb, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const r = await db.sql.query<{ id: string }>(`SELECT id FROM ${tablesOf(db).recoveryClaims} WHERE id IN (${placeholders(1, ids.length)})`, ids)
  return new Set(r.rows.map((x) => x.id))
}
