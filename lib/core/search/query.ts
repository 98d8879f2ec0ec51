/**
 * `_count` and `_search` on the search store: the Elasticsearch 7 request
 * (query string or DSL, paging, sorting, `_source`, aggregations) translated
 * to parameterised SQL on the store's tables, and the answer shaped as
 * Elasticsearch 7 shapes it.
 *
 * Translation:
 * - A field is a dotted path in the document (`contexts_…_web_page_1.id`);
 *   it is matched with a SQL/JSON path (`jsonb_path_exists`) whose text and
 *   variables are parameters, so neither a value nor a field name ever
 *   becomes SQL text. Arrays are searched element by element, as
 *   Elasticsearch does.
 * - The fields kept in their own typed columns (`COLUMNS`) are matched on
 *   those columns instead (indexed, and much faster); both forms must give
 *   the same answers (`test/integration/search/query.test.ts` checks it).
 * - Values match whole and case-sensitively (Snowplow Mini's indices use the
 *   keyword analyser everywhere); results are not scored (`_score` is null)
 *   and, unless sorted otherwise, come newest first. On the `bad` index a
 *   bare word (no field) also finds the rows whose text has its words
 *   (`./words.ts`), as Elasticsearch's analysed text does.
 */
import { withNulls } from './documents'
import { parseDsl } from './dsl'
import { parseQueryString } from './lucene'
import { esErrorBody, Refusal, refuse, type Bound, type EsError, type EsResult, type Query } from './query-tree'
import { tablesOf, TIME_COLUMNS, type SearchDb, type SearchIndex } from './store'
import { wordsOf } from './words'

export { esErrorBody, type EsError, type EsResult }

export interface SearchRequest {
  /** Query-string parameters (`q`, `from`, `size`, `sort`, …). */
  readonly params: Readonly<Record<string, string>>
  /** The parsed JSON body, if any. */
  readonly body?: unknown
}

/** Elasticsearch's default and largest result window (`from + size`). */
export const MAX_RESULT_WINDOW = 10_000
/** Most buckets one aggregation may return. */
export const MAX_BUCKETS = 10_000

const SHARDS = { total: 1, successful: 1, skipped: 0, failed: 0 }

export function searchIndex(name: string): EsResult<SearchIndex> {
  if (name === 'good' || name === 'bad') return { ok: true, value: name }
  return { ok: false, error: { status: 404, type: 'index_not_found_exception', reason: `no such index [${name}]: the indices are good and bad` } }
}

// ---------------------------------------------------------------------------
// Fields

interface Column {
  readonly column: string
  readonly type: 'text' | 'time'
}

/** Document fields that are also typed, indexed columns (same values). */
export const COLUMNS: Record<SearchIndex, Readonly<Record<string, Column>>> = {
  good: {
    event_id: { column: 'id', type: 'text' },
    collector_tstamp: { column: 'collector_tstamp', type: 'time' },
    app_id: { column: 'app_id', type: 'text' },
    event: { column: 'event_type', type: 'text' },
    event_name: { column: 'event_name', type: 'text' },
  },
  bad: {
    'data.failure.timestamp': { column: 'failure_timestamp', type: 'time' },
  },
}

/** The time field each index is histogrammed and aged on, by its document name. */
export const TIME_FIELDS: Record<SearchIndex, string> = { good: 'collector_tstamp', bad: 'data.failure.timestamp' }

export interface Translation {
  /** Use the typed columns where a field has one (false: always the document; for checking that both agree). */
  readonly columns: boolean
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function checkText(s: string, what: string): string {
  if (s.includes('\u0000')) throw refuse(`${what} may not contain the NUL character (\\u0000)`)
  if (LONE_SURROGATE.test(s)) throw refuse(`${what} is not well-formed Unicode (a lone surrogate)`)
  return s
}

/** A SQL/JSON path literal for a dotted field (`*`: every value in the document). */
export function jsonPath(field: string, tail = '[*]'): string {
  if (field === '*') return 'lax $.**'
  checkText(field, 'a field name')
  return `lax $${field.split('.').map((seg) => `.${JSON.stringify(seg)}`).join('')}${tail}`
}

class Statement {
  readonly params: unknown[] = []
  constructor(
    readonly index: SearchIndex,
    readonly options: Translation,
  ) {}

  p(v: unknown): string {
    if (typeof v === 'string') checkText(v, 'a value')
    this.params.push(v)
    return `$${this.params.length}`
  }
  column(field: string): Column | undefined {
    return this.options.columns ? COLUMNS[this.index][field] : undefined
  }
  isDate(field: string): boolean {
    return field === TIME_FIELDS[this.index] || (this.index === 'good' && /^[a-z_]+_tstamp$/.test(field))
  }
  /** `jsonb_path_exists` of `field` with a filter over its values and variables. */
  pathExists(field: string, filter: string, vars: Record<string, unknown> = {}): string {
    for (const v of Object.values(vars)) if (typeof v === 'string') checkText(v, 'a value')
    return `jsonb_path_exists(doc, ${this.p(`${jsonPath(field)} ? (${filter})`)}::jsonpath, ${this.p(JSON.stringify(vars))}::jsonb, true)`
  }
  /** Some string value of `field` is LIKE (or ILIKE) `pattern`. */
  pathLike(field: string, pattern: string, insensitive: boolean): string {
    return `EXISTS (SELECT 1 FROM jsonb_path_query(doc, ${this.p(jsonPath(field))}::jsonpath, '{}'::jsonb, true) AS x WHERE jsonb_typeof(x) = 'string' AND (x #>> '{}') ${insensitive ? 'ILIKE' : 'LIKE'} ${this.p(pattern)})`
  }
}

// ---------------------------------------------------------------------------
// Dates

const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, H: 3_600_000, m: 60_000, s: 1000 }

