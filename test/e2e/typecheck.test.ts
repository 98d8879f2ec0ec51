import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'

it('the whole project type-checks in strict mode', async () => {
  const child = spawn(process.execPath, [join(projectRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', projectRoot], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const code = await new Promise((r) => child.once('exit', r))
  expect(code, out.slice(0, 4000)).toBe(0)
}, 180_000)
