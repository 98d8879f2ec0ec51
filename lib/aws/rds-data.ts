/**
 * The search store's SQL port on AWS: Aurora PostgreSQL through the RDS Data
 * API (HTTPS, no VPC, no connection pool). Statements are the ones PGlite runs
 * locally; only the placeholders change (`$1` → `:p1`, the Data API's named
 * parameters), and values travel as typed fields, never as SQL text.
 */
import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  RDSDataClient,
  RollbackTransactionCommand,
  type SqlParameter,
} from '@aws-sdk/client-rds-data'
import type { SqlClient } from '../core/search/store'

export interface RdsDataTarget {
  readonly resourceArn: string
  readonly secretArn: string
  readonly database: string
}

/** `$1` placeholders to the Data API's `:p1` (the SQL has no `$` elsewhere: values are parameters). */
export function namedPlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, ':p$1')
}

/** A value as a Data API parameter. Arrays and objects are sent as JSON text (cast in SQL where needed). */
export function dataApiParameter(value: unknown, i: number): SqlParameter {
  const name = `p${i + 1}`
  if (value === null || value === undefined) return { name, value: { isNull: true } }
  if (typeof value === 'boolean') return { name, value: { booleanValue: value } }
  if (typeof value === 'number') return Number.isSafeInteger(value) ? { name, value: { longValue: value } } : { name, value: { doubleValue: value } }
  if (typeof value === 'bigint') return { name, value: { longValue: Number(value) } }
  if (typeof value === 'string') return { name, value: { stringValue: value } }
  return { name, value: { stringValue: JSON.stringify(value) } }
}

/** Aurora Serverless v2 at capacity 0 answers this while it resumes (seconds); the call is repeated. */
const RESUMING = new Set(['DatabaseResumingException', 'DatabaseNotFoundException'])

export interface RdsDataOptions {
  /** How long to keep retrying while a paused cluster resumes (default 20 s). */
  readonly resumeWaitMs?: number
}

export function rdsDataClient(target: RdsDataTarget, client = new RDSDataClient({}), opts: RdsDataOptions = {}): SqlClient {
  const resumeWaitMs = opts.resumeWaitMs ?? 20_000
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const send = async <T>(make: () => any): Promise<T> => {
    const deadline = Date.now() + resumeWaitMs
    for (let attempt = 0; ; attempt++) {
      try {
        return (await client.send(make())) as T
      } catch (err) {
        if (!RESUMING.has((err as Error).name) || Date.now() > deadline) throw err
        await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 4000)))
      }
    }
  }
  const make = (transactionId?: string): SqlClient => ({
    async query<T>(sql: string, params: readonly unknown[] = []) {
      const out = await send<{ formattedRecords?: string }>(
        () =>
          new ExecuteStatementCommand({
            resourceArn: target.resourceArn,
            secretArn: target.secretArn,
            database: target.database,
            sql: namedPlaceholders(sql),
            parameters: params.map(dataApiParameter),
            formatRecordsAs: 'JSON',
            transactionId,
          }),
      )
      return { rows: (out.formattedRecords ? JSON.parse(out.formattedRecords) : []) as T[] }
    },
    async transaction(fn) {
      if (transactionId) return fn(make(transactionId))
      const { transactionId: id } = await send<{ transactionId?: string }>(
        () => new BeginTransactionCommand({ resourceArn: target.resourceArn, secretArn: target.secretArn, database: target.database }),
      )
      try {
        const result = await fn(make(id))
        await send(() => new CommitTransactionCommand({ resourceArn: target.resourceArn, secretArn: target.secretArn, transactionId: id }))
        return result
      } catch (err) {
        await send(() => new RollbackTransactionCommand({ resourceArn: target.resourceArn, secretArn: target.secretArn, transactionId: id })).catch(() => {})
        throw err
      }
    },
  })
  return make()
}
