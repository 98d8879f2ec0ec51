/**
 * Failed events as recovery reads them from their bad rows, and the collector
 * payloads they are replayed as. Enrich keeps each failed event's original
 * input in its bad row: the tracker parameters of one event with the
 * request's metadata (`payload.raw` of `schema_violations` and
 * `enrichment_failures`), or the whole collector payload (`payload` of
 * `adapter_failures` and `tracker_protocol_violations`). Other bad rows
 * (undecodable or oversized records, recovery errors) cannot be replayed.
 */
import { COLLECTOR_PAYLOAD_SCHEMA, type CollectorPayload } from '../thrift/types'
import { applySteps, type Params, type RecoverySteps } from './steps'

/** The request header a replayed payload carries: the recovery run, so a bad row it turns into again names the run. */
export const RECOVERY_HEADER = 'X-Floe-Recovery-Run'
/** What a replayed payload's `collector` field says. */
export const RECOVERY_COLLECTOR = 'floe-recover'
const TP2_PATH = '/com.snowplowanalytics.snowplow/tp2'
const PAYLOAD_DATA = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The request around a failed event. */
export interface RequestMeta {
  readonly timestamp: number
  readonly ipAddress: string | null
  readonly userAgent: string | null
  readonly refererUri: string | null
  readonly headers: readonly string[]
  readonly hostname: string | null
  readonly networkUserId: string | null
  readonly contentType: string | null
  /** The collector the replayed payload names (`floe-recover` when not given). */
  readonly collector?: string
}

export type FailedEvent =
  /** One event's tracker parameters (enrichment bad rows). */
  | { readonly kind: 'event'; readonly type: string; readonly eventId: string | null; readonly params: Params; readonly meta: RequestMeta }
  /** A whole collector payload (adapter and tracker protocol bad rows): its query string and, for tp2 bodies, its events. */
  | { readonly kind: 'payload'; readonly type: string; readonly path: string; readonly querystring: Params; readonly body: string | null; readonly events: Params[] | null; readonly meta: RequestMeta }

export type ReadResult = { readonly ok: true; readonly event: FailedEvent } | { readonly ok: false; readonly reason: string }

const RECOVERABLE = new Set(['schema_violations', 'enrichment_failures', 'adapter_failures', 'tracker_protocol_violations'])

const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/** The failure type of a bad row's schema URI (`schema_violations`, …). */
export function failureTypeOf(schema: unknown): string {
  return (typeof schema === 'string' ? /^iglu:[^/]+\/([^/]+)\//.exec(schema)?.[1] : undefined) ?? 'unknown'
}

export function metaOf(p: Record<string, unknown>): RequestMeta {
  const ts = Date.parse(String(p.timestamp ?? ''))
  return {
    timestamp: Number.isFinite(ts) ? ts : Date.now(),
    ipAddress: strOrNull(p.ipAddress),
    userAgent: strOrNull(p.useragent),
    refererUri: strOrNull(p.refererUri),
    headers: Array.isArray(p.headers) ? p.headers.filter((h): h is string => typeof h === 'string') : [],
    hostname: strOrNull(p.hostname),
    networkUserId: strOrNull(p.userId ?? p.networkUserId),
    contentType: strOrNull(p.contentType),
  }
}

export function pairs(list: unknown): Params {
  const out: Params = new Map()
  if (Array.isArray(list)) for (const x of list) {
    const o = obj(x)
    if (o && typeof o.name === 'string') out.set(o.name, typeof o.value === 'string' ? o.value : null)
  }
  return out
}

/** The events of a tp2 body (`payload_data`: an array of objects of strings), or null when the body is not one. */
function tp2Events(body: string | null): Params[] | null {
  if (body === null) return null
  try {
    const doc = obj(JSON.parse(body))
    if (!doc || !Array.isArray(doc.data)) return null
    return doc.data.map((e) => new Map(Object.entries(obj(e) ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : v === null ? null : JSON.stringify(v)])))
  } catch {
    return null
  }
}

