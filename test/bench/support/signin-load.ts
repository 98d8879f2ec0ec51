/**
 * The client side of the sign-in benchmark, in its own process: collector
 * requests from one loopback address, one after another, before and during
 * 200 concurrent wrong sign-ins from other addresses; then the right password
 * from yet another address. Prints one JSON line.
 *
 *   node --import tsx test/bench/support/signin-load.ts '{"url":…,"password":…}'
 */
import { Agent, request } from 'node:http'

interface Job {
  readonly url: string
  readonly username: string
  readonly password: string
  /** `one`: every wrong sign-in from one address; `many`: each from its own; `none`: requests without credentials (no hash: the gateway's own cost of the burst). */
  readonly spread: 'one' | 'many' | 'none'
  readonly attempts: number
  readonly baselineRequests: number
}

const job = JSON.parse(process.argv[2]!) as Job
const base = new URL(job.url)
const probeAgent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' })

function get(path: string, opts: { localAddress?: string; agent?: Agent; authorization?: string }): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint()
  return new Promise((resolve) => {
    const req = request(
      { host: base.hostname, port: base.port, path, method: 'GET', agent: opts.agent ?? false, ...(opts.agent ? {} : { localAddress: opts.localAddress }), headers: opts.authorization ? { authorization: opts.authorization } : {} },
      (res) => {
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }))
      },
    )
    req.on('error', () => resolve({ status: 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }))
    req.end()
  })
}

const collector = () => get('/i?e=pv&p=web&tv=js-4.0.0&url=https%3A%2F%2Fexample.com%2F', { agent: probeAgent })
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN
}

async function main(): Promise<void> {
  for (let i = 0; i < 20; i++) await collector() // warm-up
  // a warm instance: the authorizer and the function behind it loaded, as after the first page load
  await get('/micro/all', { localAddress: '127.0.0.5', authorization: basic(job.username, job.password) })
  const baseline: number[] = []
  for (let i = 0; i < job.baselineRequests; i++) baseline.push((await collector()).ms)

  const during: { status: number; ms: number }[] = []
  let attacking = true
  const started = Date.now()
  const attack = Promise.all(
    Array.from({ length: job.attempts }, (_, i) =>
      get('/micro/all', {
        localAddress: job.spread === 'many' ? `127.0.${10 + Math.floor(i / 250)}.${(i % 250) + 1}` : '127.0.0.3',
        ...(job.spread === 'none' ? {} : { authorization: basic(job.username, `WrongPassword${i}`) }),
      }),
    ),
  ).finally(() => {
    attacking = false
  })
  while (attacking) during.push(await collector())
  const attackAnswers = await attack
  const attackMs = Date.now() - started
  const right = await get('/micro/all', { localAddress: '127.0.0.4', authorization: basic(job.username, job.password) })

  const statuses: Record<string, number> = {}
  for (const a of attackAnswers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
  const ms = during.map((d) => d.ms)
  console.log(
    JSON.stringify({
      baseline: { n: baseline.length, p50: quantile(baseline, 0.5), p99: quantile(baseline, 0.99) },
      during: { n: during.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: Math.max(...ms), errors: during.filter((d) => d.status !== 200).length },
      attack: { ms: attackMs, statuses, p99: quantile(attackAnswers.map((a) => a.ms), 0.99) },
      right,
    }),
  )
  probeAgent.destroy()
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
