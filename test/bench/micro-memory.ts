/**
 * `/micro/good` under load: EVENTS large good events in a local stack's
 * store, CALLS concurrent `GET /micro/good` read to their end (the client
 * keeps no body), while `/health` is asked every 50 ms. Prints the bytes of
 * each answer, the stack process's peak RSS over its RSS before the calls,
 * and `/health`'s p99. `npx tsx test/bench/micro-memory.ts [events] [calls]`.
 */
import { startLocalStack } from '../../lib/local/stack'
import { loadBatch } from '../../lib/core/search/loader'
import { migrate, schemaForPrefix, searchDb } from '../../lib/core/search/store'
import { postgresClient } from '../../lib/runtime/postgres'
import { batch, enricher, tp2 } from '../unit/enrich/helpers'

const EVENTS = Number(process.argv[2] ?? 16_000)
const CALLS = Number(process.argv[3] ?? 8)
const AUTH = { authorization: `Basic ${Buffer.from('floe:BenchPassword2024').toString('base64')}` }
const prefix = `benchmicro${process.pid}`
const stack = await startLocalStack({
  environment: { FLOE_IGLU_CENTRAL_URL: '', FLOE_LOG_LEVEL: 'warn', FLOE_USERNAME: 'floe', FLOE_PASSWORD: 'BenchPassword2024', FLOE_SEARCH_TIMEOUT_MS: '25000' },
  namePrefix: prefix,
  triggers: false,
})
try {
  const sql = postgresClient(stack.endpoints.postgres!)
  const db = searchDb(sql, schemaForPrefix(prefix))
  await migrate(db)
  const o = await enricher().enrichRecord(tp2(`e=pv&p=web&tv=js-3&aid=bench&page=${'t'.repeat(1_900)}&url=${encodeURIComponent(`https://a.test/${'p'.repeat(2_000)}`)}`), batch())
  const line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
  for (let start = 0; start < EVENTS; start += 500) {
    const records = Array.from({ length: Math.min(500, EVENTS - start) }, (_, j) => {
      const cols = line.split('\t')
      cols[6] = `c0000000-0000-4000-8000-${String(start + j).padStart(12, '0')}`
      return { id: String(start + j), text: cols.join('\t') }
    })
    await loadBatch(db, 'good', records, Date.now())
  }
  await sql.close()
  await (await fetch(`${stack.url}/micro/good`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"limit":1}' })).arrayBuffer()
  global.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
  const health: number[] = []
  let done = false
  const pinger = (async () => {
    while (!done) {
      const t0 = performance.now()
      await (await fetch(`${stack.url}/health`)).arrayBuffer()
      health.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  const t0 = performance.now()
  const sizes = await Promise.all(
    Array.from({ length: CALLS }, async () => {
      const r = await fetch(`${stack.url}/micro/good`, { headers: AUTH })
      let bytes = 0
      const reader = r.body!.getReader()
      for (let n = await reader.read(); !n.done; n = await reader.read()) bytes += n.value.length
      return `${r.status} ${(bytes / 1e6).toFixed(1)} MB`
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  done = true
  await pinger
  clearInterval(sampler)
  health.sort((a, b) => a - b)
  const p99 = health[Math.min(health.length - 1, Math.floor(health.length * 0.99))]!
  console.log(`${EVENTS} events, ${CALLS} concurrent GET /micro/good: ${sizes.join(', ')} in ${seconds.toFixed(1)} s`)
  console.log(`RSS before ${(before / 1e6).toFixed(0)} MB, peak ${(peak / 1e6).toFixed(0)} MB (+${((peak - before) / 1e6).toFixed(0)} MB); /health p99 ${p99.toFixed(0)} ms over ${health.length} calls`)
} finally {
  await stack.stop()
}
