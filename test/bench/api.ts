/**
 * Tracking-design API through the local gateway (API Gateway v2 event → the
 * trackingDesign handler → DynamoDB Local in memory): requests/s and p50/p99
 * latency of create (with a compatibility check), retrieve-one (with its
 * compatibility checks) and list (whole, and filtered through an index), next to
 * `GET /health` measured in the same run with the same client; each line prints its
 * p50 as a multiple of /health's p50. Bounded request counts, loopback only.
 *
 *   npm run bench -- api        (or: node --import tsx test/bench/api.ts [requests] [concurrency])
 */
import { Agent, request } from 'node:http'
import { parseIgluUri } from '../../lib/core/iglu/keys'
import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb'
import { makeClients } from '../../lib/aws/clients'
import { DynamoSchemaStore } from '../../lib/aws/registry-store'
import { DynamoAccountStore } from '../../lib/aws/tracking-design-store'
import { createApiKey, createOrganization } from '../../lib/core/tracking-design/accounts'
import { startLocalStack } from '../../lib/local/stack'
import { runMain } from './support/processes'

const REQUESTS = Number(process.argv[2] ?? 400)
const CONCURRENCY = Number(process.argv[3] ?? 8)
const WARMUP = 50
/** Rounds of 100 creates, 100 retrieves, 10 whole lists and 50 filtered lists in another organization before measuring. */
const JVM_WARMUP_ROUNDS = Number(process.env.FLOE_BENCH_API_WARMUP_ROUNDS ?? 8)

interface Result {
  seconds: number
  /** This process's CPU time (gateway, handlers and the load client), ms. */
  cpuMs: number
  latenciesMs: number[]
  statuses: Map<number, number>
}

async function load(total: number, make: (i: number) => { method: string; url: string; headers?: Record<string, string>; body?: string }): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const statuses = new Map<number, number>()
  const latenciesMs: number[] = []
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const r = make(i)
      const t0 = process.hrtime.bigint()
      const req = request(r.url, { method: r.method, agent, headers: { ...r.headers, ...(r.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) } : {}) } }, (res) => {
        res.resume()
        res.on('end', () => {
          latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6)
          statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1)
          resolve()
        })
      })
      req.on('error', reject)
      req.end(r.body)
    })
  let next = 0
  const cpu0 = process.cpuUsage()
  const started = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) await one(next++)
  }))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const cpu = process.cpuUsage(cpu0)
  agent.destroy()
  return { seconds, cpuMs: (cpu.user + cpu.system) / 1000, latenciesMs, statuses }
}

/** `total` calls of `call` from `CONCURRENCY` lanes: requests/s and p50/p99 latency (ms). */
async function direct(total: number, call: (i: number) => Promise<unknown>): Promise<{ rps: number; p50: number; p99: number }> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) {
      const i = next++
      const t0 = performance.now()
      await call(i)
      latencies.push(performance.now() - t0)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return { rps: total / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99) }
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** One line per operation; returns the p50 (ms). `baseline`: /health's p50 in the same run. */
function report(label: string, r: Result, total: number, expected: number, baseline?: number) {
  const ok = r.statuses.get(expected) ?? 0
  if (ok !== total) throw new Error(`${label}: answered ${JSON.stringify([...r.statuses])}; expected ${total} × ${expected}`)
  const sorted = [...r.latenciesMs].sort((a, b) => a - b)
  const rps = total / r.seconds
  const p50 = pct(sorted, 50)
  const ratio = baseline ? `  p50 ${(p50 / baseline).toFixed(1)}x /health's${p50 / baseline <= 10 ? '' : ' (target ≤ 10x)'}` : ''
  console.log(`${label.padEnd(34)} ${Math.round(rps).toString().padStart(6)} req/s   p50 ${p50.toFixed(2).padStart(7)} ms   p99 ${pct(sorted, 99).toFixed(2).padStart(7)} ms   CPU ${((r.cpuMs / total) * 1000).toFixed(0).padStart(5)} µs/req${ratio}`)
  return { p50, p99: pct(sorted, 99) }
}

