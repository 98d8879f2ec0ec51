/**
 * `POST /control-plane/recover`: a preview (`"dryRun": true`) or a replay of
 * the failed events a selection holds, with optional recovery steps. JSON in,
 * JSON out; every part of the request has a limit and a 4xx.
 */
import type { HttpHandler, HttpRequest, HttpResponse } from '../../http/types'
import { json } from '../../http/types'
import { Refusal } from '../search/query-tree'
import type { Outcome } from './outcome'
import type { RecoverReport } from './run'
import { parseRecoveryDocument } from './document'
import { isEventRecoveryConfig } from './event-recovery/config'
import { NO_STEPS, MAX_STEPS_BYTES, type RecoverySteps } from './steps'
import { selectionProblem, type Selection } from './store'

export const RECOVER_PATH = '/control-plane/recover'
/** Largest request body (the steps document and the selection). */
export const MAX_RECOVER_BODY_BYTES = MAX_STEPS_BYTES + 16 * 1024
/** Most bad rows one request of the API recovers (one function invocation); the CLI has no such limit. */
export const API_ROW_LIMIT = 5_000
/**
 * How long after a request started its replay is followed in the store at
 * most (the control plane function has 29 s): what is not settled by then
 * is `stillPending`, and `GET /control-plane/recover/<run id>` tells the rest.
 */
export const API_FOLLOW_MS = 22_000

export type Source = 'search' | 'archive'

export interface RecoverRequest {
  readonly selection: Selection
  readonly source: Source
  readonly steps: RecoverySteps
  readonly dryRun: boolean
  /** Most bad rows taken (the rest stay for another run). */
  readonly limit?: number
  /** The steps document as given (sent on with a run that continues elsewhere). */
  readonly stepsDocument?: unknown
  /** The request named its own limit. */
  readonly limited?: boolean
}

/**
 * A run's report; after a replay, with what became of its events in the
 * store (`nowGood`, `failedAgain`, `stillPending`: see ./outcome.ts), absent
 * when they were not followed (a dry run, nothing replayed, no time left).
 */
export interface RecoverResult extends RecoverReport, Partial<Outcome> {
  /** More rows matched than the limit took. */
  readonly more?: boolean
  /** Why enrich could not judge the events in-process (the counts of would-be-good events are then 0). */
  readonly previewError?: string
  readonly message?: string
}

/** A run handed to the deployment's recovery worker. */
export interface QueuedRun {
  readonly runId: string
  /** Bad rows the selection held when it was queued (undefined for the archive). */
  readonly selected?: number
}

export interface RecoverApiDeps {
  run(req: RecoverRequest): Promise<RecoverResult>
  /**
   * Hands a replay too large for one request to the recovery worker (on AWS);
   * undefined: it runs here (no worker, or small enough).
   */
  queue?(req: RecoverRequest): Promise<QueuedRun | undefined>
  /** A run's record (`GET /control-plane/recover/<run id>`). */
  status?(runId: string): Promise<RunStatus | undefined>
}

export interface RunStatus {
  readonly runId: string
  /**
   * `failed`: the run stopped on an error, or a share could not be replayed after every delivery (the reason in
   * `failure`); `interrupted`: its process died (the reason in `failure`); their pending rows were released.
   */
  readonly state: 'running' | 'done' | 'failed' | 'interrupted'
  readonly failure?: { readonly share?: number; readonly reason: string; readonly released?: number }
  readonly startedAt: string
  readonly finishedAt?: string
  readonly dryRun: boolean
  readonly selection: unknown
  /** The counts so far (a run in shares: after each share, with `shares`). */
  readonly report?: unknown
  /** What became of the replayed events, read from the search store when the status is asked (not for a dry run). */
  readonly outcome?: Omit<Outcome, 'followedMs'>
}

/** A run id as `recover` makes them. */
export const RUN_ID = /^recover-[0-9T]{15}-[0-9a-f]{8}$/

const bad = (status: number, message: string, extra: Record<string, unknown> = {}) => json(status, { message, ...extra })
const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function time(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN
  if (!Number.isFinite(t)) throw new RequestProblem(`${name} must be an ISO time such as 2026-01-31T12:00:00Z`)
  return t
}

