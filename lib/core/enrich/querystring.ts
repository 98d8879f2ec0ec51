/**
 * Query strings as enrich reads them: first checked as the query of a strict
 * URI (`http://localhost/?<qs>`), then split on `&` into `name=value` pairs,
 * percent-decoded with `+` as space. A name without `=` has a null value.
 */

export type NameValue = readonly [name: string, value: string | null]

export type QueryParse = { ok: true; pairs: NameValue[] } | { ok: false; error: string }

/** Characters a strict URI query may hold as is (besides `%XX` escapes and non-ASCII). */
const ALLOWED = new Uint8Array(128)
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?") ALLOWED[c.charCodeAt(0)] = 1

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)

/**
 * Where a strict URI parser would reject the query string: `undefined` when
 * it is acceptable, else the message (`Illegal character in query at index N: …`).
 * Returns the part before a `#` (a fragment is not part of the query).
 */
export function checkQuery(qs: string): { ok: true; query: string } | { ok: false; error: string } {
  const prefix = 'http://localhost/?'
  let inFragment = false
  let queryEnd = qs.length
  for (let i = 0; i < qs.length; i++) {
    const c = qs.charCodeAt(i)
    if (c === 37) {
      if (!(i + 2 < qs.length && isHex(qs.charCodeAt(i + 1)) && isHex(qs.charCodeAt(i + 2)))) {
        return { ok: false, error: `Malformed escape pair at index ${prefix.length + i}: ${prefix}${qs}` }
      }
      i += 2
      continue
    }
    if (c === 35 && !inFragment) {
      inFragment = true
      queryEnd = i
      continue
    }
    if (c < 128 ? ALLOWED[c] === 1 : !(c === 0x2028 || c === 0x2029 || c === 0x85 || c === 0xa0 || (c >= 0x80 && c <= 0x9f) || isSpaceChar(c))) continue
    return { ok: false, error: `Illegal character in ${inFragment ? 'fragment' : 'query'} at index ${prefix.length + i}: ${prefix}${qs}` }
  }
  return { ok: true, query: qs.slice(0, queryEnd) }
}

function isSpaceChar(c: number): boolean {
  return c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000
}

/** Percent-decoding with `+` as space (UTF-8); a `%` without two hex digits stays as is. */
export function formDecode(s: string): string {
  if (s.indexOf('%') < 0 && s.indexOf('+') < 0) return s
  const plus = s.indexOf('+') >= 0 ? s.replace(/\+/g, ' ') : s
  if (plus.indexOf('%') < 0) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    // decode the valid escapes byte-wise; invalid UTF-8 becomes U+FFFD
    const bytes: number[] = []
    for (let i = 0; i < plus.length; i++) {
      const c = plus.charCodeAt(i)
      if (c === 37 && i + 2 < plus.length && isHex(plus.charCodeAt(i + 1)) && isHex(plus.charCodeAt(i + 2))) {
        bytes.push(parseInt(plus.slice(i + 1, i + 3), 16))
        i += 2
      } else {
        for (const b of Buffer.from(plus[i]!, 'utf8')) bytes.push(b)
      }
    }
    return Buffer.from(bytes).toString('utf8')
  }
}

/** Splits an already checked query into decoded pairs (empty names skipped). */
export function splitQuery(query: string): NameValue[] {
  const out: NameValue[] = []
  if (query.length === 0) return out
  for (const part of query.split('&')) {
    if (part.length === 0) continue
    const eq = part.indexOf('=')
    const name = formDecode(eq < 0 ? part : part.slice(0, eq))
    if (name.length === 0) continue
    out.push([name, eq < 0 ? null : formDecode(part.slice(eq + 1))])
  }
  return out
}

/** Checks and splits a raw query string. */
export function parseQuery(qs: string, encoding = 'UTF-8'): QueryParse {
  const c = checkQuery(qs)
  if (!c.ok) return { ok: false, error: `could not extract name-value pairs from querystring with encoding ${encoding}: ${c.error}` }
  return { ok: true, pairs: splitQuery(c.query) }
}

/** Pairs → map; later names overwrite earlier ones. */
export function toParamMap(pairs: readonly NameValue[]): Map<string, string | null> {
  const m = new Map<string, string | null>()
  for (const [k, v] of pairs) {
    if (m.has(k)) m.delete(k)
    m.set(k, v)
  }
  return m
}
