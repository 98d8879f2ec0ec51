/**
 * What the webhook adapters share: failure messages (the `adapter_failures`
 * message shapes), the self-describing event parameters, event type → schema
 * lookup, form bodies, value formatting and timestamp conversion.
 */
import type { AdapterContext, AdapterMessage, AdapterResult, Params, RawEvent } from './types'
import { stringify } from '../json'
import type { LoadedPayload } from '../payload'
import { checkQuery, splitQuery, toParamMap } from '../querystring'
import { camelize, isNum, isObj, jsonText, JNum, wholeNumber, type J, type JObj } from './jtree'

export type { AdapterContext, AdapterResult, Params, RawEvent }

/** A webhook adapter: one collector payload → events or failures. */
export type Webhook = (p: LoadedPayload, ctx: AdapterContext) => AdapterResult | Promise<AdapterResult>

export type Failure = AdapterMessage

export const UNSTRUCT_EVENT = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
export const CONTEXTS = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1'

export const FORM = 'application/x-www-form-urlencoded'

/** A problem with the input: the field, its value (or null), what was expected. */
export const inputData = (field: string, value: string | null | undefined, expectation: string): Failure => ({ field, value: value ?? null, expectation })

/** A field that is not JSON: the field, its value, the parse error (`invalid json: …`). */
export const notJson = (field: string, value: string | null | undefined, error: string): Failure => ({ field, value: value ?? null, error })

/** An event type without a schema: the type (or null), the adapter's type → schema table, why. */
export function schemaMapping(actual: string | null | undefined, mapping: Readonly<Record<string, string>>, expectation: string): Failure {
  return { actual: actual ?? null, expectedMapping: mapping, expectation }
}

export function fail(...messages: Failure[]): AdapterResult {
  return { ok: false, badRow: 'adapter_failures', messages }
}

/**
 * A list of vendor events, each given its schema by its type (`typeOf`,
 * looked up in `table` with the configured overrides, its index in messages)
 * and its data by `dataOf`: one self-describing event each, or every failure
 * when any type has no schema.
 */
export function typedEvents(p: LoadedPayload, ctx: AdapterContext, tracker: string, table: Readonly<Record<string, string>>, items: Iterable<readonly [J, number]>, typeOf: (e: J) => string | undefined, dataOf: (e: J, type: string | undefined) => J): AdapterResult {
  const qs = queryParams(p)
  const mapping = schemas(ctx, table)
  const out: Params[] = []
  const failures: Failure[] = []
  for (const [e, index] of items) {
    const type = typeOf(e)
    const schema = lookupSchema(type, mapping, index)
    if (!schema.ok) failures.push(schema.failure)
    else out.push(unstructParams(tracker, 'srv', qs, schema.schema, dataOf(e, type)))
  }
  if (failures.length > 0) return failAll(failures)
  return events(p, out)
}

export function failAll(messages: Failure[]): AdapterResult {
  return { ok: false, badRow: 'adapter_failures', messages }
}

export function events(p: LoadedPayload, params: Params[]): AdapterResult {
  if (params.length === 0) return fail(inputData('', null, 'empty list of events'))
  return { ok: true, events: params.map((parameters) => ({ payload: p, parameters })) }
}

const tables = new WeakMap<ReadonlyMap<string, string>, Map<object, Readonly<Record<string, string>>>>()

/** An adapter's type → schema table with the configured schemas in place of the defaults. */
export function schemas(ctx: AdapterContext, table: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const o = ctx.schemaOverrides
  if (o === undefined || o.size === 0) return table
  let byTable = tables.get(o)
  if (byTable === undefined) tables.set(o, (byTable = new Map()))
  let t = byTable.get(table)
  if (t === undefined) byTable.set(table, (t = Object.fromEntries(Object.entries(table).map(([k, u]) => [k, o.get(u) ?? u]))))
  return t
}

/** The configured schema in place of a default one. */
export const schemaUri = (ctx: AdapterContext, uri: string): string => ctx.schemaOverrides?.get(uri) ?? uri

/** Query string parameters passed on to a webhook's events. */
const PASS_THROUGH = ['nuid', 'aid', 'cv', 'eid', 'ttm', 'url']

/** The query string as a parameter map. */
export const queryParams = (p: LoadedPayload): Params => toParamMap(p.querystring)

/**
 * The parameters of a self-describing event: `tv`, `e=ue`, `p` (from the
 * query string, else `platform`), `ue_pr` (the event under the unstruct_event
 * wrapper) and the pass-through parameters of `qs`.
 */
