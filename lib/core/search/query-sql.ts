/** The translation of a query tree to parameterised SQL on the search store's tables (typed columns or SQL/JSON paths). */
import { iso, parseDate } from './dates'
import { refuse, type Query } from './query-tree'
import { shownField, type ComputedField } from './shown-fields'
import { UNION_KEYS } from './unions'
import type { SearchIndex } from './store'
import { wordsOf } from './words'

export interface Column {
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

/**
 * The computed shown fields (`./shown-fields.ts`) in SQL over the document,
 * as the pages compute them (null where a page shows nothing).
 */
const COMPUTED_SQL: Record<ComputedField, string> = {
  event_schema: `('iglu:' || (doc->>'event_vendor') || '/' || (doc->>'event_name') || '/' || (doc->>'event_format') || '/' || (doc->>'event_version'))`,
  failure_type: `substring(doc->>'schema' from '^iglu:[^/]+/([^/]+)/')`,
  processor: `((doc #>> '{data,processor,artifact}') || ' ' || (doc #>> '{data,processor,version}'))`,
}
/** Typed columns holding the same values as a computed field. */
const COMPUTED_COLUMNS: Partial<Record<ComputedField, Column>> = {
  event_schema: { column: 'schema_uri', type: 'text' },
  failure_type: { column: 'failure_type', type: 'text' },
}

/** The time field each index is histogrammed and aged on, by its document name. */
export const TIME_FIELDS: Record<SearchIndex, string> = { good: 'collector_tstamp', bad: 'data.failure.timestamp' }

export interface Translation {
  /** Use the typed columns where a field has one (false: always the document; for checking that both agree). */
  readonly columns: boolean
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export function checkText(s: string, what: string): string {
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

/**
 * A SQL/JSON path on the bad index that finds a key under any name the store
 * keeps it by (`error` holding a string is stored as `error_str`, a list as
 * `error_list`: ./unions.ts), so a path written as the bad row came (as the
 * pages show it) matches, and so does the stored name.
 */
export function storedNamesPath(field: string, tail = '[*]'): string {
  checkText(field, 'a field name')
  const steps = field.split('.').map((seg) =>
    UNION_KEYS.has(seg) ? ` ? (@.type() == "object").keyvalue() ? (${[seg, `${seg}_str`, `${seg}_list`].map((k) => `@.key == ${JSON.stringify(k)}`).join(' || ')}).value` : `.${JSON.stringify(seg)}`,
  )
  return `lax $${steps.join('')}${tail}`
}

export class Statement {
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
    const columns = COLUMNS[this.index]
    return this.options.columns && Object.prototype.hasOwnProperty.call(columns, field) ? columns[field] : undefined
  }
  /** The document path of a field of a query: the path of a shown name, else the field itself. */
  pathOf(field: string): string {
    const shown = field === '*' ? undefined : shownField(this.index, field)
    return shown && 'path' in shown ? shown.path : field
  }
  /** Where a field of a query is held apart from the document: its typed column, or the SQL computing a computed shown name. */
  queryColumn(field: string): Column | undefined {
    if (field === '*') return undefined
    const shown = shownField(this.index, field)
    if (shown && 'computed' in shown) return (this.options.columns ? COMPUTED_COLUMNS[shown.computed] : undefined) ?? { column: COMPUTED_SQL[shown.computed], type: 'text' }
    return this.column(this.pathOf(field))
  }
  /** Whether a field of a query is a computed shown name (a text computed from the document). */
  isComputed(field: string): boolean {
    const shown = field === '*' ? undefined : shownField(this.index, field)
    return shown !== undefined && 'computed' in shown
  }
  /** The SQL/JSON path of a field of a query (a shown name's path; every value under it for a `deep` one). */
  queryPath(field: string): string {
    if (field === '*') return jsonPath(field)
    const shown = shownField(this.index, field)
    const [path, tail] = shown && 'path' in shown ? [shown.path, 'deep' in shown && shown.deep ? '.**' : '[*]'] : [field, '[*]']
    return this.index === 'bad' ? storedNamesPath(path, tail) : jsonPath(path, tail)
  }
  isDate(field: string): boolean {
    return field === TIME_FIELDS[this.index] || (this.index === 'good' && /^[a-z_]+_tstamp$/.test(field))
  }
  /** `jsonb_path_exists` of `field` with a filter over its values and variables. */
  pathExists(field: string, filter: string, vars: Record<string, unknown> = {}): string {
    for (const v of Object.values(vars)) if (typeof v === 'string') checkText(v, 'a value')
    return `jsonb_path_exists(doc, ${this.p(`${this.queryPath(field)} ? (${filter})`)}::jsonpath, ${this.p(JSON.stringify(vars))}::jsonb, true)`
  }
  /** Some string value of `field` is LIKE (or ILIKE) `pattern`. */
  pathLike(field: string, pattern: string, insensitive: boolean): string {
    return `EXISTS (SELECT 1 FROM jsonb_path_query(doc, ${this.p(this.queryPath(field))}::jsonpath, '{}'::jsonb, true) AS x WHERE jsonb_typeof(x) = 'string' AND (x #>> '{}') ${insensitive ? 'ILIKE' : 'LIKE'} ${this.p(pattern)})`
  }
}

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

/**
 * The SQL condition of a query on an index. Bad rows a recovery run
 * replayed are left out of the bad index (their replay is in the good one,
 * or a new bad row).
 */
export function condition(q: Query, st: Statement, now: number): string {
  const c = queryCondition(q, st, now)
  return st.index === 'bad' ? `recovered IS NULL AND (${c})` : c
}

function queryCondition(q: Query, st: Statement, now: number): string {
  switch (q.kind) {
    case 'all':
      return 'TRUE'
    case 'none':
      return 'FALSE'
    case 'ids':
      return q.values.length === 0 ? 'FALSE' : `id IN (${q.values.map((v) => st.p(v)).join(', ')})`
    case 'bool': {
      const parts: string[] = []
      for (const x of [...q.must, ...q.filter]) parts.push(`(${queryCondition(x, st, now)})`)
      if (q.mustNot.length > 0) parts.push(`NOT (${q.mustNot.map((x) => `(${queryCondition(x, st, now)})`).join(' OR ')})`)
      if (q.minimumShouldMatch > 0) {
        if (q.minimumShouldMatch > q.should.length) return 'FALSE'
        const should = q.should.map((x) => `(${queryCondition(x, st, now)})`)
        parts.push(q.minimumShouldMatch === 1 ? `(${should.join(' OR ')})` : `((${should.map((s) => `${s}::int`).join(' + ')}) >= ${st.p(q.minimumShouldMatch)})`)
      }
      return parts.length === 0 ? 'TRUE' : parts.join(' AND ')
    }
    case 'eq': {
      const col = st.queryColumn(q.field)
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
      const col = st.queryColumn(q.field)
      return col ? `${col.column} IS NOT NULL` : st.pathExists(q.field, '@.type() != "null"')
    }
    case 'prefix': {
      const col = st.queryColumn(q.field)
      if (col?.type === 'text') return known(col, q.caseInsensitive ? `starts_with(lower(${col.column}), lower(${st.p(q.value)}))` : `starts_with(${col.column}, ${st.p(q.value)})`)
      const like = `${likePattern(q.value, [])}%`
      if (q.caseInsensitive || col) return st.pathLike(q.field, like, q.caseInsensitive === true)
      return st.pathExists(q.field, '@ starts with $p', { p: q.value })
    }
    case 'wildcard': {
      const col = st.queryColumn(q.field)
      const like = likePattern(q.pattern, q.wild)
      if (col?.type === 'text') return known(col, `${col.column} ${q.caseInsensitive ? 'ILIKE' : 'LIKE'} ${st.p(like)}`)
      return st.pathLike(q.field, like, q.caseInsensitive === true)
    }
    case 'range': {
      const bounds = (['gt', 'gte', 'lt', 'lte'] as const).filter((k) => q[k] !== undefined)
      if (bounds.length === 0) return q.field === '*' ? 'TRUE' : queryCondition({ kind: 'exists', field: q.field }, st, now)
      if (q.field === '*') throw refuse('a range needs a field')
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const
      const col = st.queryColumn(q.field)
      if (st.isDate(st.pathOf(q.field))) {
        const at = (k: (typeof bounds)[number]) => iso(parseDate(q[k]!, now, k === 'gt' || k === 'lte'))
        if (col) return bounds.map((k) => `${col.column} ${op[k]} ${st.p(at(k))}::timestamptz`).join(' AND ')
        const vars = Object.fromEntries(bounds.map((k) => [k, at(k)]))
        return st.pathExists(q.field, bounds.map((k) => `@.datetime() ${op[k]} $${k}.datetime()`).join(' && '), vars)
      }
      // a computed text: compared as text, code point by code point (as SQL/JSON compares strings)
      if (col && st.isComputed(q.field)) return known(col, bounds.map((k) => `${col.column} COLLATE "C" ${op[k]} ${st.p(String(q[k]))}`).join(' AND '))
      const vars = Object.fromEntries(bounds.map((k) => {
        const b = q[k]!
        return [k, typeof b === 'string' && NUMBER.test(b) && Number.isFinite(Number(b)) ? Number(b) : b]
      }))
      return st.pathExists(q.field, bounds.map((k) => `@ ${op[k]} $${k}`).join(' && '), vars)
    }
  }
}
