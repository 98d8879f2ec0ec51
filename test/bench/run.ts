/**
 * `npm run bench`: runs every benchmark in this folder, one after another, each
 * in its own process so they do not disturb each other. Each prints its own
 * numbers and the ratio to a baseline it measures in the same run.
 * `npm run bench -- collector` runs only the named ones.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
// The compatibility corpus has its own command (`npm run bench:compat`).
const skip = new Set(['run.ts', 'compat.ts'])
const wanted = process.argv.slice(2)
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !skip.has(f))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.ts$/, '')))
  .sort()

if (benches.length === 0) {
  console.error(wanted.length ? `no benchmark named ${wanted.join(', ')}` : 'no benchmarks found')
  process.exit(2)
}

let failed = 0
for (const file of benches) {
  console.log(`\n== ${file.replace(/\.ts$/, '')} ==`)
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file)], { stdio: 'inherit', env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } })
    child.once('exit', (c) => resolve(c ?? 1))
  })
  if (code !== 0) {
    failed++
    console.error(`${file}: exited with ${code}`)
  }
}
process.exit(failed ? 1 : 0)