export function unstructParams(tracker: string, platform: string, qs: Params, schema: string, data: J | string): Params {
  const dataText = typeof data === 'string' ? data : jsonText(data)
  const out: Params = new Map([
    ['tv', tracker],
    ['e', 'ue'],
    ['p', qs.has('p') ? qs.get('p')! : platform],
    ['ue_pr', `{"schema":"${UNSTRUCT_EVENT}","data":{"schema":${stringify(schema)},"data":${dataText}}}`],
  ])
  for (const k of PASS_THROUGH) if (qs.has(k)) out.set(k, qs.get(k)!)
  return out
}

/**
 * The schema of an event type, or the failure naming the type and the table
 * (`index`: the event's position in a batch, named in the message).
 */
export function lookupSchema(type: string | null | undefined, mapping: Readonly<Record<string, string>>, index?: number): { ok: true; schema: string } | { ok: false; failure: Failure } {
  const suffix = index === undefined ? '' : ` at index ${index}`
  if (type === undefined || type === null) return { ok: false, failure: schemaMapping(null, mapping, `cannot determine event type: type parameter not provided${suffix}`) }
  if (Object.prototype.hasOwnProperty.call(mapping, type)) return { ok: true, schema: mapping[type]! }
  if (type === '') return { ok: false, failure: schemaMapping(type, mapping, `cannot determine event type: type parameter empty${suffix}`) }
  return { ok: false, failure: schemaMapping(type, mapping, `no schema associated with the provided type parameter${suffix}`) }
}

/** Snowplow's cleaning of parser messages: tabs as four spaces, other control characters dropped, trimmed. */
export function cleanMessage(m: string): string {
  // eslint-disable-next-line no-control-regex
  return m.replace(/@[0-9a-z]+;/g, '@xxxxxx;').replace(/\t/g, '    ').replace(/[\u0000-\u001f\u007f]/g, '').trim()
}

export type FormParse = { ok: true; pairs: [string, string | null][] } | { ok: false; error: string }

/**
 * A form-encoded body read as the query of `http://localhost/?<body>`:
 * a body a strict URI would refuse is an error (`Illegal character in query at index …`).
 */
export function parseForm(body: string): FormParse {
  const c = checkQuery(body)
  if (!c.ok) return { ok: false, error: c.error }
  return { ok: true, pairs: splitQuery(c.query) as [string, string | null][] }
}

/** Form pairs as a map (later names win), values without `=` dropped. */
export function formMap(pairs: readonly (readonly [string, string | null])[]): Map<string, string> {
  const m = new Map<string, string>()
  for (const [k, v] of pairs) {
    if (m.has(k)) m.delete(k)
    if (v !== null) m.set(k, v)
    else m.delete(k)
  }
  return m
}

/** Form pairs as a map (later names win), values without `=` kept as null. */
export function formParams(pairs: readonly (readonly [string, string | null])[]): Params {
  return toParamMap(pairs)
}

/**
 * The body and content type checks of a form or JSON webhook, in Snowplow's
 * order: a missing or empty body, then a missing content type, then another one.
 * `emptyBodyOk`: only a missing body is refused (an empty one goes on).
 */
export function checkBody(p: LoadedPayload, contentType: string, opts: { emptyBodyOk?: boolean; wrongTypeValue?: boolean } = {}): { ok: true; body: string } | { ok: false; result: AdapterResult } {
  if (p.body === null || (p.body === '' && !opts.emptyBodyOk)) return { ok: false, result: fail(inputData('body', null, 'empty body: no events to process')) }
  if (p.contentType === null) return { ok: false, result: fail(inputData('contentType', null, `no content type: expected ${contentType}`)) }
  if (p.contentType !== contentType) return { ok: false, result: fail(inputData('contentType', opts.wrongTypeValue === false ? null : p.contentType, `expected ${contentType}`)) }
  return { ok: true, body: p.body }
}

/** A string as JSON the way Snowplow's form formatter reads it: empty → null; chosen keys as booleans or integers. */
export function formValue(key: string, value: string | null, opts: FieldTypes = {}): J {
  if (value === null || value === '') return null
  if (opts.bools?.includes(key)) return value === 'true' ? true : value === 'false' ? false : value
  if (opts.ints?.includes(key)) return bigIntegerText(value) ?? value
  if (opts.dateTimes?.keys.includes(key)) return opts.dateTimes.convert(value)
  return value
}

export interface FieldTypes {
  readonly bools?: readonly string[]
  readonly ints?: readonly string[]
  readonly dateTimes?: { readonly keys: readonly string[]; readonly convert: (v: string) => string }
}

