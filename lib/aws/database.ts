/**
 * A function's connection to a declared database, from the environment the
 * deployment sets (`FLOE_DATABASE_SEARCH`: see `DatabaseConnection`), with the
 * schema migrations applied once per process before the first statement.
 */
import { migrate, searchDb, type SearchDb, type SqlClient } from '../core/search/store'
import { envVar, type DatabaseConnection, type DatabaseKey } from '../infra/resources'

const opened = new Map<string, Promise<SearchDb>>()

/** The connection descriptor of a granted database. */
export function databaseConnection(key: DatabaseKey): DatabaseConnection {
  const name = envVar('database', key)
  const value = process.env[name]
  if (!value) throw new Error(`Environment variable ${name} is required: this function was not granted the database '${key}'`)
  try {
    return JSON.parse(value) as DatabaseConnection
  } catch {
    throw new Error(`Environment variable ${name} is not a JSON connection descriptor`)
  }
}

async function open(c: DatabaseConnection, application: string | undefined): Promise<SqlClient> {
  if (c.kind === 'postgres') return (await import('../runtime/postgres')).postgresClient(c.url, 1, { applicationName: application })
  const { rdsDataClient } = await import('./rds-data')
  return rdsDataClient(c)
}

/**
 * The SQL client of a declared database, migrated. A failure (the database
 * is down) is not kept: the next call tries again. Clients of different
 * `application` names (PostgreSQL's `application_name`; not used by the
 * Data API) have connections of their own: in one process, the search
 * loader's writes never wait in a queue behind a search's statement.
 */
export function database(key: DatabaseKey, opts: { application?: string } = {}): Promise<SearchDb> {
  const descriptor = process.env[envVar('database', key)] ?? ''
  const cacheKey = `${descriptor}\n${opts.application ?? ''}`
  let p = opened.get(cacheKey)
  if (!p) {
    p = (async () => {
      const c = databaseConnection(key)
      const db = searchDb(await open(c, opts.application), c.schema)
      await migrate(db)
      return db
    })()
    p.catch(() => opened.delete(cacheKey))
    opened.set(cacheKey, p)
  }
  return p
}

/** Closes every database connection this process opened (a command-line process, before it exits). */
export async function closeDatabases(): Promise<void> {
  const all = [...opened.values()]
  opened.clear()
  await Promise.all(all.map((p) => p.then((db) => (db.sql as Partial<{ close(): Promise<void> }>).close?.()).catch(() => undefined)))
}
