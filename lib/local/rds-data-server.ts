/**
 * A stand-in for the RDS Data API of an Aurora PostgreSQL cluster (Serverless
 * v2 or provisioned, what Floe deploys), for the deployment rehearsal: the
 * REST-JSON protocol `@aws-sdk/client-rds-data` speaks (`POST /Execute`,
 * `/BatchExecute`, `/BeginTransaction`, `/CommitTransaction`,
 * `/RollbackTransaction`), answered from PostgreSQL over its wire protocol
 * (the local PGlite server). It does not check signatures (the IAM proxy in
 * front does) and accepts signed requests as they come.
 *
 * As the Data API does: `:name` placeholders with typed values (and
 * `typeHint`s), `formatRecordsAs: 'JSON'` (rows as Aurora formats them: see
 * rds-data-values.ts) or `records` of `Field`s with `columnMetadata`; each
 * transaction on a connection of its own, ended (rolled back) after 3
 * minutes without a call, by an error in it, or by a response over the
 * limit; a second statement while one runs in the same transaction refused;
 * responses over 1 MiB refused. Errors, as the v2 Data API names them (its
 * `BadRequestException` is the Serverless v1 one, deprecated):
 *
 * - an SQL error: `DatabaseErrorException` (400) `ERROR: <message>; SQLState: <code>`
 * - an unknown, ended or expired transaction: `TransactionNotFoundException` (404) `Transaction <id> is not found`
 * - another cluster's ARN: `HttpEndpointNotEnabledException` (400), as the Data API
 *   answers an ARN that is not exactly its cluster's
 * - another secret: `SecretsErrorException` (400), as for a secret that cannot be found
 * - another database: `DatabaseErrorException` `FATAL: database "<name>" does not exist; SQLState: 3D000`
 * - a response over 1 MiB: `UnsupportedResultException` (400) `Database response exceeded size limit`
 * - a malformed request (not JSON, SQL over 64 KiB, a placeholder without
 *   its parameter): `BadRequestException` (400); a body over 4 MiB: 413
 * - the database unreachable: `DatabaseUnavailableException` (504)
 *
 * Not matched: the 45 s statement timeout and `continueAfterTimeout`,
 * transactions' 24 hour limit, the 1,000 requests a second quota,
 * `schema`, `ExecuteSql` (Serverless v1 only), array parameters.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import pg from 'pg'
import { columnMetadata, fieldValue, jsonValue, positionalSql, RequestError, type Column, type ResultSetOptions, type SqlParameter } from './rds-data-values'
import { listenLocal } from './listen'

export interface DataApiServerOptions {
  /** Where to listen (default 127.0.0.1). */
  readonly host?: string
  readonly port?: number
  /** The PostgreSQL server behind it (the local PGlite server's `connectionString`). */
  readonly connect: pg.ClientConfig
  /** The cluster it stands in for: requests naming another ARN are refused. */
  readonly clusterArn: string
  /** The cluster's credentials secret: requests naming another are refused. */
  readonly secretArn: string
  /** The cluster's database (a request may leave it out); statements run in the PostgreSQL server's own. */
  readonly database: string
  /** How long a transaction may go without a call before it is rolled back (default 3 minutes, Aurora's). */
  readonly idleTransactionMs?: number
  /** Connections for statements outside transactions (default 4). */
  readonly poolSize?: number
  readonly log?: (line: string) => void
}

export interface DataApiServer {
  readonly url: string
  /** Transactions open now. */
  openTransactions(): number
  /** Transactions running a statement now. */
  busyTransactions(): number
  /** Stops listening, rolls back the open transactions, closes the connections. */
  close(): Promise<void>
}

/** The Data API's limits. */
export const DATA_API_LIMITS = {
  /** A response's records (Aurora: 1 MiB). */
  responseBytes: 1024 * 1024,
  /** `sql` (the API's length constraint). */
  sqlChars: 65_536,
  /** Idle time after which a transaction is ended. */
  idleTransactionMs: 3 * 60_000,
  /** A request body, bounded here (parameters included). */
  requestBytes: 4 * 1024 * 1024,
} as const

/** An error answered as the Data API answers it. */
class ApiError extends Error {
  constructor(readonly type: string, readonly status: number, message: string) {
    super(message)
  }
}