/** Reads a bad row (its stored text): the failed event it holds, or why it cannot be replayed. */
export function readBadRow(line: string): ReadResult {
  let row: Record<string, unknown> | undefined
  try {
    row = obj(JSON.parse(line))
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  const type = failureTypeOf(row?.schema)
  if (!RECOVERABLE.has(type)) return { ok: false, reason: `${type} bad rows hold no event to replay` }
  const payload = obj(obj(row?.data)?.payload)
  if (!payload) return { ok: false, reason: `${type} bad row without a payload` }
  if (type === 'schema_violations' || type === 'enrichment_failures') {
    const raw = obj(payload.raw)
    if (!raw) return { ok: false, reason: `${type} bad row without payload.raw` }
    const id = obj(payload.enriched)?.event_id
    return { ok: true, event: { kind: 'event', type, eventId: typeof id === 'string' && UUID.test(id) ? id : null, params: pairs(raw.parameters), meta: metaOf(raw) } }
  }
  const vendor = typeof payload.vendor === 'string' ? payload.vendor : ''
  const version = typeof payload.version === 'string' ? payload.version : ''
  if (!/^[^/?#\s]+$/.test(vendor) || !/^[^/?#\s]+$/.test(version)) return { ok: false, reason: `${type} bad row without the payload's vendor and version` }
  const body = strOrNull(payload.body)
  return { ok: true, event: { kind: 'payload', type, path: `/${vendor}/${version}`, querystring: pairs(payload.querystring), body, events: tp2Events(body), meta: metaOf(payload) } }
}

export type FixResult = { readonly ok: true; readonly event: FailedEvent } | { readonly ok: false; readonly error: string }

/** The failed event with the steps applied to each of its parameter sets; why they broke it when they did. */
export function fixEvent(e: FailedEvent, steps: RecoverySteps): FixResult {
  if (steps.steps.length === 0) return { ok: true, event: e }
  if (e.kind === 'event') {
    const r = applySteps(e.params, steps)
    return r.ok ? { ok: true, event: { ...e, params: r.params } } : { ok: false, error: r.error }
  }
  const q = applySteps(e.querystring, steps)
  if (!q.ok) return { ok: false, error: `query string: ${q.error}` }
  let events: Params[] | null = null
  if (e.events !== null) {
    events = []
    for (const [i, ev] of e.events.entries()) {
      const r = applySteps(ev, steps)
      if (!r.ok) return { ok: false, error: `event ${i} of the body: ${r.error}` }
      events.push(r.params)
    }
  }
  return { ok: true, event: { ...e, querystring: q.params, events } }
}

const encodePair = ([k, v]: [string, string | null]) => (v === null ? encodeURIComponent(k) : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
const objectOf = (p: Params) => Object.fromEntries([...p].filter((kv): kv is [string, string] => kv[1] !== null))

/**
 * The collector payload that replays a failed event: an event's parameters
 * as a tp2 POST (its `eid` kept, or set to the event id enrich gave it, so
 * the replayed event keeps its id), a whole payload as it came; with the
 * original request's time, addresses and headers, plus the recovery header.
 */
export function toCollectorPayload(e: FailedEvent, runId: string): CollectorPayload {
  const m = e.meta
  const headers = [...m.headers.filter((h) => !h.toLowerCase().startsWith(`${RECOVERY_HEADER.toLowerCase()}:`)), `${RECOVERY_HEADER}: ${runId}`]
  const base = {
    schema: COLLECTOR_PAYLOAD_SCHEMA,
    ipAddress: m.ipAddress ?? '',
    timestamp: m.timestamp,
    encoding: 'UTF-8',
    collector: m.collector ?? RECOVERY_COLLECTOR,
    headers,
    ...(m.userAgent !== null ? { userAgent: m.userAgent } : {}),
    ...(m.refererUri !== null ? { refererUri: m.refererUri } : {}),
    ...(m.hostname !== null ? { hostname: m.hostname } : {}),
    ...(m.networkUserId !== null ? { networkUserId: m.networkUserId } : {}),
  }
  if (e.kind === 'event') {
    const params = objectOf(e.params)
    if (params.eid === undefined && e.eventId !== null) params.eid = e.eventId
    return { ...base, path: TP2_PATH, contentType: 'application/json; charset=UTF-8', body: JSON.stringify({ schema: PAYLOAD_DATA, data: [params] }) }
  }
  let body = e.body
  if (e.events !== null && body !== null) {
    const doc = JSON.parse(body) as Record<string, unknown>
    body = JSON.stringify({ ...doc, data: e.events.map(objectOf) })
  }
  return {
    ...base,
    path: e.path,
    ...(e.querystring.size > 0 ? { querystring: [...e.querystring].map(encodePair).join('&') } : {}),
    ...(body !== null ? { body } : {}),
    ...(m.contentType !== null ? { contentType: m.contentType } : {}),
  }
}

/** The event ids a failed event will keep when replayed (`eid` parameters, or the id enrich gave it). */
export function eventIdsOf(e: FailedEvent): string[] {
  if (e.kind === 'event') return [e.params.get('eid') ?? e.eventId].filter((x): x is string => typeof x === 'string')
  return [...(e.events ?? []), e.querystring].map((p) => p.get('eid')).filter((x): x is string => typeof x === 'string')
}
