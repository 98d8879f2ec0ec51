/**
 * Connection pools for the SQL query enrichment: PostgreSQL with `pg`,
 * MySQL and MariaDB with `mysql2`, one pool per database settings, at most
 * `SQL_POOL_SIZE` connections each, shared by every event in flight. Values
 * are bound by the drivers (PostgreSQL's `$n`, MySQL's prepared statements).
 * Cells come back as the enrichment writes them into JSON: numbers, booleans
 * and strings for the types that have one, `{text}` for the others (exact
 * numbers, JSON documents, timestamps, …; see `SqlRows`). A driver is loaded
 * when its first pool opens, so that deployments without SQL lookups never load it.
 */
import type mysql from 'mysql2/promise'
import type pg from 'pg'
import type { SqlDatabase, SqlDatabaseConfig, SqlRows, SqlValue } from '../core/enrich/enrichments/lookups'

export const SQL_POOL_SIZE = 8
const CONNECT_TIMEOUT_MS = 5_000
const IDLE_MS = 30_000

export interface ClosablePool extends SqlDatabase {
  close(): Promise<void>
}

export type SqlPools = Map<string, ClosablePool>

/** The pool for these settings, opened on first use. */
export function sqlDatabase(pools: SqlPools, db: SqlDatabaseConfig): ClosablePool {
  const key = JSON.stringify([db.engine, db.host, db.port, db.sslMode, db.username, db.password, db.database])
  let p = pools.get(key)
  if (!p) {
    p = lazy(() => (db.engine === 'postgresql' ? postgresPool(db) : mysqlPool(db)))
    pools.set(key, p)
  }
  return p
}

/** A pool opened at its first query. */
function lazy(open: () => Promise<ClosablePool>): ClosablePool {
  let opened: Promise<ClosablePool> | undefined
  return {
    query: async (sql, params, timeoutMs) => (await (opened ??= open())).query(sql, params, timeoutMs),
    close: async () => {
      if (opened) await (await opened).close()
    },
  }
}

const raw = (v: string) => v
const RAW_TYPES = { getTypeParser: () => raw } as unknown as pg.CustomTypesConfig

/** `YYYY-MM-DD` as the instant at midnight UTC, written as Snowplow writes a date (`…T00:00:00.000Z`). */
function dateText(d: string): unknown {
  return /^\d{4}-\d{2}-\d{2}$/.test(d) ? `${d}T00:00:00.000Z` : { text: d }
}

/** A PostgreSQL value (its text) by type OID. */
function pgCell(v: string | null, oid: number): unknown {
  if (v === null) return null
  switch (oid) {
    case 16: // bool
      return v === 't'
    case 21: // int2
    case 23: // int4
      return Number(v)
    case 700: // float4
    case 701: // float8
      return Number(v)
    case 25: // text
    case 1043: // varchar
    case 1042: // bpchar
    case 19: // name
    case 18: // char
      return v
    case 1082: // date
      return dateText(v)
    default: // int8, numeric, json(b), timestamps, uuid, arrays, …
      return { text: v }
  }
}

async function postgresPool(db: SqlDatabaseConfig): Promise<ClosablePool> {
  const { default: driver } = await import('pg')
  const pool = new driver.Pool({
    host: db.host,
    port: db.port,
    user: db.username,
    password: db.password,
    database: db.database,
    ssl: db.sslMode ? { rejectUnauthorized: false } : false,
    max: SQL_POOL_SIZE,
    idleTimeoutMillis: IDLE_MS,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    allowExitOnIdle: true,
  })
  // a broken idle connection leaves the pool; the next query opens another
  pool.on('error', () => {})
  return {
    async query(sql: string, params: readonly SqlValue[], timeoutMs: number): Promise<SqlRows> {
      const r = await pool.query({ text: sql, values: params as SqlValue[], rowMode: 'array', types: RAW_TYPES, query_timeout: timeoutMs } as pg.QueryArrayConfig)
      const fields = r.fields
      return { columns: fields.map((f) => f.name), rows: (r.rows as (string | null)[][]).map((row) => row.map((v, i) => pgCell(v, fields[i]!.dataTypeID))) }
    },
    close: () => pool.end(),
  }
}

/** MySQL column types (`mysql2`'s `columnType`). */
const T = { DECIMAL: 0, TINY: 1, SHORT: 2, LONG: 3, FLOAT: 4, DOUBLE: 5, LONGLONG: 8, INT24: 9, DATE: 10, YEAR: 13, NEWDATE: 14, BIT: 16, NEWDECIMAL: 246 } as const
const BINARY_CHARSET = 63

function mysqlCell(v: unknown, f: mysql.FieldPacket): unknown {
  if (v === null || v === undefined) return null
  const type = f.columnType ?? f.type
  switch (type) {
    case T.TINY:
      // TINYINT(1) is MySQL's boolean
      return f.columnLength === 1 ? Number(v) !== 0 : Number(v)
    case T.SHORT:
    case T.LONG:
    case T.INT24:
    case T.YEAR:
    case T.FLOAT:
    case T.DOUBLE:
      return Number(v)
    case T.LONGLONG:
    case T.DECIMAL:
    case T.NEWDECIMAL:
      return { text: String(v) }
    case T.DATE:
    case T.NEWDATE:
      return dateText(String(v))
    case T.BIT:
      return Buffer.isBuffer(v) && v.length === 1 && f.columnLength === 1 ? v[0] !== 0 : { text: Buffer.isBuffer(v) ? v.toString('hex') : String(v) }
    default:
      if (Buffer.isBuffer(v)) return f.characterSet === BINARY_CHARSET ? v.toString('base64') : v.toString('utf8')
      // strings (JSON columns included, as MySQL's own driver gives them), and datetimes as MySQL writes them
      return String(v)
  }
}

async function mysqlPool(db: SqlDatabaseConfig): Promise<ClosablePool> {
  const { default: driver } = await import('mysql2/promise')
  const pool = driver.createPool({
    host: db.host,
    port: db.port,
    user: db.username,
    password: db.password,
    database: db.database,
    ssl: db.sslMode ? { rejectUnauthorized: false } : undefined,
    connectionLimit: SQL_POOL_SIZE,
    maxIdle: SQL_POOL_SIZE,
    idleTimeout: IDLE_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    waitForConnections: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    jsonStrings: true,
  })
  return {
    async query(sql: string, params: readonly SqlValue[], timeoutMs: number): Promise<SqlRows> {
      const [rows, fields] = await pool.execute<mysql.RowDataPacket[]>({ sql, values: params as SqlValue[], rowsAsArray: true, timeout: timeoutMs })
      const fs = (fields ?? []) as mysql.FieldPacket[]
      if (!Array.isArray(rows)) throw new Error('the statement returned no rows (a query that reads rows is expected)')
      return { columns: fs.map((f) => f.name), rows: (rows as unknown as unknown[][]).map((row) => row.map((v, i) => mysqlCell(v, fs[i]!))) }
    },
    close: () => pool.end(),
  }
}