class RequestProblem extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message)
  }
}

/** Why a steps document is too large (its JSON text over `MAX_STEPS_BYTES`), or undefined. */
export function stepsTooLarge(steps: unknown): string | undefined {
  const bytes = Buffer.byteLength(typeof steps === 'string' ? steps : JSON.stringify(steps) ?? '')
  return bytes > MAX_STEPS_BYTES ? `the steps document is ${bytes} bytes: at most ${MAX_STEPS_BYTES} bytes (64 KiB) are taken` : undefined
}

const BODY_KEYS = new Set(['query', 'failureType', 'since', 'until', 'steps', 'config', 'dryRun', 'source', 'limit'])

/** Reads a recovery request (the JSON body of the API, or the CLI's options in the same shape). */
export function parseRecoverRequest(body: unknown, maxLimit = Number.POSITIVE_INFINITY): { ok: true; value: RecoverRequest } | { ok: false; message: string; errors?: readonly string[]; status?: number } {
  try {
    if (!obj(body)) throw new RequestProblem('the body must be a JSON object: {"query"?, "failureType"?, "since"?, "until"?, "steps"? or "config"?, "dryRun"?, "source"?, "limit"?}')
    for (const k of Object.keys(body)) if (!BODY_KEYS.has(k)) throw new RequestProblem(`unknown key '${k.slice(0, 50)}': the keys are ${[...BODY_KEYS].join(', ')}`)
    for (const k of ['query', 'failureType', 'source'] as const) if (body[k] !== undefined && body[k] !== null && typeof body[k] !== 'string') throw new RequestProblem(`${k} must be a string`)
    if (body.dryRun !== undefined && typeof body.dryRun !== 'boolean') throw new RequestProblem('dryRun must be true or false')
    const source = (body.source ?? 'search') as string
    if (source !== 'search' && source !== 'archive') throw new RequestProblem("source must be 'search' (the search store) or 'archive' (the archived bad rows)")
    const query = typeof body.query === 'string' && body.query.trim() !== '' ? body.query : undefined
    if (source === 'archive' && query !== undefined) throw new RequestProblem('a query needs the search store: select archived bad rows by failureType, since and until')
    const selection: Selection = { query, failureType: (body.failureType as string | undefined) || undefined, since: time(body.since, 'since'), until: time(body.until, 'until') }
    const problem = selectionProblem(selection)
    if (problem) throw new RequestProblem(problem)
    let limit: number | undefined
    if (body.limit !== undefined) {
      if (typeof body.limit !== 'number' || !Number.isInteger(body.limit) || body.limit < 1) throw new RequestProblem('limit must be a positive whole number')
      limit = body.limit
    }
    if (Number.isFinite(maxLimit)) limit = Math.min(limit ?? maxLimit, maxLimit)
    let steps = NO_STEPS
    const given = body.config ?? body.steps
    if (body.config !== undefined && body.config !== null && body.steps !== undefined && body.steps !== null) throw new RequestProblem('give steps (Floe\'s recovery steps) or config (a snowplow-event-recovery configuration), not both')
    if (body.config !== undefined && body.config !== null && !isEventRecoveryConfig(body.config)) {
      throw new RequestProblem('config must be a snowplow-event-recovery configuration: {"schema": "iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0", "data": {…}}')
    }
    if (given !== undefined && given !== null) {
      const large = stepsTooLarge(given)
      if (large) throw new RequestProblem(large, 413)
      const s = parseRecoveryDocument(given)
      if (!s.ok) {
        const message = isEventRecoveryConfig(given) ? 'the snowplow-event-recovery configuration is not usable' : 'the recovery steps do not validate against iglu:io.floe/recovery_steps/jsonschema/1-0-0'
        return { ok: false, message, errors: s.errors }
      }
      steps = s.value
    }
    return { ok: true, value: { selection, source, steps, dryRun: body.dryRun === true, limit, stepsDocument: given ?? undefined, limited: body.limit !== undefined } }
  } catch (err) {
    if (err instanceof RequestProblem) return { ok: false, message: err.message, ...(err.status !== 400 ? { status: err.status } : {}) }
    throw err
  }
}

