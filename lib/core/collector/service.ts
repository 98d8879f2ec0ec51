import { asciiUrl } from '../../http/headers'
import type { HttpRequest, HttpResponse } from '../../http/types'
import { COLLECTOR_PAYLOAD_SCHEMA, type CollectorPayload } from '../thrift/types'
import type { CollectorConfig } from './config'
import { expiredCookies, findCookie, networkUserIdCookies, requestCookies } from './cookies'
import { splitAndSerialize } from './split'

/** A record for one of the collector's streams. */
export interface CollectorRecord {
  readonly stream: 'raw' | 'bad'
  readonly partitionKey: string
  readonly data: Buffer
}

/** What to answer, and what must be written before answering. */
export interface CollectorOutcome {
  readonly response: HttpResponse
  readonly records: CollectorRecord[]
}

export interface CollectorContext {
  /** Whether the last writes to the streams succeeded; `/sink-health` reports it. Default `true`. */
  readonly sinkHealthy?: boolean
}

/** The 43-byte transparent GIF answered to pixel requests. */
export const PIXEL = Buffer.from('R0lGODlhAQABAPAAAP///wAAACH5BAUAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64')

export const ANONYMOUS_NUID = '00000000-0000-0000-0000-000000000000'

/** The longest network user id kept in the cookie (the `network_userid` column holds 128 characters). */
export const MAX_NUID_LENGTH = 128

/** A network user id the cookie may hold: RFC 6265 cookie-octets only (no space, quote, comma, semicolon, backslash, control or non-ASCII character), 1 to 128 of them. */
export function isValidNetworkUserId(v: string): boolean {
  return v.length > 0 && v.length <= MAX_NUID_LENGTH && /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/.test(v)
}
export const ROBOTS_TXT = 'User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /\n\nUser-agent: AdsBot-Google\nDisallow: /'

const TEXT = 'text/plain; charset=UTF-8'
const NO_CACHE = 'no-cache, no-store, must-revalidate'

type Kind = 'pixel' | 'post' | 'redirect'

const regexCache = new Map<string, RegExp>()
/** A regular expression that must match the whole value, compiled once. */
function fullMatch(source: string): RegExp {
  let re = regexCache.get(source)
  if (!re) {
    re = new RegExp(`^(?:${source})$`)
    regexCache.set(source, re)
  }
  return re
}

const plain = (statusCode: number, body: string, headers: Record<string, string> = {}): HttpResponse => ({
  statusCode,
  headers: { 'content-type': TEXT, ...headers },
  body,
})

/** `Access-Control-Allow-Origin` (the first origin of the request, else `*`) and credentials. */
export function corsHeaders(req: HttpRequest): Record<string, string> {
  const origin = req.headers['origin']?.split(/\s+/).find((o) => o.length > 0 && o !== 'null')
  return { 'access-control-allow-origin': origin ?? '*', 'access-control-allow-credentials': 'true' }
}

function preflight(req: HttpRequest, config: CollectorConfig): HttpResponse {
  return {
    statusCode: 200,
    headers: {
      ...corsHeaders(req),
      'access-control-allow-headers': 'Content-Type, SP-Anonymous',
      'access-control-max-age': String(config.cors.accessControlMaxAgeSeconds),
    },
    body: '',
  }
}

/** The answer when the records could not be written: 503, with CORS headers so browser trackers see it and retry. */
export function sinkFailureResponse(req: HttpRequest): HttpResponse {
  return plain(503, 'Service Unavailable', corsHeaders(req))
}

/** `x-forwarded-for` → `X-Forwarded-For`. */
export function canonicalHeaderName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase())
}

/** The client address: the first `X-Forwarded-For` entry, else the connection's address, else `unknown`. */
export function clientIp(req: HttpRequest): string {
  const xff = req.headers['x-forwarded-for']
  const first = xff?.split(',')[0]?.trim()
  if (first) return first
  return req.sourceIp || 'unknown'
}

/** The host of the `Host` header, without the port. */
export function hostOf(hostHeader: string | undefined): string | undefined {
  if (hostHeader === undefined) return undefined
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec(hostHeader.trim())
  return m ? m[1] : hostHeader
}

