/**
 * Sign-ins cost bounded work: collector requests from one address, one after
 * another, keep their latency while 200 wrong sign-ins arrive at once from
 * another address (and, a second round, from 200 addresses), through the
 * local gateway with the declared authorizer (scrypt, N = 2^15). Then the
 * right password from a third address must get in. The clients run in their
 * own process, the emulators in theirs.
 *
 * Pass: collector p99 during the sign-ins < 200 ms, no 5xx (collector or
 * sign-ins), and the right password answered 200.
 *
 *   npm run bench -- signin
 */
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startLocalStack } from '../../lib/local/stack'
import { emulatorsProcess, runMain } from './support/processes'

const here = dirname(fileURLToPath(import.meta.url))
const USERNAME = 'floe'
const PASSWORD = 'BenchPassword2024'
const P99_LIMIT_MS = 200

interface Result {
  baseline: { n: number; p50: number; p99: number }
  during: { n: number; p50: number; p99: number; max: number; errors: number }
  attack: { ms: number; statuses: Record<string, number>; p99: number }
  right: { status: number; ms: number }
}

function clientRun(job: object): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'support/signin-load.ts'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Result) : reject(new Error(`the load client exited with ${code}`))))
  })
}

runMain(async () => {
  const emulators = await emulatorsProcess()
  const stack = await startLocalStack({ endpoints: emulators.endpoints, triggers: false, namePrefix: 'bench-signin', environment: { FLOE_USERNAME: USERNAME, FLOE_PASSWORD: PASSWORD } })
  let failed = false
  try {
    for (const spread of ['none', 'one', 'many'] as const) {
      const r = await clientRun({ url: stack.url, username: USERNAME, password: PASSWORD, spread, attempts: 200, baselineRequests: 200 })
      const fivexx = Object.entries(r.attack.statuses).filter(([s]) => Number(s) >= 500 || Number(s) === 0).reduce((n, [, c]) => n + c, 0)
      const pass = r.during.p99 < P99_LIMIT_MS && r.during.errors === 0 && fivexx === 0 && r.right.status === 200
      if (spread !== 'none') failed ||= !pass
      const f = (x: number) => x.toFixed(1)
      console.log(spread === 'none' ? '200 concurrent requests without credentials (reference: the same burst, no hash):' : `200 concurrent wrong sign-ins from ${spread === 'one' ? 'one address' : '200 addresses'}:`)
      console.log(`  collector from another address  before: p50 ${f(r.baseline.p50)} ms, p99 ${f(r.baseline.p99)} ms (${r.baseline.n} requests)`)
      console.log(`                                  during: p50 ${f(r.during.p50)} ms, p99 ${f(r.during.p99)} ms, max ${f(r.during.max)} ms (${r.during.n} requests, ${r.during.errors} not 200)`)
      console.log(`  sign-ins  answered in ${r.attack.ms} ms (p99 ${f(r.attack.p99)} ms): ${Object.entries(r.attack.statuses).map(([s, c]) => `${c} × ${s}`).join(', ')}`)
      console.log(`  right password from a third address: ${r.right.status} in ${f(r.right.ms)} ms`)
      console.log(`  ${spread === 'none' ? 'reference' : pass ? 'PASS' : 'FAIL'}: collector p99 ${f(r.during.p99)} ms ${r.during.p99 < P99_LIMIT_MS ? '<' : '>='} ${P99_LIMIT_MS} ms, ${fivexx + r.during.errors} errors or 5xx, right password ${r.right.status}`)
    }
  } finally {
    await stack.stop()
    await emulators.stop()
  }
  if (failed) throw new Error('sign-in benchmark: FAIL')
})
