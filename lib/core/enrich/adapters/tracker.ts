/**
 * Adapters: one collector payload → raw events (tracker-protocol parameter
 * maps), or the failures that become `tracker_protocol_violations` (tp2 and
 * redirects) or `adapter_failures` (everything else) bad rows. The tracker
 * protocol, redirects and the Iglu webhook are here; the vendors' webhooks
 * are listed in `webhooks.ts` (by `vendor/version`), then the configured remote adapters.
 */
import type { Resolver } from '../../iglu/resolver'
import { toIgluUri, type SchemaKey } from '../../iglu/keys'
import { base64Text } from '../convert'
import type { ClientError, IgluParseCode } from '../iglu'
import { asSelfDescribing, matchesCriterion, validateCached, validateData, type Validated } from '../iglu'
import { compactJson, memberSpan, parseJson, quote, Raw, stringify } from '../json'
import type { LoadedPayload } from '../payload'
import { toParamMap, splitQuery, checkQuery } from '../querystring'
import { WEBHOOKS } from './webhooks'
import type { AdapterContext, AdapterMessage, AdapterResult, Params, RawEvent } from './types'

/** A tp2 event whose parameters are the string members of its JSON object: the map is built only when read. */
class FieldsEvent implements RawEvent {
  private map: Params | undefined = undefined
  constructor(
    readonly payload: LoadedPayload,
    readonly fields: Readonly<Record<string, string>>,
    readonly controlFree: boolean,
    readonly ascii: boolean,
  ) {}

  get parameters(): Params {
    if (this.map === undefined) {
      const m: Params = new Map()
      const o = this.fields
      for (const k in o) m.set(k, o[k]!)
      this.map = m
    }
    return this.map
  }
}

export const PAYLOAD_DATA_CRITERION = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-*'
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8']
const CT_EXPECTATION = `expected one of ${CONTENT_TYPES.join(', ')}`
const URI_REDIRECT = 'iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0'

const input = (field: string, value: string | null, expectation: string): AdapterMessage => ({ field, value, expectation })

/** The parameters of an empty query string (read only: never handed out as an event's parameters). */
const NO_PARAMS: Params = new Map()

/** Picks the adapter by (vendor, version). */
export async function adapt(p: LoadedPayload, ctx: AdapterContext): Promise<AdapterResult> {
  return adaptPayload(p, ctx)
}

/** `adapt`, answering synchronously when no schema has to be looked up. */
export function adaptPayload(p: LoadedPayload, ctx: AdapterContext): AdapterResult | Promise<AdapterResult> {
  if (p.vendor === 'com.snowplowanalytics.snowplow' && p.version === 'tp1') return tp1(p)
  if (p.vendor === 'com.snowplowanalytics.snowplow' && p.version === 'tp2') return tp2(p, ctx)
  if (p.vendor === 'r' && p.version === 'tp2') return redirect(p)
  if (p.vendor === 'com.snowplowanalytics.iglu' && p.version === 'v1') return iglu(p, ctx)
  const webhook = WEBHOOKS.get(`${p.vendor}/${p.version}`) ?? ctx.remoteAdapters?.get(`${p.vendor}/${p.version}`)
  if (webhook !== undefined) return webhook(p, ctx)
  return { ok: false, badRow: 'adapter_failures', messages: [input('vendor/version', `${p.vendor}/${p.version}`, 'vendor/version combination is not supported')] }
}

function tp1(p: LoadedPayload): AdapterResult {
  if (p.querystring.length === 0) {
    return { ok: false, badRow: 'adapter_failures', messages: [input('querystring', null, 'empty querystring: not a valid URI redirect')] }
  }
  return { ok: true, events: [{ payload: p, parameters: toParamMap(p.querystring) }] }
}

function tpFail(messages: AdapterMessage[]): AdapterResult {
  return { ok: false, badRow: 'tracker_protocol_violations', messages }
}

