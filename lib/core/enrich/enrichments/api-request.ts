/**
 * `api_request_enrichment_config`: calls an HTTP API with values of the event
 * and attaches parts of its JSON answer as contexts. The inputs fill the URI
 * template's `{{key}}` placeholders (URL-encoded as Java's `URLEncoder` does:
 * space as `+`); POST and PUT also send them as a JSON object of strings. When
 * an input finds nothing, or the URI still has a placeholder, no request is
 * made and no context added. Each output's JSON path picks a value of the
 * answer (several as an array), which becomes the data of a context with the
 * output's schema. Answers are kept in an LRU cache (`cache.size` entries,
 * `cache.ttl` seconds; failed calls a tenth of that) keyed by URL and body.
 * A failed call, a status other than 2xx, an answer that is not JSON or a
 * path that finds nothing is an enrichment failure, or nothing at all with
 * `ignoreOnError`.
 */
import { JSONPath } from 'jsonpath-plus'
import { toIgluUri } from '../../iglu/keys'
import type { EnrichedEvent, Entity } from '../event'
import type { Enrichment, StepResult } from '../steps'
import { CachedLookup, checkJsonPath, inputSource, jsonText, keepFor, pojoText, pull, type HttpAnswer, type HttpClient, type InputSource, type LookupOutcome } from './lookups'
import { ConfigError, orderOf, type EnrichmentModule } from './module'

const KEY_RE = /^[A-Za-z0-9_-]+$/
/** The answer text kept for a failure message. */
const SNIPPET = 200

export interface ApiInput {
  readonly key: string
  readonly source: InputSource
}

export interface ApiOutput {
  readonly schema: string
  readonly jsonPath: string
}

export interface ApiRequestSettings {
  readonly inputs: readonly ApiInput[]
  readonly method: 'GET' | 'POST' | 'PUT'
  readonly uri: string
  readonly timeoutMs: number
  /** `Authorization` header value, when `httpBasic` is set. */
  readonly authorization?: string
  readonly outputs: readonly ApiOutput[]
  readonly cacheSize: number
  readonly cacheTtlSeconds: number
  readonly ignoreOnError: boolean
}

