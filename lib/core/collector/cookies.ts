import type { CookieConfig } from './config'

/** Reads cookie `name` from `name=value` entries (the Cookie header split on `;`). First match wins. */
export function findCookie(cookies: readonly string[], name: string): string | undefined {
  for (const entry of cookies) {
    for (const part of entry.split(';')) {
      const eq = part.indexOf('=')
      if (eq < 0) continue
      if (part.slice(0, eq).trim() !== name) continue
      let value = part.slice(eq + 1).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      return value
    }
  }
  return undefined
}

/** All `name=value` pairs of a request, from the gateway's cookie list or, failing that, the Cookie header. */
export function requestCookies(cookies: readonly string[], cookieHeader: string | undefined): string[] {
  const out: string[] = []
  const source = cookies.length > 0 ? cookies : cookieHeader ? [cookieHeader] : []
  for (const entry of source) {
    for (const part of entry.split(';')) {
      const p = part.trim()
      if (p) out.push(p)
    }
  }
  return out
}

/** Hosts of the `Origin` header, which may list several space-separated origins. */
export function originHosts(origin: string | undefined): string[] {
  if (!origin) return []
  const hosts: string[] = []
  for (const o of origin.split(/\s+/)) {
    if (!o || o === 'null') continue
    try {
      hosts.push(new URL(o).hostname.toLowerCase())
    } catch {
      // not an origin; ignore
    }
  }
  return hosts
}

/**
 * The cookie domain: the first configured domain equal to, or a parent of, one
 * of the Origin hosts; else the fallback domain; else none (host-only cookie).
 */
export function cookieDomain(config: CookieConfig, origin: string | undefined): string | undefined {
  const hosts = originHosts(origin)
  for (const domain of config.domains) {
    const d = domain.replace(/^\./, '').toLowerCase()
    if (hosts.some((h) => h === d || h.endsWith(`.${d}`))) return domain
  }
  return config.fallbackDomain
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const two = (n: number) => String(n).padStart(2, '0')

/** IMF-fixdate as cookies and HTTP dates use it, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. */
export function httpDate(epochMs: number): string {
  const d = new Date(epochMs)
  return `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} GMT`
}

export interface SetCookieOptions {
  readonly name: string
  readonly value: string
  readonly expiresMs: number
  readonly domain?: string
  readonly path: string
  readonly secure: boolean
  readonly httpOnly: boolean
  readonly sameSite?: string
}

/** Renders a `Set-Cookie` value. */
export function renderSetCookie(o: SetCookieOptions): string {
  const parts = [`${o.name}=${o.value}`, `Expires=${httpDate(o.expiresMs)}`]
  if (o.domain) parts.push(`Domain=${o.domain}`)
  parts.push(`Path=${o.path}`)
  if (o.sameSite) parts.push(`SameSite=${o.sameSite}`)
  if (o.secure) parts.push('Secure')
  if (o.httpOnly) parts.push('HttpOnly')
  return parts.join('; ')
}

/** The network user id cookie (and its script-readable twin when configured). */
export function networkUserIdCookies(config: CookieConfig, nuid: string, nowMs: number, origin: string | undefined): string[] {
  return cookiePair(config, nuid, nowMs + config.expirationDays * 86_400_000, origin)
}

/** Expires the network user id cookie (empty value, date in the past), as anonymous requests do. */
export function expiredCookies(config: CookieConfig, origin: string | undefined): string[] {
  return cookiePair(config, '', 0, origin)
}

function cookiePair(config: CookieConfig, value: string, expiresMs: number, origin: string | undefined): string[] {
  const base = { value, expiresMs, domain: cookieDomain(config, origin), path: config.path, secure: config.secure, sameSite: config.sameSite }
  const out = [renderSetCookie({ ...base, name: config.name, httpOnly: config.httpOnly })]
  if (config.clientCookieName) out.push(renderSetCookie({ ...base, name: config.clientCookieName, httpOnly: false }))
  return out
}
