/**
 * `sql_query_enrichment_config`: runs a query on PostgreSQL or MySQL with
 * values of the event and attaches the rows as contexts. Each input fills the
 * `?` placeholder at its position (bound by the driver, never written into the
 * SQL); atomic fields keep their type, JSON values are numbers, booleans or
 * strings (a string that reads as a number or a boolean is bound as one, as
 * Snowplow does). When an input finds nothing (a null field, no matching
 * entity, a JSON null, object or array), no query runs and no context is
 * added. The rows become JSON objects (column names per `propertyNames`),
 * checked against `expectedRows` and described by the output schema: one
 * context per row (`EVERY_ROW`) or one for all rows (`ALL_ROWS`: an array when
 * more than one row may come, else the row). Answers are kept in an LRU cache
 * (`cache.size` entries for `cache.ttl` seconds, failures a tenth of it) by
 * bound values. A failed query or an unexpected number of rows is an
 * enrichment failure, or nothing at all with `ignoreOnError`.
 */
import { toIgluUri } from '../../iglu/keys'
import type { EnrichedEvent, Entity } from '../event'
import { F, FIELD_KINDS } from '../fields'
import { quote } from '../json'
import type { Enrichment, StepResult } from '../steps'
import { CachedLookup, inputSource, keepFor, pull, type InputSource, type LookupOutcome, type SqlDatabase, type SqlDatabaseConfig, type SqlRows, type SqlValue } from './lookups'
import { ConfigError, orderOf, type EnrichmentModule } from './module'

export type ExpectedRows = 'EXACTLY_ONE' | 'AT_MOST_ONE' | 'AT_LEAST_ONE' | 'AT_LEAST_ZERO'
export type Describes = 'ALL_ROWS' | 'EVERY_ROW'
export type PropertyNames = 'AS_IS' | 'CAMEL_CASE' | 'PASCAL_CASE' | 'SNAKE_CASE' | 'LOWER_CASE' | 'UPPER_CASE'

const EXPECTED: readonly ExpectedRows[] = ['EXACTLY_ONE', 'AT_MOST_ONE', 'AT_LEAST_ONE', 'AT_LEAST_ZERO']
const DESCRIBES: readonly Describes[] = ['ALL_ROWS', 'EVERY_ROW']
const NAMES: readonly PropertyNames[] = ['AS_IS', 'CAMEL_CASE', 'PASCAL_CASE', 'SNAKE_CASE', 'LOWER_CASE', 'UPPER_CASE']
/** How long a query may run (ms). */
export const QUERY_TIMEOUT_MS = 10_000
/** Rows read from one answer at most. */
export const MAX_ROWS = 10_000

export interface SqlInput {
  readonly placeholder: number
  readonly source: InputSource
}

export interface SqlQuerySettings {
  readonly inputs: readonly SqlInput[]
  readonly database: SqlDatabaseConfig
  readonly sql: string
  readonly placeholders: number
  readonly expectedRows: ExpectedRows
  readonly schema: string
  readonly describes: Describes
  readonly propertyNames: PropertyNames
  readonly cacheSize: number
  readonly cacheTtlSeconds: number
  readonly ignoreOnError: boolean
}

/**
 * The `?` placeholders of a statement outside string literals, quoted names and
 * comments (and PostgreSQL's dollar-quoted strings); `??` is a literal `?`
 * (as in JDBC, for PostgreSQL's JSON operators). Returns the statement with
 * PostgreSQL's `$1`, `$2`, … in their place (MySQL keeps `?`), and their number.
 */