function roundDate(t: number, unit: string, up: boolean): number {
  const d = new Date(t)
  let start: number
  let next: number
  if (unit === 'y') {
    start = Date.UTC(d.getUTCFullYear(), 0, 1)
    next = Date.UTC(d.getUTCFullYear() + 1, 0, 1)
  } else if (unit === 'M') {
    start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  } else if (unit === 'w') {
    const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    start = day - ((d.getUTCDay() + 6) % 7) * 86_400_000 // weeks start on Monday
    next = start + 604_800_000
  } else {
    const ms = UNIT_MS[unit]!
    start = Math.floor(t / ms) * ms
    next = start + ms
  }
  return up ? next - 1 : start
}

function addDate(t: number, n: number, unit: string): number {
  if (unit === 'y' || unit === 'M') {
    const d = new Date(t)
    d.setUTCMonth(d.getUTCMonth() + (unit === 'y' ? 12 * n : n))
    return d.getTime()
  }
  return t + n * UNIT_MS[unit]!
}

const ISO_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/

/** A date as Elasticsearch reads it (ISO 8601, epoch milliseconds, or date math such as `now-1h/h`); `roundUp` for `gt`/`lte`. */
export function parseDate(v: Bound, now: number, roundUp: boolean): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw refuse(`failed to parse date [${v}]`)
    return Math.trunc(v)
  }
  const [anchor, math] = v.startsWith('now') ? ['now', v.slice(3)] : v.includes('||') ? [v.slice(0, v.indexOf('||')), v.slice(v.indexOf('||') + 2)] : [v, '']
  let t: number
  let coarse: string | undefined // the unit a partial date is rounded up to
  if (anchor === 'now') t = now
  else if (/^-?\d{1,16}$/.test(anchor) && !/^\d{4}$/.test(anchor)) t = Number(anchor) // epoch milliseconds (four digits are a year)
  else {
    const m = ISO_DATE.exec(anchor)
    if (!m) throw refuse(`failed to parse date field [${v}]: ISO 8601 (2025-04-30T10:05:00Z), epoch milliseconds or date math (now-1h) was expected`)
    const [, y, mo, d, h, mi, s, frac, zone] = m
    const utc = Date.UTC(Number(y), mo ? Number(mo) - 1 : 0, d ? Number(d) : 1, h ? Number(h) : 0, mi ? Number(mi) : 0, s ? Number(s) : 0, frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0)
    const offset = !zone || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) * 60_000
    t = utc - offset
    if (!Number.isFinite(t) || (mo && (Number(mo) < 1 || Number(mo) > 12)) || (d && (Number(d) < 1 || Number(d) > 31))) throw refuse(`failed to parse date field [${v}]`)
    coarse = !mo ? 'y' : !d ? 'M' : !h ? 'd' : !mi ? 'h' : !s ? 'm' : !frac ? 's' : undefined
  }
  let rest = math
  let rounded = false
  while (rest !== '') {
    const m = /^([+-])(\d+)([yMwdhHms])|^\/([yMwdhHms])/.exec(rest)
    if (!m) throw refuse(`failed to parse date math [${v}]: operations are +N<unit>, -N<unit> and /<unit>, units y M w d h H m s`)
    if (m[4]) {
      t = roundDate(t, m[4], roundUp)
      rounded = true
    } else t = addDate(t, (m[1] === '-' ? -1 : 1) * Number(m[2]), m[3]!)
    rest = rest.slice(m[0].length)
  }
  if (!rounded && roundUp && coarse && coarse !== 's') t = roundDate(t, coarse, true)
  else if (!rounded && roundUp && coarse === 's') t += 999
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw refuse(`failed to parse date field [${v}]: out of range`)
  return t
}

const iso = (t: number) => new Date(t).toISOString()

// ---------------------------------------------------------------------------
// Conditions

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

/** The values a keyword value also matches as (`"5"` matches 5, `"true"` matches true). */
function alternatives(v: string | number | boolean): unknown[] {
  if (typeof v === 'number') return [v, String(v)]
  if (typeof v === 'boolean') return [v, String(v)]
  const out: unknown[] = [v]
  if (NUMBER.test(v) && Number.isFinite(Number(v))) out.push(Number(v))
  if (v === 'true' || v === 'false') out.push(v === 'true')
  return out
}

