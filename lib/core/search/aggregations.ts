/** `_search` aggregations (terms, date_histogram, value_count, cardinality, min, max): parsed from the body and run as SQL. */
import { iso, parseDate, roundDate } from './dates'
import { checkText, COLUMNS, condition, jsonPath, Statement, TIME_FIELDS, type Translation } from './query-sql'
import { refuse, type Query } from './query-tree'
import { integer, isObject } from './request'
import { tablesOf, type SearchDb, type SearchIndex } from './store'

/** Most buckets one aggregation may return. */
export const MAX_BUCKETS = 10_000

type Agg =
  | { name: string; type: 'terms'; field: string; size: number; byKey: boolean; desc: boolean; minDocCount: number }
  | { name: string; type: 'date_histogram'; field: string; fixedMs?: number; calendar?: string; minDocCount: number; bounds?: { min: number; max: number } }
  | { name: string; type: 'value_count' | 'cardinality' | 'min' | 'max'; field: string }

const CALENDAR: Record<string, string> = { minute: 'minute', '1m': 'minute', hour: 'hour', '1h': 'hour', day: 'day', '1d': 'day', week: 'week', '1w': 'week', month: 'month', '1M': 'month', quarter: 'quarter', '1q': 'quarter', year: 'year', '1y': 'year' }
const FIXED_UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const AGG_TYPES = 'terms, date_histogram, value_count, cardinality, min, max'

export function parseAggs(v: unknown, now: number, index: SearchIndex): Agg[] {
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

export async function runAgg(db: SearchDb, index: SearchIndex, agg: Agg, q: Query, options: Translation, now: number): Promise<unknown> {
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
