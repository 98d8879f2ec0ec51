/**
 * The client side of the JavaScript-enrichment benchmark, in its own process:
 * a tracker POST of `events` page views (work for enrich), then, once told
 * on stdin that enrich is in a batch, collector requests and `/health`
 * requests, each one after another on its own connection, the two loops side
 * by side. Prints `posted`, then one JSON line.
 *
 *   node --import tsx test/bench/support/stall-load.ts '{"url":…,"requests":500,"events":300}'
 */
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'node:http'

interface Job {
  readonly url: string
  readonly requests: number
  readonly events: number
}

const job = JSON.parse(process.argv[2]!) as Job
const base = new URL(job.url)

function call(agent: Agent, path: string, method = 'GET', body?: string): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve) => {
    const req = request({ host: base.hostname, port: base.port, path, method, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }))
    })
    req.on('error', () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }))
    req.end(body)
  })
}

function stats(xs: { status: number; ms: number }[]) {
  const s = xs.map((x) => x.ms).sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!
  return { n: s.length, p50: q(0.5), p99: q(0.99), max: s.at(-1)!, errors: xs.filter((x) => x.status !== 200).length }
}

async function loop(agent: Agent, path: string, n: number) {
  const out: { status: number; ms: number }[] = []
  for (let i = 0; i < n; i++) out.push(await call(agent, path))
  return out
}

async function main(): Promise<void> {
  const collectorAgent = new Agent({ keepAlive: true, maxSockets: 1 })
  const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 })
  const collectorPath = '/i?e=pv&p=web&tv=js-4.0.0&aid=bench-probe&url=https%3A%2F%2Fexample.com%2F'
  await loop(collectorAgent, collectorPath, 20) // warm-up
  await loop(healthAgent, '/health', 20)
  const data = Array.from({ length: job.events }, () => ({ e: 'pv', p: 'web', tv: 'js-4.0.0', aid: 'bench-load', eid: randomUUID(), url: 'https://example.com/', dtm: String(Date.now()) }))
  const post = await call(collectorAgent, '/com.snowplowanalytics.snowplow/tp2', 'POST', JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }))
  process.stdout.write('posted\n')
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()))
  const started = Date.now()
  const [collector, health] = await Promise.all([loop(collectorAgent, collectorPath, job.requests), loop(healthAgent, '/health', job.requests)])
  console.log(JSON.stringify({ post: post.status, ms: Date.now() - started, collector: stats(collector), health: stats(health) }))
  collectorAgent.destroy()
  healthAgent.destroy()
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