export function recoverApi(deps: RecoverApiDeps): HttpHandler {
  return async (req: HttpRequest): Promise<HttpResponse> => {
    const sub = req.path.replace(/\/+$/, '').slice(RECOVER_PATH.length)
    if (sub !== '') return runStatus(deps, req, sub.slice(1))
    if (req.method !== 'POST') return bad(405, 'Only POST is supported: {"dryRun": true, …} previews, without it the events are replayed', { allow: 'POST' })
    if (req.body.length > MAX_RECOVER_BODY_BYTES) return bad(413, `the request is larger than ${MAX_RECOVER_BODY_BYTES} bytes`)
    const type = (req.headers['content-type'] ?? '').toLowerCase()
    if (!type.startsWith('application/json')) return bad(415, 'send the request as application/json')
    let body: unknown
    try {
      body = JSON.parse(req.body.toString('utf8'))
    } catch (err) {
      return bad(400, `the body is not JSON: ${(err as Error).message}`)
    }
    const a = await answerRecover(deps, body)
    return json(a.status, a.body)
  }
}

/** An answer of the recovery API: a status and a JSON body. */
export interface RecoverAnswer {
  readonly status: number
  readonly body: Record<string, unknown>
}

/**
 * Answers a recovery request (the API's JSON body, or a direct invocation of
 * the recovery worker by `floe recover --stack`): 200 with the report, 202
 * when the run was queued, 404 when nothing is selected, 400/409 refusals.
 */
export async function answerRecover(deps: RecoverApiDeps, body: unknown): Promise<RecoverAnswer> {
  const no = (status: number, message: string, extra: Record<string, unknown> = {}): RecoverAnswer => ({ status, body: { message, ...extra } })
  const parsed = parseRecoverRequest(body, API_ROW_LIMIT)
  if (!parsed.ok) return no(parsed.status ?? 400, parsed.message, parsed.errors ? { errors: parsed.errors } : {})
  let result: RecoverResult
  try {
    // A replay of a whole selection too large for one request: the worker runs it in shares.
    const queued = !parsed.value.dryRun && !parsed.value.limited && deps.queue ? await deps.queue(parsed.value) : undefined
    if (queued) {
      return { status: 202, body: { ...queued, status: `${RECOVER_PATH}/${queued.runId}`, message: `the run is queued: it replays at most ${API_ROW_LIMIT} bad rows at a time; GET ${RECOVER_PATH}/${queued.runId} shows its progress` } }
    }
    result = await deps.run(parsed.value)
  } catch (err) {
    if (err instanceof Refusal) return no(400, `the search store refuses the query: ${err.error.reason}`)
    if (err instanceof RecoveryUnavailable) return no(409, err.message)
    throw err
  }
  if (result.selected === 0) return { status: 404, body: { ...result, message: result.message ?? NOTHING_SELECTED } }
  return { status: 200, body: { ...result } }
}

async function runStatus(deps: RecoverApiDeps, req: HttpRequest, runId: string): Promise<HttpResponse> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return bad(405, `GET ${RECOVER_PATH}/<run id> shows a run`, { allow: 'GET' })
  const a = await answerStatus(deps, runId)
  return json(a.status, a.body)
}

/** A run's record: 200, or 404 (not a run id, no such run), 409 (no search store). */
export async function answerStatus(deps: RecoverApiDeps, runId: unknown): Promise<RecoverAnswer> {
  const no = (status: number, message: string): RecoverAnswer => ({ status, body: { message } })
  if (typeof runId !== 'string' || !RUN_ID.test(runId)) return no(404, 'not a run id: they look like recover-20261127T071200-3f1c9a2b')
  if (!deps.status) return no(409, 'this deployment keeps no record of runs (it has no search store)')
  try {
    const s = await deps.status(runId)
    return s ? { status: 200, body: { ...s } } : no(404, `no run ${runId}`)
  } catch (err) {
    if (err instanceof RecoveryUnavailable) return no(409, err.message)
    throw err
  }
}

export const NOTHING_SELECTED = 'the selection matches no bad row that is not recovered yet'

/** Recovery cannot run in this deployment as asked (no search store, enrich cannot be built for a preview). */
export class RecoveryUnavailable extends Error {}
