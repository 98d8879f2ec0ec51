/**
 * The search store of a rehearsal: a private PGlite (in a worker thread,
 * served over PostgreSQL's wire protocol: search-server.ts) with the RDS Data
 * API stand-in in front of it (rds-data-server.ts), answering for the cluster,
 * secret and database the templates give the functions. The functions reach
 * it as they reach Aurora, through `AWS_ENDPOINT_URL_RDS_DATA`; their own
 * code migrates the store on its first statement (lib/aws/database.ts), as on
 * AWS.
 */
import { newPostgresPassword } from '../postgres-server'
import { startDataApiServer } from '../rds-data-server'
import { startSearchServer } from '../search-server'

export interface SearchStoreStandInOptions {
  /** The cluster's ARN the functions are given (see `dataApiTargets`). */
  readonly clusterArn: string
  /** Its credentials secret's ARN the functions are given. */
  readonly secretArn: string
  /** Its database name the functions are given. */
  readonly database: string
  /** PGlite's data directory (default: a temporary one, removed on close). */
  readonly dir?: string
  /** Where both servers listen (default 127.0.0.1). */
  readonly host?: string
  /** How long a transaction may go without a call before it is rolled back (default Aurora's 3 minutes). */
  readonly idleTransactionMs?: number
  readonly log?: (line: string) => void
}

export interface SearchStoreStandIn {
  /** The Data API's endpoint: the functions' `rds-data` endpoint (or the IAM proxy's target). */
  readonly dataApiUrl: string
  /** The PostgreSQL server behind it (`postgres://postgres:<password>@host:port/postgres`), to read what landed. Holds the password: never log it. */
  readonly postgresUrl: string
  readonly clusterArn: string
  readonly secretArn: string
  readonly database: string
  /** Transactions open in the Data API now. */
  openTransactions(): number
  close(): Promise<void>
}

export async function startSearchStoreStandIn(o: SearchStoreStandInOptions): Promise<SearchStoreStandIn> {
  const host = o.host ?? '127.0.0.1'
  const store = await startSearchServer({ host, password: newPostgresPassword(), ...(o.dir !== undefined ? { dir: o.dir } : {}), ...(o.log ? { log: o.log } : {}) })
  try {
    const api = await startDataApiServer({
      host,
      connect: { connectionString: store.url, application_name: 'rds-data' },
      clusterArn: o.clusterArn,
      secretArn: o.secretArn,
      database: o.database,
      ...(o.idleTransactionMs !== undefined ? { idleTransactionMs: o.idleTransactionMs } : {}),
      ...(o.log ? { log: o.log } : {}),
    })
    return {
      dataApiUrl: api.url,
      postgresUrl: store.url,
      clusterArn: o.clusterArn,
      secretArn: o.secretArn,
      database: o.database,
      openTransactions: () => api.openTransactions(),
      async close() {
        await api.close()
        await store.close()
      },
    }
  } catch (err) {
    await store.close()
    throw err
  }
}
