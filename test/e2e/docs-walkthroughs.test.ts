/**
 * The docs' shell walkthroughs, run as written against a fresh stack
 * (markers and rules: test/support/walkthroughs.ts). Every ```sh block of the
 * README, of docs/ and of the component READMEs they link to is in a
 * walkthrough or skipped with its reason.
 *
 * The stack is started as the Quick start says (its first block's last line,
 * `ACCEPT_LIMITED_USE_LICENSE=yes npm start`) in a fresh copy of the project
 * (links to the repository's files; no `.floe`, no `my-schemas`), with the
 * pages' password and the super key given (`FLOE_PASSWORD`,
 * `FLOE_SUPER_API_KEY`) so that the blocks get them as the Quick start's step
 * 2 says, `export PW=… KEY=…`. It listens on the docs' own address,
 * 127.0.0.1:8080: in a network namespace of its own where the system allows
 * it (unshare), so it never meets another stack; else on the machine's port
 * 8080, which must then be free. Each walkthrough runs in a shell of its own
 * in the same project directory, after the Quick start, as a user who did it
 * first; its blocks run in order, each with `set -e`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'
import { killOrphanDynamo } from '../support/process'
import { shellBlocks, walkthroughs } from '../support/walkthrough-pages'
import { answerParts, expectedOutput, missingOutput, shellSession, type DocBlock } from '../support/walkthroughs'

const PW = 'Walkthrough0Password'
const KEY = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b'
/** How long a block that waits for the pipeline is run again. */
const WAIT_MS = 90_000

const blocks = shellBlocks(projectRoot)
const all = walkthroughs(projectRoot)

describe('the shell blocks of the docs', () => {
  it('are each in a walkthrough, or skipped with a reason', () => {
    expect(blocks.filter((b) => b.walkthrough === undefined && b.skip === undefined).map((b) => `${b.file}:${b.line}`)).toEqual([])
  })

  it('make the walkthroughs of the Quick start, the registry, the tracking-design API and recovery', () => {
    expect([...all.keys()]).toEqual(expect.arrayContaining(['quick-start', 'registry', 'tracking-design', 'recovery']))
    expect([...all.keys()][0]).toBe('quick-start')
  })
})

/** The user's shell: PATH without this test's node_modules/.bin, HOME, and what the Quick start exports. */
function userEnvironment(): Record<string, string> {
  const path = (process.env.PATH ?? '').split(':').filter((p) => !p.includes('node_modules')).join(':')
  return { PATH: path, HOME: process.env.HOME ?? tmpdir(), LANG: 'C.UTF-8', PW, KEY }
}

/** A network namespace with its own loopback (unshare -rn), entered with nsenter; undefined where the system refuses. */
async function privateNetwork(): Promise<{ prefix: string[]; close(): void } | undefined> {
  const holder = spawn('unshare', ['-rn', 'sh', '-c', 'ip link set lo up && echo up && exec sleep 86400'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const up = await new Promise<boolean>((resolve) => {
    holder.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve(true))
    holder.once('error', () => resolve(false))
    holder.once('exit', () => resolve(false))
  })
  if (!up) return undefined
  return { prefix: ['nsenter', '-t', String(holder.pid), '-U', '-n', '--preserve-credentials'], close: () => holder.kill('SIGKILL') }
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

let project: string
let network: { prefix: string[]; close(): void } | undefined
let stack: ChildProcess | undefined
let stackOutput = ''

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'floe-walkthroughs-'))
  for (const f of readdirSync(projectRoot)) if (!['.git', '.floe', 'node_modules', 'cdk.out'].includes(f)) symlinkSync(join(projectRoot, f), join(project, f))
  symlinkSync(join(projectRoot, 'node_modules'), join(project, 'node_modules'))
  network = await privateNetwork()
  if (!network && !(await portFree(8080))) throw new Error('the walkthroughs use the docs\' address, 127.0.0.1:8080, which is taken, and no network namespace of their own can be made here (unshare -rn)')
  const start = blocks.find((b) => b.file === 'README.md' && b.walkthrough === 'quick-start' && b.skip !== undefined)
  const command = start?.text.trim().split('\n').at(-1) ?? ''
  expect(command).toBe('ACCEPT_LIMITED_USE_LICENSE=yes npm start')
  const [cmd, ...args] = [...(network?.prefix ?? []), 'bash', '-c', command]
  stack = spawn(cmd!, args, {
    cwd: project,
    env: { ...userEnvironment(), FLOE_PASSWORD: PW, FLOE_SUPER_API_KEY: KEY, FLOE_IGLU_CENTRAL_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const up = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack did not start within 180 s:\n${stackOutput}`)), 180_000)
    const seen = (d: Buffer) => {
      stackOutput += d.toString()
      if (stackOutput.includes('Floe is up')) {
        clearTimeout(timer)
        resolve()
      }
    }
    stack!.stdout!.on('data', seen)
    stack!.stderr!.on('data', seen)
    stack!.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the stack exited (${code}) before it was up:\n${stackOutput}`))
    })
  })
  await up
}, 240_000)

afterAll(async () => {
  if (stack?.pid !== undefined && stack.exitCode === null) {
    const exited = new Promise((r) => stack!.once('exit', r))
    try {
      process.kill(-stack.pid, 'SIGTERM')
    } catch {}
    const late = setTimeout(() => {
      try {
        process.kill(-stack!.pid!, 'SIGKILL')
      } catch {}
    }, 30_000)
    await exited
    clearTimeout(late)
  }
  if (project) {
    killOrphanDynamo(join(project, '.floe'))
    rmSync(project, { recursive: true, force: true })
  }
  network?.close()
}, 60_000)

/** Runs a block; a block marked wait again until its output is what the docs print (or WAIT_MS passed). */
async function runBlock(shell: ReturnType<typeof shellSession>, b: DocBlock): Promise<void> {
  const where = `${b.file}:${b.line}`
  const expected = expectedOutput(b.text)
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const r = await shell.run(b.text)
    const missing = missingOutput(expected, r.output)
    const answer = answerParts(b.answer ?? '').filter((p) => !r.output.includes(p))
    const ok = r.code === 0 && missing === undefined && answer.length === 0
    if (ok) return
    if (!b.wait || Date.now() > deadline) {
      expect(r.code, `${where} exited with ${r.code}; its output:\n${r.output}`).toBe(0)
      expect(missing, `${where} did not print what the docs say; its output:\n${r.output}`).toBeUndefined()
      expect(answer, `${where}: the answer the docs show has parts the output lacks; the output:\n${r.output}`).toEqual([])
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)) // the pipeline is another process: ask again, as the docs say
  }
}

describe('the walkthroughs, run as written against a fresh stack', () => {
  for (const [name, steps] of all) {
    it(`${name} (${steps[0]!.file})`, async () => {
      const shell = shellSession({ cwd: project, env: userEnvironment(), stateDir: mkdtempSync(join(project, `.walkthrough-${name}-`)), prefix: network?.prefix, timeoutMs: 240_000 })
      for (const b of steps) await runBlock(shell, b)
    }, 900_000)
  }
})
