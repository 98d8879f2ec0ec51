/**
 * Two routes of the Micro API for test suites, beside Micro's own:
 *
 * - `POST /micro/wait`: answers as soon as `count` events matching the
 *   filters of `/micro/events` are stored, or when `timeout` passes. Woken by
 *   the loaders' writes (./store-watch.ts), never by a poll of its own: its
 *   query runs once at the start and again only after the store changed.
 * - `GET /micro/events/{event_id}`: one event, good or failed, with the bad
 *   rows that explain a failed one.
 */
import { withNulls } from './documents'
import { MicroBadRequest, microBody, microEvents, MAX_PAGE_SIZE, type MicroRequest, type MicroResponse } from './micro'
import { tablesOf, type SearchDb } from './store'
import type { StoreWatch } from './store-watch'

/** Default and longest `timeout` of a wait, in ms. */
export const DEFAULT_WAIT_MS = 10_000
export const MAX_WAIT_MS = 60_000
/** The longest one request is held, whatever its `timeout`: under API Gateway's 30 s and the function's 29 s. */
export const DEFAULT_HOLD_MS = 25_000
/** Waits held at once by one process (beyond: 429). */
export const DEFAULT_MAX_WAITS = 64
/** Largest `count`. */
export const MAX_WAIT_COUNT = 10_000

export interface MicroWaitOptions {
  readonly watch: StoreWatch
  /** Milliseconds since some origin (a clock passed in). */
  readonly now: () => number
  readonly maxWaits?: number
  readonly holdMs?: number
}

const JSON_TYPE = { 'content-type': 'application/json' }
const TEXT_TYPE = { 'content-type': 'text/plain; charset=utf-8' }
const ok = (v: unknown): MicroResponse => ({ status: 200, headers: JSON_TYPE, body: JSON.stringify(v) })
const textAnswer = (status: number, body: string, headers: Record<string, string> = {}): MicroResponse => ({ status, headers: { ...TEXT_TYPE, ...headers }, body })
const notAllowed = (req: MicroRequest, allowed: string) => textAnswer(405, `${req.path} accepts ${allowed}`, { allow: allowed })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const WAIT_KEYS = new Set(['filters', 'valid', 'count', 'timeout', 'timeRange'])

/** Whether a path is one of these routes (the API gives them their own time budget). */
export function isMicroWaitRoute(path: string): boolean {
  const p = path.replace(/\/+$/, '')
  return p === '/micro/wait' || p.startsWith('/micro/events/')
}

interface WaitRequest {
  readonly query: Record<string, unknown>
  readonly count: number
  readonly timeout: number
}

function waitRequest(body: string): WaitRequest {
  const b = microBody(body)
  const unknown = Object.keys(b).filter((k) => !WAIT_KEYS.has(k))
  if (unknown.length > 0) throw new MicroBadRequest(`unknown field ${JSON.stringify(unknown[0])}: /micro/wait takes ${[...WAIT_KEYS].map((k) => `"${k}"`).join(', ')}`)
  const int = (key: string, min: number, max: number, dflt: number) => {
    const v = b[key]
    if (v === undefined || v === null) return dflt
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new MicroBadRequest(`"${key}" must be an integer from ${min} to ${max}`)
    return v
  }
  const valid = b.valid ?? true
  if (typeof valid !== 'boolean') throw new MicroBadRequest('"valid" must be true (good events) or false (failed events)')
  const count = int('count', 1, MAX_WAIT_COUNT, 1)
  const timeout = int('timeout', 0, MAX_WAIT_MS, DEFAULT_WAIT_MS)
  return { query: { filters: b.filters, timeRange: b.timeRange, validEvents: valid, pageSize: Math.min(count, MAX_PAGE_SIZE) }, count, timeout }
}

