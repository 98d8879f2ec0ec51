/**
 * JSON as enrich needs it: parsing with a nesting-depth guard, and compact
 * re-serialisation that keeps every number exactly as written and object keys
 * in document order (no float rounding, no reordering of integer-like keys),
 * with strings re-escaped minimally (`"`, `\` and control characters) and
 * non-ASCII characters written raw.
 */

/** A parsed document: the value (for validation) and its source text (for output). */
export interface JsonDoc {
  readonly value: unknown
  readonly text: string
}

export type JsonParse = { ok: true; doc: JsonDoc } | { ok: false; error: string }

/**
 * The deepest nesting level a value of `text` sits at (top-level value = 0),
 * counted up to `limit`. Strings are skipped; invalid JSON is counted as far as
 * it goes (the parser reports it).
 */
export function jsonDepth(text: string, limit: number): number {
  let open = 0
  let max = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // skip a string
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 92) i++
        else if (d === 34) break
      }
    } else if (c === 91 || c === 123) {
      // a container at level `open`; its children sit at open + 1
      open++
      if (open > max) {
        // only counts when a child actually follows
        let j = i + 1
        while (j < n && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 10 || text.charCodeAt(j) === 13 || text.charCodeAt(j) === 9)) j++
        const next = text.charCodeAt(j)
        if (!(next === 93 || next === 125)) max = open
        if (max >= limit) return max
      }
    } else if (c === 93 || c === 125) {
      if (open > 0) open--
    }
  }
  return max
}

/** Whether a parsed value has a value at nesting level ≥ `limit` (the value itself is at `level`). */
function tooDeep(v: unknown, level: number, limit: number): boolean {
  if (v === null || typeof v !== 'object') return false
  if (Array.isArray(v)) {
    if (v.length > 0 && level + 1 >= limit) return true
    for (let i = 0; i < v.length; i++) if (tooDeep(v[i], level + 1, limit)) return true
    return false
  }
  let any = false
  for (const k in v as Record<string, unknown>) {
    any = true
    if (tooDeep((v as Record<string, unknown>)[k], level + 1, limit)) return true
  }
  return any && level + 1 >= limit
}

/**
 * Whether `text` has fewer than `limit` opening brackets (in strings or not):
 * then no value can sit at nesting level `limit`, which takes that many nested containers.
 */
function fewerBrackets(text: string, limit: number): boolean {
  let n = 0
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++n >= limit) return false
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++n >= limit) return false
  return true
}

/** Parses `text`; rejects documents with a value at nesting level ≥ `maxDepth`. */
export function parseJson(text: string, maxDepth = 50): JsonParse {
  // Pathologically deep input is refused before the parser sees it.
  if (text.length > 100_000 && jsonDepth(text, maxDepth) >= maxDepth) return { ok: false, error: 'invalid json: maximum allowed JSON depth exceeded' }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { ok: false, error: `invalid json: ${parseErrorMessage(text, (err as Error).message)}` }
  }
  if (fewerBrackets(text, maxDepth) === false && tooDeep(value, 0, maxDepth)) return { ok: false, error: 'invalid json: maximum allowed JSON depth exceeded' }
  return { ok: true, doc: { value, text } }
}

/** Signals the parser ran past the end of the input. */
const EXHAUSTED = Symbol('exhausted input')
class ParseError {
  constructor(readonly message: string) {}
}
const HEX_VALUE = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1)

/**
 * Why `text` is not JSON, in the words of the parser Snowplow's bad rows
 * quote (jawn, through circe), so that bad rows grouped by message group the
 * same way: `expected json value got 'xyz...' (line 1, column 3)`,
 * `exhausted input`, `control char (10) in string`, … Called only for text
 * that `JSON.parse` refused (`otherwise` if that parser would accept it);
 * walks it once, without recursion.
 */