async function main() {
  console.log(`${REQUESTS} requests per measurement, concurrency ${CONCURRENCY}, loopback, keep-alive; DynamoDB Local in memory`)
  const stack = await startLocalStack({ triggers: false, namePrefix: `bench${process.pid}` })
  try {
    const { ddb } = makeClients(stack.endpoints)
    const now = new Date().toISOString()
    const schemas = new DynamoSchemaStore(ddb, stack.names.tables.schemas)
    for (const [uri, max] of [['iglu:com.acme/checkout/jsonschema/1-0-0', 40], ['iglu:com.acme/checkout/jsonschema/1-0-1', 30]] as const) {
      const k = parseIgluUri(uri)
      if (!k.ok) throw new Error(k.message)
      await schemas.put({ key: k.value, body: { type: 'object', properties: { step: { type: 'string', maxLength: max }, total: { type: 'number', minimum: 0 } }, required: ['step'], additionalProperties: false }, isPublic: true, createdAt: now, updatedAt: now, supersedes: [] }, { create: false })
    }
    const accounts = new DynamoAccountStore(ddb, stack.names.tables.apiKeys, stack.names.tables.settings)
    /** An organization with an API key: its base URL and bearer token. */
    const organization = async (name: string) => {
      const org = await createOrganization(accounts, name, new Date())
      if (!org.ok) throw new Error(org.message)
      const key = await createApiKey(accounts, org.value.id, new Date())
      if (!key.ok) throw new Error(key.message)
      const base = `${stack.url}/api/msc/v1/organizations/${org.value.id}`
      const tok = await fetch(`${base}/credentials/v3/token`, { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } })
      return { base, auth: { authorization: `Bearer ${((await tok.json()) as { accessToken: string }).accessToken}` } }
    }
    const { base, auth } = await organization('bench')

    const spec = (i: number) => JSON.stringify({
      spec: {
        name: `Checkout step ${i}`,
        description: 'The user moves through the checkout',
        event: { source: 'iglu:com.acme/checkout/jsonschema/1-0-0', schema: { type: 'object', properties: { step: { type: 'string', enum: ['cart', 'address', 'payment'] } }, required: ['step'], additionalProperties: false } },
        entities: { tracked: [], enriched: [] },
      },
      message: 'bench',
    })

    // DynamoDB Local is a JVM: its first thousands of calls run interpreted. Warm it (and this
    // process) with the same operations in another organization, so that the figures below are
    // the steady state and the measured organization holds only what the measurements create.
    const warm = await organization('bench-warm-up')
    const warmIds: string[] = []
    for (let round = 0; round < JVM_WARMUP_ROUNDS; round++) {
      await load(100, (i) => ({ method: 'POST', url: `${warm.base}/event-specs/v1`, headers: warm.auth, body: spec(round * 100 + i) }))
      if (warmIds.length === 0) warmIds.push(...((await (await fetch(`${warm.base}/event-specs/v1`, { headers: warm.auth })).json()) as { data: { id: string }[] }).data.map((s) => s.id))
      await load(100, (i) => ({ method: 'GET', url: `${warm.base}/event-specs/v1/${warmIds[i % warmIds.length]}`, headers: warm.auth }))
      await load(10, () => ({ method: 'GET', url: `${warm.base}/event-specs/v1`, headers: warm.auth }))
      await load(50, () => ({ method: 'GET', url: `${warm.base}/event-specs/v1?status=published`, headers: warm.auth }))
    }

    await load(WARMUP, () => ({ method: 'GET', url: `${stack.url}/health` }))
    const health = report('GET /health (baseline)', await load(REQUESTS, () => ({ method: 'GET', url: `${stack.url}/health` })), REQUESTS, 200).p50

    await load(WARMUP, (i) => ({ method: 'POST', url: `${base}/event-specs/v1`, headers: auth, body: spec(-1 - i) }))
    const created = report('POST create (with compat check)', await load(REQUESTS, (i) => ({ method: 'POST', url: `${base}/event-specs/v1`, headers: auth, body: spec(i) })), REQUESTS, 201, health)
    console.log(`${''.padEnd(34)} create p99 ${created.p99.toFixed(2)} ms (target < 50 ms)`)
    // The floor under create: its one transaction (the record, its first history entry and its
    // name claim, with their conditions and sizes) sent straight to DynamoDB Local, same load.
    const floor = await direct(REQUESTS, (i) =>
      ddb.send(new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: stack.names.tables.eventSpecs, Item: { pk: { S: 'floor' }, sk: { S: `spec#${i}` }, doc: { S: spec(i) } }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: stack.names.tables.specHistory, Item: { pk: { S: `floor#${i}` }, sk: { S: 'v#0' }, entry: { S: spec(i) } } } },
          { Put: { TableName: stack.names.tables.eventSpecs, Item: { pk: { S: 'floor' }, sk: { S: `name#${i}` }, specId: { S: String(i) } }, ConditionExpression: 'attribute_not_exists(pk) OR specId = :id', ExpressionAttributeValues: { ':id': { S: String(i) } } } },
        ],
      })),
    )
    console.log(`${'  its transaction alone'.padEnd(34)} ${Math.round(floor.rps).toString().padStart(6)} req/s   p50 ${floor.p50.toFixed(2).padStart(7)} ms   p99 ${floor.p99.toFixed(2).padStart(7)} ms   (DynamoDB Local, no HTTP: the floor)`)

    const first = (await (await fetch(`${base}/event-specs/v1`, { headers: auth })).json()) as { data: { id: string }[] }
    const ids = first.data.map((s) => s.id)
    await load(WARMUP, (i) => ({ method: 'GET', url: `${base}/event-specs/v1/${ids[i % ids.length]}`, headers: auth }))
    report('GET one (two compat checks)', await load(REQUESTS, (i) => ({ method: 'GET', url: `${base}/event-specs/v1/${ids[i % ids.length]}`, headers: auth })), REQUESTS, 200, health)

    const listN = Math.max(20, Math.floor(REQUESTS / 4))
    report(`GET list (${ids.length} specs)`, await load(listN, () => ({ method: 'GET', url: `${base}/event-specs/v1`, headers: auth })), listN, 200, health)
    report('GET list ?status=published (0)', await load(listN, () => ({ method: 'GET', url: `${base}/event-specs/v1?status=published`, headers: auth })), listN, 200, health)
    report('GET list ?sourceId=…&sourceVersion', await load(listN, () => ({ method: 'GET', url: `${base}/event-specs/v1?sourceId=com.acme/checkout/jsonschema&sourceVersion=1-0-1`, headers: auth })), listN, 200, health)
  } finally {
    await stack.stop()
  }
}

runMain(main)
