/** The `floe` command run as a user runs it: `node bin/floe.mjs …` in the project, its output collected. */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const projectRoot = fileURLToPath(new URL('../..', import.meta.url))

export function runFloe(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(projectRoot, 'bin/floe.mjs'), ...args], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((r) => child.once('exit', (code) => r({ code, stdout, stderr })))
}