/**
 * Headers that carry this deployment's credentials, never written into a
 * payload (so never into the raw stream, the archive, a bad row or the search
 * store): a browser resends the pages' basic credentials with every request
 * to the same origin, tracker requests included. `Authorization` and
 * `Proxy-Authorization` (basic credentials, bearer tokens), the registry's
 * `apikey` and the tracking-design API's `X-API-Key` and `X-API-Key-ID`.
 * Names in lower case; request header names are compared in lower case.
 * Cookies are kept, as Snowplow keeps them (the pages use none).
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'apikey', 'x-api-key', 'x-api-key-id'])

/** Every header as `Name: value` but the credentials, the Cookie header re-rendered per RFC 6265, anonymous requests without identifying headers. */
export function renderHeaders(req: HttpRequest, cookies: readonly string[], anonymous: boolean): string[] {
  const out: string[] = []
  let cookieDone = false
  const cookieLine = () => {
    cookieDone = true
    if (!anonymous && cookies.length > 0) out.push(`Cookie: ${cookies.join('; ')}`)
  }
  for (const [name, value] of Object.entries(req.headers)) {
    if (name === 'cookie') {
      cookieLine()
      continue
    }
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) continue
    if (anonymous && (name === 'x-forwarded-for' || name === 'x-real-ip')) continue
    out.push(`${canonicalHeaderName(name)}: ${value}`)
  }
  if (!cookieDone) cookieLine()
  return out
}

