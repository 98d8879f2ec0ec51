/**
 * `floe logs <service> --stack <name>`: a deployed function's log group
 * (`/floe/<stack>/<function>`, see `lib/infra/log-groups.ts`) read with
 * CloudWatch Logs' `FilterLogEvents`, printed as `floe logs` prints a local
 * log: each event's message, one per line, oldest first.
 *
 * The last N lines are found by looking back from now in growing windows
 * (5 minutes, an hour, a day, a week, 30 days, then the whole retention), so
 * a busy log is read only as far back as its last N lines. Following polls
 * from the newest event seen, a little earlier each time so that events
 * CloudWatch ingests late are still printed, and never prints an event twice.
 */
import { FilterLogEventsCommand, type CloudWatchLogsClient, type FilteredLogEvent } from '@aws-sdk/client-cloudwatch-logs'
import { UsageError } from './command'
import { sleep } from './sleep'

/** How far back from `end` each successive look for the last lines reaches. */
export const LOOK_BACK_MS = [5 * 60_000, 3_600_000, 86_400_000, 7 * 86_400_000, 30 * 86_400_000, Number.POSITIVE_INFINITY] as const
/** How far before the newest event seen each follow poll starts (CloudWatch Logs ingests events a few seconds late). */
export const FOLLOW_OVERLAP_MS = 10_000
const DEFAULT_POLL_MS = 2000
const MAX_POLL_MS = 30_000
const THROTTLED = new Set(['ThrottlingException', 'LimitExceededException', 'ServiceUnavailableException'])

export interface CloudLogsRun {
  readonly out: (line: string) => void
  readonly signal?: AbortSignal
  /** Pause between follow polls (default 2 s; doubled while CloudWatch Logs throttles). */
  readonly pollMs?: number
  /** Called once the last lines are printed and following has begun. */
  readonly onFollowing?: () => void
  /** The clock (milliseconds since the epoch). */
  readonly now?: () => number
}

export interface CloudLogsOptions {
  /** The log group. */
  readonly group: string
  /** How many of the last lines to print first. */
  readonly lines: number
  readonly follow: boolean
  /** For messages: `stack FloeApp`. */
  readonly description: string
}

interface Event {
  readonly id: string
  readonly timestamp: number
  readonly message: string
}

const toEvent = (e: FilteredLogEvent): Event => ({
  id: e.eventId ?? `${e.logStreamName ?? ''}\0${e.timestamp ?? 0}\0${e.message ?? ''}`,
  timestamp: e.timestamp ?? 0,
  message: (e.message ?? '').replace(/\r?\n$/, ''),
})

const byTime = (a: Event, b: Event) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Every event of `group` from `start` to `end` (both inclusive; `start` undefined: from the first), page by page. */
async function* eventsBetween(client: CloudWatchLogsClient, group: string, start: number | undefined, end: number | undefined, signal?: AbortSignal): AsyncGenerator<Event[]> {
  let nextToken: string | undefined
  do {
    const res = await client.send(
      new FilterLogEventsCommand({
        logGroupName: group,
        ...(start !== undefined ? { startTime: Math.max(0, start) } : {}),
        ...(end !== undefined ? { endTime: end } : {}),
        ...(nextToken ? { nextToken } : {}),
      }),
      { abortSignal: signal },
    )
    yield (res.events ?? []).map(toEvent)
    nextToken = res.nextToken
  } while (nextToken && !signal?.aborted)
}

/**
 * The last `n` events of `group` up to `end`, oldest first, and the ids of
 * the events from `end - FOLLOW_OVERLAP_MS` on (printed or not), which a
 * follow that starts at `end` must not print again.
 */
export async function lastEvents(client: CloudWatchLogsClient, group: string, n: number, end: number, signal?: AbortSignal): Promise<{ events: Event[]; recent: Map<string, number> }> {
  const recent = new Map<string, number>()
  const note = (page: readonly Event[]) => {
    for (const e of page) if (e.timestamp >= end - FOLLOW_OVERLAP_MS) recent.set(e.id, e.timestamp)
  }
  if (n <= 0) {
    for await (const page of eventsBetween(client, group, end - FOLLOW_OVERLAP_MS, end, signal)) note(page)
    return { events: [], recent }
  }
  let found: Event[] = []
  let upTo = end
  for (const back of LOOK_BACK_MS) {
    const start = Number.isFinite(back) ? end - back : undefined
    let window: Event[] = []
    for await (const page of eventsBetween(client, group, start, upTo, signal)) {
      note(page)
      window.push(...page)
      // a busy log: keep only what can still be among the last n
      if (window.length > 4 * n + 1000) window = window.sort(byTime).slice(-n)
    }
    found = [...window.sort(byTime), ...found].slice(-n)
    if (start === undefined || found.length >= n) break
    upTo = start - 1
  }
  return { events: found, recent }
}

/** A failed CloudWatch Logs call as a message a user can act on; undefined for the ones the caller maps itself. */
function logFailure(err: unknown, o: CloudLogsOptions): UsageError | undefined {
  const e = err as { name?: string; message?: string }
  if (e?.name === 'ResourceNotFoundException') {
    return new UsageError(`${o.description} has no log group ${o.group} (${e.message ?? 'not found'}): is that function deployed? (-c searchStore=false leaves the search functions out)`)
  }
  return undefined
}

/** Prints the last lines of a deployed log group, then, with `follow`, the lines that follow until aborted. */
export async function runCloudLogs(client: CloudWatchLogsClient, o: CloudLogsOptions, run: CloudLogsRun): Promise<number> {
  const now = run.now ?? Date.now
  const end = now()
  let last
  try {
    last = await lastEvents(client, o.group, o.lines, end, run.signal)
  } catch (err) {
    if (run.signal?.aborted) return 0 // Ctrl+C while reading
    throw logFailure(err, o) ?? err
  }
  if (!o.follow && last.events.length === 0 && o.lines > 0) {
    throw new UsageError(`no log lines in ${o.group} of ${o.description} yet: a function logs when it first runs, and its log keeps them logRetentionDays (30 by default); -f waits for them`)
  }
  for (const e of last.events) run.out(e.message)
  if (!o.follow) return 0
  run.onFollowing?.()
  const seen = last.recent
  let cursor = end
  const basePause = run.pollMs ?? DEFAULT_POLL_MS
  let pause = basePause
  while (!run.signal?.aborted) {
    await sleep(pause, run.signal)
    if (run.signal?.aborted) break
    const fresh: Event[] = []
    try {
      for await (const page of eventsBetween(client, o.group, cursor - FOLLOW_OVERLAP_MS, undefined, run.signal)) {
        for (const e of page) if (!seen.has(e.id)) fresh.push(e)
      }
      pause = basePause
    } catch (err) {
      if (run.signal?.aborted) break
      const name = (err as { name?: string }).name ?? ''
      if (THROTTLED.has(name)) {
        pause = Math.min(pause * 2, MAX_POLL_MS)
        continue
      }
      throw logFailure(err, o) ?? err
    }
    for (const e of fresh.sort(byTime)) {
      if (seen.has(e.id)) continue
      seen.set(e.id, e.timestamp)
      run.out(e.message)
      if (e.timestamp > cursor) cursor = e.timestamp
    }
    for (const [id, t] of seen) if (t < cursor - FOLLOW_OVERLAP_MS) seen.delete(id)
  }
  return 0
}