/** Parameters (all but `nuid`, `aid`, `cv` and `p`) as a JSON object of formatted values. */
export function formatParams(params: Params, opts: FieldTypes = {}): JObj {
  const out: JObj = new Map()
  for (const [k, v] of params) {
    if (k === 'nuid' || k === 'aid' || k === 'cv' || k === 'p') continue
    out.set(k, formValue(k, v, opts))
  }
  return out
}

/** A Java BigInteger's text of `s` (optional sign, decimal digits), or undefined when it is not one. */
export function bigIntegerText(s: string): JNum | undefined {
  if (!/^[-+]?[0-9]+$/.test(s) || s.length > 4000) return undefined
  return new JNum(BigInt(s.startsWith('+') ? s.slice(1) : s).toString())
}

const pad = (n: number, w: number) => String(n).padStart(w, '0')

/** `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` (UTC) of epoch milliseconds; undefined beyond what a date can hold. */
export function jsonSchemaDateTime(ms: number): string | undefined {
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return undefined
  const d = new Date(ms)
  const y = d.getUTCFullYear()
  const ys = y < 0 ? '-' + pad(-y, 4) : pad(y, 4)
  return `${ys}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}Z`
}

/**
 * `yyyy-MM-dd HH:mm:ss` (UTC, as vendors send it) → `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`;
 * a value in another form is kept as it is.
 */
export function sqlDateTimeToJson(v: string): string {
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})$/.exec(v)
  if (!m) return v
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return v
  const ms = Date.UTC(y, mo - 1, d, h, mi, s)
  const check = new Date(ms)
  if (check.getUTCDate() !== d) return v
  return jsonSchemaDateTime(ms) ?? v
}

/** Seconds since the epoch (a Long) → JSON Schema date-time, or undefined when not a Long. */
function secondsText(seconds: bigint): string | undefined {
  return jsonSchemaDateTime(Number(seconds * 1000n))
}

const LONG_RE = /^[-+]?[0-9]+$/

/**
 * Snowplow's cleanup of a vendor event: members named in `tsKeys` holding
 * seconds since the epoch (a number, or a string of one) become JSON Schema
 * date-times, at any depth; the member `event[0]` holding exactly `event[1]` is dropped.
 */
export function cleanupEvent(v: J, event: readonly [string, string] | undefined, tsKeys: readonly string[]): J {
  if (Array.isArray(v)) return v.map((x) => cleanupEvent(x, event, tsKeys))
  if (!isObj(v)) return v
  const out: JObj = new Map()
  for (const [k, x] of v) {
    let y: J = x
    if (tsKeys.includes(k) && typeof x === 'string') {
      if (LONG_RE.test(x) && x.length < 25) {
        const b = BigInt(x.startsWith('+') ? x.slice(1) : x)
        if (b >= -(2n ** 63n) && b < 2n ** 63n) y = secondsText(b) ?? x
      }
    } else if (tsKeys.includes(k) && isNum(x)) {
      const b = wholeNumber(x)
      if (b !== undefined) y = secondsText(b) ?? x
    } else if (isObj(x) || Array.isArray(x)) {
      y = cleanupEvent(x, event, tsKeys)
    }
    if (event !== undefined && k === event[0] && y === event[1]) continue
    out.set(k, y)
  }
  return out
}

export { camelize }

/** circe's message for a member that is not a string (`get[String]`), or undefined when it is one. */
export function stringFieldProblem(v: J | undefined, name: string): string | undefined {
  if (typeof v === 'string') return undefined
  if (v === undefined) return `DecodingFailure at .${name}: Missing required field`
  return `DecodingFailure at .${name}: Got value '${jsonText(v)}' with wrong type, expecting string`
}

const ISO_RE = /^([-+]?\d{4,})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/

/** Epoch milliseconds of an ISO-8601 date-time (no offset: UTC), or undefined. */
export function isoMillisOf(s: string): number | undefined {
  const m = ISO_RE.exec(s)
  if (!m) return undefined
  const [y, mo = '1', d = '1', h = '0', mi = '0', sec = '0', frac = '', off] = m.slice(1)
  const ms = Number((frac + '000').slice(0, 3))
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), ms)
  const check = new Date(t)
  if (Number.isNaN(t) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return undefined
  if (off === undefined || off === 'Z') return t
  const sign = off[0] === '-' ? -1 : 1
  const digits = off.slice(1).replace(':', '')
  return t - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60000
}