function tp2(p: LoadedPayload, ctx: AdapterContext): AdapterResult | Promise<AdapterResult> {
  const fail = tpFail
  const qs = p.querystring.length === 0 ? NO_PARAMS : toParamMap(p.querystring)
  const hasBody = p.body !== null && p.body !== ''
  if (!hasBody && qs.size === 0) {
    return fail([input('body', null, 'empty body: not a valid tracker protocol event'), input('querystring', null, 'empty querystring: not a valid tracker protocol event')])
  }
  if (p.contentType !== null && !CONTENT_TYPES.includes(p.contentType)) return fail([input('contentType', p.contentType, CT_EXPECTATION)])
  if (hasBody && p.contentType === null) return fail([input('contentType', null, CT_EXPECTATION)])
  if (!hasBody) {
    if (p.contentType !== null) return fail([input('body', null, 'empty body: not a valid track protocol event')])
    return { ok: true, events: [{ payload: p, parameters: qs }] }
  }
  const body = p.body!
  const parsed = parseJson(body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail([{ field: 'body', value: body, error: parsed.error }])
  const sd = asSelfDescribing(parsed.doc.value)
  if (!sd.ok) return fail([{ json: new Raw(compactJson(body)), error: sd.code }])
  const v = validateCached(ctx.resolver, sd.key, sd.data, ctx.now)
  if (v === undefined) return validateData(ctx.resolver, sd.key, sd.data).then((r) => tp2Events(p, body, sd, r, qs))
  return tp2Events(p, body, sd, v, qs)
}

/** The events of a tp2 body whose payload_data wrapper was validated (`v`). */
function tp2Events(p: LoadedPayload, body: string, sd: { key: SchemaKey; uri: string; data: unknown }, v: Validated, qs: Params): AdapterResult {
  const fail = tpFail
  if (!v.ok) return fail([{ schemaKey: sd.uri, error: v.error }])
  if (!matchesCriterion(sd.key, 'com.snowplowanalytics.snowplow', 'payload_data', 1, 0)) {
    return fail([{ schemaKey: sd.uri, schemaCriterion: PAYLOAD_DATA_CRITERION }])
  }
  const data = sd.data
  if (!Array.isArray(data)) return fail([input('body', compactJson(body), 'json is not an array')])
  if (data.length === 0) return fail([input('body', compactJson(body), 'empty list of events')])
  const events: RawEvent[] = []
  const messages: AdapterMessage[] = []
  // A JSON string cannot hold a raw control character below U+0020, only an
  // escaped one: without a backslash (and DEL) in the body, no value has one.
  const controlFree = body.indexOf('\\') < 0 && body.indexOf('\x7f') < 0
  // Without escapes every value is a piece of the body: ASCII when the body is
  // (its UTF-8 length equals its length exactly when every character is ASCII).
  const ascii = controlFree && Buffer.byteLength(body, 'utf8') === body.length
  for (const item of data) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      messages.push(input('body', stringify(item), 'event is not a JSON object'))
      continue
    }
    const obj = item as Record<string, unknown>
    if (qs.size === 0 && messages.length === 0 && allStrings(obj)) {
      events.push(new FieldsEvent(p, obj as Record<string, string>, controlFree, ascii))
      continue
    }
    const params: Params = new Map()
    for (const k in obj) {
      const val = obj[k]
      if (val === null) messages.push(input(k, null, 'value cannot be null'))
      else if (typeof val !== 'string') messages.push(input(k, stringify(val), 'value is not a string'))
      else params.set(k, val)
    }
    // query string parameters are merged into every event and win
    for (const [k, val] of qs) params.set(k, val)
    events.push({ payload: p, parameters: params })
  }
  if (messages.length > 0) return fail(messages)
  return { ok: true, events }
}

/** Whether every member of `obj` is a string. */
function allStrings(obj: Record<string, unknown>): boolean {
  for (const k in obj) if (typeof obj[k] !== 'string') return false
  return true
}

function redirect(p: LoadedPayload): AdapterResult {
  const fail = (messages: AdapterMessage[]): AdapterResult => ({ ok: false, badRow: 'tracker_protocol_violations', messages })
  if (p.querystring.length === 0) return fail([input('querystring', null, 'empty querystring: not a valid URI redirect')])
  const params = toParamMap(p.querystring)
  const u = params.get('u')
  if (u === undefined || u === null) {
    // the parameters as Snowplow lists them: each name once, a missing value as `null`
    const qs = [...params].map(([k, v]) => `${k}=${v ?? 'null'}`).join('&')
    return fail([input('querystring', qs, 'missing `u` parameter: not a valid URI redirect')])
  }
  const entity = `{"schema":"${URI_REDIRECT}","data":{"uri":${quote(u)}}}`
  params.delete('u')
  const out: Params = new Map()
  if (!params.has('e')) {
    out.set('e', 'ue')
    for (const [k, v] of params) out.set(k, v)
    out.set('tv', 'r-tp2')
    out.set('p', params.get('p') ?? 'web')
    out.set('ue_pr', `{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":${entity}}`)
    return { ok: true, events: [{ payload: p, parameters: out }] }
  }
  for (const [k, v] of params) out.set(k, v)
  out.set('tv', 'r-tp2')
  out.set('p', params.get('p') ?? 'web')
  const co = params.get('co')
  const cx = params.get('cx')
  if (cx !== undefined && cx !== null) {
    // Base64-encoded contexts come first, as in Snowplow; the error names the decoded text
    const merged = withEntity(base64Text(cx), entity)
    if (!merged.ok) return fail([merged.message])
    out.set('cx', Buffer.from(merged.json, 'utf8').toString('base64url'))
  } else if (co !== undefined && co !== null && co !== '') {
    const merged = withEntity(co, entity)
    if (!merged.ok) return fail([merged.message])
    out.set('co', merged.json)
  } else {
    out.delete('co')
    out.set('co', `{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[${entity}]}`)
  }
  return { ok: true, events: [{ payload: p, parameters: out }] }
}