/** The `/micro/wait` and `/micro/events/{id}` handler; one per process (it holds the count of waits). */
export function microWaitRoutes(o: MicroWaitOptions) {
  const maxWaits = o.maxWaits ?? DEFAULT_MAX_WAITS
  const holdMs = o.holdMs ?? DEFAULT_HOLD_MS
  let held = 0

  async function wait(db: SearchDb, req: WaitRequest): Promise<MicroResponse> {
    const deadline = o.now() + Math.min(req.timeout, holdMs)
    // the counter before the query: a write committed after it moves the counter, so none is missed
    let since = await o.watch.current()
    for (let last = false; ; ) {
      const found = await microEvents(db, req.query)
      if (found.totalItems >= req.count || last) return ok({ complete: found.totalItems >= req.count, total: found.totalItems, events: found.events })
      const left = deadline - o.now()
      const moved = left > 0 ? await o.watch.changedSince(since, left) : undefined
      if (moved !== undefined) since = moved
      else if (left <= 0) return ok({ complete: false, total: found.totalItems, events: found.events })
      // at the deadline: one last look, so the answer says what is stored then (a failed read of the counter hides nothing)
      else last = true
    }
  }

  async function oneEvent(db: SearchDb, id: string): Promise<MicroResponse> {
    const t = tablesOf(db)
    const ids = [...new Set([id, id.toLowerCase()])]
    const inList = ids.map((_, i) => `$${i + 1}`).join(', ')
    const good = await db.sql.query<{ doc: string }>(`SELECT doc::text AS doc FROM ${t.good} WHERE id IN (${inList}) LIMIT 1`, ids)
    if (good.rows[0]) return ok({ eventId: id, valid: true, event: withNulls(JSON.parse(good.rows[0].doc) as Record<string, unknown>), badRows: [] })
    const failed = await db.sql.query<{ doc: string }>(`SELECT doc::text AS doc FROM ${t.incomplete} WHERE id IN (${inList}) LIMIT 1`, ids)
    // the bad rows that name the event (its words are indexed; the exact id is then looked for in the row)
    const words = id.toLowerCase().split('-')
    const bad = await db.sql.query<{ line: string }>(
      `SELECT line FROM ${t.bad} WHERE recovered IS NULL AND words @> $1::jsonb AND position($2 in lower(line)) > 0 ORDER BY failure_timestamp DESC, seq DESC LIMIT 100`,
      [JSON.stringify(words), id.toLowerCase()],
    )
    if (!failed.rows[0] && bad.rows.length === 0) return { status: 404, headers: JSON_TYPE, body: JSON.stringify(`No event with id ${id} (yet)`) }
    return ok({
      eventId: id,
      valid: false,
      event: failed.rows[0] ? withNulls(JSON.parse(failed.rows[0].doc) as Record<string, unknown>) : null,
      badRows: bad.rows.map((r) => JSON.parse(r.line) as unknown),
    })
  }

  return async (db: SearchDb, req: MicroRequest): Promise<MicroResponse> => {
    const path = req.path.replace(/\/+$/, '')
    try {
      if (path === '/micro/wait') {
        if (req.method !== 'POST') return notAllowed(req, 'POST')
        const r = waitRequest(req.body)
        if (held >= maxWaits) return textAnswer(429, `${held} waits are held already (at most ${maxWaits}); try again shortly`, { 'retry-after': '1' })
        held++
        try {
          return await wait(db, r)
        } finally {
          held--
        }
      }
      if (req.method !== 'GET') return notAllowed(req, 'GET')
      let id = path.slice('/micro/events/'.length)
      try {
        id = decodeURIComponent(id)
      } catch {
        // not an id either
      }
      if (!UUID.test(id)) return textAnswer(400, `${JSON.stringify(id.slice(0, 100))} is not an event id (a UUID such as 3f1a6f9e-…)`)
      return await oneEvent(db, id)
    } catch (err) {
      if (err instanceof MicroBadRequest) return textAnswer(400, err.message)
      throw err
    }
  }
}
