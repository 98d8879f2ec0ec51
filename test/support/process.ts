import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../lib/local/handlers'

export interface Running {
  readonly child: ChildProcess
  /** Everything printed so far (stdout and stderr). */
  output(): string
  /** Resolves when the output contains `text`; rejects if the process exits first. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>
}

/** Starts `node bin/floe.mjs ...args` from the project root (asynchronously: emulators may live in this process). */
export function floe(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, ['bin/floe.mjs', ...args], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const listeners = new Set<() => void>()
  const onData = (d: Buffer) => {
    out += d.toString()
    for (const l of [...listeners]) l()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return {
    child,
    output: () => out,
    exited,
    waitFor(text, timeoutMs = 90_000) {
      const found = () => (typeof text === 'string' ? out.includes(text) : text.test(out))
      return new Promise<void>((resolve, reject) => {
        if (found()) return resolve()
        const timer = setTimeout(() => done(new Error(`timed out waiting for ${text}; output:\n${out}`)), timeoutMs)
        const check = () => found() && done()
        const done = (err?: Error) => {
          clearTimeout(timer)
          listeners.delete(check)
          err ? reject(err) : resolve()
        }
        listeners.add(check)
        void exited.then((code) => done(found() ? undefined : new Error(`exited (${code}) before printing ${text}; output:\n${out}`)))
      })
    },
  }
}

/** Runs `node bin/floe.mjs ...args` from the project root to its end: the exit code and what it printed on each stream. */
export function runFloe(
  args: string[],
  env: Record<string, string> = {},
  opts: { readonly replaceEnvironment?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['bin/floe.mjs', ...args], {
      cwd: projectRoot,
      env: opts.replaceEnvironment ? env : { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', fail)
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

/** Polls `probe` until it returns a value other than undefined (for state owned by another process). */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** `p`, or a failure saying `what()` if it has not settled after `ms`: an upper bound on an awaited event, not a pause. */
export function within<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(what())), ms)))
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** Whether a process is running (a zombie, dead but not yet reaped, is not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** Kills a DynamoDB Local a killed `floe start` left running in `dataDir`, if any. */
export function killOrphanDynamo(dataDir: string): void {
  const pidFile = join(dataDir, 'dynamodb.pid')
  if (!existsSync(pidFile)) return
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL')
  } catch {}
}

/** `npm start` as a user runs it, once its banner is printed. */
export interface NpmStarted {
  readonly npm: ChildProcess
  /** floe start's pid and URLs, from the data directory's `endpoints.json`. */
  readonly endpoints: { readonly pid: number; readonly http: string }
  readonly dynamoPid: number
  /** Everything npm start printed so far (stdout and stderr). */
  output(): string
  /** npm's exit once its output is closed too: every process that wrote to it is gone. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Runs `npm start` (`args` after it) on `dataDir` with `env` added, until "Floe is up"; rejects if npm exits first. */
export async function npmStart(dataDir: string, env: Record<string, string>, args: readonly string[] = []): Promise<NpmStarted> {
  const npm = spawn('npm', ['start', ...args], { cwd: projectRoot, env: { ...process.env, FLOE_DATA_DIR: dataDir, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => npm.once('close', (code, signal) => r({ code, signal })))
  let out = ''
  await new Promise<void>((ok, fail) => {
    const onData = (d: Buffer) => {
      out += d.toString()
      if (out.includes('Floe is up')) ok()
    }
    npm.stdout!.on('data', onData)
    npm.stderr!.on('data', onData)
    void closed.then(() => fail(new Error(`npm start exited before the stack was up:\n${out}`)))
  })
  const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as { pid: number; http: string }
  const dynamoPid = Number(readFileSync(join(dataDir, 'dynamodb.pid'), 'utf8'))
  return { npm, endpoints, dynamoPid, output: () => out, closed }
}
