/**
 * An ordered JSON tree for the webhook adapters: objects are `Map`s (member
 * order as sent, integer-like names included), numbers keep the text they
 * were written with (no rounding of large or precise values), so an adapter
 * can rearrange a vendor's document and write it back faithfully.
 */
import { parseJson, quote } from '../json'

/** A JSON number as written. */
export class JNum {
  constructor(readonly text: string) {}
}

export type JObj = Map<string, J>
export type J = null | boolean | string | JNum | J[] | JObj

export type TreeParse = { ok: true; value: J } | { ok: false; error: string }

/** Parses `text` (errors and depth limit as `parseJson` reports them: `invalid json: …`). */
export function parseTree(text: string, maxDepth: number): TreeParse {
  const checked = parseJson(text, maxDepth)
  if (!checked.ok) return checked
  const r = new Reader(text)
  return { ok: true, value: r.value() }
}

/** Reads text already known to be valid JSON. */
class Reader {
  private i = 0
  constructor(private readonly s: string) {}

  private ws(): void {
    const s = this.s
    for (;;) {
      const c = s.charCodeAt(this.i)
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++
      else return
    }
  }

  value(): J {
    this.ws()
    const s = this.s
    const c = s[this.i]
    if (c === '{') {
      this.i++
      const m: JObj = new Map()
      this.ws()
      if (s[this.i] === '}') {
        this.i++
        return m
      }
      for (;;) {
        this.ws()
        const k = this.string()
        this.ws()
        this.i++ // ':'
        const v = this.value()
        m.set(k, v)
        this.ws()
        if (s[this.i++] === '}') return m
      }
    }
    if (c === '[') {
      this.i++
      const a: J[] = []
      this.ws()
      if (s[this.i] === ']') {
        this.i++
        return a
      }
      for (;;) {
        a.push(this.value())
        this.ws()
        if (s[this.i++] === ']') return a
      }
    }
    if (c === '"') return this.string()
    if (s.startsWith('true', this.i)) {
      this.i += 4
      return true
    }
    if (s.startsWith('false', this.i)) {
      this.i += 5
      return false
    }
    if (s.startsWith('null', this.i)) {
      this.i += 4
      return null
    }
    const start = this.i
    while (this.i < s.length && /[-+0-9.eE]/.test(s[this.i]!)) this.i++
    return new JNum(s.slice(start, this.i))
  }

  private string(): string {
    const s = this.s
    const start = this.i
    let j = start + 1
    let escaped = false
    for (;;) {
      const c = s.charCodeAt(j)
      if (c === 92) {
        escaped = true
        j += 2
      } else if (c === 34) break
      else j++
    }
    this.i = j + 1
    return escaped ? (JSON.parse(s.slice(start, j + 1)) as string) : s.slice(start + 1, j)
  }
}

/** Compact JSON text of a tree. */
export function jsonText(v: J): string {
  if (v === null) return 'null'
  if (v === true) return 'true'
  if (v === false) return 'false'
  if (typeof v === 'string') return quote(v)
  if (v instanceof JNum) return v.text
  if (Array.isArray(v)) return '[' + v.map(jsonText).join(',') + ']'
  let out = '{'
  let first = true
  for (const [k, x] of v) {
    out += (first ? '' : ',') + quote(k) + ':' + jsonText(x)
    first = false
  }
  return out + '}'
}

export const isObj = (v: J | undefined): v is JObj => v instanceof Map
export const isNum = (v: J | undefined): v is JNum => v instanceof JNum

/** An object from entries (later names overwrite earlier ones). */
export function obj(entries: Iterable<readonly [string, J]>): JObj {
  return new Map(entries)
}

/** `v` at `path` (object members), or undefined. */
export function at(v: J | undefined, ...path: string[]): J | undefined {
  let cur = v
  for (const k of path) {
    if (!isObj(cur)) return undefined
    cur = cur.get(k)
  }
  return cur
}

/** The string at `path`, or undefined when absent or not a string. */
export function str(v: J | undefined, ...path: string[]): string | undefined {
  const x = at(v, ...path)
  return typeof x === 'string' ? x : undefined
}

/**
 * A number's integral value when it is a whole number (circe's `as[Long]`:
 * `12`, `12.0`, `1.2e1`), else undefined.
 */
export function wholeNumber(n: JNum, min = -(2n ** 63n), max = 2n ** 63n - 1n): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/.exec(n.text)
  if (!m) return undefined
  let digits = m[2]! + (m[3] ?? '')
  let exp = Number(m[4] ?? '0') - (m[3]?.length ?? 0)
  if (Math.abs(exp) > 40) {
    // far beyond a Long unless the digits are all zero
    if (/^0+$/.test(digits)) return 0n
    if (exp > 0) return undefined
  }
  while (exp < 0) {
    if (!digits.endsWith('0')) {
      if (digits.length === 0 || /^0*$/.test(digits)) break
      return undefined
    }
    digits = digits.slice(0, -1)
    exp++
  }
  let b = digits.length === 0 ? 0n : BigInt(digits)
  if (exp > 0) b *= 10n ** BigInt(exp)
  if (m[1] === '-') b = -b
  return b >= min && b <= max ? b : undefined
}

/** `n` as a JS number when it is a whole number within Int range (circe's `as[Int]`). */
export function asInt(v: J | undefined): number | undefined {
  if (!isNum(v)) return undefined
  const b = wholeNumber(v, -(2n ** 31n), 2n ** 31n - 1n)
  return b === undefined ? undefined : Number(b)
}

/** `(_|-)x` → `X` in a name (Snowplow's camelCase for vendor field names). */
export function camelCase(name: string): string {
  if (name.length === 0) return name
  const lowered = name[0]!.toLowerCase() + name.slice(1)
  return lowered.replace(/[_-]([A-Za-z0-9_])/g, (_m, c: string) => c.toUpperCase())
}

/** Every object member name in `v`, recursively, in camelCase. */
export function camelize(v: J): J {
  if (isObj(v)) {
    const m: JObj = new Map()
    for (const [k, x] of v) m.set(camelCase(k), camelize(x))
    return m
  }
  if (Array.isArray(v)) return v.map(camelize)
  return v
}

/**
 * `b` merged into `a` (circe's deepMerge): members of both that are objects
 * are merged, otherwise `b`'s value replaces `a`'s in place; new members come last.
 */
export function deepMerge(a: JObj, b: JObj): JObj {
  const out: JObj = new Map(a)
  for (const [k, v] of b) {
    const old = out.get(k)
    out.set(k, isObj(old) && isObj(v) ? deepMerge(old, v) : v)
  }
  return out
}