const badRequest = (m: string) => new ApiError('BadRequestException', 400, m)
const notFound = (id: string) => new ApiError('TransactionNotFoundException', 404, `Transaction ${id} is not found`)

/** A PostgreSQL error as the Data API reports it; anything else (no SQLSTATE: the connection) as the database unavailable. */
function databaseError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof RequestError) return badRequest(err.message)
  const e = err as { code?: unknown; severity?: unknown; message?: unknown }
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) {
    return new ApiError('DatabaseErrorException', 400, `${typeof e.severity === 'string' ? e.severity : 'ERROR'}: ${String(e.message)}; SQLState: ${e.code}`)
  }
  return new ApiError('DatabaseUnavailableException', 504, `The database is not reachable: ${String(e?.message ?? err)}`)
}

interface Transaction {
  readonly client: pg.Client
  busy: boolean
  timer?: NodeJS.Timeout
}

interface Body {
  readonly resourceArn?: unknown
  readonly secretArn?: unknown
  readonly database?: unknown
  readonly sql?: unknown
  readonly parameters?: unknown
  readonly parameterSets?: unknown
  readonly transactionId?: unknown
  readonly includeResultMetadata?: unknown
  readonly formatRecordsAs?: unknown
  readonly resultSetOptions?: unknown
}

/** Every value as PostgreSQL's text: the Data API's formats are made from it by type OID. */
const RAW_TYPES = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig

type Result = { command: string | null; rowCount: number | null; fields: Column[]; rows: (string | null)[][] }

async function run(q: pg.Client | pg.PoolClient, sql: string, parameters: readonly SqlParameter[]): Promise<Result> {
  const { text, values } = positionalSql(sql, parameters)
  const r = (await q.query({ text, values, rowMode: 'array', types: RAW_TYPES })) as unknown as Result | Result[]
  // several statements in one text (no parameters): the last one's result, as a single call's
  return Array.isArray(r) ? r[r.length - 1]! : r
}

const UPDATES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY'])

/** An ExecuteStatement response from a result. */
function executeResponse(r: Result, b: Body): Record<string, unknown> {
  const options = (b.resultSetOptions ?? {}) as ResultSetOptions
  const out: Record<string, unknown> = { numberOfRecordsUpdated: r.command !== null && UPDATES.has(r.command) ? (r.rowCount ?? 0) : 0, generatedFields: [] }
  const fields = r.fields ?? []
  if (fields.length > 0) {
    if (b.formatRecordsAs === 'JSON') {
      out.formattedRecords = JSON.stringify(r.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, jsonValue(row[i] ?? null, f.dataTypeID, options)]))))
    } else {
      out.records = r.rows.map((row) => fields.map((f, i) => fieldValue(row[i] ?? null, f.dataTypeID, options)))
    }
    if (b.includeResultMetadata === true) out.columnMetadata = columnMetadata(fields)
  }
  return out
}

const parametersOf = (v: unknown): SqlParameter[] => {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw badRequest('parameters must be a list')
  return v as SqlParameter[]
}