export function placeholders(sql: string, engine: 'postgresql' | 'mysql'): { sql: string; count: number } {
  let out = ''
  let count = 0
  const n = sql.length
  let i = 0
  const pg = engine === 'postgresql'
  const copyQuoted = (q: string, backslash: boolean) => {
    // from the opening quote at i to the closing one (doubled quotes stay inside)
    let j = i + 1
    for (; j < n; j++) {
      const c = sql[j]
      if (backslash && c === '\\') j++
      else if (c === q) {
        if (sql[j + 1] === q) j++
        else break
      }
    }
    out += sql.slice(i, j + 1)
    i = j + 1
  }
  while (i < n) {
    const c = sql[i]!
    if (c === "'") {
      // PostgreSQL reads backslashes as escapes only in E'…' strings
      const escaped = !pg || ((sql[i - 1] === 'e' || sql[i - 1] === 'E') && !/[A-Za-z0-9_]/.test(sql[i - 2] ?? ''))
      copyQuoted("'", escaped)
    } else if (c === '"') copyQuoted('"', !pg)
    else if (c === '`' && !pg) copyQuoted('`', false)
    else if ((c === '-' && sql[i + 1] === '-') || (c === '#' && !pg)) {
      const j = sql.indexOf('\n', i)
      const end = j < 0 ? n : j
      out += sql.slice(i, end)
      i = end
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 0
      let j = i
      while (j < n) {
        if (sql[j] === '/' && sql[j + 1] === '*') {
          depth++
          j += 2
        } else if (sql[j] === '*' && sql[j + 1] === '/') {
          depth--
          j += 2
          if (depth === 0 || !pg) break
        } else j++
      }
      out += sql.slice(i, j)
      i = j
    } else if (c === '$' && pg && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 130))?.[0]
      if (tag === undefined) {
        out += c
        i++
        continue
      }
      const end = sql.indexOf(tag, i + tag.length)
      const stop = end < 0 ? n : end + tag.length
      out += sql.slice(i, stop)
      i = stop
    } else if (c === '?') {
      if (sql[i + 1] === '?') {
        out += '?'
        i += 2
      } else {
        count++
        out += pg ? `$${count}` : '?'
        i++
      }
    } else {
      out += c
      i++
    }
  }
  return { sql: out, count }
}

/** The settings of a configuration's `parameters`; throws `ConfigError` for what cannot be used. */
export function sqlQuerySettings(p: Record<string, any>): SqlQuerySettings {
  const inputs: SqlInput[] = ((p.inputs ?? []) as Record<string, any>[]).map((entry, i) => {
    const at = entry?.placeholder
    if (!Number.isInteger(at) || at < 1) throw new ConfigError(`inputs[${i}]: placeholder must be a position from 1, got ${JSON.stringify(at)}`)
    return { placeholder: at, source: inputSource(entry, `inputs[${i}] (placeholder ${at})`) }
  })
  const engines = Object.keys(p.database ?? {}).filter((k) => k === 'postgresql' || k === 'mysql')
  if (engines.length !== 1) throw new ConfigError('database must name exactly one of postgresql and mysql')
  const engine = engines[0] as 'postgresql' | 'mysql'
  const db = p.database[engine] as Record<string, any>
  for (const k of ['host', 'username', 'database'] as const) if (typeof db[k] !== 'string' || db[k] === '') throw new ConfigError(`database.${engine}.${k} is required`)
  if (!Number.isInteger(db.port) || db.port < 1 || db.port > 65535) throw new ConfigError(`database.${engine}.port must be a port number, got ${JSON.stringify(db.port)}`)
  const database: SqlDatabaseConfig = { engine, host: db.host, port: db.port, sslMode: db.sslMode === true, username: db.username, password: String(db.password ?? ''), database: db.database }
  const text = p.query?.sql
  if (typeof text !== 'string' || text.trim() === '') throw new ConfigError('query.sql is required')
  const ph = placeholders(text, engine)
  const positions = [...new Set(inputs.map((x) => x.placeholder))].sort((a, b) => a - b)
  const wanted = Array.from({ length: ph.count }, (_, i) => i + 1)
  if (positions.join() !== wanted.join()) {
    throw new ConfigError(`query.sql has ${ph.count} placeholder(s) (?) but the inputs fill ${positions.length ? `position(s) ${positions.join(', ')}` : 'none'}: every position from 1 to ${ph.count} needs an input, and no other`)
  }
  const o = p.output ?? {}
  const expectedRows = o.expectedRows ?? 'AT_LEAST_ZERO'
  if (!EXPECTED.includes(expectedRows)) throw new ConfigError(`output.expectedRows must be one of ${EXPECTED.join(', ')}, got ${JSON.stringify(expectedRows)}`)
  const j = o.json ?? {}
  if (typeof j.schema !== 'string' || !/^iglu:[a-zA-Z0-9-_.]+\/[a-zA-Z0-9-_]+\/[a-zA-Z0-9-_]+\/[1-9][0-9]*(?:-(?:0|[1-9][0-9]*)){2}$/.test(j.schema)) {
    throw new ConfigError(`output.json.schema ${JSON.stringify(j.schema)} is not an Iglu URI (iglu:vendor/name/jsonschema/1-0-0)`)
  }
  if (!DESCRIBES.includes(j.describes)) throw new ConfigError(`output.json.describes must be one of ${DESCRIBES.join(', ')}, got ${JSON.stringify(j.describes)}`)
  if (!NAMES.includes(j.propertyNames)) throw new ConfigError(`output.json.propertyNames must be one of ${NAMES.join(', ')}, got ${JSON.stringify(j.propertyNames)}`)
  const cache = p.cache ?? {}
  return {
    inputs,
    database,
    sql: ph.sql,
    placeholders: ph.count,
    expectedRows,
    schema: j.schema,
    describes: j.describes,
    propertyNames: j.propertyNames,
    cacheSize: Math.max(0, Math.floor(Number(cache.size) || 0)),
    cacheTtlSeconds: Math.max(0, Number(cache.ttl) || 0),
    ignoreOnError: p.ignoreOnError === true,
  }
}

