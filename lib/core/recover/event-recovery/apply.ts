/**
 * Recovering one bad row with an event-recovery configuration: the flows of
 * its schema key whose conditions all hold on the row's `data` (an empty
 * list always holds) apply their steps, every matching flow in order, to the
 * recoverable payload (`payload`: the collector payload of adapter and
 * tracker-protocol failures, `{enriched, raw}` of schema violations and
 * enrichment failures, whose steps address `$.raw…`). A row no flow matches
 * fails with `FailedToMatchConfiguration`; `recovery_error` rows are
 * unwrapped and recovered again; `size_violation` rows hold no event.
 */
import { isDeepStrictEqual } from 'node:util'
import { metaOf, pairs, readBadRow, type FailedEvent } from '../events'
import { flowsFor, type CastType, type Condition, type RecoveryConfig, type RecoveryStep } from './config'
import { PathError, read, textOf, update } from './jsonpath'
import type { RecoveryRegex } from './regex'

/** What a recovered row becomes: a failed event to replay, or the Thrift bytes a collector_payload_format_violation kept. */
export type Recovered = { readonly kind: 'event'; readonly event: FailedEvent } | { readonly kind: 'thrift'; readonly bytes: Uint8Array }

export type RowResult =
  | { readonly ok: true; readonly value: Recovered; readonly flows: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly configName: string | null; readonly row: unknown }

/** The first words of an error, for the counts by reason. */
export const reasonKey = (error: string) => (error.startsWith('FailedToMatchConfiguration') ? 'FailedToMatchConfiguration' : error.split(':')[0]!.slice(0, 120))

/** How deep `recovery_error` rows are unwrapped. */
export const MAX_UNWRAP = 8

class StepFailure extends Error {}

const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)

function sizeOf(v: unknown): number | undefined {
  if (typeof v === 'string' || Array.isArray(v)) return v.length
  if (obj(v)) return Object.keys(v as object).length
  return undefined
}

