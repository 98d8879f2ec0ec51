/**
 * The local stack's logs: one file per function, `<logs>/<function-kebab>.log`
 * (as the function's log group on AWS is `/floe/<stack>/<function-kebab>`),
 * and `floe.log` for the stack's own lines.
 *
 * Functions run in this process, so what one writes with `console.*` during an
 * invocation is routed to its file: `invoke()` runs the handler inside
 * `runAsFunction`, which records the function in an AsyncLocalStorage, and
 * the console methods, patched once, look it up, so concurrent invocations of
 * different functions each write to their own file. Every line is a JSON
 * object: a JSON line gets `time`, `level` and `service` when it has none,
 * anything else is wrapped as `{"time","level","service","msg"}`. Warnings
 * and errors also still go to the terminal, each line prefixed with
 * `[<function>]`. Output outside invocations, and all output while no stack
 * writes logs (a stack without a data directory), is left as it was.
 *
 * Files rotate by size: past `FLOE_LOG_MAX_BYTES` (10 MiB) `<name>.log`
 * becomes `<name>.log.1`, and so on up to `<name>.log.3`.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { closeSync, existsSync, fstatSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { format } from 'node:util'
import { kebabName } from '../core/metrics/services'
import { ensurePrivateDir, openPrivateFile, tightenFiles } from './private-files'

export const LOG_MAX_BYTES_ENV = 'FLOE_LOG_MAX_BYTES'
export const DEFAULT_LOG_MAX_BYTES = 10 * 1024 * 1024
/** Rotated files kept: `<name>.log.1` (newest) to `<name>.log.3`. */
export const LOG_FILES_KEPT = 3
/** The log of the stack's own lines (trigger start and stop, provisioning, gateway errors). */
export const STACK_LOG = 'floe'
const MIN_LOG_MAX_BYTES = 1024

/** The file name of a function's log (or of `floe`): `searchLoader` → `search-loader.log`. */
export function logFileName(name: string): string {
  return `${kebabName(name)}.log`
}

/** `FLOE_LOG_MAX_BYTES`: the size past which a log file rotates; a bad value stops the start with its rule. */
export function logMaxBytes(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[LOG_MAX_BYTES_ENV]
  if (raw === undefined || raw.trim() === '') return DEFAULT_LOG_MAX_BYTES
  const n = Number(raw.trim())
  if (!Number.isInteger(n) || n < MIN_LOG_MAX_BYTES) throw new Error(`${LOG_MAX_BYTES_ENV} must be a whole number of bytes, at least ${MIN_LOG_MAX_BYTES}; got '${raw}'`)
  return n
}

/** A file that rotates before a write would take it past `maxBytes` (a longer line is written whole, into a new file). */
class RotatingFile {
  private fd: number | undefined
  private size = 0

  constructor(private readonly path: string, private readonly maxBytes: number, private readonly keep: number) {}

  write(text: string): void {
    const buf = Buffer.from(text, 'utf8')
    if (this.fd === undefined) this.open()
    if (this.size > 0 && this.size + buf.length > this.maxBytes) {
      this.rotate()
      this.open()
    }
    writeSync(this.fd!, buf)
    this.size += buf.length
  }

  private open(): void {
    this.fd = openPrivateFile(this.path, 'a') // logs can hold request data: 0600
    this.size = fstatSync(this.fd).size
  }

