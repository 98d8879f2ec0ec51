/**
 * Enrich cannot stall the gateway: collector and `/health` latency through
 * the local gateway while enrich works through events with a JavaScript
 * enrichment whose `process()` never finishes (each event takes the script's
 * 100 ms limit), against the same stack without enrichments. The load client
 * runs in its own process, the emulators in theirs; enrich runs in its worker
 * thread of the stack's process. A tracker POST of 200 events first gives
 * enrich 20 s of work; the client measures once enrich is in that batch, and
 * the enrich line says for how long of the measurement it was in one.
 *
 * Pass: collector and /health p99 < 200 ms beside the endless script, no
 * errors.
 *
 *   npm run bench -- js-enrichment        (or: node --import tsx test/bench/js-enrichment.ts [requests] [events])
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startLocalStack } from '../../lib/local/stack'
import { emulatorsProcess, runMain } from './support/processes'

const here = dirname(fileURLToPath(import.meta.url))
const REQUESTS = Number(process.argv[2] ?? 1000)
const EVENTS = Number(process.argv[3] ?? 200)
const P99_LIMIT_MS = 200

interface Figures {
  n: number
  p50: number
  p99: number
  max: number
  errors: number
}
interface Result {
  post: number
  ms: number
  collector: Figures
  health: Figures
}

/** Runs the load client; once it has posted the events, `ready` says when it may measure. */
function clientRun(job: object, ready: () => Promise<void>): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'support/stall-load.ts'), JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      const before = out
      out += d.toString()
      if (!before.includes('posted\n') && out.includes('posted\n')) void ready().then(() => child.stdin.write('go\n'))
    })
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Result) : reject(new Error(`the load client exited with ${code}`))))
  })
}

function enrichmentsDir(script: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'floe-bench-js-'))
  if (script !== undefined) {
    const doc = { schema: 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'javascript_script_config', enabled: true, parameters: { script: Buffer.from(script).toString('base64') } } }
    writeFileSync(join(dir, 'endless.json'), JSON.stringify(doc))
  }
  return dir
}

runMain(async () => {
  const emulators = await emulatorsProcess()
  let failed = false
  let baseline: Result | undefined
  const f = (x: number) => x.toFixed(1)
  try {
    for (const c of [
      { label: 'no enrichments (baseline)', script: undefined },
      { label: 'JavaScript enrichment: function process(event) { while (true) {} }', script: 'function process(event) { while (true) {} }' },
    ]) {
      const stack = await startLocalStack({
        endpoints: emulators.endpoints,
        namePrefix: `bench-js-${c.script ? 'endless' : 'base'}`,
        enrichmentsDir: enrichmentsDir(c.script),
        environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_USERNAME: 'floe', FLOE_PASSWORD: 'BenchPassword2024' },
      })
      try {
        // enrich's time in a batch (any invocation in flight) while the client measures
        const spans: [number, number][] = []
        let inFlight = 0
        let attached = false
        const attach = () => {
          const w = stack.functionWorkers.get('enrich')
          if (!w || attached) return
          attached = true
          w.on('started', () => {
            if (inFlight++ === 0) spans.push([Date.now(), Infinity])
          })
          w.on('ended', () => {
            if (--inFlight === 0) spans.at(-1)![1] = Date.now()
          })
        }
        const poll = setInterval(attach, 10)
        // the client measures once enrich is in the batch of the posted events
        const inBatch = () =>
          new Promise<void>((resolve) => {
            const check = setInterval(() => {
              if (inFlight > 0) {
                clearInterval(check)
                resolve()
              }
            }, 5)
          })
        const r = await clientRun({ url: stack.url, requests: REQUESTS, events: EVENTS }, inBatch)
        const end = Date.now()
        clearInterval(poll)
        const busyMs = spans.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, end) - Math.max(a, end - r.ms)), 0)
        const line = (name: string, x: Figures) => `  ${name.padEnd(9)} p50 ${f(x.p50)} ms, p99 ${f(x.p99)} ms, max ${f(x.max)} ms (${x.n} requests, ${x.errors} errors)`
        console.log(`${c.label}:`)
        console.log(line('collector', r.collector))
        console.log(line('/health', r.health))
        console.log(`  enrich    in a batch ${f(busyMs / 1000)} s of the ${f(r.ms / 1000)} s measured (a tracker POST of ${EVENTS} events first: ${r.post})`)
        if (!c.script) baseline = r
        if (c.script && baseline) console.log(`  ratio to the baseline: collector p99 ×${(r.collector.p99 / baseline.collector.p99).toFixed(2)}, /health p99 ×${(r.health.p99 / baseline.health.p99).toFixed(2)}`)
        if (c.script) {
          const pass = r.collector.p99 < P99_LIMIT_MS && r.health.p99 < P99_LIMIT_MS && r.collector.errors + r.health.errors === 0
          failed ||= !pass
          console.log(`  ${pass ? 'PASS' : 'FAIL'}: collector p99 ${f(r.collector.p99)} ms, /health p99 ${f(r.health.p99)} ms ${pass ? '<' : 'not both <'} ${P99_LIMIT_MS} ms`)
        }
      } finally {
        await stack.stop()
      }
    }
  } finally {
    await emulators.stop()
  }
  if (failed) throw new Error('JavaScript enrichment benchmark: FAIL')
})
