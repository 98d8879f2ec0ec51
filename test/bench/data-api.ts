/**
 * What the rehearsal's Data API stand-in adds to a statement: the search
 * store's Data API adapter (the AWS SDK's client, HTTP, the stand-in, its
 * connection to the PGlite server) against the same statement sent straight
 * over the PostgreSQL wire protocol to the same server, in interleaved rounds
 * so load on the machine hits both alike; and a loader-sized write (100 rows
 * in one transaction) both ways. Prints each way's median per round and the
 * ratio. `npm run bench -- data-api`
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data'
import { rdsDataClient } from '../../lib/aws/rds-data'
import type { SqlClient } from '../../lib/core/search/store'
import { startSearchStoreStandIn } from '../../lib/local/rehearse/search-store'
import { postgresClient } from '../../lib/runtime/postgres'

const ROUNDS = Number(process.env.ROUNDS || 10)
const PER_ROUND = Number(process.env.PER_ROUND || 50)
const target = { resourceArn: 'arn:aws:rds:us-east-1:000000000000:cluster:bench', secretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-AbCdEf', database: 'floe' }

const started = performance.now()
const store = await startSearchStoreStandIn({ clusterArn: target.resourceArn, secretArn: target.secretArn, database: target.database })
console.log(`stand-in started (PGlite worker, wire server, Data API) in ${Math.round(performance.now() - started)} ms`)
const client = new RDSDataClient({ endpoint: store.dataApiUrl, region: 'us-east-1', credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' }, maxAttempts: 1 })
const ways: [string, SqlClient][] = [['Data API stand-in', rdsDataClient(target, client)], ['wire protocol', postgresClient(store.postgresUrl)]]
await ways[1]![1].query('CREATE TABLE IF NOT EXISTS bench_rows (id int, doc jsonb)')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const tasks: [string, (c: SqlClient, round: number) => Promise<void>, number][] = [
  ['SELECT with one parameter', async (c) => { for (let i = 0; i < PER_ROUND; i++) await c.query('SELECT $1::int AS n', [i]) }, PER_ROUND],
  ['100 rows in a transaction', async (c, r) => { await c.transaction(async (tx) => { for (let i = 0; i < 100; i++) await tx.query('INSERT INTO bench_rows (id, doc) VALUES ($1, $2::jsonb)', [r * 100 + i, JSON.stringify({ i })]) }) }, 1],
]
for (const [name, task, per] of tasks) {
  const times = new Map<string, number[]>(ways.map(([w]) => [w, []]))
  for (const [, c] of ways) await task(c, -1) // warm up
  for (let r = 0; r < ROUNDS; r++) {
    for (const [w, c] of ways) {
      const t = performance.now()
      await task(c, r)
      times.get(w)!.push((performance.now() - t) / per)
    }
  }
  const [a, b] = ways.map(([w]) => median(times.get(w)!))
  console.log(`${name}: Data API stand-in ${a!.toFixed(2)} ms, wire protocol ${b!.toFixed(2)} ms (median of ${ROUNDS} rounds${per > 1 ? `, per statement of ${per}` : ''}): ×${(a! / b!).toFixed(1)}`)
}
client.destroy()
await (ways[1]![1] as ReturnType<typeof postgresClient>).close()
await store.close()
