import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { functions, serviceAliases } from '../infra/functions'
import { functionsOfService, kebabName, mappedServices } from '../core/metrics/services'
import { LOG_FILES_KEPT, STACK_LOG, logFileName } from '../local/logs'
import { API_ACCESS_LOG, functionLogGroupName } from '../infra/log-groups'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { onTarget, stackTarget, takeTargetOptions, TARGET_USAGE, type TargetOptions } from './target'
import { sleep } from './sleep'

const USAGE = `logs <service> [-f] [-n N] ${TARGET_USAGE}`
const DEFAULT_LINES = 50

/**
 * Every name `floe logs` accepts, with the log it reads: a function's key
 * (`searchLoader`), its kebab-case name (`search-loader`, as its log group and
 * file are named), a service name of the seed (`esLoaderBad`) or one of its
 * aliases (`iglu`), and `floe` for the stack's own lines.
 */
export function logNames(): Map<string, string> {
  const keys = Object.keys(functions)
  const names = new Map<string, string>()
  for (const k of keys) {
    names.set(k, k)
    names.set(kebabName(k), k)
  }
  for (const s of mappedServices) {
    const fn = functionsOfService(s, keys)[0]
    if (fn) names.set(s, fn)
  }
  for (const [alias, s] of Object.entries(serviceAliases)) {
    const fn = names.get(s)
    if (fn) names.set(alias, fn)
  }
  names.set(STACK_LOG, STACK_LOG)
  return names
}

export interface LogsOptions {
  /** The function key (or `floe`) whose log is read. */
  readonly log: string
  readonly follow: boolean
  readonly lines: number
}

/**
 * The options of `floe logs`. On a deployment (`deployed`) there is no
 * `floe` log (the local stack's own lines), and `api-access` names the HTTP
 * API's access log.
 */
export function parseLogsArgs(args: readonly string[], { deployed = false }: { deployed?: boolean } = {}): LogsOptions {
  let name: string | undefined
  let follow = false
  let lines = DEFAULT_LINES
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '-f' || a === '--follow') follow = true
    else if (a === '-n' || a === '--lines' || a.startsWith('--lines=') || /^-n\d+$/.test(a)) {
      const v = a === '-n' || a === '--lines' ? args[++i] : a.startsWith('--lines=') ? a.slice('--lines='.length) : a.slice(2)
      const n = Number(v)
      if (!v || !Number.isInteger(n) || n < 0) throw new UsageError(`-n needs a whole number of lines, got '${v ?? ''}'`)
      lines = n
    } else if (a.startsWith('-')) throw usageError(USAGE, `unknown option '${a}'`)
    else if (name === undefined) name = a
    else throw usageError(USAGE, `unexpected argument '${a}'`)
  }
  const names = logNames()
  if (deployed) {
    names.delete(STACK_LOG)
    names.set(API_ACCESS_LOG, API_ACCESS_LOG)
    names.set(kebabName(API_ACCESS_LOG), API_ACCESS_LOG)
  }
  const valid = () => {
    const keys = Object.keys(functions)
    const own = deployed ? `${kebabName(API_ACCESS_LOG)} (the HTTP API's access log)` : `${STACK_LOG} (the stack's own lines)`
    return `services: ${mappedServices.join(', ')}; functions: ${keys.join(', ')} (or ${keys.map(kebabName).filter((k, i) => k !== keys[i]).join(', ')}); ${own}`
  }
  if (deployed && name === STACK_LOG) {
    throw new UsageError(`'${STACK_LOG}' is the local stack's own log; a deployment has a log group per function (${valid()})`)
  }
  if (name === undefined) throw usageError(USAGE, `which service? One of ${valid()}`)
  const log = names.get(name)
  if (log === undefined) throw new UsageError(`unknown service '${name}'; valid names are ${valid()}`)
  return { log, follow, lines }
}

/** The logs directory of the local stack: `logs/` of `${FLOE_DATA_DIR:-.floe}`. */
export function logsDir(dataDir = resolve(process.env.FLOE_DATA_DIR || '.floe')): string {
  return join(dataDir, 'logs')
}

/** The last `n` lines of a file, read backwards in blocks (a last line without its newline counts). */
function lastLinesOf(path: string, n: number, end?: number): string[] {
  if (n <= 0 || !existsSync(path)) return []
  const fd = openSync(path, 'r')
  try {
    const size = end ?? fstatSync(fd).size
    let pos = size
    let text = ''
    let count = 0
    while (pos > 0 && count <= n) {
      const len = Math.min(64 * 1024, pos)
      pos -= len
      const buf = Buffer.alloc(len)
      readSync(fd, buf, 0, len, pos)
      text = buf.toString('latin1') + text
      count = text.split('\n').length - 1
    }
    const lines = Buffer.from(text, 'latin1').toString('utf8').split('\n')
    if (lines.at(-1) === '') lines.pop()
    return lines.slice(-n)
  } finally {
    closeSync(fd)
  }
}

/** The last `n` lines of a log: its current file up to `end` bytes, then the rotated ones (`.1`, `.2`, …) for what is missing. */
export function lastLines(path: string, n: number, end?: number): string[] {
  const out = lastLinesOf(path, n, end)
  for (let i = 1; i <= LOG_FILES_KEPT && out.length < n; i++) out.unshift(...lastLinesOf(`${path}.${i}`, n - out.length))
  return out
}

export interface LogsRun {
  readonly out: (line: string) => void
  /** The logs directory (default: `logs/` of the data directory). */
  readonly dir?: string
  readonly signal?: AbortSignal
  readonly pollMs?: number
  /** Called once the last lines are printed and following has begun. */
  readonly onFollowing?: () => void
}