/** A LIKE pattern for a wildcard pattern. */
export function likePattern(pattern: string, wild: readonly boolean[]): string {
  let out = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (wild[i]) out += c === '*' ? '%' : '_'
    else out += c === '%' || c === '_' || c === '\\' ? `\\${c}` : c
  }
  return out
}

/**
 * A test on a nullable column that is false, never null, where the column is
 * null (so `NOT` keeps those rows), written as plain conjuncts the planner
 * can match to indexes and statistics. The time columns and id are never null.
 */
function known(col: Column, test: string): string {
  return col.column === 'id' ? test : `(${col.column} IS NOT NULL AND ${test})`
}

/** A bad row whose text has every word of `v` (a bare word on the `bad` index, as analysed text matches in Elasticsearch). */
function hasWords(v: string | number | boolean, st: Statement): string {
  const words = [...new Set(wordsOf(String(v)))]
  return words.length === 0 ? 'FALSE' : `words @> ${st.p(JSON.stringify(words))}::jsonb`
}

function condition(q: Query, st: Statement, now: number): string {
  switch (q.kind) {
    case 'all':
      return 'TRUE'
    case 'none':
      return 'FALSE'
    case 'ids':
      return q.values.length === 0 ? 'FALSE' : `id IN (${q.values.map((v) => st.p(v)).join(', ')})`
    case 'bool': {
      const parts: string[] = []
      for (const x of [...q.must, ...q.filter]) parts.push(`(${condition(x, st, now)})`)
      if (q.mustNot.length > 0) parts.push(`NOT (${q.mustNot.map((x) => `(${condition(x, st, now)})`).join(' OR ')})`)
      if (q.minimumShouldMatch > 0) {
        if (q.minimumShouldMatch > q.should.length) return 'FALSE'
        const should = q.should.map((x) => `(${condition(x, st, now)})`)
        parts.push(q.minimumShouldMatch === 1 ? `(${should.join(' OR ')})` : `((${should.map((s) => `${s}::int`).join(' + ')}) >= ${st.p(q.minimumShouldMatch)})`)
      }
      return parts.length === 0 ? 'TRUE' : parts.join(' AND ')
    }
    case 'eq': {
      const col = q.field === '*' ? undefined : st.column(q.field)
      if (col?.type === 'time') return `${col.column} IN (${q.values.map((v) => `${st.p(iso(parseDate(typeof v === 'boolean' ? String(v) : v, now, false)))}::timestamptz`).join(', ')})`
      if (col) return known(col, `${col.column} IN (${q.values.map((v) => st.p(String(v))).join(', ')})`)
      const vars: Record<string, unknown> = {}
      const tests: string[] = []
      for (const v of q.values) {
        for (const alt of alternatives(v)) {
          const name = `v${Object.keys(vars).length}`
          vars[name] = alt
          tests.push(`@ == $${name}`)
        }
      }
      const whole = st.pathExists(q.field, tests.join(' || '), vars)
      return q.field === '*' && st.index === 'bad' ? `(${[whole, ...q.values.map((v) => hasWords(v, st))].join(' OR ')})` : whole
    }
    case 'exists': {
      if (q.field === '*') return 'TRUE'
      const col = st.column(q.field)
      return col ? `${col.column} IS NOT NULL` : st.pathExists(q.field, '@.type() != "null"')
    }
    case 'prefix': {
      const col = q.field === '*' ? undefined : st.column(q.field)
      if (col?.type === 'text') return known(col, q.caseInsensitive ? `starts_with(lower(${col.column}), lower(${st.p(q.value)}))` : `starts_with(${col.column}, ${st.p(q.value)})`)
      const like = `${likePattern(q.value, [])}%`
      if (q.caseInsensitive || col) return st.pathLike(q.field, like, q.caseInsensitive === true)
      return st.pathExists(q.field, '@ starts with $p', { p: q.value })
    }
    case 'wildcard': {
      const col = q.field === '*' ? undefined : st.column(q.field)
      const like = likePattern(q.pattern, q.wild)
      if (col?.type === 'text') return known(col, `${col.column} ${q.caseInsensitive ? 'ILIKE' : 'LIKE'} ${st.p(like)}`)
      return st.pathLike(q.field, like, q.caseInsensitive === true)
    }
    case 'range': {
      const bounds = (['gt', 'gte', 'lt', 'lte'] as const).filter((k) => q[k] !== undefined)
      if (bounds.length === 0) return q.field === '*' ? 'TRUE' : condition({ kind: 'exists', field: q.field }, st, now)
      if (q.field === '*') throw refuse('a range needs a field')
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const
      const col = st.column(q.field)
      if (st.isDate(q.field)) {
        const at = (k: (typeof bounds)[number]) => iso(parseDate(q[k]!, now, k === 'gt' || k === 'lte'))
        if (col) return bounds.map((k) => `${col.column} ${op[k]} ${st.p(at(k))}::timestamptz`).join(' AND ')
        const vars = Object.fromEntries(bounds.map((k) => [k, at(k)]))
        return st.pathExists(q.field, bounds.map((k) => `@.datetime() ${op[k]} $${k}.datetime()`).join(' && '), vars)
      }
      const vars = Object.fromEntries(bounds.map((k) => {
        const b = q[k]!
        return [k, typeof b === 'string' && NUMBER.test(b) && Number.isFinite(Number(b)) ? Number(b) : b]
      }))
      return st.pathExists(q.field, bounds.map((k) => `@ ${op[k]} $${k}`).join(' && '), vars)
    }
  }
}