export function parseErrorMessage(text: string, otherwise = 'invalid input'): string {
  const n = text.length
  let line = 0
  let lineStart = 0
  const at = (i: number): number => {
    if (i >= n) throw EXHAUSTED
    return text.charCodeAt(i)
  }
  const die = (i: number, msg: string, chars = 6): never => {
    let got = 'eof'
    if (i < n) {
      const end = Math.min(n, i + chars)
      got = end >= n ? `'${text.slice(i, end)}'` : `'${text.slice(i, end)}...'`
    }
    throw new ParseError(`${msg} got ${got} (line ${line + 1}, column ${i - lineStart + 1})`)
  }
  const literal = (i: number, word: string): number => {
    for (let k = 1; k < word.length; k++) if (at(i + k) !== word.charCodeAt(k)) die(i, `expected ${word}`)
    return i + word.length
  }
  /** End of the string starting at `i` (a quote). */
  const string = (i: number): number => {
    let j = i + 1
    for (let c = at(j); c !== 34; c = at(j)) {
      if (c < 32) die(j, `control char (${c}) in string`, 1)
      if (c !== 92) {
        j++
        continue
      }
      const e = at(j + 1)
      if (e === 117) {
        const h = j + 2
        if (h + 4 > n) throw EXHAUSTED
        for (let k = 0; k < 4; k++) {
          const d = text.charCodeAt(h + k)
          if (d >= 128) throw EXHAUSTED // the parser's hex table has 128 entries
          if (HEX_VALUE(d) < 0) die(h, 'expected valid unicode escape')
        }
        j += 6
      } else if (e === 98 || e === 102 || e === 110 || e === 114 || e === 116 || e === 34 || e === 47 || e === 92) j += 2
      else die(j, `illegal escape sequence (\\${String.fromCharCode(e)})`, 1)
    }
    return j + 1
  }
  /** End of the number at `i`; `top`: the value may end at the end of the input. */
  const number = (i: number, top: boolean): number => {
    let j = i
    let c = at(j)
    const next = (): boolean => {
      j++
      if (top && j >= n) return false
      c = at(j)
      return true
    }
    const digits = (): boolean => {
      while (c >= 48 && c <= 57) if (!next()) return false
      return true
    }
    if (c === 45) c = at(++j)
    if (c === 48) {
      if (!next()) return j
    } else if (c >= 49 && c <= 57) {
      if (!next() || !digits()) return j
    } else die(i, 'expected digit')
    if (c === 46) {
      c = at(++j)
      if (!(c >= 48 && c <= 57)) die(i, 'expected digit')
      if (!next() || !digits()) return j
    }
    if (c === 101 || c === 69) {
      c = at(++j)
      if (c === 43 || c === 45) c = at(++j)
      if (!(c >= 48 && c <= 57)) die(i, 'expected digit')
      if (!next() || !digits()) return j
    }
    return j
  }
  const scalar = (i: number, c: number, top: boolean): number => {
    if (c === 34) return string(i)
    if (c === 45 || (c >= 48 && c <= 57)) return number(i, top)
    if (c === 116) return literal(i, 'true')
    if (c === 102) return literal(i, 'false')
    if (c === 110) return literal(i, 'null')
    return die(i, 'expected json value')
  }
  const isWs = (c: number, i: number): boolean => {
    if (c === 10) {
      line++
      lineStart = i + 1
      return true
    }
    return c === 32 || c === 9 || c === 13
  }
  try {
    let i = 0
    for (let c = at(i); isWs(c, i); c = at(i)) i++
    const first = at(i)
    if (first === 91 || first === 123) {
      // the containers open: true for an object
      const stack: boolean[] = [first === 123]
      let state: 'begin' | 'data' | 'key' | 'sep' | 'end' = 'begin'
      i++
      while (stack.length > 0) {
        const c = at(i)
        if (isWs(c, i)) {
          i++
          continue
        }
        const obj = stack[stack.length - 1]!
        if (state === 'data') {
          if (c === 91 || c === 123) {
            stack.push(c === 123)
            state = 'begin'
            i++
          } else {
            i = scalar(i, c, false)
            state = 'end'
          }
        } else if ((state === 'begin' || state === 'end') && c === (obj ? 125 : 93)) {
          stack.pop()
          state = 'end'
          i++
        } else if (state === 'key' || (state === 'begin' && obj)) {
          if (c !== 34) die(i, 'expected "')
          i = string(i)
          state = 'sep'
        } else if (state === 'sep') {
          if (c !== 58) die(i, 'expected :')
          state = 'data'
          i++
        } else if (state === 'end') {
          if (c !== 44) die(i, obj ? 'expected } or ,' : 'expected ] or ,')
          state = obj ? 'key' : 'data'
          i++
        } else state = 'data' // an array's first value
      }
    } else i = scalar(i, first, true)
    for (; i < n; i++) if (!isWs(text.charCodeAt(i), i)) die(i, 'expected whitespace or eof')
    return otherwise
  } catch (e) {
    if (e === EXHAUSTED) return 'exhausted input'
    if (e instanceof ParseError) return e.message
    throw e
  }
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}