export async function startDataApiServer(o: DataApiServerOptions): Promise<DataApiServer> {
  const log = o.log ?? (() => {})
  const idleMs = o.idleTransactionMs ?? DATA_API_LIMITS.idleTransactionMs
  const utc = (c: pg.Client | pg.PoolClient) => c.query("SET TIME ZONE 'UTC'")
  const pool = new pg.Pool({ ...o.connect, max: o.poolSize ?? 4, idleTimeoutMillis: 30_000 })
  pool.on('error', () => {})
  const zoned = new WeakSet<pg.PoolClient>()
  /** A pooled connection, its session in UTC (timestamptz values are read as Aurora gives them). */
  const pooled = async (): Promise<pg.PoolClient> => {
    const c = await pool.connect()
    if (!zoned.has(c)) {
      try {
        await utc(c)
      } catch (err) {
        c.release(err as Error)
        throw err
      }
      zoned.add(c)
    }
    return c
  }
  const transactions = new Map<string, Transaction>()

  /** Ends a transaction (rolled back unless committed) and forgets it. */
  const end = async (id: string, how: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
    const t = transactions.get(id)
    if (!t) return
    transactions.delete(id)
    clearTimeout(t.timer)
    try {
      await t.client.query(how)
    } finally {
      await t.client.end().catch(() => {})
    }
  }

  const idle = (id: string, t: Transaction) => {
    clearTimeout(t.timer)
    t.timer = setTimeout(() => {
      log(`Data API: transaction ${id.slice(0, 12)}… had no call for ${idleMs} ms: rolled back`)
      void end(id, 'ROLLBACK').catch(() => {})
    }, idleMs)
    t.timer.unref()
  }

  /** Runs `fn` on a transaction's connection, one call at a time; an error (or a response over the limit) ends the transaction, as Aurora's does. */
  const within = async <T>(id: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const t = transactions.get(id)
    if (!t) throw notFound(id)
    if (t.busy) throw new ApiError('DatabaseErrorException', 400, 'Transaction is still running a query')
    t.busy = true
    clearTimeout(t.timer)
    try {
      const out = await fn(t.client)
      t.busy = false
      idle(id, t)
      return out
    } catch (err) {
      t.busy = false
      await end(id, 'ROLLBACK').catch(() => {})
      throw err
    }
  }

  const checkTarget = (b: Body) => {
    if (typeof b.resourceArn !== 'string' || b.resourceArn === '') throw badRequest('resourceArn is required')
    if (b.resourceArn !== o.clusterArn) throw new ApiError('HttpEndpointNotEnabledException', 400, `HttpEndpoint is not enabled for resource ${b.resourceArn}`)
    if (typeof b.secretArn !== 'string' || b.secretArn === '') throw badRequest('secretArn is required')
    if (b.secretArn !== o.secretArn) throw new ApiError('SecretsErrorException', 400, "Secrets Manager can't find the specified secret.")
    if (b.database !== undefined && b.database !== null && b.database !== o.database) {
      throw new ApiError('DatabaseErrorException', 400, `FATAL: database "${String(b.database)}" does not exist; SQLState: 3D000`)
    }
  }

  const sqlOf = (b: Body): string => {
    if (typeof b.sql !== 'string') throw badRequest('sql is required')
    if (b.sql.length > DATA_API_LIMITS.sqlChars) throw badRequest(`sql is longer than ${DATA_API_LIMITS.sqlChars} characters`)
    return b.sql
  }

  const sized = (body: Record<string, unknown>): string => {
    const text = JSON.stringify(body)
    if (Buffer.byteLength(text) > DATA_API_LIMITS.responseBytes) throw new ApiError('UnsupportedResultException', 400, 'Database response exceeded size limit')
    return text
  }

  const operations: Record<string, (b: Body) => Promise<string>> = {
    '/Execute': async (b) => {
      checkTarget(b)
      const sql = sqlOf(b)
      const params = parametersOf(b.parameters)
      if (typeof b.transactionId === 'string') return within(b.transactionId, async (c) => sized(executeResponse(await run(c, sql, params), b)))
      const c = await pooled().catch((err) => { throw databaseError(err) })
      let lost: Error | undefined
      try {
        return sized(executeResponse(await run(c, sql, params), b))
      } catch (err) {
        const e = databaseError(err)
        if (e.type === 'DatabaseUnavailableException') lost = err as Error
        throw e
      } finally {
        c.release(lost) // a broken connection is closed, not given to the next statement
      }
    },
    '/BatchExecute': async (b) => {
      checkTarget(b)
      const sql = sqlOf(b)
      const sets = b.parameterSets === undefined || b.parameterSets === null ? [] : b.parameterSets
      if (!Array.isArray(sets)) throw badRequest('parameterSets must be a list')
      const each = async (c: pg.Client | pg.PoolClient) => {
        if (sets.length === 0) await run(c, sql, [])
        for (const set of sets) await run(c, sql, parametersOf(set))
        return JSON.stringify({ updateResults: sets.map(() => ({ generatedFields: [] })) })
      }
      if (typeof b.transactionId === 'string') return within(b.transactionId, each)
      // outside a transaction the batch commits whole or not at all
      const c = await pooled().catch((err) => { throw databaseError(err) })
      let lost: Error | undefined
      try {
        await c.query('BEGIN')
        const out = await each(c)
        await c.query('COMMIT')
        return out
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        const e = databaseError(err)
        if (e.type === 'DatabaseUnavailableException') lost = err as Error
        throw e
      } finally {
        c.release(lost)
      }
    },
    '/BeginTransaction': async (b) => {
      checkTarget(b)
      const client = new pg.Client(o.connect)
      client.on('error', () => {})
      try {
        await client.connect()
        await utc(client)
        await client.query('BEGIN')
      } catch (err) {
        await client.end().catch(() => {})
        throw databaseError(err)
      }
      const id = randomBytes(72).toString('base64')
      const t: Transaction = { client, busy: false }
      transactions.set(id, t)
      idle(id, t)
      return JSON.stringify({ transactionId: id })
    },
    '/CommitTransaction': async (b) => {
      checkTarget(b)
      const id = String(b.transactionId ?? '')
      const t = transactions.get(id)
      if (!t) throw notFound(id)
      if (t.busy) throw new ApiError('DatabaseErrorException', 400, 'Transaction is still running a query')
      await end(id, 'COMMIT').catch((err) => { throw databaseError(err) })
      return JSON.stringify({ transactionStatus: 'Transaction Committed' })
    },
    '/RollbackTransaction': async (b) => {
      checkTarget(b)
      const id = String(b.transactionId ?? '')
      if (!transactions.has(id)) throw notFound(id)
      await end(id, 'ROLLBACK').catch((err) => { throw databaseError(err) })
      return JSON.stringify({ transactionStatus: 'Rollback Complete' })
    },
  }

  const answer = (res: ServerResponse, status: number, text: string, errorType?: string) => {
    if (res.headersSent) return
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-amzn-requestid': randomBytes(16).toString('hex'), ...(errorType ? { 'x-amzn-errortype': errorType } : {}) })
    res.end(text)
  }
  const fail = (res: ServerResponse, e: ApiError) => answer(res, e.status, JSON.stringify({ message: e.message }), e.type)

  /** The request's body, or undefined once it was refused (over the bound). */
  const readBody = (req: IncomingMessage, res: ServerResponse) =>
    new Promise<Buffer | undefined>((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? 0)
      const tooLarge = () => {
        answer(res, 413, JSON.stringify({ message: `Request body over ${DATA_API_LIMITS.requestBytes} bytes` }), 'RequestEntityTooLargeException')
        req.destroy()
        resolve(undefined)
      }
      if (declared > DATA_API_LIMITS.requestBytes) return tooLarge()
      const chunks: Buffer[] = []
      let size = 0
      req.on('data', (c: Buffer) => {
        size += c.length
        if (size > DATA_API_LIMITS.requestBytes) return tooLarge()
        chunks.push(c)
      })
      req.on('end', () => resolve(Buffer.concat(chunks)))
      req.on('error', reject)
    })

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0]!
      const op = operations[path]
      if (!op || req.method !== 'POST') {
        req.resume()
        return fail(res, new ApiError('UnknownOperationException', 404, `${req.method} ${path} is not an operation of the Data API`))
      }
      const raw = await readBody(req, res).catch(() => undefined)
      if (raw === undefined) return
      let body: Body
      try {
        const parsed = JSON.parse(raw.length === 0 ? '{}' : raw.toString('utf8')) as unknown
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object')
        body = parsed as Body
      } catch {
        return fail(res, badRequest('The request body is not a JSON object'))
      }
      try {
        answer(res, 200, await op(body))
      } catch (err) {
        fail(res, databaseError(err))
      }
    })().catch((err: Error) => {
      log(`Data API: ${err.message}`)
      if (!res.headersSent) answer(res, 500, JSON.stringify({ message: 'Internal error' }), 'InternalServerErrorException')
    })
  })
  server.on('clientError', (_err, socket) => socket.destroy())
  const url = await listenLocal(server, o)
  return {
    url,
    openTransactions: () => transactions.size,
    busyTransactions: () => [...transactions.values()].filter((t) => t.busy).length,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await Promise.all([...transactions.keys()].map((id) => end(id, 'ROLLBACK').catch(() => {})))
      await pool.end().catch(() => {})
      await closed
    },
  }
}
