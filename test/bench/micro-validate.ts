/**
 * `/micro/validate` in a local stack: the time of the first request (its
 * worker thread loads and builds enrich) and of the requests after it
 * (p50, p99 of ROUNDS POSTs of BATCH page views each, one at a time), the
 * Floe process's RSS before the first request and after the last, and
 * `/health`'s p99 while the requests after the first run (the gateway's
 * event loop stays free).
 * `npx tsx test/bench/micro-validate.ts [rounds] [batch]`.
 */
import { startLocalStack } from '../../lib/local/stack'

const ROUNDS = Number(process.argv[2] ?? 50)
const BATCH = Number(process.argv[3] ?? 10)
const AUTH = { authorization: `Basic ${Buffer.from('floe:BenchPassword2024').toString('base64')}` }
const stack = await startLocalStack({
  environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_LOG_LEVEL: 'warn', FLOE_USERNAME: 'floe', FLOE_PASSWORD: 'BenchPassword2024' },
  namePrefix: `benchvalidate${process.pid}`,
  triggers: false,
})
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
try {
  const body = JSON.stringify({
    schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4',
    data: Array.from({ length: BATCH }, (_, i) => ({ e: 'pv', p: 'web', tv: 'js-4.10.1', aid: 'bench', url: `https://shop.example/${i}`, eid: crypto.randomUUID() })),
  })
  const send = async () => {
    const t = performance.now()
    const r = await fetch(`${stack.url}/micro/validate/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body })
    const answer = (await r.json()) as { results: { valid: boolean }[] }
    if (r.status !== 200 || answer.results.length !== BATCH || !answer.results.every((x) => x.valid)) throw new Error(`unexpected answer ${r.status}`)
    return performance.now() - t
  }
  const rssBefore = process.memoryUsage().rss
  const first = await send()
  const health: number[] = []
  let running = true
  const probe = (async () => {
    while (running) {
      const t = performance.now()
      await (await fetch(`${stack.url}/health`)).text()
      health.push(performance.now() - t)
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) times.push(await send())
  running = false
  await probe
  const rssAfter = process.memoryUsage().rss
  console.log(`first request (worker thread start, enrich built): ${first.toFixed(0)} ms`)
  console.log(`${ROUNDS} requests of ${BATCH} events after it: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms`)
  console.log(`Floe process RSS: ${(rssBefore / 2 ** 20).toFixed(0)} MiB before the first request, ${(rssAfter / 2 ** 20).toFixed(0)} MiB after the last (+${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB)`)
  console.log(`/health while the requests after the first run: p99 ${pct(health, 99).toFixed(1)} ms over ${health.length} requests`)
} finally {
  await stack.stop()
}
