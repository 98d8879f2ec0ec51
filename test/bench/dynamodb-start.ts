/**
 * DynamoDB Local's start: the Java process's CPU time (user + system, from
 * /proc) and wall time until it answers HTTP, started three ways, interleaved
 * so load on the machine hits each alike:
 *   jar      `java -jar DynamoDBLocal.jar` (every interface; the baseline),
 *   source   the binding launcher run from its .java file (compiled each time),
 *   compiled the binding launcher from its cached class (what the stack runs).
 * Threshold: the compiled launcher's median CPU is within 1.3× the baseline's.
 * `npm run bench -- dynamodb-start` (Linux: reads /proc)
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { compiledLauncher, launcherArgs } from '../../lib/local/dynamodb/launcher'
import { dynamoDbLocalDir, freePort, javaCommand } from '../../lib/local/emulators'

const RUNS = Number(process.env.RUNS || 5)
const dir = dynamoDbLocalDir()
const classDir = await compiledLauncher(javaCommand(), dir, (l) => console.log(l))
if (!classDir) throw new Error('the launcher could not be compiled into its cache')

const ways: Record<string, () => string[]> = {
  jar: () => ['-jar', join(dir, 'DynamoDBLocal.jar')],
  source: () => launcherArgs(dir, undefined, '127.0.0.1'),
  compiled: () => launcherArgs(dir, classDir, '127.0.0.1'),
}

async function once(way: string): Promise<{ cpuMs: number; wallMs: number }> {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(javaCommand(), ['-Xmx256m', `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`, ...ways[way]!(), '-port', String(port), '-inMemory', '-sharedDb', '-disableTelemetry'], { stdio: 'ignore' })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${way}: exited with ${child.exitCode}`)
      const ok = await fetch(`http://127.0.0.1:${port}`).then(() => true, () => false)
      if (ok) break
      await new Promise((r) => setTimeout(r, 20))
    }
    const wallMs = performance.now() - started
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    const cpuMs = ((Number(stat[11]) + Number(stat[12])) * 1000) / 100 // utime + stime, in clock ticks of 1/100 s
    return { cpuMs, wallMs }
  } finally {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
  }
}

const results: Record<string, { cpuMs: number[]; wallMs: number[] }> = {}
for (let i = 0; i < RUNS; i++) {
  for (const way of Object.keys(ways)) {
    const r = await once(way)
    const acc = (results[way] ??= { cpuMs: [], wallMs: [] })
    acc.cpuMs.push(r.cpuMs)
    acc.wallMs.push(r.wallMs)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const base = median(results.jar!.cpuMs)
for (const [way, r] of Object.entries(results)) {
  console.log(`${way.padEnd(9)} CPU median ${Math.round(median(r.cpuMs))} ms (${(median(r.cpuMs) / base).toFixed(2)}× jar), wall median ${Math.round(median(r.wallMs))} ms, over ${RUNS} starts`)
}
const ratio = median(results.compiled!.cpuMs) / base
if (ratio > 1.3) {
  console.error(`the compiled launcher costs ${ratio.toFixed(2)}× the CPU of DynamoDB Local alone (threshold 1.3×)`)
  process.exit(1)
}
