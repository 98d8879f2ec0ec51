/**
 * Page and referrer URLs: parsed like a strict URI after spaces become `%20`;
 * when that fails, the URL is split leniently, each part percent-decoded and
 * encoded again the way Snowplow's lenient fallback (scala-uri, every
 * reserved character encoded except `+`) does, and parsing is tried again.
 */
export interface ParsedUri {
  /** The URI's string form (what `page_url` becomes). */
  readonly text: string
  readonly scheme: string | null
  readonly host: string | null
  readonly port: number | null
  readonly path: string | null
  readonly query: string | null
  readonly fragment: string | null
}

export type UriParse = { ok: true; uri: ParsedUri } | { ok: false; error: string }

const URI_RE = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s
const ALLOWED = new Uint8Array(128)
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?#[]%") ALLOWED[c.charCodeAt(0)] = 1
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)

/** Index of the first character a strict URI parser would refuse, or -1. */
function firstIllegal(s: string): number {
  let hashes = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 37) {
      if (!(isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2)))) return i
      i += 2
      continue
    }
    if (c === 35 && ++hashes > 1) return i
    if (c < 128) {
      if (ALLOWED[c] !== 1) return i
    } else if (c <= 0xa0 || c === 0x2028 || c === 0x2029) return i
  }
  return -1
}

/** Percent-encodes every character a strict parser refuses (the lenient fallback). */
function encodeIllegal(s: string): string {
  let out = ''
  let hashes = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const ch = s[i]!
    if (c === 37 && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2))) {
      out += s.slice(i, i + 3)
      i += 2
    } else if (c === 35 && ++hashes === 1) out += ch
    else if (c < 128 && ALLOWED[c] === 1 && c !== 37 && c !== 35) out += ch
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += encodeURIComponent(s.slice(i, i + 2))
      i++
    } else {
      try {
        out += encodeURIComponent(ch)
      } catch {
        out += '%EF%BF%BD'
      }
    }
  }
  return out
}

/** Characters the lenient encoder leaves as they are (every other byte becomes `%XX`). */
const LENIENT_KEEP = new Uint8Array(128)
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+') LENIENT_KEEP[c.charCodeAt(0)] = 1

/** A two-character hex byte as Java's `Integer.parseInt(s, 16)` reads it (a sign allowed), or -1. */
function hexByte(s: string): number {
  if (s.length !== 2 || !/^[+-]?[0-9a-fA-F]+$/.test(s)) return -1
  return Number.parseInt(s, 16) & 0xff
}

/**
 * Percent-decodes one part, leniently: a `%` not followed by a hex byte stays;
 * each UTF-16 unit is encoded alone (so a surrogate half becomes `?`); the
 * bytes are read back as UTF-8 with replacement characters.
 */
function lenientDecode(s: string): string {
  if (s.indexOf('%') < 0 && !/[\ud800-\udfff]/.test(s)) return s
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 37) {
      const b = hexByte(s.slice(i + 1, i + 3))
      if (b >= 0) {
        bytes.push(b)
        i += 2
      } else bytes.push(37)
    } else if (c >= 0xd800 && c <= 0xdfff) bytes.push(63)
    else for (const b of Buffer.from(s[i]!, 'utf8')) bytes.push(b)
  }
  return Buffer.from(bytes).toString('utf8')
}

function lenientEncode(s: string): string {
  let out = ''
  for (const b of Buffer.from(s, 'utf8')) out += b < 128 && LENIENT_KEEP[b] === 1 ? String.fromCharCode(b) : `%${b < 16 ? '0' : ''}${b.toString(16).toUpperCase()}`
  return out
}

const recode = (part: string): string => lenientEncode(lenientDecode(part))

/**
 * An absolute URL with an authority, as the lenient parser reads and writes
 * it back: path segments, query keys and values and the fragment decoded and
 * encoded again; the host and port as they were. Undefined for other shapes.
 */
function lenientRewrite(text: string): string | undefined {
  const [scheme, authority, path, query, fragment] = splitUri(text)
  if (scheme === undefined || authority === undefined) return undefined
  let auth = authority
  const at = authority.lastIndexOf('@')
  if (at >= 0) {
    const info = authority.slice(0, at)
    if (/[/?[\]@]/.test(info)) return undefined
    const colon = info.indexOf(':')
    auth = (colon < 0 ? recode(info) : `${recode(info.slice(0, colon))}:${recode(info.slice(colon + 1))}`) + '@' + authority.slice(at + 1)
  }
  const hostPort = authority.slice(at + 1)
  if (firstIllegal(hostPort) >= 0 || (!hostPort.startsWith('[') && !/^[^:]*(?::[0-9]{1,10})?$/.test(hostPort))) return undefined
  let out = `${scheme}://${auth}`
  if (path !== '') out += path.split('/').map(recode).join('/')
  if (query !== undefined) out += '?' + query.split('&').map((p) => {
    const eq = p.indexOf('=')
    return eq < 0 ? recode(p) : `${recode(p.slice(0, eq))}=${recode(p.slice(eq + 1))}`
  }).join('&')
  if (fragment !== undefined) out += '#' + recode(fragment)
  return out
}