/** End (exclusive) of the JSON string literal starting at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  // the first `"` after i preceded by an even number of backslashes
  let from = i + 1
  for (;;) {
    const q = text.indexOf('"', from)
    if (q < 0) return text.length
    let b = q - 1
    while (b > i && text.charCodeAt(b) === 92) b--
    if ((q - 1 - b) % 2 === 0) return q + 1
    from = q + 1
  }
}

/**
 * Set by `valueSpan` when it steps over whitespace inside a container (outside
 * strings: in valid JSON nothing else at or below U+0020 can be there).
 */
let spaced = false

/** Span [start, end) of the value starting at or after `i` (whitespace skipped). */
export function valueSpan(text: string, i: number): [number, number] {
  const n = text.length
  while (i < n && isWs(text.charCodeAt(i))) i++
  return [i, valueEnd(text, i)]
}

/** End (exclusive) of the value starting exactly at `start`. */
function valueEnd(text: string, start: number): number {
  const n = text.length
  let i = start
  const c = text.charCodeAt(i)
  if (c === 34) return stringEnd(text, i)
  if (c === 123 || c === 91) {
    let depth = 0
    for (; i < n; i++) {
      const d = text.charCodeAt(i)
      if (d === 34) i = stringEnd(text, i) - 1
      else if (d === 123 || d === 91) depth++
      else if (d === 125 || d === 93) {
        depth--
        if (depth === 0) return i + 1
      } else if (d <= 32) spaced = true
    }
    return n
  }
  while (i < n) {
    const d = text.charCodeAt(i)
    if (d === 44 || d === 125 || d === 93 || isWs(d)) break
    i++
  }
  return i
}

/** The spans of an object's members (keys decoded), in document order. Assumes valid JSON. */
export function objectMembers(text: string, span: [number, number]): [string, [number, number]][] {
  const out: [string, [number, number]][] = []
  let i = span[0] + 1
  const end = span[1] - 1
  for (;;) {
    while (i < end && (isWs(text.charCodeAt(i)) || text.charCodeAt(i) === 44)) i++
    if (i >= end || text.charCodeAt(i) !== 34) return out
    const kEnd = stringEnd(text, i)
    const key = JSON.parse(text.slice(i, kEnd)) as string
    i = kEnd
    while (i < end && (isWs(text.charCodeAt(i)) || text.charCodeAt(i) === 58)) i++
    const v = valueSpan(text, i)
    out.push([key, v])
    i = v[1]
  }
}

/** The spans of an array's elements. Assumes valid JSON. */
export function arrayElements(text: string, span: [number, number]): [number, number][] {
  const out: [number, number][] = []
  let i = span[0] + 1
  const end = span[1] - 1
  for (;;) {
    while (i < end && (isWs(text.charCodeAt(i)) || text.charCodeAt(i) === 44)) i++
    if (i >= end) return out
    const v = valueSpan(text, i)
    out.push(v)
    i = v[1]
  }
}

