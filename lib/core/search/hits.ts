/** The shape of `_search` hits: sort keys (`sort`) and `_source` filtering. */
import { refuse } from './query-tree'
import { isObject, type SearchRequest } from './request'

interface SortKey {
  readonly field: string
  readonly desc: boolean
}

export function sortKeys(req: SearchRequest): SortKey[] | undefined {
  const out: SortKey[] = []
  const one = (field: string, order: unknown) => {
    const o = order === undefined ? (field === '_score' ? 'desc' : 'asc') : String(order).toLowerCase()
    if (o !== 'asc' && o !== 'desc') throw refuse(`[sort] order for [${field}] must be asc or desc`)
    if (field === '_score') return // not scored: nothing to sort on
    if (field === '') throw refuse('[sort] field name is empty')
    out.push({ field, desc: o === 'desc' })
  }
  const body = isObject(req.body) ? req.body.sort : undefined
  if (req.params.sort !== undefined) {
    for (const part of req.params.sort.split(',')) {
      const i = part.lastIndexOf(':')
      if (i > 0) one(part.slice(0, i), part.slice(i + 1))
      else one(part, undefined)
    }
  } else if (body !== undefined) {
    for (const s of Array.isArray(body) ? body : [body]) {
      if (typeof s === 'string') one(s, undefined)
      else if (isObject(s) && Object.keys(s).length === 1) {
        const [field, v] = Object.entries(s)[0]!
        if (isObject(v)) {
          for (const k of Object.keys(v)) if (!['order', 'unmapped_type', 'format'].includes(k)) throw refuse(`[sort] option [${k}] is not supported by the search store`)
          one(field, v.order)
        } else one(field, v)
      } else throw refuse('[sort] entries are "field" or {"field": "asc"|"desc"} or {"field": {"order": …}}')
    }
  } else return undefined
  return out
}

/** What `_source` keeps: everything, nothing, or the fields matching include and not exclude patterns. */
type SourceFilter = false | { include: FieldPattern[] | null; exclude: FieldPattern[] }

/** A `_source` field pattern: `*` matches any characters, everything else itself. */
interface FieldPattern {
  test(path: string): boolean
}

/** At most this many `_source` patterns, each at most this long (`400` beyond). */
export const MAX_SOURCE_PATTERNS = 64
export const MAX_SOURCE_PATTERN_LENGTH = 256

/**
 * Matches with the classic two-pointer wildcard walk (on a mismatch, only the
 * last `*` takes one more character): time at most path length × pattern
 * length, whatever the pattern. (A regular expression `^.*a.*a…$` would
 * backtrack exponentially on a long field name, and field names come from
 * the events: one request held the gateway's event loop for good.)
 */
function fieldPattern(p: string): FieldPattern {
  return {
    test(s: string): boolean {
      let i = 0
      let j = 0
      let star = -1
      let mark = 0
      while (i < s.length) {
        if (j < p.length && p[j] !== '*' && p[j] === s[i]) {
          i++
          j++
        } else if (j < p.length && p[j] === '*') {
          star = j++
          mark = i
        } else if (star >= 0) {
          j = star + 1
          i = ++mark
        } else return false
      }
      while (j < p.length && p[j] === '*') j++
      return j === p.length
    },
  }
}

export function sourceFilter(req: SearchRequest): SourceFilter {
  const list = (v: unknown, name: string): FieldPattern[] => {
    const xs = typeof v === 'string' ? v.split(',') : v
    if (!Array.isArray(xs) || !xs.every((x) => typeof x === 'string')) throw refuse(`[${name}] must be a field name or a list of them`)
    if (xs.length > MAX_SOURCE_PATTERNS) throw refuse(`[${name}] has ${xs.length} patterns, more than ${MAX_SOURCE_PATTERNS}`)
    const long = (xs as string[]).find((x) => x.length > MAX_SOURCE_PATTERN_LENGTH)
    if (long !== undefined) throw refuse(`[${name}] pattern of ${long.length} characters, longer than ${MAX_SOURCE_PATTERN_LENGTH}`)
    return (xs as string[]).map(fieldPattern)
  }
  let include: FieldPattern[] | null = null
  let exclude: FieldPattern[] = []
  const p = req.params
  const body = isObject(req.body) ? req.body._source : undefined
  if (p._source !== undefined) {
    if (p._source === 'false') return false
    if (p._source !== 'true') include = list(p._source, '_source')
  } else if (body !== undefined) {
    if (body === false) return false
    if (body === true) {
      // everything
    } else if (isObject(body)) {
      for (const k of Object.keys(body)) if (!['includes', 'excludes', 'include', 'exclude'].includes(k)) throw refuse(`[_source] does not support [${k}]`)
      const inc = body.includes ?? body.include
      const exc = body.excludes ?? body.exclude
      if (inc !== undefined) include = list(inc, '_source.includes')
      if (exc !== undefined) exclude = list(exc, '_source.excludes')
    } else include = list(body, '_source')
  }
  if (p._source_includes !== undefined) include = list(p._source_includes, '_source_includes')
  if (p._source_excludes !== undefined) exclude = list(p._source_excludes, '_source_excludes')
  return { include, exclude }
}

export function filterSource(doc: Record<string, unknown>, f: Exclude<SourceFilter, false>): Record<string, unknown> {
  if (f.include === null && f.exclude.length === 0) return doc
  const excluded = (p: string) => f.exclude.some((r) => r.test(p))
  const included = (p: string) => f.include === null || f.include.some((r) => r.test(p))
  // an included value: everything in it but the excluded
  const keep = (v: unknown, path: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => keep(x, path))
    if (!isObject(v)) return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const p = path === '' ? k : `${path}.${k}`
      if (!excluded(p)) out[k] = keep(x, p)
    }
    return out
  }
  // a value not included itself: only its included parts (undefined when none)
  const pick = (v: unknown, path: string): unknown => {
    if (Array.isArray(v)) {
      const parts = v.map((x) => pick(x, path)).filter((x) => x !== undefined)
      return parts.length > 0 ? parts : undefined
    }
    if (!isObject(v)) return undefined
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const p = path === '' ? k : `${path}.${k}`
      if (excluded(p)) continue
      const part = included(p) ? keep(x, p) : pick(x, p)
      if (part !== undefined) out[k] = part
    }
    return Object.keys(out).length > 0 ? out : undefined
  }
  return ((f.include === null ? keep(doc, '') : pick(doc, '')) ?? {}) as Record<string, unknown>
}
