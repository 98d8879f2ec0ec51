/**
 * `POST /control-plane/recover`: a preview (`"dryRun": true`) or a replay of
 * the failed events a selection holds, with optional recovery steps. JSON in,
 * JSON out; every part of the request has a limit and a 4xx.
 */
import type { HttpHandler, HttpRequest, HttpResponse } from '../../http/types'
import { json } from '../../http/types'
import { Refusal } from '../search/query-tree'
import type { RecoverReport } from './run'
import { NO_STEPS, parseSteps, MAX_STEPS_BYTES, type RecoverySteps } from './steps'
import { selectionProblem, type Selection } from './store'

export const RECOVER_PATH = '/control-plane/recover'
/** Largest request body (the steps document and the selection). */
export const MAX_RECOVER_BODY_BYTES = MAX_STEPS_BYTES + 16 * 1024
/** Most bad rows one request of the API recovers (one function invocation); the CLI has no such limit. */
export const API_ROW_LIMIT = 5_000

export type Source = 'search' | 'archive'

export interface RecoverRequest {
  readonly selection: Selection
  readonly source: Source
  readonly steps: RecoverySteps
  readonly dryRun: boolean
  /** Most bad rows taken (the rest stay for another run). */
  readonly limit?: number
}

export interface RecoverResult extends RecoverReport {
  /** More rows matched than the limit took. */
  readonly more?: boolean
  /** Why enrich could not judge the events in-process (the counts of would-be-good events are then 0). */
  readonly previewError?: string
  readonly message?: string
}

export interface RecoverApiDeps {
  run(req: RecoverRequest): Promise<RecoverResult>
}

const bad = (status: number, message: string, extra: Record<string, unknown> = {}) => json(status, { message, ...extra })
const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function time(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN
  if (!Number.isFinite(t)) throw new RequestProblem(`${name} must be an ISO time such as 2026-01-31T12:00:00Z`)
  return t
}

class RequestProblem extends Error {}

const BODY_KEYS = new Set(['query', 'failureType', 'since', 'until', 'steps', 'dryRun', 'source', 'limit'])

/** Reads a recovery request (the JSON body of the API, or the CLI's options in the same shape). */
export function parseRecoverRequest(body: unknown, maxLimit = Number.POSITIVE_INFINITY): { ok: true; value: RecoverRequest } | { ok: false; message: string; errors?: readonly string[] } {
  try {
    if (!obj(body)) throw new RequestProblem('the body must be a JSON object: {"query"?, "failureType"?, "since"?, "until"?, "steps"?, "dryRun"?, "source"?, "limit"?}')
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
    if (body.steps !== undefined && body.steps !== null) {
      const s = parseSteps(body.steps)
      if (!s.ok) return { ok: false, message: 'the recovery steps do not validate against iglu:io.floe/recovery_steps/jsonschema/1-0-0', errors: s.errors }
      steps = s.value
    }
    return { ok: true, value: { selection, source, steps, dryRun: body.dryRun === true, limit } }
  } catch (err) {
    if (err instanceof RequestProblem) return { ok: false, message: err.message }
    throw err
  }
}

export function recoverApi(deps: RecoverApiDeps): HttpHandler {
  return async (req: HttpRequest): Promise<HttpResponse> => {
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
    const parsed = parseRecoverRequest(body, API_ROW_LIMIT)
    if (!parsed.ok) return bad(400, parsed.message, parsed.errors ? { errors: parsed.errors } : {})
    let result: RecoverResult
    try {
      result = await deps.run(parsed.value)
    } catch (err) {
      if (err instanceof Refusal) return bad(400, `the search store refuses the query: ${err.error.reason}`)
      if (err instanceof RecoveryUnavailable) return bad(409, err.message)
      throw err
    }
    if (result.selected === 0) return json(404, { ...result, message: result.message ?? NOTHING_SELECTED })
    return json(200, result)
  }
}

export const NOTHING_SELECTED = 'the selection matches no bad row that is not recovered yet'

/** Recovery cannot run in this deployment as asked (no search store, enrich cannot be built for a preview). */
export class RecoveryUnavailable extends Error {}
