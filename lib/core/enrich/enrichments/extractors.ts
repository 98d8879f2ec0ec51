/**
 * `cookie_extractor_config` and `http_header_extractor_config`: contexts
 * (`org.ietf/http_cookie` and `org.ietf/http_header`) from the request's
 * headers as the collector recorded them (`Name: value` lines).
 */
import { linearRegExp, type LinearRegExp } from '../../iglu/regex-engine'
import { quote } from '../json'
import type { Entity } from '../event'
import type { Enrichment } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'

const COOKIE = 'iglu:org.ietf/http_cookie/jsonschema/1-0-0'
const HEADER = 'iglu:org.ietf/http_header/jsonschema/1-0-0'

/** `name[=value]` pairs separated by `;` or `,` (outside quotes); a quoted value is unquoted; no `=` means no value. */
export function parseParameters(text: string): { name: string; value: string | null }[] {
  const out: { name: string; value: string | null }[] = []
  let i = 0
  const n = text.length
  while (i < n) {
    let name = ''
    while (i < n && text[i] !== '=' && text[i] !== ';' && text[i] !== ',') name += text[i++]
    let value: string | null = null
    if (i < n && text[i] === '=') {
      i++
      let v = ''
      let quoted = false
      let escaped = false
      while (i < n) {
        const c = text[i]!
        if (!quoted && (c === ';' || c === ',')) break
        if (escaped) escaped = false
        else if (quoted && c === '\\') escaped = true
        else if (c === '"') quoted = !quoted
        v += c
        i++
      }
      v = v.trim()
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1')
      value = v
    }
    i++ // the delimiter
    name = name.trim()
    if (name !== '' || value !== null) out.push({ name, value })
  }
  return out
}

/** The `http_cookie` data of the configured cookies, in header order. */
export function extractCookies(headers: readonly string[], names: ReadonlySet<string>): { name: string; value: string | null }[] {
  const out: { name: string; value: string | null }[] = []
  for (const h of headers) {
    const colon = h.indexOf(':')
    if (colon < 0 || h.slice(0, colon).toLowerCase() !== 'cookie') continue
    for (const p of parseParameters(h.slice(colon + 1))) if (names.has(p.name)) out.push(p)
  }
  return out
}

/** The `http_header` data of the headers whose whole name matches. */
export function extractHeaders(headers: readonly string[], pattern: { test(s: string): boolean }): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = []
  for (const h of headers) {
    const colon = h.indexOf(':')
    if (colon < 0) continue
    const name = h.slice(0, colon)
    if (pattern.test(name)) out.push({ name: name.trim(), value: h.slice(colon + 1).trim() })
  }
  return out
}

const entity = (schema: string, name: string, value: string | null): Entity => ({ schema, data: `{"name":${quote(name)},"value":${value === null ? 'null' : quote(value)}}` })

/** A step adding one `{name, value}` context of `schema` per header item `find` picks from the request's headers. */
function headerStep(id: string, order: number, schema: string, find: (headers: readonly string[]) => { name: string; value: string | null }[]): Enrichment {
  // The same cookie or header recurs across a visitor's events: its context is built (and validated) once.
  const recent = new Map<string, Entity>()
  const entityOf = (name: string, value: string | null): Entity => {
    const key = `${name}\u0000${value ?? '\u0001'}`
    let e = recent.get(key)
    if (e === undefined) {
      e = entity(schema, name, value)
      recent.set(key, e)
      if (recent.size > 1000) recent.delete(recent.keys().next().value as string)
    }
    return e
  }
  return {
    id,
    order,
    run(_ev, input) {
      const found = find(input.raw.payload.headers)
      return found.length === 0 ? {} : { contexts: found.map((x) => entityOf(x.name, x.value)) }
    },
  }
}

export const cookieExtractor: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'cookie_extractor_config',
  models: [1],
  create(config): Enrichment {
    const cookies = config.parameters.cookies
    if (!Array.isArray(cookies) || !cookies.every((c) => typeof c === 'string')) throw new ConfigError('cookies must be a list of cookie names')
    const names = new Set(cookies)
    return headerStep('cookie-extractor', ORDER.cookieExtractor, COOKIE, (headers) => extractCookies(headers, names))
  },
}

export const httpHeaderExtractor: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'http_header_extractor_config',
  models: [1],
  create(config): Enrichment {
    const source = config.parameters.headersPattern
    if (typeof source !== 'string') throw new ConfigError('headersPattern must be a regular expression')
    let pattern: LinearRegExp
    try {
      // Matched against the whole header name (as Java's `matches`), on the linear-time engine: header names come from clients.
      pattern = linearRegExp(`^(?:${source})$`)
    } catch (err) {
      throw new ConfigError(`headersPattern cannot be used: ${(err as Error).message}`)
    }
    return headerStep('http-header-extractor', ORDER.httpHeaderExtractor, HEADER, (headers) => extractHeaders(headers, pattern))
  },
}
