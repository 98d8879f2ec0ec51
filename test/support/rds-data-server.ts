/**
 * The RDS Data API's HTTP protocol (`/Execute`, `/BeginTransaction`,
 * `/CommitTransaction`, `/RollbackTransaction`, REST-JSON) in front of a real
 * PostgreSQL (PGlite), for tests of the Data API adapter: no Data API server
 * runs outside AWS. Like Aurora's, it takes `:name` placeholders and typed
 * parameter values, answers `formatRecordsAs: JSON` with timestamps as
 * `YYYY-MM-DD HH:MM:SS[.fff]` text and json/jsonb as text, and can pretend
 * to be a paused cluster that is resuming. Every statement it runs is
 * recorded.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PGlite, Transaction } from '@electric-sql/pglite'
import { useForFile } from './per-file'

export interface RdsDataServer {
  readonly url: string
  /** SQL text of every statement executed, as received. */
  readonly statements: string[]
  /** The next `n` requests answer `DatabaseResumingException`. */
  resumeFor(n: number): void
  close(): Promise<void>
}

type Param = { name: string; value: { isNull?: boolean; booleanValue?: boolean; longValue?: number; doubleValue?: number; stringValue?: string } }

function value(p: Param['value']): unknown {
  if (p.isNull) return null
  if (p.booleanValue !== undefined) return p.booleanValue
  if (p.longValue !== undefined) return p.longValue
  if (p.doubleValue !== undefined) return p.doubleValue
  return p.stringValue
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')
function dataApiValue(v: unknown): unknown {
  if (v instanceof Date) {
    const ms = v.getUTCMilliseconds()
    return `${v.getUTCFullYear()}-${pad(v.getUTCMonth() + 1)}-${pad(v.getUTCDate())} ${pad(v.getUTCHours())}:${pad(v.getUTCMinutes())}:${pad(v.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`
  }
  if (typeof v === 'bigint') return Number(v)
  if (v !== null && typeof v === 'object') return JSON.stringify(v)
  return v
}

/** `:p1` → `$1`, leaving `::type` casts alone. */
function positional(sql: string, params: Param[]): { text: string; values: unknown[] } {
  const order: string[] = []
  const text = sql.replace(/(?<!:):([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    let i = order.indexOf(name)
    if (i < 0) i = order.push(name) - 1
    return `$${i + 1}`
  })
  const byName = new Map(params.map((p) => [p.name, value(p.value)]))
  return { text, values: order.map((n) => byName.get(n)) }
}

export async function startRdsDataServer(db: PGlite): Promise<RdsDataServer> {
  const statements: string[] = []
  let resuming = 0
  const transactions = new Map<string, { tx: Transaction; finish: (commit: boolean) => void; done: Promise<void> }>()

  const send = (res: import('node:http').ServerResponse, status: number, body: unknown, errorType?: string) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) })
    res.end(text)
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>
      if (resuming > 0) {
        resuming--
        return send(res, 400, { message: 'The Aurora DB instance is resuming after being auto-paused. Please wait a few seconds and try again.' }, 'DatabaseResumingException')
      }
      try {
        switch (req.url) {
          case '/Execute': {
            const sql = String(body.sql)
            statements.push(sql)
            const { text, values } = positional(sql, (body.parameters as Param[] | undefined) ?? [])
            const t = body.transactionId ? transactions.get(String(body.transactionId)) : undefined
            if (body.transactionId && !t) return send(res, 400, { message: 'Transaction is not found' }, 'BadRequestException')
            const r = await (t ? t.tx : db).query<Record<string, unknown>>(text, values)
            const rows = r.rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, dataApiValue(v)])))
            return send(res, 200, { numberOfRecordsUpdated: r.affectedRows ?? 0, ...(body.formatRecordsAs === 'JSON' ? { formattedRecords: JSON.stringify(rows) } : {}) })
          }
          case '/BeginTransaction': {
            const id = randomUUID()
            let finish!: (commit: boolean) => void
            let started!: (tx: Transaction) => void
            const ready = new Promise<Transaction>((r) => (started = r))
            const decided = new Promise<boolean>((r) => (finish = r))
            const done = db
              .transaction(async (tx) => {
                started(tx)
                if (!(await decided)) await tx.rollback()
              })
              .catch(() => {})
            transactions.set(id, { tx: await ready, finish, done })
            return send(res, 200, { transactionId: id })
          }
          case '/CommitTransaction':
          case '/RollbackTransaction': {
            const t = transactions.get(String(body.transactionId))
            if (!t) return send(res, 404, { message: 'Transaction is not found' }, 'NotFoundException')
            transactions.delete(String(body.transactionId))
            const commit = req.url === '/CommitTransaction'
            t.finish(commit)
            await t.done
            return send(res, 200, { transactionStatus: commit ? 'Transaction Committed' : 'Rollback Complete' })
          }
          default:
            return send(res, 404, { message: `unknown operation ${req.url}` }, 'NotFoundException')
        }
      } catch (err) {
        return send(res, 400, { message: `ERROR: ${(err as Error).message}` }, 'DatabaseErrorException')
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    statements,
    resumeFor: (n) => void (resuming = n),
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** The Data API's fake in front of a fresh PGlite for a test file, with an SDK client for it; read `.current` inside tests. */
export function useRdsDataApi(): { readonly current: { readonly pg: PGlite; readonly server: RdsDataServer; readonly client: import('@aws-sdk/client-rds-data').RDSDataClient } } {
  return useForFile(
    'the Data API server',
    async () => {
      const { openPglite } = await import('../../lib/local/search-store')
      const { RDSDataClient } = await import('@aws-sdk/client-rds-data')
      const store = await openPglite()
      const server = await startRdsDataServer(store.pg).catch(async (err: unknown) => {
        await store.close()
        throw err
      })
      const client = new RDSDataClient({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 })
      return { pg: store.pg, server, client, close: store.close }
    },
    async (it) => {
      it.client.destroy()
      await it.server.close()
      await it.close()
    },
  )
}

/** A Data API target (the fake ignores the ARNs). */
export const DATA_API_TARGET = { resourceArn: 'arn:aws:rds:us-east-1:000000000000:cluster:floe', secretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:floe', database: 'floe' }