  /** Closes the file, then shifts `.log` → `.log.1` → … → `.log.<keep>` (the oldest is dropped). */
  private rotate(): void {
    this.close()
    if (this.keep === 0) return rmSync(this.path, { force: true })
    rmSync(`${this.path}.${this.keep}`, { force: true })
    for (let i = this.keep - 1; i >= 1; i--) if (existsSync(`${this.path}.${i}`)) renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`)
    renameSync(this.path, `${this.path}.1`)
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

export interface LogEntry {
  readonly time: string
  readonly level: string
  readonly service: string
  readonly [key: string]: unknown
}

function jsonObject(line: string): Record<string, unknown> | undefined {
  const t = line.trim()
  if (!t.startsWith('{')) return undefined
  try {
    const v = JSON.parse(t) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/**
 * The JSON entries of what a function wrote: each line when every line is a
 * JSON object (with `time`, `level`, `service` added where missing), else one
 * entry whose `msg` is the whole text.
 */
export function logEntries(service: string, level: string, text: string, now = new Date()): LogEntry[] {
  const time = now.toISOString()
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  const objects = lines.map(jsonObject)
  if (lines.length > 0 && objects.every((o) => o !== undefined)) return objects.map((o) => ({ time, level, service, ...o! }) as LogEntry)
  return [{ time, level, service, msg: text.replace(/\n+$/, '') }]
}

/** The log files of one stack. */
export class LogFiles {
  private readonly files = new Map<string, RotatingFile>()

  constructor(readonly dir: string, readonly maxBytes = DEFAULT_LOG_MAX_BYTES, readonly keep = LOG_FILES_KEPT) {
    ensurePrivateDir(dir)
    tightenFiles(dir) // rotated files of an older version
  }

  /** The path of a function's (or `floe`'s) current log file. */
  path(name: string): string {
    return join(this.dir, logFileName(name))
  }

  write(name: string, entries: readonly LogEntry[]): void {
    let f = this.files.get(name)
    if (!f) this.files.set(name, (f = new RotatingFile(this.path(name), this.maxBytes, this.keep)))
    for (const e of entries) f.write(`${JSON.stringify(e)}\n`)
  }

  /** A line of the stack's own, into `floe.log`. */
  stackLine(line: string): void {
    this.write(STACK_LOG, logEntries(STACK_LOG, 'info', line))
  }

  /** Closes the files; function output is no longer written here. */
  close(): void {
    const i = active.indexOf(this)
    if (i >= 0) active.splice(i, 1)
    for (const f of this.files.values()) f.close()
    this.files.clear()
  }
}

const current = new AsyncLocalStorage<{ readonly fn: string }>()
/** The log files function output goes to: the last stack started that writes logs. */
const active: LogFiles[] = []
let patched = false

/** Runs `run` as the function `fn`: what it writes with `console.*` (also after awaits) goes to `fn`'s log. */
export function runAsFunction<T>(fn: string, run: () => T): T {
  return current.run({ fn }, run)
}

/** The function whose invocation is running here, if any. */
export function currentFunction(): string | undefined {
  return current.getStore()?.fn
}

const LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error' } as const

/** Replaces the console methods, once, by ones that route a function's output to its log. */
function patchConsole(): void {
  if (patched) return
  patched = true
  const target = console as unknown as Record<string, (...args: unknown[]) => void>
  for (const [method, level] of Object.entries(LEVELS)) {
    const original = target[method]!
    target[method] = function (this: unknown, ...args: unknown[]) {
      const fn = current.getStore()?.fn
      const files = active.at(-1)
      if (fn === undefined || files === undefined) return original.apply(this, args)
      const text = format(...args)
      try {
        files.write(fn, logEntries(fn, level, text))
      } catch (err) {
        original.call(this, `[${fn}] (could not write to its log: ${(err as Error).message})`)
      }
      if (level === 'warn' || level === 'error') original.call(this, text.replace(/\n+$/, '').split('\n').map((l) => `[${fn}] ${l}`).join('\n'))
    }
  }
  // What a function writes to stdout directly (enrich's runtime lines, the registry's generated key) goes to its log, and still to the terminal.
  const write = process.stdout.write
  process.stdout.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    const fn = current.getStore()?.fn
    const files = active.at(-1)
    if (fn === undefined || files === undefined || (typeof chunk !== 'string' && !(chunk instanceof Uint8Array))) return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    try {
      files.write(fn, logEntries(fn, 'info', text))
    } catch {
      // the terminal still has it
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
  } as typeof process.stdout.write
}

/** Starts writing function logs into `dir` (the latest stack to start is the one written to); `close()` stops. */
export function openLogs(dir: string, maxBytes = DEFAULT_LOG_MAX_BYTES): LogFiles {
  const files = new LogFiles(dir, maxBytes)
  patchConsole()
  active.push(files)
  return files
}
