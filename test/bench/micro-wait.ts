/**
 * `npm run bench -- micro-wait`: on a local stack started as `npm start`
 * starts it (a data directory, every trigger's own settings), the time from
 * the collector's 200 to the events being visible, p50/p95, for single events
 * and for batches of 100:
 *
 * - through `POST /micro/wait` (sent right after the collector's 200), and
 * - the baseline in the same run: polling `POST /micro/events` every 100 ms
 *   after the send, as suites written for Micro do.
 *
 * `BENCH_MICRO_WAIT_SINGLES` (default 40) and `BENCH_MICRO_WAIT_BATCHES`
 * (default 10) set the number of samples. `BENCH_MICRO_WAIT_POLL_ONLY=1`
 * measures the polling alone (for a build without `/micro/wait`). Exits 1
 * when the target (p95 of a single event through /micro/wait < 500 ms) is
 * not met.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalStack } from '../../lib/local/stack'

const SINGLES = Number(process.env.BENCH_MICRO_WAIT_SINGLES ?? 40)
const BATCHES = Number(process.env.BENCH_MICRO_WAIT_BATCHES ?? 10)
const POLL_MS = 100
const POLL_ONLY = process.env.BENCH_MICRO_WAIT_POLL_ONLY === '1'
const TARGET_P95_MS = 500

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const f = (n: number) => Math.round(n).toLocaleString('en')
const PASSWORD = 'BenchPassword2024'
const auth = { authorization: `Basic ${Buffer.from(`floe:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' }

const dataDir = mkdtempSync(join(tmpdir(), 'floe-bench-wait-'))
const stack = await startLocalStack({
  dataDir,
  environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_LOG_LEVEL: 'warn', FLOE_USERNAME: 'floe', FLOE_PASSWORD: PASSWORD },
  namePrefix: `benchwait${process.pid}`,
})

/** Sends `n` page views of app `app` in one tracker POST; resolves at the collector's 200. */
async function send(app: string, n: number): Promise<void> {
  const now = Date.now()
  const data = Array.from({ length: n }, (_, i) => ({ e: 'pv', p: 'web', tv: 'bench-1', aid: app, eid: randomUUID(), url: `https://bench.example/${i}`, dtm: String(now), stm: String(now) }))
  const r = await fetch(`${stack.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
  })
  await r.arrayBuffer()
  if (r.status !== 200) throw new Error(`the collector answered ${r.status}`)
}

const filters = (app: string) => [{ column: 'app_id', values: [app] }]

async function viaWait(app: string, n: number): Promise<void> {
  const r = await fetch(`${stack.url}/micro/wait`, { method: 'POST', headers: auth, body: JSON.stringify({ filters: filters(app), count: n, timeout: 20_000 }) })
  const body = (await r.json()) as { complete?: boolean; total?: number }
  if (r.status !== 200 || body.complete !== true) throw new Error(`/micro/wait answered ${r.status} ${JSON.stringify(body).slice(0, 200)}`)
}

async function viaPolling(app: string, n: number): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const r = await fetch(`${stack.url}/micro/events`, { method: 'POST', headers: auth, body: JSON.stringify({ filters: filters(app), pageSize: 1 }) })
    const body = (await r.json()) as { totalItems: number }
    if (body.totalItems >= n) return
    if (Date.now() > deadline) throw new Error(`${n} events of ${app} not visible after 20 s`)
    await new Promise((res) => setTimeout(res, POLL_MS))
  }
}

/** Send → visible (ms from the collector's 200), alternating the two ways so both see the same machine. */
async function measure(n: number, samples: number): Promise<{ wait: number[]; poll: number[] }> {
  const out = { wait: [] as number[], poll: [] as number[] }
  for (let i = 0; i < samples; i++) {
    for (const [kind, see] of POLL_ONLY ? ([['poll', viaPolling]] as const) : ([['wait', viaWait], ['poll', viaPolling]] as const)) {
      const app = `bench-${kind}-${n}-${i}-${process.pid}`
      await send(app, n)
      const t0 = performance.now()
      await see(app, n)
      out[kind].push(performance.now() - t0)
    }
  }
  return out
}

let failed = false
try {
  // warm-up: the first events load the enrich worker, the handlers and the store's caches
  await measure(1, 3)
  await measure(100, 1)
  const single = await measure(1, SINGLES)
  const batch = await measure(100, BATCHES)
  const line = (what: string, xs: number[]) => `${what.padEnd(50)} p50 ${f(pct(xs, 50)).padStart(6)} ms  p95 ${f(pct(xs, 95)).padStart(6)} ms`
  console.log(`send → visible on a local stack (npm start's settings), ms after the collector's 200:`)
  if (!POLL_ONLY) console.log(line(`single event, POST /micro/wait (n=${SINGLES})`, single.wait))
  console.log(line(`single event, polling /micro/events every ${POLL_MS} ms`, single.poll))
  if (!POLL_ONLY) console.log(line(`batch of 100, POST /micro/wait (n=${BATCHES})`, batch.wait))
  console.log(line(`batch of 100, polling /micro/events every ${POLL_MS} ms`, batch.poll))
  if (!POLL_ONLY) {
    const p95 = pct(single.wait, 95)
    failed = p95 >= TARGET_P95_MS
    console.log(`target: single event through /micro/wait p95 < ${TARGET_P95_MS} ms: ${failed ? 'NOT met' : 'met'} (${f(p95)} ms); /micro/wait p50 is ${(pct(single.wait, 50) / pct(single.poll, 50)).toFixed(2)}× polling's`)
  }
} finally {
  await stack.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