/** A column name as `propertyNames` asks (Snowplow's rules: `_x` → `X` for camel and Pascal case, `X` → `_x` for snake case). */
export function propertyName(name: string, mode: PropertyNames): string {
  switch (mode) {
    case 'AS_IS':
      return name
    case 'CAMEL_CASE':
      return name.replace(/_([a-z\d])/g, (_, c: string) => c.toUpperCase())
    case 'PASCAL_CASE': {
      const s = name.replace(/_([a-z\d])/g, (_, c: string) => c.toUpperCase())
      return s.charAt(0).toUpperCase() + s.slice(1)
    }
    case 'SNAKE_CASE':
      return name.replace(/[A-Z\d]/g, (c) => `_${c.toLowerCase()}`)
    case 'LOWER_CASE':
      return name.toLowerCase()
    case 'UPPER_CASE':
      return name.toUpperCase()
  }
}

const NUMBER_RE = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
const JAVA_NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** A JSON value bound to a placeholder: numbers and booleans as they are, strings that read as a number or boolean as one; null, objects and arrays are no value. */
export function jsonParam(v: unknown): SqlValue | undefined {
  if (typeof v === 'number' || typeof v === 'boolean') return v
  if (typeof v === 'string') {
    const t = v.trim()
    if (JAVA_NUMBER_RE.test(t)) {
      const n = Number(t)
      // an integer beyond what a double holds exactly stays text
      return /^[+-]?\d+$/.test(t) && !Number.isSafeInteger(n) ? v : n
    }
    if (/^(?:true|false)$/i.test(v)) return v.toLowerCase() === 'true'
    return v
  }
  return undefined
}

/** An atomic field bound with its type: numbers for integer, boolean (0/1), float and decimal columns, text for the rest. */
export function pojoParam(field: keyof typeof F, v: string | number): SqlValue {
  const kind = FIELD_KINDS[F[field]]
  if (kind === 'int' || kind === 'bool' || kind === 'dec' || kind === 'float') {
    const n = typeof v === 'number' ? v : Number(v)
    return kind === 'float' ? Math.fround(n) : n
  }
  return String(v)
}

/** A cell as JSON text: the driver's value, or for `{text}` (types with no JSON counterpart) the text as JSON when it reads as JSON, else as a string. */
function cellJson(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null'
  if (typeof v === 'string') return quote(v)
  if (typeof v === 'object' && typeof (v as { text?: unknown }).text === 'string') {
    const t = (v as { text: string }).text
    if (NUMBER_RE.test(t)) return t
    try {
      return JSON.stringify(JSON.parse(t))
    } catch {
      return quote(t)
    }
  }
  return JSON.stringify(v) ?? 'null'
}

/** The rows as compact JSON objects (text), keys per `propertyNames` (a repeated name keeps its last value). */
export function rowObjects(r: SqlRows, mode: PropertyNames): string[] {
  const names = r.columns.map((c) => propertyName(c, mode))
  return r.rows.map((row) => {
    const fields = new Map<string, string>()
    names.forEach((name, i) => fields.set(name, cellJson(row[i])))
    return `{${[...fields].map(([k, v]) => `${quote(k)}:${v}`).join(',')}}`
  })
}