// ---------------------------------------------------------------------------
// Requests

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

const IGNORED_PARAMS = ['pretty', 'human', 'error_trace', 'timeout', 'analyze_wildcard', 'lenient', 'allow_partial_search_results', 'ignore_unavailable', 'allow_no_indices', 'expand_wildcards', 'request_cache', 'preference', 'ccs_minimize_roundtrips', 'batched_reduce_size', 'pre_filter_shard_size', 'max_concurrent_shard_requests', 'search_type', 'typed_keys', 'ignore_throttled']
const SEARCH_PARAMS = new Set(['q', 'df', 'default_operator', 'from', 'size', 'sort', '_source', '_source_includes', '_source_excludes', 'track_total_hits', 'rest_total_hits_as_int', ...IGNORED_PARAMS])
const COUNT_PARAMS = new Set(['q', 'df', 'default_operator', ...IGNORED_PARAMS])
const SEARCH_BODY = new Set(['query', 'from', 'size', 'sort', '_source', 'aggs', 'aggregations', 'track_total_hits', 'timeout', 'track_scores'])

function checkParams(params: Readonly<Record<string, string>>, allowed: Set<string>, path: string) {
  for (const k of Object.keys(params)) {
    if (!allowed.has(k)) throw refuse(`request [${path}] contains unrecognized parameter: [${k}]`, 'illegal_argument_exception')
  }
}

/** The query of a request: `q=` or the body's `query` (not both). */
function requestQuery(req: SearchRequest, bodyKeys: Set<string>, path: string): Query {
  const body = req.body
  if (body !== undefined && !isObject(body)) throw refuse('the request body must be a JSON object')
  for (const k of Object.keys(body ?? {})) {
    if (!bodyKeys.has(k)) throw refuse(k === 'search_after' || k === 'highlight' || k === 'suggest' || k === 'collapse' || k === 'post_filter' || k === 'script_fields' || k === 'docvalue_fields' || k === 'runtime_mappings' || k === 'pit' || k === 'rescore' || k === 'fields' ? `[${k}] is not supported by the search store` : `Unknown key for a START_OBJECT in [${k}].`)
  }
  const q = req.params.q
  if (q !== undefined && body?.query !== undefined) throw refuse(`request [${path}] has both q= and a query in the body: use one`, 'illegal_argument_exception')
  if (q !== undefined) {
    const op = (req.params.default_operator ?? 'OR').toUpperCase()
    if (op !== 'OR' && op !== 'AND') throw refuse('default_operator must be OR or AND', 'illegal_argument_exception')
    return parseQueryString(q, { defaultField: req.params.df, defaultOperator: op })
  }
  return body?.query === undefined ? { kind: 'all' } : parseDsl(body.query)
}

function integer(v: unknown, name: string, min: number, max: number): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n)) throw refuse(`[${name}] must be an integer`, 'illegal_argument_exception')
  if (n < min || n > max) throw refuse(`[${name}] must be between ${min} and ${max}, was ${n}`, 'illegal_argument_exception')
  return n
}

async function guarded<T>(fn: () => Promise<T>): Promise<EsResult<T>> {
  try {
    return { ok: true, value: await fn() }
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, error: err.error }
    throw err
  }
}

/** `_count`: `{count, _shards}`. */
export function count(db: SearchDb, index: SearchIndex, req: SearchRequest, options: Translation = { columns: true }, now = Date.now()) {
  return guarded(async () => {
    checkParams(req.params, COUNT_PARAMS, `/${index}/_count`)
    const q = requestQuery(req, new Set(['query']), `/${index}/_count`)
    const st = new Statement(index, options)
    const where = condition(q, st, now)
    const r = await db.sql.query<{ n: number | string }>(`SELECT count(*)::float8 AS n FROM ${tablesOf(db)[index]} WHERE ${where}`, st.params)
    return { count: Number(r.rows[0]!.n), _shards: SHARDS }
  })
}

interface SortKey {
  readonly field: string
  readonly desc: boolean
}