/** Where a self-describing value sits in a text. */
export interface SdjSpans {
  /** The whole value. */
  readonly span: [number, number]
  /** Its `data` member (the last one when repeated); undefined when absent or when the value is no object. */
  readonly data: [number, number] | undefined
  /** The data text is compact already (no whitespace outside strings, no escape): `compactJson` would return it unchanged. */
  readonly compact: boolean
}

/** A `contexts` or `unstruct_event` wrapper, from one walk over its text: its `data` member and the entities in it. */
export interface WrapperSpans {
  readonly data: [number, number] | undefined
  /** When `data` is an array: its elements. */
  readonly elements: SdjSpans[] | undefined
  /** When `data` is an object: that entity. */
  readonly inner: SdjSpans | undefined
}

/** The layout of the wrapper object at `span`, from one walk. Assumes valid JSON. */
export function wrapperSpans(text: string, span: [number, number]): WrapperSpans {
  let data: [number, number] | undefined
  let elements: SdjSpans[] | undefined
  let inner: SdjSpans | undefined
  let i = span[0] + 1
  const limit = span[1] - 1
  for (;;) {
    i = skipSeparators(text, i, limit, 44)
    if (i >= limit || text.charCodeAt(i) !== 34) return { data, elements, inner }
    const kEnd = stringEnd(text, i)
    const same = keyIs(text, i, kEnd, 'data')
    i = skipSeparators(text, kEnd, limit, 58)
    if (!same) {
      i = valueEnd(text, i)
      continue
    }
    const c = text.charCodeAt(i)
    if (c === 91) {
      const a = arrayOfSdj(text, i, limit)
      elements = a.elements
      inner = undefined
      data = [i, a.end]
    } else if (c === 123) {
      inner = sdjAt(text, i, limit)
      elements = undefined
      data = inner.span
    } else {
      elements = undefined
      inner = undefined
      data = valueSpan(text, i)
    }
    i = data[1]
  }
}

/** The spans of the self-describing value at `span` (its `data` member found in one walk). Assumes valid JSON. */
export function sdjSpans(text: string, span: [number, number]): SdjSpans {
  if (text.charCodeAt(span[0]) !== 123) return { span, data: undefined, compact: false }
  return sdjAt(text, span[0], span[1] - 1)
}

/** The self-describing object starting at `start` (its `{`), not reaching past `limit`. */
function sdjAt(text: string, start: number, limit: number): SdjSpans {
  let data: [number, number] | undefined
  let spacedData = false
  let i = start + 1
  for (;;) {
    i = skipSeparators(text, i, limit, 44)
    if (i >= limit || text.charCodeAt(i) !== 34) break
    const kEnd = stringEnd(text, i)
    const same = keyIs(text, i, kEnd, 'data')
    i = skipSeparators(text, kEnd, limit, 58)
    spaced = false
    const end = valueEnd(text, i)
    if (same) {
      data = [i, end]
      spacedData = spaced
    }
    i = end
  }
  // i is at the closing brace
  const compact = data !== undefined && !spacedData && !hasBackslash(text, data[0], data[1])
  return { span: [start, i + 1], data, compact }
}

/** The elements of the array starting at `start` (its `[`) and where it ends (exclusive). */
function arrayOfSdj(text: string, start: number, limit: number): { elements: SdjSpans[]; end: number } {
  const elements: SdjSpans[] = []
  let i = start + 1
  for (;;) {
    i = skipSeparators(text, i, limit, 44)
    const c = text.charCodeAt(i)
    if (i >= limit || c === 93) return { elements, end: i + 1 }
    if (c === 123) {
      const e = sdjAt(text, i, limit)
      elements.push(e)
      i = e.span[1]
    } else {
      const v = valueSpan(text, i)
      elements.push({ span: v, data: undefined, compact: false })
      i = v[1]
    }
  }
}

/** The first position from `i` that is neither whitespace nor the separator `sep` (`,` or `:`). */
function skipSeparators(text: string, i: number, limit: number, sep: number): number {
  while (i < limit) {
    const c = text.charCodeAt(i)
    if (c === sep || isWs(c)) i++
    else break
  }
  return i
}

