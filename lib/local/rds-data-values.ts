/**
 * The RDS Data API's values, translated to and from PostgreSQL's: a
 * statement's `:name` placeholders to the wire protocol's `$n` (each cast to
 * the type its typed value or `typeHint` gives, as the Data API binds them),
 * and a result's columns (PostgreSQL's text format, by type OID) to the Data
 * API's `Field`s, to the row objects of `formatRecordsAs: 'JSON'`, and to
 * `columnMetadata`. Used by the Data API stand-in (rds-data-server.ts).
 */
import pg from 'pg'

/** A Data API `Field` (one value of a parameter or of a record). */
export interface Field {
  readonly isNull?: boolean
  readonly booleanValue?: boolean
  readonly longValue?: number
  readonly doubleValue?: number
  readonly stringValue?: string
  /** base64 on the wire */
  readonly blobValue?: string
  readonly arrayValue?: ArrayValue
}

export interface ArrayValue {
  readonly booleanValues?: readonly boolean[]
  readonly longValues?: readonly number[]
  readonly doubleValues?: readonly number[]
  readonly stringValues?: readonly string[]
  readonly arrayValues?: readonly ArrayValue[]
}

export interface SqlParameter {
  readonly name?: string
  readonly value?: Field
  readonly typeHint?: string
}

export interface ResultSetOptions {
  readonly decimalReturnType?: string
  readonly longReturnType?: string
}

/** A request the Data API refuses before the database sees it (`BadRequestException`). */
export class RequestError extends Error {}

/** The PostgreSQL type each `typeHint` binds a `stringValue` as. */
const HINT_TYPES: Readonly<Record<string, string>> = { JSON: 'json', TIMESTAMP: 'timestamp', DECIMAL: 'numeric', UUID: 'uuid', DATE: 'date', TIME: 'time' }

/** A parameter's value for `pg` and the cast its type needs (`''`: the server infers it, as for a plain string). */
function bound(p: SqlParameter): { value: unknown; cast: string } {
  const v = p.value ?? {}
  const hint = p.typeHint
  if (hint !== undefined && !(hint in HINT_TYPES)) throw new RequestError(`Invalid typeHint: ${hint}`)
  if (v.isNull) return { value: null, cast: '' }
  if (v.booleanValue !== undefined) return { value: v.booleanValue, cast: 'boolean' }
  if (v.longValue !== undefined) return { value: String(v.longValue), cast: 'int8' }
  if (v.doubleValue !== undefined) return { value: v.doubleValue, cast: 'float8' }
  if (v.stringValue !== undefined) return { value: v.stringValue, cast: hint ? HINT_TYPES[hint]! : '' }
  if (v.blobValue !== undefined) return { value: Buffer.from(v.blobValue, 'base64'), cast: 'bytea' }
  if (v.arrayValue !== undefined) throw new RequestError('Array parameters are not supported.')
  throw new RequestError(`No value given for parameter ${p.name ?? ''}`)
}

/**
 * `sql` with its `:name` placeholders as `$n` (each name one position, cast
 * to its value's type), skipping `::` casts, string literals, quoted
 * identifiers, dollar-quoted text and comments; and the values in order. A
 * placeholder without a parameter is refused, as the Data API refuses it.
 */
export function positionalSql(sql: string, parameters: readonly SqlParameter[]): { text: string; values: unknown[] } {
  const byName = new Map<string, SqlParameter>()
  for (const p of parameters) {
    if (!p.name) throw new RequestError('Parameter name is required.')
    byName.set(p.name, p)
  }
  const order: string[] = []
  const values: unknown[] = []
  let out = ''
  let i = 0
  const n = sql.length
  while (i < n) {
    const c = sql[i]!
    const next = sql[i + 1]
    let end = i + 1
    if (c === "'" || c === '"') {
      end = sql.indexOf(c, i + 1)
      while (end >= 0 && sql[end + 1] === c) end = sql.indexOf(c, end + 2)
      end = end < 0 ? n : end + 1
    } else if (c === '-' && next === '-') {
      end = sql.indexOf('\n', i)
      end = end < 0 ? n : end + 1
    } else if (c === '/' && next === '*') {
      end = sql.indexOf('*/', i + 2)
      end = end < 0 ? n : end + 2
    } else if (c === '$' && /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.test(sql.slice(i, i + 64)) && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? ' ')) {
      const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(sql.slice(i, i + 64))![0]
      const close = sql.indexOf(tag, i + tag.length)
      end = close < 0 ? n : close + tag.length
    } else if (c === ':' && next === ':') {
      end = i + 2
    } else if (c === ':' && next !== undefined && /[A-Za-z_]/.test(next)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))![0]
      const p = byName.get(name)
      if (!p) throw new RequestError(`No value specified for parameter: ${name}`)
      let k = order.indexOf(name)
      if (k < 0) {
        k = order.push(name) - 1
        values.push(bound(p).value)
      }
      const cast = bound(p).cast
      out += cast ? `($${k + 1}::${cast})` : `$${k + 1}`
      i += 1 + name.length
      continue
    }
    out += sql.slice(i, end)
    i = end
  }
  return { text: out, values }
}

/** Type OIDs of PostgreSQL's built-in types that the Data API reads as other than text. */
const OID = {
  bool: 16, bytea: 17, int8: 20, int2: 21, int4: 23, oid: 26, json: 114, float4: 700, float8: 701, numeric: 1700,
  date: 1082, time: 1083, timestamp: 1114, timestamptz: 1184, jsonb: 3802, uuid: 2950,
} as const
const INTEGERS = new Set<number>([OID.int8, OID.int2, OID.int4, OID.oid])
const FLOATS = new Set<number>([OID.float4, OID.float8])