/** True when the condition holds on the document (some value its path finds matches). */
export function holds(c: Condition, doc: unknown): boolean {
  return read(doc, c.path.segments).some((v) => {
    const m = c.matcher
    if (m.kind === 'value') return isDeepStrictEqual(v, m.value)
    if (m.kind === 'regex') return m.re.find(textOf(v))
    const n = sizeOf(v)
    return n !== undefined && (m.op === 'eq' ? n === m.n : m.op === 'gt' ? n > m.n : n < m.n)
  })
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

function replaced(v: unknown, match: { re?: RecoveryRegex }, value: unknown): unknown {
  const re = match.re
  const asString = typeof value === 'string' ? value : JSON.stringify(value)
  switch (kindOf(v)) {
    case 'undefined':
    case 'null':
      return asString
    case 'string':
      return re && typeof value === 'string' ? re.replaceAll(v as string, value) : asString
    case 'boolean':
      if (typeof value !== 'boolean') throw new StepFailure(`cannot replace the boolean ${textOf(v)} with ${asString}`)
      return value
    case 'number':
      if (typeof value !== 'number') throw new StepFailure(`cannot replace the number ${textOf(v)} with ${asString}`)
      return value
    case 'array': {
      const arr = v as unknown[]
      if (re && Array.isArray(value)) return [...arr.filter((x) => !re.find(textOf(x))), ...value]
      if (re) return parsedAs('array', re && typeof value === 'string' ? re.replaceAll(textOf(arr), value) : asString, v)
      return Array.isArray(value) ? value : [value]
    }
    default:
      return parsedAs('object', re && typeof value === 'string' ? re.replaceAll(textOf(v), value) : asString, v)
  }
}

function parsedAs(kind: 'array' | 'object', text: string, was: unknown): unknown {
  let out: unknown
  try {
    out = JSON.parse(text)
  } catch {
    throw new StepFailure(`replacing in ${textOf(was).slice(0, 100)} gave ${text.slice(0, 100)}, which is not JSON`)
  }
  if (kindOf(out) !== kind) throw new StepFailure(`replacing in the ${kind} ${textOf(was).slice(0, 100)} gave ${text.slice(0, 100)}, not an ${kind}`)
  return out
}

/** Cast between the tool's types (String, Numeric, Boolean, Array). */
export function castValue(v: unknown, from: CastType, to: CastType): unknown {
  if (to === 'Array') return Array.isArray(v) ? v : [v]
  if (to === 'String') return typeof v === 'string' ? v : textOf(v)
  if (from === 'Numeric' && to === 'Boolean' && typeof v === 'number') return v !== 0
  if (from === 'Boolean' && to === 'Numeric' && typeof v === 'boolean') return v ? 1 : 0
  if (from === 'String' && to === 'Numeric' && typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  if (from === to && kindOf(v) === { Numeric: 'number', Boolean: 'boolean', String: 'string', Array: 'array' }[from]) return v
  throw new StepFailure(`cannot cast ${textOf(v).slice(0, 100)} from ${from} to ${to}`)
}

/** The tool's Add: combined with what is there (missing or null: set; booleans and; numbers add; strings, arrays join; objects merge). */
function added(v: unknown, value: unknown): unknown {
  switch (kindOf(v)) {
    case 'undefined':
    case 'null':
      return value
    case 'boolean':
      return (v as boolean) && value === true
    case 'number':
      return typeof value === 'number' ? (v as number) + value : v
    case 'string':
      return (v as string) + (typeof value === 'string' ? value : '')
    case 'array':
      return [...(v as unknown[]), ...(Array.isArray(value) ? value : [])]
    default:
      return obj(value) ? { ...(v as object), ...(value as object) } : v
  }
}

/** One step on the payload; throws `StepFailure`/`PathError` with the reason. */
export function applyRecoveryStep(payload: unknown, s: RecoveryStep): unknown {
  switch (s.op) {
    case 'Replace':
      return update(payload, s.path, (v) => replaced(v, { re: s.match }, s.value))
    case 'Remove':
      return update(payload, s.path, (v) => replaced(v, { re: s.match }, ''))
    case 'Cast':
      return update(payload, s.path, (v) => castValue(v, s.from, s.to))
    case 'Add':
      return update(payload, s.path, (v) => added(v, s.value), true)
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** The record a collector_payload_format_violation kept: base64 of the record, which may itself be base64 text of the Thrift bytes. */
export function thriftBytes(line: string): Uint8Array {
  const once = Buffer.from(line, 'base64')
  const text = once.toString('latin1')
  return new Uint8Array(text.length % 4 === 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : once)
}

/** The self-describing event of a raw event's `ue_pr` (or base64 `ue_px`): its schema and data. */
function unstructOf(params: Map<string, string | null>): { schema: string; data: unknown } | undefined {
  const text = params.get('ue_pr') ?? (params.get('ue_px') ? Buffer.from(params.get('ue_px')!, 'base64').toString('utf8') : undefined)
  if (!text) return undefined
  try {
    const inner = obj(obj(JSON.parse(text))?.data)
    return typeof inner?.schema === 'string' ? { schema: inner.schema, data: inner.data } : undefined
  } catch {
    return undefined
  }
}

/**
 * The collector payload a raw event (schema violations, enrichment failures)
 * is replayed as, the way event-recovery builds it: a GET of the raw path
 * with the parameters as the query string (with the event id enrich gave it
 * when the parameters have none, so the replayed event keeps its id);
 * events that came through the SendGrid or Iglu webhooks go back through
 * them, as the JSON body their adapter reads. A string says why it cannot.
 */
function rawEvent(type: string, payload: unknown): FailedEvent | string {
  const p = obj(payload)
  const raw = obj(p?.raw)
  if (!raw) return `${type} bad row without payload.raw`
  const vendor = typeof raw.vendor === 'string' ? raw.vendor : ''
  const version = typeof raw.version === 'string' ? raw.version : ''
  if (!/^[^/?#\s]+$/.test(vendor) || !/^[^/?#\s]+$/.test(version)) return `${type} bad row without the raw event's vendor and version`
  const params = pairs(raw.parameters)
  // as event-recovery does: the original collector's name, and time 0 when the row kept none
  const meta = { ...metaOf(raw), ...(typeof raw.loaderName === 'string' ? { collector: raw.loaderName } : {}), ...(Number.isFinite(Date.parse(String(raw.timestamp))) ? {} : { timestamp: 0 }) }
  const base = { kind: 'payload' as const, type, path: `/${vendor}/${version}`, events: null }
  if (vendor === 'com.sendgrid' || vendor === 'com.snowplowanalytics.iglu') {
    const ue = unstructOf(params)
    if (!ue) return `the ${vendor} event has no self-describing event to send back`
    if (vendor === 'com.sendgrid') {
      const name = /^iglu:[^/]+\/([^/]+)\//.exec(ue.schema)?.[1] ?? ''
      const body = JSON.stringify([{ ...(obj(ue.data) ?? {}), event: name }])
      return { ...base, querystring: new Map(), body, meta: { ...meta, contentType: 'application/json' } }
    }
    return { ...base, querystring: new Map([['schema', ue.schema]]), body: JSON.stringify(ue.data), meta: { ...meta, contentType: 'application/json' } }
  }
  const id = obj(p?.enriched)?.event_id
  if (!params.has('eid') && typeof id === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) params.set('eid', id)
  return { ...base, querystring: params, body: null, meta: { ...meta, contentType: null } }
}

const typeOf = (schema: unknown) => (typeof schema === 'string' ? /^iglu:[^/]+\/([^/]+)\//.exec(schema)?.[1] : undefined) ?? 'unknown'

/** Recovers one bad row (its text or parsed JSON) with the configuration. */
export function recoverRow(input: string | unknown, config: RecoveryConfig, depth = 0): RowResult {
  let row: unknown = input
  if (typeof input === 'string') {
    try {
      row = JSON.parse(input)
    } catch {
      return { ok: false, error: 'the bad row is not JSON', configName: null, row: input }
    }
  }
  const fail = (error: string, configName: string | null = null): RowResult => ({ ok: false, error, configName, row })
  const schema = obj(row)?.schema
  const data = obj(obj(row)?.data)
  const type = typeOf(schema)
  if (!data) return fail('the bad row has no data')
  if (type === 'recovery_error') {
    if (depth >= MAX_UNWRAP) return fail(`recovery_error rows nested more than ${MAX_UNWRAP} deep`)
    const inner = data.payload
    const r = recoverRow(typeof inner === 'string' ? inner : (inner ?? null), config, depth + 1)
    return r.ok ? r : { ...r, row }
  }
  if (type === 'size_violation') return fail('size_violation bad rows cannot be recovered: they keep only the start of the payload')
  const flows = flowsFor(config, schema as string).filter((f) => f.conditions.every((c) => holds(c, data)))
  if (flows.length === 0) return fail(`FailedToMatchConfiguration: no flow for ${String(schema)} matches the bad row`)
  let payload: unknown = data.payload
  for (const f of flows) {
    for (const [i, s] of f.steps.entries()) {
      try {
        payload = applyRecoveryStep(payload, s)
      } catch (err) {
        if (err instanceof StepFailure || err instanceof PathError) return fail(`flow ${f.name}, step ${i} (${s.op} ${s.path.text}): ${err.message}`, f.name)
        throw err
      }
    }
  }
  const names = flows.map((f) => f.name)
  if (type === 'collector_payload_format_violation') {
    const line = typeof payload === 'string' ? payload : obj(payload)?.line
    if (typeof line !== 'string') return fail('collector_payload_format_violation bad row without its payload', names[0])
    return { ok: true, value: { kind: 'thrift', bytes: thriftBytes(line) }, flows: names }
  }
  if (type === 'schema_violations' || type === 'enrichment_failures') {
    const r = rawEvent(type, payload)
    return typeof r === 'string' ? fail(r, names[0]) : { ok: true, value: { kind: 'event', event: r }, flows: names }
  }
  const read = readBadRow(JSON.stringify({ schema, data: { ...data, payload } }))
  if (!read.ok) return fail(read.reason, names[0])
  const collector = obj(payload)?.collector
  const event = typeof collector === 'string' ? { ...read.event, meta: { ...read.event.meta, collector } } : read.event
  return { ok: true, value: { kind: 'event', event }, flows: names }
}