function hasBackslash(text: string, start: number, end: number): boolean {
  const k = text.indexOf('\\', start)
  return k >= 0 && k < end
}

/** The span of member `key` of the object at `span` (the last one when repeated), if any. Assumes valid JSON. */
export function memberSpan(text: string, span: [number, number], key: string): [number, number] | undefined {
  let found: [number, number] | undefined
  let i = span[0] + 1
  const limit = span[1] - 1
  for (;;) {
    i = skipSeparators(text, i, limit, 44)
    if (i >= limit || text.charCodeAt(i) !== 34) return found
    const kEnd = stringEnd(text, i)
    const same = keyIs(text, i, kEnd, key)
    i = skipSeparators(text, kEnd, limit, 58)
    const v = valueSpan(text, i)
    if (same) found = v
    i = v[1]
  }
}

/** Whether the JSON string literal `text[start, end)` decodes to `key`. */
function keyIs(text: string, start: number, end: number, key: string): boolean {
  const n = end - start - 2
  let plain = true
  for (let j = start + 1; j < end - 1; j++) {
    if (text.charCodeAt(j) === 92) {
      plain = false
      break
    }
  }
  if (plain) return n === key.length && text.startsWith(key, start + 1)
  return (JSON.parse(text.slice(start, end)) as string) === key
}

/**
 * Compact text of the (valid) JSON in `text[start, end)`: whitespace outside
 * strings removed, numbers as written, strings with escapes normalised.
 * With repeated keys the text keeps each occurrence, as the source did.
 */
export function compactJson(text: string, start = 0, end = text.length): string {
  let out = ''
  let runStart = start
  // position of the next backslash at or after the current string (-1: none left)
  let backslash = text.indexOf('\\', start)
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      const e = stringEnd(text, i)
      // a string without escapes is copied as is
      if (backslash >= 0 && backslash <= i) backslash = text.indexOf('\\', i + 1)
      const escaped = backslash >= 0 && backslash < e - 1
      if (escaped) {
        out += text.slice(runStart, i) + quote(JSON.parse(text.slice(i, e)) as string)
        runStart = e
      }
      i = e - 1
    } else if (isWs(c)) {
      out += text.slice(runStart, i)
      runStart = i + 1
    }
  }
  return out + text.slice(runStart, end)
}

/**
 * `s` as one flat string. Text built by concatenation is a tree of pieces
 * (each holding on to what it was cut from) until something reads it; outputs
 * are kept for a while (batches, retries), so they are flattened once
 * (reading a character makes V8 flatten the tree in place).
 */
export function flat(s: string): string {
  s.charCodeAt(0)
  return s
}

/** Whether `quote` would escape anything in `s` (then it is not simply wrapped in quotes). */
export function needsEscape(s: string): boolean {
  return NEEDS_ESCAPE.test(s)
}

/** A JSON string literal with only `"`, `\` and control characters escaped. */
export function quote(s: string): string {
  // `"`, `\\`, control characters and surrogates (lone ones are escaped) go through JSON.stringify
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : '"' + s + '"'
}

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * Serialises a plain JS value compactly (for JSON the enricher builds itself:
 * bad rows, failure entities, redirect contexts). `Raw` values are inserted verbatim.
 */
export class Raw {
  constructor(readonly json: string) {}
  toJSON(): unknown {
    return this
  }
}

export function stringify(v: unknown): string {
  if (v instanceof Raw) return v.json
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'string') return quote(v)
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (Array.isArray(v)) {
    let s = '['
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + stringify(v[i])
    return s + ']'
  }
  let s = '{'
  let first = true
  for (const k in v as Record<string, unknown>) {
    const x = (v as Record<string, unknown>)[k]
    if (x === undefined) continue
    s += (first ? '' : ',') + quote(k) + ':' + stringify(x)
    first = false
  }
  return s + '}'
}
