/**
 * The rehearsal's RDS Data API stand-in (lib/local/rds-data-server.ts) over
 * a private PGlite served on the wire protocol, called by the search store's
 * own Data API adapter (`rdsDataClient`, the AWS SDK's client): the store's
 * migrations, the loader's writes and the searches answer exactly what the
 * same code gets from PostgreSQL directly; transactions commit, roll back
 * and end when idle; errors are the Data API's.
 */
import { BatchExecuteStatementCommand, BeginTransactionCommand, CommitTransactionCommand, ExecuteStatementCommand, RDSDataClient } from '@aws-sdk/client-rds-data'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { rdsDataClient } from '../../../lib/aws/rds-data'
import { loadBatch } from '../../../lib/core/search/loader'
import { micro, microText } from '../../../lib/core/search/micro'
import { count, search } from '../../../lib/core/search/query'
import { countDocuments, migrate, MIGRATIONS, searchDb, type SearchDb } from '../../../lib/core/search/store'
import { startIamProxy, type ProxyIdentity } from '../../../lib/local/iam-proxy'
import { startDataApiServer } from '../../../lib/local/rds-data-server'
import { startSearchStoreStandIn, type SearchStoreStandIn } from '../../../lib/local/rehearse/search-store'
import { postgresClient, type PostgresClient } from '../../../lib/runtime/postgres'
import { spawn } from 'node:child_process'
import { projectRoot } from '../../../lib/local/handlers'
import { batch, enricher, payload } from '../../unit/enrich/helpers'

const CLUSTER = 'arn:aws:rds:us-east-1:000000000000:cluster:floedata-searchdatabase-1abc'
const SECRET = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:SearchDatabaseSecret-AbCdEf'
const target = { resourceArn: CLUSTER, secretArn: SECRET, database: 'floe' }

let standIn: SearchStoreStandIn
let client: RDSDataClient
let direct: PostgresClient

beforeAll(async () => {
  standIn = await startSearchStoreStandIn({ clusterArn: CLUSTER, secretArn: SECRET, database: 'floe' })
  client = new RDSDataClient({ endpoint: standIn.dataApiUrl, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 })
  direct = postgresClient(standIn.postgresUrl, 2)
})
afterAll(async () => {
  client?.destroy()
  await direct?.close()
  await standIn?.close()
})

async function failure(p: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('the call succeeded')
}

async function lines(n: number): Promise<string[]> {
  const e = enricher()
  const b = batch()
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const o = await e.enrichRecord(payload({ path: '/i', querystring: `e=se&p=web&tv=js-3&aid=app-${i % 2}&se_ca=cat&se_ac=a${i}` }), b)
    out.push((o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv)
  }
  return out
}

/** What the loader and the search APIs do on a store, with the answers. */
async function scenario(db: SearchDb): Promise<unknown[]> {
  const out: unknown[] = []
  out.push(await migrate(db))
  const good = (await lines(6)).map((text, i) => ({ id: String(i), text }))
  out.push(await loadBatch(db, 'good', [...good, { id: 'x', text: 'not an event' }], Date.UTC(2025, 4, 1)))
  out.push(await loadBatch(db, 'good', good.slice(0, 2), Date.UTC(2025, 4, 1)))
  out.push(await countDocuments(db, 'good'))
  out.push(await count(db, 'good', { params: { q: 'app_id:app-1' } }))
  const s = await search(db, 'good', { params: {}, body: { query: { bool: { filter: [{ term: { app_id: 'app-0' } }] } }, sort: [{ collector_tstamp: 'desc' }], size: 2, aggs: { apps: { terms: { field: 'app_id' } } } } })
  out.push(s.ok ? { ...s.value, took: 0 } : s)
  const m = await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ event_type: 'struct', limit: 2 }) }, { lookupSchema: async () => ({ ok: false, errors: [] }) })
  out.push({ ...m, stream: undefined, body: await microText(m) })
  return out
}

const run = (sql: string, extra: Partial<ConstructorParameters<typeof ExecuteStatementCommand>[0]> = {}) => client.send(new ExecuteStatementCommand({ ...target, sql, ...extra }))