function sortKeys(req: SearchRequest): SortKey[] | undefined {
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
type SourceFilter = false | { include: RegExp[] | null; exclude: RegExp[] }

function fieldPattern(p: string): RegExp {
  return new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
}

function sourceFilter(req: SearchRequest): SourceFilter {
  const list = (v: unknown, name: string): RegExp[] => {
    const xs = typeof v === 'string' ? v.split(',') : v
    if (!Array.isArray(xs) || !xs.every((x) => typeof x === 'string')) throw refuse(`[${name}] must be a field name or a list of them`)
    return (xs as string[]).map(fieldPattern)
  }
  let include: RegExp[] | null = null
  let exclude: RegExp[] = []
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

function filterSource(doc: Record<string, unknown>, f: Exclude<SourceFilter, false>): Record<string, unknown> {
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

// ---------------------------------------------------------------------------
// Aggregations

type Agg =
  | { name: string; type: 'terms'; field: string; size: number; byKey: boolean; desc: boolean; minDocCount: number }
  | { name: string; type: 'date_histogram'; field: string; fixedMs?: number; calendar?: string; minDocCount: number; bounds?: { min: number; max: number } }
  | { name: string; type: 'value_count' | 'cardinality' | 'min' | 'max'; field: string }

const CALENDAR: Record<string, string> = { minute: 'minute', '1m': 'minute', hour: 'hour', '1h': 'hour', day: 'day', '1d': 'day', week: 'week', '1w': 'week', month: 'month', '1M': 'month', quarter: 'quarter', '1q': 'quarter', year: 'year', '1y': 'year' }
const FIXED_UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const AGG_TYPES = 'terms, date_histogram, value_count, cardinality, min, max'

function parseAggs(v: unknown, now: number, index: SearchIndex): Agg[] {
  if (v === undefined) return []
  if (!isObject(v)) throw refuse('[aggs] must be an object of named aggregations')
  return Object.entries(v).map(([name, spec]) => {
    if (!isObject(spec)) throw refuse(`aggregation [${name}] must be an object`)
    const keys = Object.keys(spec)
    if (keys.includes('aggs') || keys.includes('aggregations')) throw refuse(`aggregation [${name}]: sub-aggregations are not supported by the search store`)
    const types = keys.filter((k) => k !== 'meta')
    if (types.length !== 1) throw refuse(`aggregation [${name}] must have exactly one type; supported: ${AGG_TYPES}`)
    const type = types[0]!
    const body = spec[type]
    if (!isObject(body)) throw refuse(`aggregation [${name}]: [${type}] must be an object`)
    const field = body.field
    if (typeof field !== 'string' || field === '') throw refuse(`aggregation [${name}]: [${type}] needs a "field"${body.script !== undefined ? ' (scripts are not supported)' : ''}`)
    checkText(field, 'a field name')
    const allow = (ks: string[]) => {
      for (const k of Object.keys(body)) if (!ks.includes(k)) throw refuse(`aggregation [${name}]: [${type}] does not support [${k}]`)
    }
    switch (type) {
      case 'terms': {
        allow(['field', 'size', 'order', 'min_doc_count', 'shard_size', 'show_term_doc_count_error'])
        const size = body.size === undefined ? 10 : integer(body.size, `${name}.size`, 1, MAX_BUCKETS)
        let byKey = false
        let desc = true
        if (body.order !== undefined) {
          const o = Array.isArray(body.order) ? body.order : [body.order]
          if (o.length !== 1 || !isObject(o[0]) || Object.keys(o[0]).length !== 1) throw refuse(`aggregation [${name}]: [order] must be {"_count": "asc"|"desc"} or {"_key": …}`)
          const [k, dir] = Object.entries(o[0])[0]!
          if (k !== '_count' && k !== '_key' && k !== '_term') throw refuse(`aggregation [${name}]: ordering by [${k}] is not supported; use _count or _key`)
          if (dir !== 'asc' && dir !== 'desc') throw refuse(`aggregation [${name}]: [order] direction must be asc or desc`)
          byKey = k !== '_count'
          desc = dir === 'desc'
        }
        const minDocCount = body.min_doc_count === undefined ? 1 : integer(body.min_doc_count, `${name}.min_doc_count`, 1, Number.MAX_SAFE_INTEGER)
        return { name, type, field, size, byKey, desc, minDocCount }
      }
      case 'date_histogram': {
        allow(['field', 'fixed_interval', 'calendar_interval', 'interval', 'min_doc_count', 'extended_bounds', 'format', 'time_zone', 'keyed', 'order'])
        if (body.time_zone !== undefined && !['UTC', 'Z', '+00:00', 'Etc/UTC', 'GMT'].includes(String(body.time_zone))) throw refuse(`aggregation [${name}]: time_zone [${String(body.time_zone)}] is not supported; buckets are in UTC`)
        if (body.keyed === true) throw refuse(`aggregation [${name}]: keyed buckets are not supported`)
        if (body.order !== undefined) throw refuse(`aggregation [${name}]: [order] is not supported for date_histogram (buckets are in time order)`)
        if (body.format !== undefined && !['strict_date_optional_time', 'date_optional_time', 'epoch_millis'].includes(String(body.format))) throw refuse(`aggregation [${name}]: format [${String(body.format)}] is not supported`)
        if (field !== TIME_FIELDS[index]) throw refuse(`aggregation [${name}]: date_histogram is supported on the index's time field [${TIME_FIELDS[index]}], not [${field}]`)
        const given = [body.fixed_interval, body.calendar_interval, body.interval].filter((x) => x !== undefined)
        if (given.length !== 1) throw refuse(`aggregation [${name}]: date_histogram needs one of fixed_interval or calendar_interval`)
        const iv = String(given[0])
        let fixedMs: number | undefined
        let calendar: string | undefined
        if (body.calendar_interval !== undefined || (body.interval !== undefined && CALENDAR[iv])) {
          calendar = CALENDAR[iv]
          if (!calendar) throw refuse(`aggregation [${name}]: calendar_interval [${iv}] is not one of ${Object.keys(CALENDAR).join(', ')}`)
        } else {
          const m = /^(\d+)(ms|s|m|h|d)$/.exec(iv)
          if (!m || Number(m[1]) === 0) throw refuse(`aggregation [${name}]: fixed_interval [${iv}] must be a positive amount of ms, s, m, h or d (e.g. 30m)`)
          fixedMs = Number(m[1]) * FIXED_UNIT[m[2]!]!
        }
        const minDocCount = body.min_doc_count === undefined ? 0 : integer(body.min_doc_count, `${name}.min_doc_count`, 0, Number.MAX_SAFE_INTEGER)
        let bounds: { min: number; max: number } | undefined
        if (body.extended_bounds !== undefined) {
          const b = body.extended_bounds
          if (!isObject(b) || (typeof b.min !== 'string' && typeof b.min !== 'number') || (typeof b.max !== 'string' && typeof b.max !== 'number')) throw refuse(`aggregation [${name}]: extended_bounds needs min and max`)
          bounds = { min: parseDate(b.min, now, false), max: parseDate(b.max, now, true) }
          if (bounds.min > bounds.max) throw refuse(`aggregation [${name}]: extended_bounds min is after max`)
        }
        return { name, type, field, fixedMs, calendar, minDocCount, bounds }
      }
      case 'value_count':
      case 'cardinality':
      case 'min':
      case 'max':
        allow(type === 'cardinality' ? ['field', 'precision_threshold'] : ['field', 'format'])
        return { name, type, field }
      default:
        throw refuse(`aggregation type [${type}] (in [${name}]) is not supported by the search store; supported: ${AGG_TYPES}`, 'named_object_not_found_exception')
    }
  })
}
function truncate(t: number, unit: string): number {
  const d = new Date(t)
  switch (unit) {
    case 'minute':
      return Math.floor(t / 60_000) * 60_000
    case 'hour':
      return Math.floor(t / 3_600_000) * 3_600_000
    case 'day':
      return Math.floor(t / 86_400_000) * 86_400_000
    case 'week':
      return roundDate(t, 'w', false)
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    case 'quarter':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (d.getUTCMonth() % 3), 1)
    default:
      return Date.UTC(d.getUTCFullYear(), 0, 1)
  }
}
function nextBucket(t: number, unit: string): number {
  const d = new Date(t)
  if (unit === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  if (unit === 'quarter') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 3, 1)
  if (unit === 'year') return Date.UTC(d.getUTCFullYear() + 1, 0, 1)
  return t + { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 }[unit]!
}

async function runAgg(db: SearchDb, index: SearchIndex, agg: Agg, q: Query, options: Translation, now: number): Promise<unknown> {
  const st = new Statement(index, options)
  const table = tablesOf(db)[index]
  const col = st.column(agg.field)
  const date = st.isDate(agg.field)
  if (agg.type === 'date_histogram') {
    const column = COLUMNS[index][agg.field]!.column
    const bucket = agg.fixedMs !== undefined ? `date_bin(${st.p(`${agg.fixedMs} milliseconds`)}::interval, ${column}, TIMESTAMPTZ '1970-01-01 00:00:00+00')` : `date_trunc(${st.p(agg.calendar)}, ${column}, 'UTC')`
    const where = condition(q, st, now)
    const r = await db.sql.query<{ k: number; n: number }>(`SELECT (extract(epoch FROM b) * 1000)::float8 AS k, count(*)::float8 AS n FROM (SELECT ${bucket} AS b FROM ${table} WHERE ${where}) s GROUP BY b ORDER BY b`, st.params)
    const counts = new Map(r.rows.map((x) => [Number(x.k), Number(x.n)]))
    const keys = [...counts.keys()]
    const floor = (t: number) => (agg.fixedMs !== undefined ? Math.floor(t / agg.fixedMs) * agg.fixedMs : truncate(t, agg.calendar!))
    const step = (t: number) => (agg.fixedMs !== undefined ? t + agg.fixedMs : nextBucket(t, agg.calendar!))
    let list = keys
    if (agg.minDocCount === 0 && (keys.length > 0 || agg.bounds)) {
      const lo = Math.min(...keys, ...(agg.bounds ? [floor(agg.bounds.min)] : []))
      const hi = Math.max(...keys, ...(agg.bounds ? [floor(agg.bounds.max)] : []))
      list = []
      for (let t = lo; t <= hi; t = step(t)) {
        list.push(t)
        if (list.length > MAX_BUCKETS) throw refuse(`Trying to create too many buckets. Must be less than or equal to: [${MAX_BUCKETS}]; use a longer interval or a shorter time range`, 'too_many_buckets_exception')
      }
    }
    return { buckets: list.filter((t) => (counts.get(t) ?? 0) >= agg.minDocCount).map((t) => ({ key_as_string: iso(t), key: t, doc_count: counts.get(t) ?? 0 })) }
  }
  if (agg.type === 'terms') {
    const order = agg.byKey ? `g.sk ${agg.desc ? 'DESC' : 'ASC'}` : `g.n ${agg.desc ? 'DESC' : 'ASC'}, g.sk ASC`
    let inner: string
    if (col) {
      const key = col.type === 'time' ? `(extract(epoch FROM ${col.column}) * 1000)::float8` : col.column
      inner = `SELECT ${key} AS key, ${col.column} AS sk, count(*)::float8 AS n FROM ${table} WHERE ${condition(q, st, now)} AND ${col.column} IS NOT NULL GROUP BY ${col.column}`
    } else {
      const path = st.p(jsonPath(agg.field))
      inner = `SELECT x::text AS key, x AS sk, count(DISTINCT t.id)::float8 AS n FROM ${table} AS t CROSS JOIN LATERAL jsonb_path_query(t.doc, ${path}::jsonpath, '{}'::jsonb, true) AS x WHERE ${condition(q, st, now)} AND jsonb_typeof(x) IN ('string', 'number', 'boolean') GROUP BY x`
    }
    const r = await db.sql.query<{ key: string | number; n: number; total: number }>(
      `SELECT g.key, g.n, sum(g.n) OVER ()::float8 AS total FROM (${inner}) AS g WHERE g.n >= ${st.p(agg.minDocCount)} ORDER BY ${order} LIMIT ${st.p(agg.size)}`,
      st.params,
    )
    const buckets = r.rows.map((x) => {
      const key = col ? (col.type === 'time' ? Number(x.key) : x.key) : JSON.parse(String(x.key))
      return col?.type === 'time' ? { key, key_as_string: iso(key as number), doc_count: Number(x.n) } : { key, doc_count: Number(x.n) }
    })
    const total = r.rows.length > 0 ? Number(r.rows[0]!.total) : 0
    return { doc_count_error_upper_bound: 0, sum_other_doc_count: total - buckets.reduce((s, b) => s + b.doc_count, 0), buckets }
  }
  // value_count, cardinality, min, max
  if (col) {
    if ((agg.type === 'min' || agg.type === 'max') && col.type === 'text') throw refuse(`aggregation [${agg.name}]: field [${agg.field}] holds text; [${agg.type}] needs numbers or dates`, 'illegal_argument_exception')
    const expr = agg.type === 'value_count' ? `count(${col.column})::float8` : agg.type === 'cardinality' ? `count(DISTINCT ${col.column})::float8` : `(extract(epoch FROM ${agg.type}(${col.column})) * 1000)::float8`
    const r = await db.sql.query<{ v: number | null }>(`SELECT ${expr} AS v FROM ${table} WHERE ${condition(q, st, now)}`, st.params)
    const v = r.rows[0]!.v === null ? null : Number(r.rows[0]!.v)
    return (agg.type === 'min' || agg.type === 'max') && v !== null ? { value: v, value_as_string: iso(v) } : { value: v ?? (agg.type === 'min' || agg.type === 'max' ? null : 0) }
  }
  const path = st.p(jsonPath(agg.field))
  const expr =
    agg.type === 'value_count'
      ? `count(*)::float8`
      : agg.type === 'cardinality'
        ? `count(DISTINCT x)::float8`
        : date
          ? `${agg.type}(CASE WHEN jsonb_typeof(x) = 'string' THEN x #>> '{}' END)`
          : `${agg.type}(CASE WHEN jsonb_typeof(x) = 'number' THEN (x #>> '{}')::float8 END)::float8`
  const kinds = agg.type === 'value_count' ? `jsonb_typeof(x) <> 'null'` : `jsonb_typeof(x) IN ('string', 'number', 'boolean')`
  const r = await db.sql.query<{ v: number | string | null }>(
    `SELECT ${expr} AS v FROM ${table} AS t CROSS JOIN LATERAL jsonb_path_query(t.doc, ${path}::jsonpath, '{}'::jsonb, true) AS x WHERE ${condition(q, st, now)} AND ${kinds}`,
    st.params,
  )
  const raw = r.rows[0]?.v ?? null
  if (agg.type === 'min' || agg.type === 'max') {
    if (raw === null) return { value: null }
    if (date) {
      const t = Date.parse(String(raw))
      return Number.isFinite(t) ? { value: t, value_as_string: iso(t) } : { value: null }
    }
    return { value: Number(raw) }
  }
  return { value: raw === null ? 0 : Number(raw) }
}

// ---------------------------------------------------------------------------
// _search

export interface SearchHit {
  readonly _index: SearchIndex
  readonly _type: '_doc'
  readonly _id: string
  readonly _score: null
  readonly _source?: Record<string, unknown>
  readonly sort?: unknown[]
}

/** `_search`: hits (paged, sorted, `_source` filtered), the total, and aggregations. */
export function search(db: SearchDb, index: SearchIndex, req: SearchRequest, options: Translation = { columns: true }, now = Date.now()) {
  return guarded(async () => {
    const started = Date.now()
    const path = `/${index}/_search`
    checkParams(req.params, SEARCH_PARAMS, path)
    const q = requestQuery(req, SEARCH_BODY, path)
    const body = isObject(req.body) ? req.body : {}
    const from = integer(req.params.from ?? body.from ?? 0, 'from', 0, MAX_RESULT_WINDOW)
    const size = integer(req.params.size ?? body.size ?? 10, 'size', 0, MAX_RESULT_WINDOW)
    if (from + size > MAX_RESULT_WINDOW) {
      throw refuse(`Result window is too large, from + size must be less than or equal to: [${MAX_RESULT_WINDOW}] but was [${from + size}]. Page with a range on the time field instead.`, 'illegal_argument_exception')
    }
    const asInt = req.params.rest_total_hits_as_int === 'true'
    const tth: unknown = req.params.track_total_hits ?? body.track_total_hits ?? (asInt ? true : MAX_RESULT_WINDOW)
    const track: number | boolean = tth === true || tth === 'true' ? true : tth === false || tth === 'false' ? false : integer(tth, 'track_total_hits', 0, Number.MAX_SAFE_INTEGER)
    if (asInt && track !== true) throw refuse('[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate', 'illegal_argument_exception')
    const sort = sortKeys(req)
    const source = sourceFilter(req)
    const aggs = parseAggs(body.aggs ?? body.aggregations, now, index)
    if (body.aggs !== undefined && body.aggregations !== undefined) throw refuse('use one of [aggs] and [aggregations]')

    const table = tablesOf(db)[index]
    let hits: SearchHit[] = []
    if (size > 0) {
      const st = new Statement(index, options)
      const where = condition(q, st, now)
      const order: string[] = []
      const sortValues: string[] = []
      for (const k of sort ?? []) {
        const col = k.field === '_doc' ? { column: 'id', type: 'text' as const } : st.column(k.field)
        const expr = col ? col.column : `jsonb_path_query_first(doc, ${st.p(jsonPath(k.field, ''))}::jsonpath, '{}'::jsonb, true)`
        // the time columns and id are never null: no NULLS clause, so their indexes serve the order
        const notNull = col !== undefined && (col.type === 'time' || col.column === 'id')
        order.push(`${expr} ${k.desc ? 'DESC' : 'ASC'}${notNull ? '' : ' NULLS LAST'}`)
        sortValues.push(col?.type === 'time' ? `(extract(epoch FROM ${col.column}) * 1000)::float8` : col ? col.column : `(${expr})::text`)
      }
      if (sort === undefined) order.push(`${TIME_COLUMNS[index]} DESC`)
      order.push('id ASC')
      const r = await db.sql.query<Record<string, unknown>>(
        `SELECT id, doc::text AS doc${sortValues.map((e, i) => `, ${e} AS s${i}`).join('')} FROM ${table} WHERE ${where} ORDER BY ${order.join(', ')} LIMIT ${st.p(size)} OFFSET ${st.p(from)}`,
        st.params,
      )
      hits = r.rows.map((row) => {
        const stored = JSON.parse(String(row.doc)) as Record<string, unknown>
        const doc = index === 'good' ? withNulls(stored) : stored
        const hit: SearchHit = { _index: index, _type: '_doc', _id: String(row.id), _score: null }
        const withSource = source === false ? hit : { ...hit, _source: filterSource(doc, source) }
        if (sort === undefined || sort.length === 0) return withSource
        const values = (sort ?? []).map((k, i) => {
          const v = row[`s${i}`]
          if (v === null || v === undefined) return null
          const col = k.field === '_doc' ? { type: 'text' } : st.column(k.field)
          return col?.type === 'time' ? Number(v) : col ? v : JSON.parse(String(v))
        })
        return { ...withSource, sort: values }
      })
    }

    let total: { value: number; relation: 'eq' | 'gte' } | undefined
    if (track !== false) {
      const st = new Statement(index, options)
      const where = condition(q, st, now)
      const sql = track === true ? `SELECT count(*)::float8 AS n FROM ${table} WHERE ${where}` : `SELECT count(*)::float8 AS n FROM (SELECT 1 FROM ${table} WHERE ${where} LIMIT ${st.p(track + 1)}) AS s`
      const n = Number((await db.sql.query<{ n: number }>(sql, st.params)).rows[0]!.n)
      total = track !== true && n > track ? { value: track, relation: 'gte' } : { value: n, relation: 'eq' }
    }
    const aggregations: Record<string, unknown> = {}
    for (const a of aggs) aggregations[a.name] = await runAgg(db, index, a, q, options, now)

    return {
      took: Date.now() - started,
      timed_out: false,
      _shards: SHARDS,
      hits: { ...(total === undefined ? {} : { total: asInt ? total.value : total }), max_score: null, hits },
      ...(aggs.length > 0 ? { aggregations } : {}),
    }
  })
}