/** The settings of a configuration's `parameters`; throws `ConfigError` for what cannot be used. */
export function apiRequestSettings(p: Record<string, any>): ApiRequestSettings {
  const inputs: ApiInput[] = ((p.inputs ?? []) as Record<string, any>[]).map((entry, i) => {
    if (typeof entry?.key !== 'string' || !KEY_RE.test(entry.key)) throw new ConfigError(`inputs[${i}]: key ${JSON.stringify(entry?.key)} must be letters, digits, _ and -`)
    return { key: entry.key, source: inputSource(entry, `inputs[${i}] (${entry.key})`) }
  })
  const http = p.api?.http
  if (!http) throw new ConfigError('api.http is required')
  if (!['GET', 'POST', 'PUT'].includes(http.method)) throw new ConfigError(`api.http.method must be GET, POST or PUT, got ${JSON.stringify(http.method)}`)
  const uri = String(http.uri)
  // the template with every placeholder filled must be an http(s) URL
  const sample = uri.replace(/\{\{ *([A-Za-z0-9_-]+) *\}\}/g, 'x')
  let parsed: URL | undefined
  try {
    parsed = new URL(sample)
  } catch {
    parsed = undefined
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new ConfigError(`api.http.uri ${JSON.stringify(uri)} is not an http:// or https:// URL`)
  const keys = new Set(inputs.map((x) => x.key))
  for (const m of uri.matchAll(/\{\{ *([A-Za-z0-9_-]+) *\}\}/g)) {
    if (!keys.has(m[1]!)) throw new ConfigError(`api.http.uri uses {{${m[1]}}}, which no input provides (inputs: ${[...keys].join(', ') || 'none'})`)
  }
  const timeoutMs = Number(http.timeout)
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new ConfigError(`api.http.timeout must be a number of milliseconds, got ${JSON.stringify(http.timeout)}`)
  const basic = http.authentication?.httpBasic
  const authorization =
    basic && (basic.username != null || basic.password != null)
      ? `Basic ${Buffer.from(`${basic.username ?? ''}:${basic.password ?? ''}`, 'utf8').toString('base64')}`
      : undefined
  const outputs: ApiOutput[] = ((p.outputs ?? []) as Record<string, any>[]).map((o, i) => {
    if (typeof o?.schema !== 'string' || !/^iglu:[a-zA-Z0-9-_.]+\/[a-zA-Z0-9-_]+\/[a-zA-Z0-9-_]+\/[1-9][0-9]*(?:-(?:0|[1-9][0-9]*)){2}$/.test(o.schema)) {
      throw new ConfigError(`outputs[${i}]: schema ${JSON.stringify(o?.schema)} is not an Iglu URI (iglu:vendor/name/jsonschema/1-0-0)`)
    }
    if (!o.json) throw new ConfigError(`outputs[${i}]: json.jsonPath is required`)
    return { schema: o.schema, jsonPath: checkJsonPath(o.json.jsonPath, `outputs[${i}].json.jsonPath`) }
  })
  if (outputs.length === 0) throw new ConfigError('outputs: at least one output is required')
  const cache = p.cache ?? {}
  return {
    inputs,
    method: http.method,
    uri,
    timeoutMs,
    authorization,
    outputs,
    cacheSize: Math.max(0, Math.floor(Number(cache.size) || 0)),
    cacheTtlSeconds: Math.max(0, Number(cache.ttl) || 0),
    ignoreOnError: p.ignoreOnError === true,
  }
}

/** Java's `URLEncoder.encode(s, "UTF-8")`: letters, digits and `.-*_` as they are, space as `+`, the rest as %XX of UTF-8. */
export function formEncode(s: string): string {
  // a lone surrogate cannot be written in UTF-8; Java writes `?` for it
  const wellFormed = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '?')
  return encodeURIComponent(wellFormed).replace(/%20|[!'()~]/g, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
}

/** The URL of a template and its values; undefined when a placeholder is left (a key without a value). */
export function buildUrl(template: string, values: ReadonlyMap<string, string>): string | undefined {
  const url = template.replace(/\{\{ *([A-Za-z0-9_-]+) *\}\}/g, (whole, key: string) => {
    const v = values.get(key)
    return v === undefined ? whole : formEncode(v)
  })
  return url.includes('{') || url.includes('}') ? undefined : url
}

/** The request body of POST and PUT: the inputs as a JSON object of strings. */
export function buildBody(values: ReadonlyMap<string, string>): string {
  const o: Record<string, string> = {}
  for (const [k, v] of values) o[k] = v
  return JSON.stringify(o)
}

/** The part of a URL a message may show: no user information, no query string (it may hold keys). */
function shown(url: string): string {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`
  } catch {
    return '(invalid URL)'
  }
}

export class ApiRequest extends CachedLookup {
  constructor(
    readonly settings: ApiRequestSettings,
    private readonly http: HttpClient,
    now: () => number,
    schemaKey: string,
  ) {
    super(settings.cacheSize, now, schemaKey, 'api-request', settings.ignoreOnError)
  }

  /** The inputs' values, or undefined when one finds nothing (no request then). */
  values(ev: EnrichedEvent): Map<string, string> | undefined {
    const values = new Map<string, string>()
    for (const input of this.settings.inputs) {
      const found = pull(input.source, ev)
      if (found === undefined) return undefined
      values.set(input.key, found.kind === 'pojo' ? pojoText(found.field, found.value) : jsonText(found.value))
    }
    return values
  }

  run(ev: EnrichedEvent): StepResult | Promise<StepResult> {
    const values = this.values(ev)
    if (values === undefined) return {}
    const url = buildUrl(this.settings.uri, values)
    if (url === undefined) return {}
    const body = this.settings.method === 'GET' ? undefined : buildBody(values)
    return this.answer(body === undefined ? url : `${url}\n${body}`, () => this.call(url, body))
  }

  private async call(url: string, body: string | undefined): Promise<{ value: LookupOutcome; ttlMs: number }> {
    const s = this.settings
    const ttl = s.cacheTtlSeconds * 1000
    const failed = (errors: string[]) => ({ value: { errors }, ttlMs: ttl / 10 })
    const headers: Record<string, string> = { accept: 'application/json' }
    if (s.authorization) headers.authorization = s.authorization
    if (body !== undefined) headers['content-type'] = 'application/json'
    const where = `${s.method} ${shown(url)}`
    let answer: HttpAnswer
    try {
      answer = await this.http.request({ method: s.method, url, headers, body, timeoutMs: s.timeoutMs })
    } catch (err) {
      answer = { ok: false, error: (err as Error).message }
    }
    if (!answer.ok) return failed([`API request ${where} failed: ${answer.error}`])
    if (answer.status < 200 || answer.status > 299) return failed([`API request ${where} answered HTTP ${answer.status}: ${answer.body.slice(0, SNIPPET)}`])
    let doc: unknown
    try {
      doc = JSON.parse(answer.body)
    } catch (err) {
      return failed([`API request ${where} answered with something that is not JSON (${(err as Error).message}): ${answer.body.slice(0, SNIPPET)}`])
    }
    const contexts: Entity[] = []
    const errors: string[] = []
    for (const o of s.outputs) {
      let found: unknown[]
      try {
        found = doc !== null && typeof doc === 'object' ? (JSONPath({ path: o.jsonPath, json: doc as object, wrap: true, eval: 'safe' }) as unknown[]) : o.jsonPath === '$' ? [doc] : []
      } catch (err) {
        errors.push(`API request ${where}: JSON path ${o.jsonPath} cannot be evaluated on the answer: ${(err as Error).message}`)
        continue
      }
      if (found.length === 0) {
        errors.push(`API request ${where}: no values were found by JSON path ${o.jsonPath} in ${answer.body.slice(0, SNIPPET)}`)
        continue
      }
      contexts.push({ schema: o.schema, data: JSON.stringify(found.length === 1 ? found[0] : found) })
    }
    return errors.length > 0 ? failed(errors) : { value: { contexts }, ttlMs: keepFor(contexts, ttl) }
  }
}

export const apiRequest: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'api_request_enrichment_config',
  models: [1],
  create(config, ctx): Enrichment {
    const settings = apiRequestSettings(config.parameters as Record<string, any>)
    const http = ctx.services?.http
    if (!http) throw new ConfigError('the API request enrichment needs an HTTP client, which this runtime does not provide')
    const api = new ApiRequest(settings, http, ctx.services!.now, toIgluUri(config.schema))
    return { id: 'api-request', order: orderOf('apiRequest', ctx.legacyOrder), run: (ev) => api.run(ev) }
  },
}