function validRedirectTarget(u: string | undefined, config: CollectorConfig): u is string {
  if (!u) return false
  let url: URL
  try {
    url = new URL(u)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return config.redirectDomains.length === 0 || config.redirectDomains.includes(url.hostname)
}

function bounceLocation(req: HttpRequest, config: CollectorConfig): string {
  const protoHeader = req.headers[config.cookieBounce.forwardedProtocolHeader.toLowerCase()]
  const proto = protoHeader?.split(',')[0]?.trim() || 'http'
  const host = req.headers['host'] ?? 'localhost'
  const param = `${config.cookieBounce.name}=true`
  return `${proto}://${host}${req.path}?${req.rawQuery ? `${req.rawQuery}&${param}` : param}`
}

function track(req: HttpRequest, config: CollectorConfig, now: number, randomUuid: () => string, kind: Kind, path: string): CollectorOutcome {
  const h = req.headers
  const anonymous = h['sp-anonymous'] !== undefined
  const cookies = requestCookies(req.cookies, h['cookie'])
  const cors = corsHeaders(req)
  const origin = h['origin']

  const dnt = config.doNotTrackCookie
  const doNotTrack =
    dnt.enabled && (() => {
      const v = findCookie(cookies, dnt.name)
      return v !== undefined && fullMatch(dnt.value).test(v)
    })()

  const cookieNuid = config.cookie.enabled ? findCookie(cookies, config.cookie.name) || undefined : undefined
  const queryNuid = req.query['nuid'] || undefined
  // The cookie only ever holds a valid network user id; any other `nuid` is
  // recorded as received, and the cookie keeps (or gets) a valid one.
  const validCookieNuid = cookieNuid !== undefined && isValidNetworkUserId(cookieNuid) ? cookieNuid : undefined
  let nuid: string
  let cookieValue: string | undefined
  if (anonymous) nuid = ANONYMOUS_NUID
  else if (queryNuid) {
    nuid = queryNuid
    cookieValue = isValidNetworkUserId(queryNuid) ? queryNuid : validCookieNuid ?? randomUuid()
  } else if (validCookieNuid) nuid = validCookieNuid
  else if (kind === 'pixel' && config.cookieBounce.enabled && !doNotTrack) {
    if (req.query[config.cookieBounce.name] === undefined) {
      // First visit: bounce to self with a fresh cookie; nothing is recorded yet.
      return {
        response: {
          statusCode: 302,
          headers: { ...cors, location: bounceLocation(req, config), 'cache-control': NO_CACHE },
          cookies: config.cookie.enabled ? networkUserIdCookies(config.cookie, randomUuid(), now, origin) : [],
          body: '',
        },
        records: [],
      }
    }
    nuid = config.cookieBounce.fallbackNetworkUserId
  } else nuid = randomUuid()

  let response: HttpResponse
  if (kind === 'pixel') {
    response = { statusCode: 200, headers: { ...cors, 'content-type': 'image/gif', 'cache-control': NO_CACHE }, body: PIXEL }
  } else if (kind === 'post') {
    response = plain(200, 'ok', cors)
  } else {
    const u = req.query['u']
    response = validRedirectTarget(u, config)
      ? { statusCode: 302, headers: { ...cors, location: asciiUrl(u) }, body: '' }
      : { statusCode: 400, headers: cors, body: '' }
  }

  let setCookies: string[] = []
  if (config.cookie.enabled && !doNotTrack) {
    if (!anonymous) setCookies = networkUserIdCookies(config.cookie, cookieValue ?? nuid, now, origin)
    else if (cookieNuid !== undefined) setCookies = expiredCookies(config.cookie, origin)
  }
  if (setCookies.length > 0) response = { ...response, cookies: setCookies }
  if (doNotTrack) return { response, records: [] }

  const isPost = kind === 'post'
  const contentType = isPost ? h['content-type']?.toLowerCase() : undefined
  const headers = renderHeaders(req, cookies, anonymous)
  if (contentType !== undefined) headers.push(contentType)
  const ipAddress = anonymous ? 'unknown' : clientIp(req)
  const payload: CollectorPayload = {
    schema: COLLECTOR_PAYLOAD_SCHEMA,
    ipAddress,
    timestamp: now,
    encoding: 'UTF-8',
    collector: config.collectorName,
    userAgent: h['user-agent'],
    refererUri: h['referer'],
    path,
    querystring: req.rawQuery,
    body: isPost ? req.body.toString('utf8') : undefined,
    headers,
    contentType,
    hostname: hostOf(h['host']),
    networkUserId: nuid,
  }
  const partitionKey = config.streams.useIpAddressAsPartitionKey && !anonymous ? ipAddress : randomUuid()
  const { good, bad } = splitAndSerialize(payload, config.streams.maxBytes, now)
  const records: CollectorRecord[] = [
    ...good.map((data) => ({ stream: 'raw' as const, partitionKey, data })),
    ...bad.map((row) => ({ stream: 'bad' as const, partitionKey, data: Buffer.from(JSON.stringify(row), 'utf8') })),
  ]
  return { response, records }
}

function crossDomainXml(config: CollectorConfig): string {
  const lines = config.crossDomain.domains.map(
    (d) => `  <allow-access-from domain="${d.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}" secure="${config.crossDomain.secure}" />`,
  )
  return ['<?xml version="1.0"?>', '<cross-domain-policy>', ...lines, '</cross-domain-policy>'].join('\n')
}

/**
 * The collector: one HTTP request in, the response and the stream records out.
 * Nothing here performs I/O; the caller writes `records` and answers
 * `response` only once they are written (or `sinkFailureResponse` if not).
 *
 * `now` is the collector time (epoch ms); `randomUuid` supplies network user
 * ids and partition keys.
 */
export function handleCollectorRequest(
  req: HttpRequest,
  config: CollectorConfig,
  now: number,
  randomUuid: () => string,
  context: CollectorContext = {},
): CollectorOutcome {
  const none = (response: HttpResponse): CollectorOutcome => ({ response, records: [] })
  const method = req.method.toUpperCase()
  const isGet = method === 'GET' || method === 'HEAD'
  const path = req.path

  if (isGet && path === '/health') return none(plain(200, 'ok'))
  if (isGet && path === '/sink-health') {
    return none(context.sinkHealthy === false ? plain(503, 'Service Unavailable') : plain(200, 'ok'))
  }
  if (isGet && path === '/robots.txt') return none(plain(200, ROBOTS_TXT))

  const segments = path.split('/').slice(1)
  if (!config.enableDefaultRedirect && segments[0] === 'r' && segments.length >= 2) {
    return none(plain(404, 'redirects disabled'))
  }
  if (method === 'OPTIONS') return none(preflight(req, config))
  if (req.body.length > config.networking.dropPayloadSize) {
    return none(plain(413, 'Request entity too large', corsHeaders(req)))
  }

  if (segments.length === 1) {
    const [only] = segments
    if (isGet && (only === 'i' || only === 'ice.png')) return track(req, config, now, randomUuid, 'pixel', path)
    if (isGet && only === '' && config.rootResponse.enabled) {
      const r = config.rootResponse
      return none({ statusCode: r.statusCode, headers: { ...r.headers }, body: r.body })
    }
    if (isGet && only === 'crossdomain.xml' && config.crossDomain.enabled) {
      return none({ statusCode: 200, headers: { 'content-type': 'text/xml; charset=UTF-8' }, body: crossDomainXml(config) })
    }
  } else if (segments.length === 2 && segments[0] && segments[1]) {
    const original = `/${segments[0]}/${segments[1]}`
    const mapped = config.paths[original] ?? original
    if (method === 'POST') return track(req, config, now, randomUuid, 'post', mapped)
    if (isGet) {
      const redirect = mapped.startsWith('/r/')
      return track(req, config, now, randomUuid, redirect ? 'redirect' : 'pixel', mapped)
    }
  }
  return none(plain(404, 'Not found'))
}