/**
 * The contexts JSON with `entity` first in its `data` array (compacted,
 * numbers as written); JSON whose `data` is not an array is kept as it is.
 * Text that is not JSON is the redirect's `co|cx` failure.
 */
function withEntity(json: string, entity: string): { ok: true; json: string } | { ok: false; message: AdapterMessage } {
  const parsed = parseJson(json)
  if (!parsed.ok) return { ok: false, message: { field: 'co|cx', value: json, error: parsed.error } }
  const body = compactJson(json)
  const v = parsed.doc.value
  if (v === null || typeof v !== 'object' || Array.isArray(v) || !Array.isArray((v as { data?: unknown }).data)) return { ok: true, json: body }
  const span = memberSpan(body, [0, body.length], 'data')!
  const at = span[0] + 1
  const empty = body[at] === ']'
  return { ok: true, json: body.slice(0, at) + entity + (empty ? '' : ',') + body.slice(at) }
}

/**
 * The generic Iglu webhook (`/com.snowplowanalytics.iglu/v1`): the `schema`
 * parameter names the event's schema; the data is the other query parameters
 * (GET), the JSON body, or the form-encoded body. Becomes one self-describing
 * event (`e=ue`, `ue_pr`), with `aid`, `cv`, `eid`, `nuid`, `ttm`, `url` and `p`
 * passed through.
 */
async function iglu(p: LoadedPayload, ctx: AdapterContext): Promise<AdapterResult> {
  const fail = (messages: AdapterMessage[]): AdapterResult => ({ ok: false, badRow: 'adapter_failures', messages })
  const qs = toParamMap(p.querystring)
  const schema = qs.get('schema')
  if (schema === undefined || schema === null || schema === '') {
    if (p.body !== null && p.body !== '' && p.contentType?.startsWith('application/json')) {
      // a self-describing body carries its own schema
      const parsed = parseJson(p.body, ctx.maxJsonDepth)
      if (!parsed.ok) return fail([{ field: 'body', value: p.body, error: parsed.error }])
      const sd = asSelfDescribing(parsed.doc.value)
      if (!sd.ok) return fail([{ json: new Raw(compactJson(p.body)), error: sd.code }])
      return { ok: true, events: [{ payload: p, parameters: webhookParams(qs, compactJson(p.body)) }] }
    }
    return fail([input('schema', null, 'empty `schema` field')])
  }
  const sd = asSelfDescribing({ schema, data: null })
  if (!sd.ok) return fail([input('schema', schema, `not a valid Iglu URI (${sd.code})`)])
  const uri = toIgluUri(sd.key)
  let dataText: string
  if (p.body !== null && p.body !== '') {
    const ct = p.contentType ?? ''
    if (ct.startsWith('application/json')) {
      const parsed = parseJson(p.body, ctx.maxJsonDepth)
      if (!parsed.ok) return fail([{ field: 'body', value: p.body, error: parsed.error }])
      dataText = compactJson(p.body)
    } else if (ct.startsWith('application/x-www-form-urlencoded')) {
      const c = checkQuery(p.body)
      const pairs = c.ok ? splitQuery(c.query) : []
      dataText = stringify(Object.fromEntries(pairs.map(([k, v]) => [k, v ?? ''])))
    } else {
      return fail([input('contentType', p.contentType, 'expected one of application/json, application/x-www-form-urlencoded')])
    }
  } else {
    const data: Record<string, string> = {}
    for (const [k, v] of qs) if (!PASS_THROUGH.has(k) && k !== 'schema' && k !== 'p') data[k] = v ?? ''
    dataText = stringify(data)
  }
  return { ok: true, events: [{ payload: p, parameters: webhookParams(qs, `{"schema":${quote(uri)},"data":${dataText}}`) }] }
}

const PASS_THROUGH = new Set(['nuid', 'aid', 'cv', 'eid', 'ttm', 'url'])

function webhookParams(qs: Params, entity: string): Params {
  const params: Params = new Map([
    ['tv', 'com.snowplowanalytics.iglu-v1'],
    ['e', 'ue'],
    ['p', qs.get('p') ?? 'app'],
    ['ue_pr', `{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":${entity}}`],
  ])
  for (const k of PASS_THROUGH) {
    const v = qs.get(k)
    if (v !== undefined && v !== null) params.set(k, v)
  }
  return params
}