/** The contexts of the rows, or why the rows are not what `expectedRows` says. */
export function envelope(rows: readonly string[], s: Pick<SqlQuerySettings, 'expectedRows' | 'describes' | 'schema'>): { contexts: Entity[] } | { error: string } {
  const n = rows.length
  if (s.expectedRows === 'EXACTLY_ONE' && n !== 1) return { error: `exactly one row was expected, ${n} given` }
  if (s.expectedRows === 'AT_MOST_ONE' && n > 1) return { error: `at most one row was expected, ${n} given` }
  if (s.expectedRows === 'AT_LEAST_ONE' && n === 0) return { error: 'at least one row was expected, 0 given' }
  const ctx = (data: string): Entity => ({ schema: s.schema, data })
  if (s.describes === 'EVERY_ROW') return { contexts: rows.map(ctx) }
  if (s.expectedRows === 'AT_LEAST_ONE' || s.expectedRows === 'AT_LEAST_ZERO') return { contexts: [ctx(`[${rows.join(',')}]`)] }
  return { contexts: rows.length ? [ctx(rows[0]!)] : [] }
}

export class SqlQuery extends CachedLookup {
  constructor(
    readonly settings: SqlQuerySettings,
    private readonly db: SqlDatabase,
    now: () => number,
    schemaKey: string,
  ) {
    super(settings.cacheSize, now, schemaKey, 'sql-query', settings.ignoreOnError)
  }

  /** The values bound to placeholders 1…n, or undefined when one is missing (no query then). */
  params(ev: EnrichedEvent): SqlValue[] | undefined {
    const at = new Map<number, SqlValue>()
    for (const input of this.settings.inputs) {
      const found = pull(input.source, ev)
      const v = found === undefined ? undefined : found.kind === 'pojo' ? pojoParam(found.field, found.value) : jsonParam(found.value)
      if (v === undefined) at.delete(input.placeholder)
      else at.set(input.placeholder, v)
    }
    const out: SqlValue[] = []
    for (let i = 1; i <= this.settings.placeholders; i++) {
      const v = at.get(i)
      if (v === undefined) return undefined
      out.push(v)
    }
    return out
  }

  run(ev: EnrichedEvent): StepResult | Promise<StepResult> {
    const params = this.params(ev)
    if (params === undefined) return {}
    return this.answer(JSON.stringify(params), () => this.query(params))
  }

  private async query(params: SqlValue[]): Promise<{ value: LookupOutcome; ttlMs: number }> {
    const s = this.settings
    const ttl = s.cacheTtlSeconds * 1000
    const failed = (error: string) => ({ value: { errors: [error] }, ttlMs: ttl / 10 })
    const where = `${s.database.engine} ${s.database.host}:${s.database.port}/${s.database.database}`
    let rows: SqlRows
    try {
      rows = await this.db.query(s.sql, params, QUERY_TIMEOUT_MS)
    } catch (err) {
      return failed(`SQL query on ${where} failed: ${(err as Error).message}`)
    }
    if (rows.rows.length > MAX_ROWS) return failed(`SQL query on ${where}: more than ${MAX_ROWS} rows`)
    const e = envelope(rowObjects(rows, s.propertyNames), s)
    return 'error' in e ? failed(`SQL query on ${where}: ${e.error}`) : { value: e, ttlMs: keepFor(e.contexts, ttl) }
  }
}

export const sqlQuery: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'sql_query_enrichment_config',
  models: [1],
  create(config, ctx): Enrichment {
    const settings = sqlQuerySettings(config.parameters as Record<string, any>)
    const connect = ctx.services?.sql
    if (!connect) throw new ConfigError('the SQL query enrichment needs SQL connections, which this runtime does not provide')
    const q = new SqlQuery(settings, connect(settings.database), ctx.services!.now, toIgluUri(config.schema))
    return { id: 'sql-query', order: orderOf('sqlQuery', ctx.legacyOrder), run: (ev) => q.run(ev) }
  },
}