/** The rotated files newer than the one with inode `ino` (now `<path>.<k>`): `<path>.<k-1>` down to `<path>.1`. */
function newerRotated(path: string, ino: number): string[] {
  for (let k = 1; k <= LOG_FILES_KEPT; k++) {
    try {
      if (statSync(`${path}.${k}`).ino === ino) return Array.from({ length: k - 1 }, (_, i) => `${path}.${k - 1 - i}`)
    } catch {
      // not there
    }
  }
  return []
}

/**
 * Follows a log file from `from` bytes: prints each complete line appended;
 * when the file is rotated (renamed to `.1`, a new one created), the rest of
 * the old file is printed, then the new one from its start. Ends when aborted.
 */
async function follow(path: string, from: number, run: LogsRun): Promise<void> {
  let fd: number | undefined
  let pos = from
  let partial = ''
  const open = (start: number) => {
    try {
      fd = openSync(path, 'r')
      pos = start
    } catch {
      fd = undefined
    }
  }
  const drain = () => {
    if (fd === undefined) return
    const size = fstatSync(fd).size
    if (size < pos) pos = 0 // truncated
    while (pos < size) {
      const buf = Buffer.alloc(Math.min(64 * 1024, size - pos))
      const got = readSync(fd, buf, 0, buf.length, pos)
      if (got <= 0) break
      pos += got
      partial += buf.subarray(0, got).toString('utf8')
      const lines = partial.split('\n')
      partial = lines.pop()!
      for (const l of lines) run.out(l)
    }
  }
  open(from)
  while (!run.signal?.aborted) {
    if (fd === undefined) {
      if (existsSync(path)) open(0)
    } else {
      drain()
      let current: number | undefined
      try {
        current = statSync(path).ino
      } catch {
        current = undefined
      }
      const followed = fstatSync(fd).ino
      if (current !== followed) {
        // Rotated: the writer closed this file before renaming it, so what is left in it is final.
        drain()
        if (partial) run.out(partial)
        partial = ''
        closeSync(fd)
        fd = undefined
        // Rotated more than once since the last look: the files between it and the new one, oldest first.
        for (const file of newerRotated(path, followed)) for (const line of lastLinesOf(file, Number.MAX_SAFE_INTEGER)) run.out(line)
        if (current !== undefined) open(0)
        continue
      }
    }
    await sleep(run.pollMs ?? 200, run.signal)
  }
  if (fd !== undefined) closeSync(fd)
}

/**
 * `floe logs … --stack <name>`: the deployed function's log group, found
 * from the stack's name, read with the caller's AWS credentials
 * (`logs:FilterLogEvents` on the group).
 */
async function runStackLogs(o: TargetOptions & { stack: string }, args: readonly string[], run: LogsRun): Promise<number> {
  const opts = parseLogsArgs(args, { deployed: true })
  const target = await stackTarget(o)
  target.ddb.destroy()
  target.kinesis.destroy()
  // loaded only here: the other commands never pay for the CloudWatch Logs client
  const [{ CloudWatchLogsClient }, { runCloudLogs }] = await Promise.all([import('@aws-sdk/client-cloudwatch-logs'), import('./cloud-logs')])
  const client = new CloudWatchLogsClient({ ...target.clientConfig })
  try {
    const group = functionLogGroupName(target.stackName!, opts.log)
    return await onTarget(target, () => runCloudLogs(client, { group, lines: opts.lines, follow: opts.follow, description: target.description }, run))
  } finally {
    client.destroy()
  }
}

/** `floe logs`: the last lines of a service's log, then, with `-f`, the lines that follow. */
export async function runLogs(args: readonly string[], run: LogsRun): Promise<number> {
  const { target, rest } = takeTargetOptions(args, USAGE)
  if (target.stack !== undefined) return runStackLogs({ ...target, stack: target.stack }, rest, run)
  const opts = parseLogsArgs(rest)
  const dir = run.dir ?? logsDir()
  const path = join(dir, logFileName(opts.log))
  let end: number | undefined
  try {
    end = statSync(path).size
  } catch {
    end = undefined
  }
  if (end === undefined && !opts.follow && !existsSync(dir)) {
    throw new UsageError(`no logs in ${dir}: start the local stack with 'npx floe start' (FLOE_DATA_DIR sets its data directory)`)
  }
  if (end === undefined && !opts.follow) {
    throw new UsageError(`no log for '${opts.log}' yet (${path} does not exist): it is written when the service first runs; -f waits for it`)
  }
  for (const line of lastLines(path, opts.lines, end)) run.out(line)
  if (!opts.follow) return 0
  run.onFollowing?.()
  await follow(path, end ?? 0, run)
  return 0
}

export const logsCommand: Command = {
  name: 'logs',
  usage: USAGE,
  summary: `Print the last lines (-n N, default ${DEFAULT_LINES}) of a service's log in the local stack's data directory (logs/<function>.log: JSON lines); -f follows it, across rotations, until Ctrl+C. <service> is a service (collector, enrich, esLoaderGood, esLoaderBad, registry, dashboard, searchstore), a function key or its kebab-case name, or floe for the stack's own lines. With --stack: the deployed function's CloudWatch log group (/floe/<stack>/<function>; api-access for the HTTP API's access log), read with your AWS credentials.`,
  async run(args) {
    const controller = new AbortController()
    const stop = () => controller.abort()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    try {
      return await runLogs(args, { out: (l) => process.stdout.write(`${l}\n`), signal: controller.signal })
    } finally {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    }
  },
}
