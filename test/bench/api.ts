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
import { makeClients } from '../../lib/aws/clients'
import { DynamoSchemaStore } from '../../lib/aws/registry-store'
import { DynamoAccountStore } from '../../lib/aws/tracking-design-store'
import { createApiKey, createOrganization } from '../../lib/core/tracking-design/accounts'
import { startLocalStack } from '../../lib/local/stack'
import { runMain } from './support/processes'

const REQUESTS = Number(process.argv[2] ?? 400)
const CONCURRENCY = Number(process.argv[3] ?? 8)
const WARMUP = 50

interface Result {
  seconds: number
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
  const started = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) await one(next++)
  }))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  agent.destroy()
  return { seconds, latenciesMs, statuses }
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
  console.log(`${label.padEnd(34)} ${Math.round(rps).toString().padStart(6)} req/s   p50 ${p50.toFixed(2).padStart(7)} ms   p99 ${pct(sorted, 99).toFixed(2).padStart(7)} ms${ratio}`)
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
    const org = await createOrganization(accounts, 'bench', new Date())
    if (!org.ok) throw new Error(org.message)
    const key = await createApiKey(accounts, org.value.id, new Date())
    if (!key.ok) throw new Error(key.message)
    const base = `${stack.url}/api/msc/v1/organizations/${org.value.id}`
    const tok = await fetch(`${base}/credentials/v3/token`, { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } })
    const auth = { authorization: `Bearer ${((await tok.json()) as { accessToken: string }).accessToken}` }

    const spec = (i: number) => JSON.stringify({
      spec: {
        name: `Checkout step ${i}`,
        description: 'The user moves through the checkout',
        event: { source: 'iglu:com.acme/checkout/jsonschema/1-0-0', schema: { type: 'object', properties: { step: { type: 'string', enum: ['cart', 'address', 'payment'] } }, required: ['step'], additionalProperties: false } },
        entities: { tracked: [], enriched: [] },
      },
      message: 'bench',
    })

    await load(WARMUP, () => ({ method: 'GET', url: `${stack.url}/health` }))
    const health = report('GET /health (baseline)', await load(REQUESTS, () => ({ method: 'GET', url: `${stack.url}/health` })), REQUESTS, 200).p50

    await load(WARMUP, (i) => ({ method: 'POST', url: `${base}/event-specs/v1`, headers: auth, body: spec(-1 - i) }))
    const created = report('POST create (with compat check)', await load(REQUESTS, (i) => ({ method: 'POST', url: `${base}/event-specs/v1`, headers: auth, body: spec(i) })), REQUESTS, 201, health)
    console.log(`${''.padEnd(34)} create p99 ${created.p99.toFixed(2)} ms (target < 50 ms)`)

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
