/**
 * Cross-site request refusal for endpoints authorised by credentials a browser
 * sends by itself (HTTP basic authentication): any page the signed-in user
 * visits could otherwise change the deployment with a form post or an image.
 *
 * A request that changes state (an unsafe method, or a GET declared to change
 * state such as Snowplow Micro's `/micro/reset`) is refused when the browser
 * says it comes from elsewhere:
 *
 * - `Sec-Fetch-Site` (set by the browser; a page cannot set or change it) is
 *   decisive when present: `same-origin` and `none` (typed or bookmarked by the
 *   user) pass; `same-site` and `cross-site` are refused. It holds behind a
 *   proxy that rewrites `Host`, since the browser judged it against the page.
 * - Otherwise `Origin`, when present, must be the request's own origin: its
 *   scheme, host and port against `X-Forwarded-Proto` (set by API Gateway, the
 *   load balancer and function URLs: `https`; `http` when absent, as on the
 *   local gateway) and the `Host` header (API Gateway passes the domain the
 *   browser used: the API's own or the custom domain). `Origin: null` (a
 *   sandboxed frame, a file, a redirect across sites) is refused.
 * - A request with neither header is not from a browser page (curl, CI,
 *   tracker test suites) and passes.
 *
 * Requests that only read are not refused: a page elsewhere cannot read the
 * answer (no CORS is granted), and links to the pages from elsewhere must work.
 * The exception is a read declared costly (`costlyReads`, path prefixes such
 * as `/micro/`, whose answers can hold the whole store): a page elsewhere
 * could make the stack build it again and again with an image, so it is
 * refused like a state change.
 */
import type { HttpRequest } from './types'

/** Methods that do not change state (RFC 9110's safe methods that API Gateway passes on). */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Longest `Origin` considered; a longer one is refused. */
export const MAX_ORIGIN_LENGTH = 2048

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' }

/** A serialized origin (RFC 6454): `scheme://host[:port]`, host a name, an IPv4 address or a bracketed IPv6 address. */
const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/(\[[0-9a-f:.]+\]|[a-z0-9._~%!$&'()*+;=-]+)(?::([0-9]{1,5}))?$/i
/** A `Host` header: host and optional port. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9._~%!$&'()*+;=-]+)(?::([0-9]{1,5}))?$/i

const segmentsOf = (path: string) =>
  path
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => {
      try {
        return decodeURIComponent(s).toLowerCase()
      } catch {
        return s.toLowerCase()
      }
    })
    .join('/')

/**
 * Whether a request changes state: any method but GET, HEAD and OPTIONS, and
 * GET or HEAD on one of `stateChangingGets` (paths, compared without empty
 * segments, percent-decoded and case-insensitively).
 */
export function changesState(method: string, path: string, stateChangingGets: readonly string[] = []): boolean {
  const m = method.toUpperCase()
  if (!SAFE_METHODS.has(m)) return true
  if (m === 'OPTIONS' || stateChangingGets.length === 0) return false
  const p = segmentsOf(path)
  return stateChangingGets.some((g) => segmentsOf(g) === p)
}

function canonical(scheme: string, host: string, port: string | undefined): string {
  const s = scheme.toLowerCase()
  const p = port === undefined || port === '' || port === DEFAULT_PORTS[s] ? '' : `:${Number(port)}`
  return `${s}://${host.toLowerCase()}${p}`
}

/** The request's own origin as the browser addressed it, or undefined when `Host` is missing or malformed. */
export function requestOrigin(headers: Readonly<Record<string, string>>): string | undefined {
  const host = HOST.exec((headers.host ?? '').trim())
  if (!host) return undefined
  const proto = (headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim().toLowerCase()
  return canonical(proto === 'https' ? 'https' : 'http', host[1]!, host[2])
}

const show = (v: string) => JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}…` : v)

/**
 * Why a request must be refused as cross-site (a sentence that starts with
 * `cross-site request refused:`), or undefined when it may go through. Only the
 * headers are read; call it for requests that change state.
 */
export function crossSiteProblem(headers: Readonly<Record<string, string>>): string | undefined {
  const fetchSite = headers['sec-fetch-site']
  if (fetchSite !== undefined) {
    const values = fetchSite.split(',').map((v) => v.trim().toLowerCase())
    const foreign = values.find((v) => v === 'cross-site' || v === 'same-site')
    if (foreign) return `cross-site request refused: the browser sent it from a page of ${foreign === 'same-site' ? 'another origin of this site' : 'another site'} (Sec-Fetch-Site: ${foreign}); use the pages of this deployment, or send the request without a browser`
    if (values.every((v) => v === 'same-origin' || v === 'none')) return undefined
    // an unknown value: the Origin decides
  }
  const origin = headers.origin
  if (origin === undefined) return undefined
  const o = origin.trim()
  if (o.toLowerCase() === 'null') return 'cross-site request refused: Origin is null (a sandboxed page, a local file or a redirect from another site sent it)'
  const m = o.length <= MAX_ORIGIN_LENGTH ? ORIGIN.exec(o) : null
  if (!m) return `cross-site request refused: Origin ${show(o)} is not a single origin (scheme://host[:port])`
  const own = requestOrigin(headers)
  if (own === undefined) return 'cross-site request refused: the request has an Origin but no valid Host to compare it with'
  const theirs = canonical(m[1]!, m[2]!, m[3])
  if (theirs !== own) return `cross-site request refused: Origin ${show(theirs)} is not this deployment's origin ${show(own)}; use the pages of this deployment, or send the request without a browser`
  return undefined
}

/** What the guard needs to know of a function. */
export interface CrossSiteOptions {
  /** GET paths that change state (refused cross-site like unsafe methods). */
  readonly stateChangingGets?: readonly string[]
  /** Path prefixes whose reads are costly enough to be refused cross-site too (see the top of this file). */
  readonly costlyReads?: readonly string[]
}

/** Whether `path` is under one of `prefixes` (compared as `changesState` compares). */
function underAny(path: string, prefixes: readonly string[] | undefined): boolean {
  if (prefixes === undefined || prefixes.length === 0) return false
  const p = `${segmentsOf(path)}/`
  return prefixes.some((x) => p.startsWith(`${segmentsOf(x)}/`))
}

/** Why this request must be refused as cross-site, or undefined. */
export function crossSiteRefusalReason(req: Pick<HttpRequest, 'method' | 'path' | 'headers'>, opts: CrossSiteOptions = {}): string | undefined {
  return changesState(req.method, req.path, opts.stateChangingGets) || (req.method.toUpperCase() !== 'OPTIONS' && underAny(req.path, opts.costlyReads)) ? crossSiteProblem(req.headers) : undefined
}
