/**
 * Remote adapters: webhooks of a `vendor/version` handled by an HTTP service
 * (enrich's `remoteAdapters`). The payload is POSTed as JSON
 * (`contentType`, `queryString`, `headers`, `body`); the service answers
 * `{"events": [{<parameter>: "<value>", …}, …]}` (or an error status). Every
 * failure is an adapter failure naming the service.
 */
import type { AdapterResult, RawEvent } from './types'
import { stringify } from '../json'
import { fail, inputData, notJson, type Webhook } from './common'
import { isObj, jsonText, parseTree } from './jtree'

export interface RemoteAdapterConfig {
  readonly vendor: string
  readonly version: string
  readonly url: string
}

/** POSTs `body` as JSON; the response text, or the error. Injected in tests only where no server can serve. */
export type Post = (url: string, body: string, timeoutMs: number) => Promise<{ ok: true; text: string } | { ok: false; error: string }>

/** Largest answer read from a remote adapter (a bigger one is an error, not an out-of-memory). */
const MAX_RESPONSE_BYTES = 50 * 1024 * 1024

export const httpPost: Post = async (url, body, timeoutMs) => {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: '*/*' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    })
    const length = Number(res.headers.get('content-length') ?? '0')
    if (length > MAX_RESPONSE_BYTES) {
      await res.body?.cancel()
      return { ok: false, error: `response of ${length} bytes is larger than ${MAX_RESPONSE_BYTES}` }
    }
    const text = await res.text()
    if (res.status < 200 || res.status > 299) return { ok: false, error: `Request failed with status ${res.status}` }
    return { ok: true, text }
  } catch (err) {
    const e = err as Error & { cause?: Error }
    if (e.name === 'TimeoutError') return { ok: false, error: `no response within ${timeoutMs} ms` }
    return { ok: false, error: e.cause?.message ?? e.message }
  }
}

export function remoteAdapter(config: RemoteAdapterConfig, timeoutMs: number, post: Post = httpPost): Webhook {
  const url = config.url
  return async (p, ctx): Promise<AdapterResult> => {
    if (p.body === null || p.body === '') return fail(inputData('body', null, `empty body: not a valid remote adapter ${url} payload`))
    // no prototype: a parameter named __proto__ is a parameter like any other
    const queryString = Object.create(null) as Record<string, string | null>
    for (const [k, v] of p.querystring) queryString[k] = v
    const request = stringify({ contentType: p.contentType, queryString, headers: p.headers, body: p.body })
    const res = await post(url, request, timeoutMs)
    if (!res.ok) return fail(inputData('body', null, `[REMOTE_ADAPTER] could not get response from remote adapter ${url}: ${res.error}`))
    const text = res.text
    const parsed = parseTree(text, ctx.maxJsonDepth)
    if (!parsed.ok) return fail(notJson('body', text, `[REMOTE_ADAPTER] ${parsed.error}`))
    const decodeFail = (why: string) => fail(inputData('body', text, `[REMOTE_ADAPTER] could not be decoded as a list of json objects: ${why}`))
    const list = isObj(parsed.value) ? parsed.value.get('events') : undefined
    if (list === undefined) return decodeFail('DecodingFailure at .events: Missing required field')
    if (!Array.isArray(list)) return decodeFail(`DecodingFailure at .events: Got value '${jsonText(list)}' with wrong type, expecting array`)
    const events: RawEvent[] = []
    for (let i = 0; i < list.length; i++) {
      const item = list[i]!
      if (!isObj(item)) return decodeFail(`DecodingFailure at .events[${i}]: Got value '${jsonText(item)}' with wrong type, expecting object`)
      const parameters = new Map<string, string | null>()
      for (const [k, v] of item) {
        if (typeof v !== 'string') return decodeFail(`DecodingFailure at .events[${i}].${k}: Got value '${jsonText(v)}' with wrong type, expecting string`)
        parameters.set(k, v)
      }
      events.push({ payload: p, parameters })
    }
    if (events.length === 0) return fail(inputData('body', text, '[REMOTE_ADAPTER] empty list of events'))
    return { ok: true, events }
  }
}

/** The configured remote adapters by `vendor/version`. */
export function remoteAdapters(configs: readonly (RemoteAdapterConfig & { readonly timeoutMs: number })[], post: Post = httpPost): ReadonlyMap<string, Webhook> {
  return new Map(configs.map((c) => [`${c.vendor}/${c.version}`, remoteAdapter(c, c.timeoutMs, post)]))
}