describe('the Data API stand-in', () => {
  it('listens on the host given, 127.0.0.1 by default', () => {
    expect(standIn.dataApiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })

  it("runs the search store's migrations, the loader's writes and the searches, answering what PostgreSQL answers directly", async () => {
    const viaDataApi = await scenario(searchDb(rdsDataClient(target, client), 'dataapi'))
    const viaPostgres = await scenario(searchDb(direct, 'direct'))
    expect(viaDataApi[0]).toEqual(MIGRATIONS.map((m) => m.version))
    expect(viaDataApi[3]).toBe(6)
    expect(viaDataApi).toEqual(viaPostgres)
    // read back from where the rows landed
    const { rows } = await direct.query<{ n: string }>('SELECT count(*)::text AS n FROM dataapi.good_events')
    expect(rows).toEqual([{ n: '6' }])
  })

  it('a transaction committed keeps its rows, one rolled back keeps none', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS tx_rows (id int PRIMARY KEY, note text)')
    const sql = rdsDataClient(target, client)
    await sql.transaction(async (tx) => {
      await tx.query('INSERT INTO tx_rows (id, note) VALUES ($1, $2)', [1, 'kept'])
      await tx.query('INSERT INTO tx_rows (id, note) VALUES ($1, $2)', [2, 'kept too'])
    })
    await expect(sql.transaction(async (tx) => {
      await tx.query('INSERT INTO tx_rows (id, note) VALUES ($1, $2)', [3, 'gone'])
      throw new Error('a later step failed')
    })).rejects.toThrow('a later step failed')
    expect((await direct.query('SELECT id, note FROM tx_rows ORDER BY id')).rows).toEqual([{ id: 1, note: 'kept' }, { id: 2, note: 'kept too' }])
    expect(standIn.openTransactions()).toBe(0)
  })

  it('typed parameters and type hints; records as Fields with column metadata; JSON records as Aurora formats them', async () => {
    const r = await run("SELECT :n AS n, :d AS d, :b AS b, :s AS s, :nul::text AS nul, :j AS j, :ts AS ts, :dec AS dec, :u AS u, :day AS day, :t AS t, :blob AS blob, '2025-05-01 10:00:00.25+02'::timestamptz AS tz, '{\"a\": [1]}'::jsonb AS doc, 'x:y' AS colon", {
      parameters: [
        { name: 'n', value: { longValue: 42 } },
        { name: 'd', value: { doubleValue: 2.5 } },
        { name: 'b', value: { booleanValue: true } },
        { name: 's', value: { stringValue: "it's :not a placeholder" } },
        { name: 'nul', value: { isNull: true } },
        { name: 'j', value: { stringValue: '{"k": 1}' }, typeHint: 'JSON' },
        { name: 'ts', value: { stringValue: '2025-05-01 12:00:00' }, typeHint: 'TIMESTAMP' },
        { name: 'dec', value: { stringValue: '12.50' }, typeHint: 'DECIMAL' },
        { name: 'u', value: { stringValue: '00000000-0000-4000-8000-000000000001' }, typeHint: 'UUID' },
        { name: 'day', value: { stringValue: '2025-05-01' }, typeHint: 'DATE' },
        { name: 't', value: { stringValue: '10:30:00' }, typeHint: 'TIME' },
        { name: 'blob', value: { blobValue: Buffer.from('bytes') } },
      ],
      includeResultMetadata: true,
    })
    expect(r.records![0]).toEqual([
      { longValue: 42 }, { doubleValue: 2.5 }, { booleanValue: true }, { stringValue: "it's :not a placeholder" }, { isNull: true }, { stringValue: '{"k": 1}' },
      { stringValue: '2025-05-01 12:00:00' }, { stringValue: '12.50' }, { stringValue: '00000000-0000-4000-8000-000000000001' }, { stringValue: '2025-05-01' },
      { stringValue: '10:30:00' }, { blobValue: new Uint8Array(Buffer.from('bytes')) }, { stringValue: '2025-05-01 08:00:00.25' }, { stringValue: '{"a": [1]}' }, { stringValue: 'x:y' },
    ])
    expect(r.columnMetadata!.map((c) => [c.name, c.typeName])).toEqual([
      ['n', 'int8'], ['d', 'float8'], ['b', 'bool'], ['s', 'text'], ['nul', 'text'], ['j', 'json'], ['ts', 'timestamp'], ['dec', 'numeric'], ['u', 'uuid'], ['day', 'date'], ['t', 'time'], ['blob', 'bytea'], ['tz', 'timestamptz'], ['doc', 'jsonb'], ['colon', 'text'],
    ])
    const j = await run("SELECT 7::int8 AS n, 1.5::numeric AS dec, true AS b, '2025-05-01 10:00:00+00'::timestamptz AS at, '{\"a\":1}'::jsonb AS doc, ARRAY[1,2] AS xs, NULL::text AS none", { formatRecordsAs: 'JSON' })
    expect(JSON.parse(j.formattedRecords!)).toEqual([{ n: 7, dec: '1.5', b: true, at: '2025-05-01 10:00:00', doc: '{"a": 1}', xs: [1, 2], none: null }])
    expect(j.records).toBeUndefined()
  })

  it('numberOfRecordsUpdated for writes; BatchExecute runs the statement once per parameter set', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS batch_rows (id int PRIMARY KEY)')
    const b = await client.send(new BatchExecuteStatementCommand({ ...target, sql: 'INSERT INTO batch_rows (id) VALUES (:id)', parameterSets: [1, 2, 3].map((id) => [{ name: 'id', value: { longValue: id } }]) }))
    expect(b.updateResults).toHaveLength(3)
    const u = await run('UPDATE batch_rows SET id = id + 10 WHERE id >= :min', { parameters: [{ name: 'min', value: { longValue: 2 } }] })
    expect(u.numberOfRecordsUpdated).toBe(2)
    expect((await direct.query('SELECT id FROM batch_rows ORDER BY id')).rows).toEqual([{ id: 1 }, { id: 12 }, { id: 13 }])
    // a batch that fails part way leaves nothing
    const err = await failure(client.send(new BatchExecuteStatementCommand({ ...target, sql: 'INSERT INTO batch_rows (id) VALUES (:id)', parameterSets: [[{ name: 'id', value: { longValue: 5 } }], [{ name: 'id', value: { longValue: 1 } }]] })))
    expect(err.name).toBe('DatabaseErrorException')
    expect((await direct.query('SELECT count(*)::int AS n FROM batch_rows')).rows).toEqual([{ n: 3 }])
  })

  it("an SQL error is a DatabaseErrorException with the database's message and SQLSTATE; in a transaction it ends the transaction", async () => {
    const err = await failure(run('SELECT * FROM no_such_table'))
    expect(err.name).toBe('DatabaseErrorException')
    expect(err.message).toBe('ERROR: relation "no_such_table" does not exist; SQLState: 42P01')
    expect(err.$metadata?.httpStatusCode).toBe(400)
    const { transactionId } = await client.send(new BeginTransactionCommand(target))
    await failure(run('SELECT 1/0', { transactionId }))
    const gone = await failure(run('SELECT 1', { transactionId }))
    expect(gone.name).toBe('TransactionNotFoundException')
    expect(gone.message).toBe(`Transaction ${transactionId} is not found`)
  })

  it('an unknown transaction, another cluster, another secret, another database are refused, and nothing runs', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS refused_rows (id int)')
    const insert = 'INSERT INTO refused_rows (id) VALUES (1)'
    const unknown = await failure(run(insert, { transactionId: 'AQID' }))
    expect([unknown.name, unknown.message, unknown.$metadata?.httpStatusCode]).toEqual(['TransactionNotFoundException', 'Transaction AQID is not found', 404])
    const cluster = await failure(client.send(new ExecuteStatementCommand({ ...target, resourceArn: `${CLUSTER}x`, sql: insert })))
    expect(cluster.name).toBe('HttpEndpointNotEnabledException')
    const secret = await failure(client.send(new ExecuteStatementCommand({ ...target, secretArn: `${SECRET}x`, sql: insert })))
    expect(secret.name).toBe('SecretsErrorException')
    const database = await failure(client.send(new ExecuteStatementCommand({ ...target, database: 'other', sql: insert })))
    expect([database.name, database.message]).toEqual(['DatabaseErrorException', 'FATAL: database "other" does not exist; SQLState: 3D000'])
    expect((await direct.query('SELECT count(*)::int AS n FROM refused_rows')).rows).toEqual([{ n: 0 }])
  })

  it('a response over 1 MiB is refused; a placeholder without its parameter and SQL over 64 KiB are bad requests; a body over 4 MiB is 413', async () => {
    const big = await failure(run("SELECT repeat('x', 1024 * 1024) AS x", { formatRecordsAs: 'JSON' }))
    expect([big.name, big.message]).toEqual(['UnsupportedResultException', 'Database response exceeded size limit'])
    // just under the limit passes
    const fits = await run("SELECT repeat('x', 1000 * 1000) AS x", { formatRecordsAs: 'JSON' })
    expect(JSON.parse(fits.formattedRecords!)[0].x).toHaveLength(1_000_000)
    const missing = await failure(run('SELECT :nothing'))
    expect([missing.name, missing.message]).toEqual(['BadRequestException', 'No value specified for parameter: nothing'])
    const long = await failure(run(`SELECT 1 -- ${'x'.repeat(65_536)}`))
    expect(long.name).toBe('BadRequestException')
    const res = await fetch(`${standIn.dataApiUrl}/Execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...target, sql: 'SELECT 1', parameters: [{ name: 'p', value: { stringValue: 'x'.repeat(5 * 1024 * 1024) } }] }) })
    expect(res.status).toBe(413)
  })

  it('a second statement while one runs in the same transaction is refused, as the Data API refuses it', async () => {
    const quick = await startDataApiServer({ connect: { connectionString: standIn.postgresUrl }, clusterArn: CLUSTER, secretArn: SECRET, database: 'floe' })
    const own = new RDSDataClient({ endpoint: quick.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 })
    try {
      const { transactionId } = await own.send(new BeginTransactionCommand(target))
      const slow = own.send(new ExecuteStatementCommand({ ...target, sql: 'SELECT pg_sleep(1) IS NULL AS slept', transactionId, formatRecordsAs: 'JSON' }))
      await vi.waitFor(() => expect(quick.busyTransactions()).toBe(1), { timeout: 10_000, interval: 5 })
      const second = await failure(own.send(new ExecuteStatementCommand({ ...target, sql: 'SELECT 1', transactionId })))
      expect([second.name, second.message]).toEqual(['DatabaseErrorException', 'Transaction is still running a query'])
      expect(JSON.parse((await slow).formattedRecords!)).toEqual([{ slept: false }])
      // the transaction goes on
      expect((await own.send(new ExecuteStatementCommand({ ...target, sql: 'SELECT 2 AS n', transactionId, formatRecordsAs: 'JSON' }))).formattedRecords).toBe('[{"n":2}]')
      await own.send(new CommitTransactionCommand({ ...target, transactionId }))
    } finally {
      own.destroy()
      await quick.close()
    }
  })

  it('a transaction without a call for its idle time is rolled back and ended, as Aurora ends it after 3 minutes', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS idle_rows (id int)')
    let ended!: () => void
    const endedNow = new Promise<void>((r) => (ended = r))
    const quick = await startDataApiServer({ connect: { connectionString: standIn.postgresUrl }, clusterArn: CLUSTER, secretArn: SECRET, database: 'floe', idleTransactionMs: 300, log: (line) => /rolled back/.test(line) && ended() })
    const own = new RDSDataClient({ endpoint: quick.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 })
    try {
      const { transactionId } = await own.send(new BeginTransactionCommand(target))
      await own.send(new ExecuteStatementCommand({ ...target, sql: 'INSERT INTO idle_rows (id) VALUES (1)', transactionId }))
      await endedNow
      expect(quick.openTransactions()).toBe(0)
      const err = await failure(own.send(new ExecuteStatementCommand({ ...target, sql: 'SELECT 1', transactionId })))
      expect(err.name).toBe('TransactionNotFoundException')
      // its row is gone, and the store is free for everyone else
      expect((await direct.query('SELECT count(*)::int AS n FROM idle_rows')).rows).toEqual([{ n: 0 }])
    } finally {
      own.destroy()
      await quick.close()
    }
  })

  it('killed (-9) mid-way: a batch lands whole or not at all, an uncommitted transaction leaves nothing, what was committed stays', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS fault_rows (id int PRIMARY KEY, batch text)')
    /** The stand-in in a process of its own, and its URL once it listens. */
    const start = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/rds-data-child.mts', standIn.postgresUrl, CLUSTER, SECRET, 'floe'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      let out = ''
      const url = new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          const m = /listening (http:\S+)/.exec(out)
          if (m) resolve(m[1]!)
        })
        child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
        void exited.then(() => reject(new Error(`the stand-in exited: ${out}`)))
      })
      return { child, exited, url }
    }
    const urlOf = (c: ReturnType<typeof start>) => c.url
    const clientOf = (endpoint: string) => new RDSDataClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 })
    const rows = (from: number, n: number, tag: string) => Array.from({ length: n }, (_, i) => [{ name: 'id', value: { longValue: from + i } }, { name: 'tag', value: { stringValue: tag } }])
    const insert = 'INSERT INTO fault_rows (id, batch) VALUES (:id, :tag)'

    // committed, then a transaction open with rows in it when the process dies
    const first = start()
    const c1 = clientOf(await urlOf(first))
    await c1.send(new BatchExecuteStatementCommand({ ...target, sql: insert, parameterSets: rows(0, 50, 'committed') }))
    const { transactionId } = await c1.send(new BeginTransactionCommand(target))
    await c1.send(new BatchExecuteStatementCommand({ ...target, sql: insert, parameterSets: rows(1000, 50, 'uncommitted'), transactionId }))
    first.child.kill('SIGKILL')
    await first.exited
    c1.destroy()

    // a large batch outside a transaction, the process killed while it runs
    const second = start()
    const c2 = clientOf(await urlOf(second))
    const sent = c2.send(new BatchExecuteStatementCommand({ ...target, sql: insert, parameterSets: rows(2000, 2000, 'killed') })).catch((e: Error) => e)
    second.child.kill('SIGKILL')
    await second.exited
    await sent
    c2.destroy()

    const { rows: counts } = await direct.query<{ batch: string; n: number }>('SELECT batch, count(*)::int AS n FROM fault_rows GROUP BY batch ORDER BY batch')
    const by = Object.fromEntries(counts.map((r) => [r.batch, r.n]))
    expect(by.committed).toBe(50)
    expect(by.uncommitted).toBeUndefined()
    expect([undefined, 2000]).toContain(by.killed)
  })

  it('behind the IAM proxy, as the rehearsal puts it: a role allowed the statement and the secret writes, one without the secret is refused and nothing runs', async () => {
    await direct.query('CREATE TABLE IF NOT EXISTS proxied_rows (who text)')
    const identities = new Map<string, ProxyIdentity<readonly string[]>>([
      ['AKIDLOADER', { name: 'Loader', policies: [...['ExecuteStatement', 'BeginTransaction', 'CommitTransaction'].map((a) => `rds-data:${a} ${CLUSTER}`), `secretsmanager:GetSecretValue ${SECRET}`] }],
      ['AKIDNOSECRET', { name: 'NoSecret', policies: [`rds-data:ExecuteStatement ${CLUSTER}`] }],
    ])
    const proxy = await startIamProxy({ target: standIn.dataApiUrl, identities, authorize: (id, r) => ({ decision: id.policies.includes(`${r.action} ${r.resource}`) ? 'allowed' : 'implicit-deny' }), account: '000000000000', region: 'us-east-1' })
    const as = (accessKeyId: string) => new RDSDataClient({ endpoint: proxy.url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 's' }, maxAttempts: 1 })
    const loader = as('AKIDLOADER')
    const refused = as('AKIDNOSECRET')
    try {
      await rdsDataClient(target, loader).transaction((tx) => tx.query('INSERT INTO proxied_rows (who) VALUES ($1)', ['loader']))
      const err = await failure(rdsDataClient(target, refused, { resumeWaitMs: 0 }).query('INSERT INTO proxied_rows (who) VALUES ($1)', ['refused']))
      expect(err.name).toBe('AccessDeniedException')
      expect((await direct.query('SELECT who FROM proxied_rows')).rows).toEqual([{ who: 'loader' }])
    } finally {
      loader.destroy()
      refused.destroy()
      await proxy.close()
    }
  })
})

