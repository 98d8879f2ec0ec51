/**
 * The JSONPath subset of event-recovery configurations: `$`, `.name`,
 * `['name']`, `[n]` and filters `[?(@.a.b=~regex)]` (the elements of an
 * array whose value at `a.b`, as text, matches the whole regex), also
 * written after a dot (`$.a.[0]`). Two conveniences of the bad-row formats:
 * a name on a list of name-value pairs (`parameters`, `querystring`) selects
 * the pair's `value`, and a path going on into a string reads it as JSON,
 * decoded from base64 first when it is not JSON (`ue_px`, `cx`); a change
 * made inside it is encoded back the same way.
 */
import { recoveryRegex, type RecoveryRegex } from './regex'

export type Segment =
  | { readonly name: string }
  | { readonly index: number }
  | { readonly filter: { readonly path: readonly string[]; readonly re: RecoveryRegex } }

export interface JsonPath {
  readonly text: string
  readonly segments: readonly Segment[]
}

/** Parses a path; throws with the reason and the place. */
export function parsePath(text: string): JsonPath {
  if (!text.startsWith('$')) throw new Error(`path '${text.slice(0, 60)}' does not start with $`)
  const segments: Segment[] = []
  let i = 1
  while (i < text.length) {
    if (text[i] === '.' && text[i + 1] === '[') i++
    if (text[i] === '.') {
      const m = /^[^.[\]]+/.exec(text.slice(i + 1))
      if (!m) throw new Error(`a name is expected at ${i + 1} of path '${text}'`)
      segments.push({ name: m[0] })
      i += 1 + m[0].length
    } else if (text.startsWith('[?(@.', i)) {
      const end = text.indexOf(')]', i)
      const eq = text.indexOf('=~', i)
      if (end < 0 || eq < 0 || eq > end) throw new Error(`a filter [?(@.field=~regex)] is expected at ${i} of path '${text}'`)
      const sub = text.slice(i + 5, eq).split('.')
      if (sub.some((s) => s === '')) throw new Error(`an empty name in the filter at ${i} of path '${text}'`)
      let re: RecoveryRegex
      try {
        re = recoveryRegex(text.slice(eq + 2, end))
      } catch (err) {
        throw new Error(`the filter's regex at ${eq + 2} of path '${text}': ${(err as Error).message}`)
      }
      segments.push({ filter: { path: sub, re } })
      i = end + 2
    } else if (text[i] === '[') {
      const m = /^\[(?:(0|[1-9][0-9]{0,8})|'([^']*)'|"([^"]*)")\]/.exec(text.slice(i))
      if (!m) throw new Error(`[n], ['name'] or [?(@.field=~regex)] is expected at ${i} of path '${text}'`)
      segments.push(m[1] !== undefined ? { index: Number(m[1]) } : { name: m[2] ?? m[3]! })
      i += m[0].length
    } else throw new Error(`unexpected '${text[i]}' at ${i} of path '${text}'`)
  }
  return { text, segments }
}

type Json = unknown
const isObj = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isPairs = (v: Json): v is Record<string, Json>[] => Array.isArray(v) && v.length > 0 && v.every((x) => isObj(x) && typeof x.name === 'string')

/** The compact JSON text of a value; a string is its own text. */
export const textOf = (v: Json): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? 'null')

type Encoding = 'json' | 'base64'

/** A string read as JSON (or base64 JSON); undefined when it is neither. */
function decode(s: string): { value: Json; encoding: Encoding } | undefined {
  try {
    return { value: JSON.parse(s), encoding: 'json' }
  } catch {
    /* not JSON */
  }
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(s)) return undefined
  try {
    return { value: JSON.parse(Buffer.from(s, 'base64').toString('utf8')), encoding: 'base64' }
  } catch {
    return undefined
  }
}

const encode = (v: Json, e: Encoding): string => (e === 'json' ? JSON.stringify(v) : Buffer.from(JSON.stringify(v), 'utf8').toString('base64'))

/** The indexes of the array elements a segment selects. */
function indexesOf(arr: Json[], seg: Segment): number[] {
  if ('index' in seg) return seg.index < arr.length ? [seg.index] : []
  if ('filter' in seg) {
    const out: number[] = []
    arr.forEach((el, i) => {
      const found = read(el, seg.filter.path.map((name) => ({ name })))
      if (found.some((v) => v !== undefined && seg.filter.re.full(textOf(v)))) out.push(i)
    })
    return out
  }
  if (isPairs(arr)) {
    const i = arr.findIndex((p) => p.name === seg.name)
    return i < 0 ? [] : [i]
  }
  return []
}

/** The values a path finds in a document (none when it leads nowhere). */
export function read(doc: Json, segments: readonly Segment[]): Json[] {
  let current: Json[] = [doc]
  for (const seg of segments) {
    const next: Json[] = []
    for (let v of current) {
      if (typeof v === 'string') {
        const d = decode(v)
        if (!d) continue
        v = d.value
      }
      if (Array.isArray(v)) {
        const pairs = 'name' in seg && isPairs(v)
        for (const i of indexesOf(v, seg)) next.push(pairs ? (v[i] as Record<string, Json>).value : v[i])
      } else if (isObj(v) && 'name' in seg && Object.prototype.hasOwnProperty.call(v, seg.name)) next.push(v[seg.name])
    }
    current = next
  }
  return current
}

/** Raised when a path leads nowhere or a change cannot be made; the message says where. */
export class PathError extends Error {}

/**
 * A copy of `doc` with `change` applied to every value the path finds (its
 * answer replaces the value). `create` lets the last name add a missing key
 * or pair (the change then sees `undefined`). Throws `PathError` when the
 * path finds nothing.
 */
export function update(doc: Json, path: JsonPath, change: (v: Json) => Json, create = false): Json {
  let hits = 0
  const go = (v: Json, at: number): Json => {
    if (at === path.segments.length) {
      hits++
      return change(v)
    }
    const seg = path.segments[at]!
    const last = at === path.segments.length - 1
    if (typeof v === 'string') {
      const d = decode(v)
      if (!d) return v
      return encode(go(d.value, at), d.encoding)
    }
    if (Array.isArray(v)) {
      const pairs = 'name' in seg && isPairs(v)
      const idx = indexesOf(v, seg)
      if (idx.length === 0 && pairs && create && last) return [...v, { name: (seg as { name: string }).name, value: textOf(go(undefined, at + 1)) }]
      if (idx.length === 0) return v
      const copy = [...v]
      for (const i of idx) {
        if (pairs) {
          const p = copy[i] as Record<string, Json>
          const nv = go(p.value, at + 1)
          copy[i] = { ...p, value: typeof nv === 'string' || nv === null ? nv : JSON.stringify(nv) }
        } else copy[i] = go(copy[i], at + 1)
      }
      return copy
    }
    if (isObj(v) && 'name' in seg && (Object.prototype.hasOwnProperty.call(v, seg.name) || (create && last))) {
      return { ...v, [seg.name]: go(v[seg.name], at + 1) }
    }
    return v
  }
  const out = go(doc, 0)
  if (hits === 0) throw new PathError(`path ${path.text} leads nowhere`)
  return out
}
