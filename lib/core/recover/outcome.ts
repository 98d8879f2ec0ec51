/**
 * What became of a run's replayed events, read from the search store: each
 * followed by its event id until it is a good event there or a bad row of a
 * replay of this run (its payload carried the run in `RECOVERY_HEADER`), or
 * the wait ends. This, not the in-process preview, is a replay's report.
 */
import { tablesOf, type SearchDb } from '../search/store'
import { eventIdsOf, readBadRow, RECOVERY_HEADER } from './events'
import { MAX_REASONS, reasonOf } from './run'
import { replayedEventIds } from './store'

/** `FLOE_RECOVER_WAIT_SECONDS`: how long a replay follows its events in the store (default 60; 0: not followed). */
export const WAIT_ENV = 'FLOE_RECOVER_WAIT_SECONDS'
export const DEFAULT_WAIT_SECONDS = 60
const MAX_WAIT_SECONDS = 3600
/** Between two looks at the store. */
export const POLL_MS = 500

/** The follow wait in ms from the environment; throws on a value that is not a whole number of seconds (0 to 3600). */
export function recoverWaitMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const v = env[WAIT_ENV]
  if (v === undefined || v.trim() === '') return DEFAULT_WAIT_SECONDS * 1000
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > MAX_WAIT_SECONDS) throw new Error(`${WAIT_ENV} must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}, got '${v.slice(0, 50)}'`)
  return n * 1000
}

export interface Outcome {
  /** Replayed events stored as good events (by event id). */
  nowGood: number
  /** Replayed events that became bad rows again (a bad row carrying this run). */
  failedAgain: number
  /** Replayed events neither good nor bad again when the wait ended (still in the pipeline, or the wait too short). */
  stillPending: number
  /** Replayed payloads without an event id to follow (not counted above). */
  untracked: number
  /** Why the events that failed again failed, most frequent first. */
  failedAgainReasons: { reason: string; count: number }[]
  /** How long the replay was followed. */
  followedMs: number
}

export interface OutcomePorts {
  /** Of `ids`, those stored as good events (lower-cased). */
  good(ids: readonly string[]): Promise<ReadonlySet<string>>
  /** The bad rows (their text) of replays of run `runId`, failed at or after `since`. */
  failedRows(runId: string, since: number): Promise<readonly string[]>
  now(): number
  sleep(ms: number): Promise<void>
}

export interface FollowOptions {
  /** Follow until this time at most (epoch ms). */
  readonly until: number
  readonly pollMs?: number
  /** Called after each look with the counts so far. */
  readonly progress?: (o: Outcome) => void
}

/** One look at the store: the outcome of `eventIds` now. */
export async function lookOnce(ports: OutcomePorts, runId: string, eventIds: readonly string[], since: number, untracked = 0, startedAt = ports.now()): Promise<Outcome> {
  const ids = [...new Set(eventIds.map((x) => x.toLowerCase()))]
  const good = await ports.good([...new Set([...eventIds, ...ids])])
  const failed = new Map<string, string>()
  for (const line of await ports.failedRows(runId, since)) {
    const read = readBadRow(line)
    if (!read.ok) continue
    for (const id of eventIdsOf(read.event)) if (!failed.has(id.toLowerCase())) failed.set(id.toLowerCase(), reasonOf(line))
  }
  const reasons = new Map<string, number>()
  let failedAgain = 0
  for (const id of ids) {
    if (good.has(id)) continue
    const reason = failed.get(id)
    if (reason === undefined) continue
    failedAgain++
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  }
  const nowGood = ids.filter((id) => good.has(id)).length
  return {
    nowGood,
    failedAgain,
    stillPending: ids.length - nowGood - failedAgain,
    untracked,
    failedAgainReasons: [...reasons].sort((a, b) => b[1] - a[1]).slice(0, MAX_REASONS).map(([reason, count]) => ({ reason, count })),
    followedMs: Math.max(0, ports.now() - startedAt),
  }
}

/** Follows the replayed events until each is good or failed again, or `until`. */
export async function followOutcome(ports: OutcomePorts, runId: string, eventIds: readonly string[], since: number, o: FollowOptions & { untracked?: number }): Promise<Outcome> {
  const startedAt = ports.now()
  for (;;) {
    const out = await lookOnce(ports, runId, eventIds, since, o.untracked ?? 0, startedAt)
    o.progress?.(out)
    if (out.stillPending === 0 || ports.now() + (o.pollMs ?? POLL_MS) > o.until) return out
    await ports.sleep(o.pollMs ?? POLL_MS)
  }
}

/** Ids per statement. */
const CHUNK = 500
/** Bad rows are looked for from this long before the run started (clocks of two machines). */
const SKEW_MS = 5 * 60_000

/** The ports on a search store. */
export function storeOutcomePorts(db: SearchDb, clock: { now(): number; sleep(ms: number): Promise<void> }): OutcomePorts {
  const t = tablesOf(db)
  return {
    async good(ids) {
      const out = new Set<string>()
      for (let i = 0; i < ids.length; i += CHUNK) {
        const part = ids.slice(i, i + CHUNK)
        const r = await db.sql.query<{ id: string }>(`SELECT id FROM ${t.good} WHERE id IN (${part.map((_, j) => `$${j + 1}`).join(', ')})`, part)
        for (const x of r.rows) out.add(x.id.toLowerCase())
      }
      return out
    },
    async failedRows(runId, since) {
      const r = await db.sql.query<{ line: string }>(`SELECT line FROM ${t.bad} WHERE failure_timestamp >= $1::timestamptz AND strpos(line, $2) > 0`, [
        new Date(since - SKEW_MS).toISOString(),
        `${RECOVERY_HEADER}: ${runId}`,
      ])
      return r.rows.map((x) => x.line)
    },
    now: clock.now,
    sleep: clock.sleep,
  }
}

/**
 * A run's outcome as the store holds it now (for its status): the event ids
 * its replayed claims keep, each looked up once.
 */
export async function storedOutcome(db: SearchDb, runId: string, since: number, now: () => number = Date.now): Promise<Outcome> {
  const { ids, untracked } = await replayedEventIds(db, runId)
  const at = now()
  const o = await lookOnce(storeOutcomePorts(db, { now, sleep: async () => undefined }), runId, ids, since, untracked, at)
  return { ...o, followedMs: 0 }
}