/** A column of a result: its name and type OID (from the wire protocol's RowDescription). */
export interface Column {
  readonly name: string
  readonly dataTypeID: number
}

/** PostgreSQL's text of a `timestamptz` in UTC (the session's zone is UTC) without its `+00`, as Aurora's Data API gives it. */
const utcText = (text: string) => text.replace(/\+00(?::00)?$/, '')

/** `\x…` (bytea's text format) as bytes. */
const bytes = (text: string) => Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex')

/** The element parser of an array type (pg's own), if it is one. */
function arrayElements(oid: number, text: string): unknown[] | undefined {
  if (!text.startsWith('{')) return undefined
  const parse = pg.types.getTypeParser(oid, 'text') as (t: string) => unknown
  const v = parse(text)
  return Array.isArray(v) ? v : undefined
}

/** One value of a row as the JSON of `formatRecordsAs: 'JSON'`. */
export function jsonValue(text: string | null, oid: number, o: ResultSetOptions = {}): unknown {
  if (text === null) return null
  if (oid === OID.bool) return text === 't'
  if (INTEGERS.has(oid)) return o.longReturnType === 'STRING' ? text : Number(text)
  if (FLOATS.has(oid)) return Number.isFinite(Number(text)) ? Number(text) : text
  if (oid === OID.numeric) return o.decimalReturnType === 'DOUBLE_OR_LONG' && Number.isFinite(Number(text)) ? Number(text) : text
  if (oid === OID.timestamptz) return utcText(text)
  if (oid === OID.bytea) return bytes(text).toString('base64')
  const elements = arrayElements(oid, text)
  if (elements !== undefined) return elements.map((e) => (e instanceof Date ? e.toISOString() : e))
  return text
}

/** One value of a row as a Data API `Field`. */
export function fieldValue(text: string | null, oid: number, o: ResultSetOptions = {}): Field {
  if (text === null) return { isNull: true }
  if (oid === OID.bool) return { booleanValue: text === 't' }
  if (INTEGERS.has(oid)) return o.longReturnType === 'STRING' ? { stringValue: text } : { longValue: Number(text) }
  if (FLOATS.has(oid)) return Number.isFinite(Number(text)) ? { doubleValue: Number(text) } : { stringValue: text }
  if (oid === OID.numeric) return o.decimalReturnType === 'DOUBLE_OR_LONG' && Number.isFinite(Number(text)) ? (Number.isInteger(Number(text)) ? { longValue: Number(text) } : { doubleValue: Number(text) }) : { stringValue: text }
  if (oid === OID.timestamptz) return { stringValue: utcText(text) }
  if (oid === OID.bytea) return { blobValue: bytes(text).toString('base64') }
  const elements = arrayElements(oid, text)
  if (elements !== undefined) return { arrayValue: arrayOf(elements) }
  return { stringValue: text }
}

function arrayOf(xs: readonly unknown[]): ArrayValue {
  if (xs.some(Array.isArray)) return { arrayValues: xs.map((x) => arrayOf(Array.isArray(x) ? x : [x])) }
  if (xs.every((x) => typeof x === 'boolean')) return { booleanValues: xs as boolean[] }
  if (xs.every((x) => typeof x === 'number' && Number.isInteger(x))) return { longValues: xs as number[] }
  if (xs.every((x) => typeof x === 'number')) return { doubleValues: xs as number[] }
  return { stringValues: xs.map((x) => (x === null ? null : x instanceof Date ? x.toISOString() : String(x))) as string[] }
}

/** JDBC's type codes (java.sql.Types), which the Data API's `columnMetadata.type` carries. */
const JDBC: Readonly<Record<number, [number, string]>> = {
  [OID.bool]: [-7, 'bool'], [OID.bytea]: [-2, 'bytea'], [OID.int8]: [-5, 'int8'], [OID.int2]: [5, 'int2'], [OID.int4]: [4, 'int4'], [OID.oid]: [-5, 'oid'],
  [OID.json]: [1111, 'json'], [OID.float4]: [7, 'float4'], [OID.float8]: [8, 'float8'], [OID.numeric]: [2, 'numeric'], [OID.date]: [91, 'date'],
  [OID.time]: [92, 'time'], [OID.timestamp]: [93, 'timestamp'], [OID.timestamptz]: [93, 'timestamptz'], [OID.jsonb]: [1111, 'jsonb'], [OID.uuid]: [1111, 'uuid'],
  25: [12, 'text'], 1043: [12, 'varchar'], 1042: [1, 'bpchar'], 19: [12, 'name'],
}

/** `columnMetadata` of a result's columns (what the wire protocol tells: name and type). */
export function columnMetadata(columns: readonly Column[]): Record<string, unknown>[] {
  return columns.map((c) => {
    const [type, typeName] = JDBC[c.dataTypeID] ?? [1111, `oid:${c.dataTypeID}`]
    return { name: c.name, label: c.name, type, typeName, schemaName: '', tableName: '', isAutoIncrement: false, isSigned: [-5, 4, 5, 7, 8, 2].includes(type), isCurrency: false, isCaseSensitive: type === 12 || type === 1, nullable: 2, precision: 0, scale: 0, arrayBaseColumnType: 0 }
  })
}