/**
 * `URI_RE.exec(text)` without the regular expression: [scheme, authority, path,
 * query, fragment] (undefined when absent). The expression always matches, and
 * each optional part is taken whenever it can be, so a left-to-right split is exact.
 */
function splitUri(text: string): [string | undefined, string | undefined, string, string | undefined, string | undefined] {
  const n = text.length
  let pos = 0
  let scheme: string | undefined
  const c0 = text.charCodeAt(0)
  if ((c0 >= 65 && c0 <= 90) || (c0 >= 97 && c0 <= 122)) {
    let i = 1
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 46 || c === 45)) break
    }
    if (i < n && text.charCodeAt(i) === 58) {
      scheme = text.slice(0, i)
      pos = i + 1
    }
  }
  let authority: string | undefined
  if (text.charCodeAt(pos) === 47 && text.charCodeAt(pos + 1) === 47) {
    let i = pos + 2
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c === 47 || c === 63 || c === 35) break
    }
    authority = text.slice(pos + 2, i)
    pos = i
  }
  let i = pos
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 63 || c === 35) break
  }
  const path = text.slice(pos, i)
  let query: string | undefined
  if (i < n && text.charCodeAt(i) === 63) {
    const hash = text.indexOf('#', i + 1)
    const qEnd = hash < 0 ? n : hash
    query = text.slice(i + 1, qEnd)
    i = qEnd
  }
  const fragment = i < n ? text.slice(i + 1) : undefined
  return [scheme, authority, path, query, fragment]
}

function build(text: string): UriParse {
  const m = splitUri(text)
  const scheme = m[0] ?? null
  const authority = m[1]
  let host: string | null = null
  let port: number | null = null
  if (authority !== undefined) {
    const at = authority.lastIndexOf('@')
    const hp = at >= 0 ? authority.slice(at + 1) : authority
    let portText: string | undefined
    if (hp.startsWith('[')) {
      const close = hp.indexOf(']')
      if (close < 0) return { ok: false, error: `Expected closing bracket for IPv6 address: ${text}` }
      host = hp.slice(0, close + 1)
      const rest = hp.slice(close + 1)
      if (rest.startsWith(':')) portText = rest.slice(1)
      else if (rest !== '') return { ok: false, error: `Illegal character in authority: ${text}` }
    } else {
      const colon = hp.lastIndexOf(':')
      host = colon >= 0 ? hp.slice(0, colon) : hp
      if (colon >= 0) portText = hp.slice(colon + 1)
    }
    if (portText !== undefined && portText !== '') {
      if (!/^[0-9]{1,9}$/.test(portText)) return { ok: false, error: `Illegal character in port number: ${text}` }
      port = Number(portText)
    }
    if (host === '') host = null
  }
  return {
    ok: true,
    uri: { text, scheme, host, port, path: m[2], query: m[3] ?? null, fragment: m[4] ?? null },
  }
}

const AUTHORITY_PREFIX = /^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^/?#]*/

/** Index of a `[` or `]` after the authority (a strict parser allows them only around an IPv6 host), or -1. */
function bracketOutsideHost(s: string): number {
  const from = AUTHORITY_PREFIX.exec(s)?.[0].length ?? 0
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 91 || c === 93) return i
  }
  return -1
}

/** Parses a URL as enrich does; the error names both attempts. */
export function parseUri(raw: string): UriParse {
  const spaced = raw.indexOf(' ') < 0 ? raw : raw.replace(/ /g, '%20')
  let bad = firstIllegal(spaced)
  if (bad < 0) bad = bracketOutsideHost(spaced)
  if (bad < 0) {
    const r = build(spaced)
    if (r.ok) return r
  }
  const strictError = bad >= 0 ? `Illegal character at index ${bad}: ${spaced}` : `Illegal URI: ${spaced}`
  const lenient = build(lenientRewrite(raw) ?? encodeIllegal(spaced))
  if (lenient.ok) return lenient
  return {
    ok: false,
    error: `Provided URI [${raw}] could not be parsed, neither by Java parsing (error: [${strictError}]) nor by Scala parsing (error: [${lenient.error}]).`,
  }
}

/**
 * The `*_url*` columns of a parsed URI: scheme, host, port (default 443 / 80), path, query, fragment.
 * A parsed URI holds no control character (the strict parse refuses them and
 * the lenient one percent-encodes them), so its parts are TSV-safe as they are; empty parts are null.
 */
export function uriParts(u: ParsedUri): [string | null, string | null, number, string | null, string | null, string | null] {
  const port = u.port ?? (u.scheme === 'https' ? 443 : 80)
  return [nonEmpty(u.scheme), nonEmpty(u.host), port, nonEmpty(u.path), nonEmpty(u.query), nonEmpty(u.fragment)]
}

/** A part of a parsed URI as a column: empty → null. */
export function nonEmpty(s: string | null): string | null {
  return s === '' ? null : s
}
