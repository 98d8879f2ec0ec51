/**
 * The local stack's metrics: counters fed by `invoke()` (invocations, errors,
 * durations, CPU time), the gateway (bytes in and out per function) and the
 * stream triggers (records and bytes read), and the figures of the processes
 * themselves: the Floe process, where every function runs, and the emulators
 * started in child processes (DynamoDB Local's Java process), read from
 * `/proc`. `GET /metrics` answers from `localReport()`.
 */
import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { parseProcIo, parseProcStat, parseProcStatus, parseUptime } from '../core/metrics/proc'
import { shapeLocal, type EmulatorService, type InvocationCounters, type MetricsReport, type ProcessFigures, type StreamReadFigures } from '../core/metrics/report'
import { serviceOfInvocation } from '../core/metrics/services'
import { provideLocalMetrics } from '../runtime/metrics-source'

/** How many of the latest durations per service the p95 is computed over. */
export const RECENT_DURATIONS = 1000

/** Linux reports CPU times in /proc in units of USER_HZ, 100 per second on every architecture Node runs on. */
const CLOCK_TICKS = 100

interface Counters {
  function: string
  service: string
  invocations: number
  errors: number
  durationSumMs: number
  durationMaxMs: number
  recent: number[]
  cpuUserMicros: number
  cpuSystemMicros: number
  requests: number
  requestBytes: number
  responseBytes: number
  responses: Record<string, number>
  streams: Record<string, { records: number; bytes: number; batches: number }>
}

/** An emulator as the stack started it. */
export interface TrackedEmulator {
  readonly runsIn: EmulatorService['runsIn']
  /** Its process id while it runs (`child` only; it changes when it is restarted). */
  readonly pid?: () => number | undefined
  readonly command?: string
}

export interface TrackedStack {
  /** Every function of the stack. */
  readonly functions: readonly string[]
  /** The service names reported first, in this order. */
  readonly serviceOrder: readonly string[]
  /** Stream key → physical name, to tell which stream triggered an invocation. */
  readonly streams: Readonly<Record<string, string>>
  readonly emulators: Readonly<Record<string, TrackedEmulator>>
}

let since = new Date()
let stack: TrackedStack = { functions: [], serviceOrder: [], streams: {}, emulators: {} }
let streamKeys = new Map<string, string>()
const counters = new Map<string, Counters>()

/** Starts counting for a stack (counters start from zero); the last stack started is the one reported. */
export function trackStack(s: TrackedStack): void {
  stack = s
  streamKeys = new Map(Object.entries(s.streams).map(([key, name]) => [name, key]))
  counters.clear()
  since = new Date()
  provideLocalMetrics(() => localReport())
}

function counter(fn: string, service: string): Counters {
  const id = `${fn}\u0000${service}`
  let c = counters.get(id)
  if (!c) {
    c = { function: fn, service, invocations: 0, errors: 0, durationSumMs: 0, durationMaxMs: 0, recent: [], cpuUserMicros: 0, cpuSystemMicros: 0, requests: 0, requestBytes: 0, responseBytes: 0, responses: {}, streams: {} }
    counters.set(id, c)
  }
  return c
}

/** The stream key of a Kinesis event's records, if it is one. */
function triggeringStream(event: unknown): string | undefined {
  const arn = (event as { Records?: { eventSourceARN?: unknown }[] } | null)?.Records?.[0]?.eventSourceARN
  if (typeof arn !== 'string') return undefined
  const name = arn.slice(arn.indexOf(':stream/') + ':stream/'.length)
  return streamKeys.get(name) ?? name
}

/**
 * CPU time attribution. `process.cpuUsage()` is sampled when the process turns
 * busy (a first invocation starts), when it turns idle (the last one ends) and
 * at most every `CPU_SAMPLE_MS` in between; the CPU time of each interval is
 * shared among the invocations in flight during it, in proportion to the time
 * each was in flight. A lone invocation gets exactly the CPU time the process
 * spent while it ran; overlapping ones share it, so the figures add up to at
 * most the process total (reading the clock is a system call that sums over
 * every thread: twice per invocation cost more than a tenth of the collector's
 * time under load).
 */
export const CPU_SAMPLE_MS = 50

const inFlight = new Map<Counters, number>()
/** In-flight milliseconds per counter since the last sample. */
const inFlightMs = new Map<Counters, number>()
let lastChange = 0
let lastSampleAt = 0
let lastCpu = process.cpuUsage()

function advance(now: number): void {
  const dt = now - lastChange
  if (dt > 0) for (const [c, n] of inFlight) inFlightMs.set(c, (inFlightMs.get(c) ?? 0) + n * dt)
  lastChange = now
}

function sampleCpu(now: number): void {
  advance(now)
  const cpu = process.cpuUsage()
  const user = cpu.user - lastCpu.user
  const system = cpu.system - lastCpu.system
  let total = 0
  for (const ms of inFlightMs.values()) total += ms
  if (total > 0) {
    for (const [c, ms] of inFlightMs) {
      c.cpuUserMicros += (user * ms) / total
      c.cpuSystemMicros += (system * ms) / total
    }
  }
  inFlightMs.clear()
  lastCpu = cpu
  lastSampleAt = now
}

/** Runs one invocation and counts it: duration, its share of the process CPU time while it ran, and whether it threw. */
export async function measureInvocation<T>(fn: string, event: unknown, run: () => Promise<T>): Promise<T> {
  const c = counter(fn, serviceOfInvocation(fn, triggeringStream(event)))
  const started = performance.now()
  if (inFlight.size === 0 || started - lastSampleAt >= CPU_SAMPLE_MS) sampleCpu(started)
  else advance(started)
  inFlight.set(c, (inFlight.get(c) ?? 0) + 1)
  let failed = true
  try {
    const result = await run()
    failed = false
    return result
  } finally {
    const ended = performance.now()
    const ms = ended - started
    advance(ended)
    const n = (inFlight.get(c) ?? 1) - 1
    if (n === 0) inFlight.delete(c)
    else inFlight.set(c, n)
    if (inFlight.size === 0 || ended - lastSampleAt >= CPU_SAMPLE_MS) sampleCpu(ended)
    c.invocations++
    if (failed) c.errors++
    c.durationSumMs += ms
    c.durationMaxMs = Math.max(c.durationMaxMs, ms)
    c.recent.push(ms)
    if (c.recent.length > RECENT_DURATIONS) c.recent.splice(0, c.recent.length - RECENT_DURATIONS)
  }
}

/** The bytes of a request's line and headers as received. */
function requestHeadBytes(req: IncomingMessage): number {
  let n = Buffer.byteLength(`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}\r\n`) + 2
  for (let i = 0; i < req.rawHeaders.length; i += 2) n += Buffer.byteLength(req.rawHeaders[i]!, 'latin1') + Buffer.byteLength(req.rawHeaders[i + 1]!, 'latin1') + 4
  return n
}

/** Counts one HTTP exchange of the gateway for the function it was routed to: request bytes now, response bytes and status when sent. */
export function countExchange(fn: string, req: IncomingMessage, res: ServerResponse, bodyBytes: number): void {
  const c = counter(fn, serviceOfInvocation(fn))
  c.requests++
  c.requestBytes += requestHeadBytes(req) + bodyBytes
  const socket = req.socket
  const before = socket.bytesWritten
  res.once('finish', () => {
    c.responseBytes += Math.max(0, socket.bytesWritten - before)
    const cls = `${Math.floor(res.statusCode / 100)}xx`
    c.responses[cls] = (c.responses[cls] ?? 0) + 1
  })
}

/** Counts records a stream trigger read for a function. */
export function countStreamRead(fn: string, streamName: string, records: readonly { Data?: Uint8Array }[]): void {
  if (records.length === 0) return
  const stream = streamKeys.get(streamName) ?? streamName
  const s = (counter(fn, serviceOfInvocation(fn, stream)).streams[stream] ??= { records: 0, bytes: 0, batches: 0 })
  s.records += records.length
  s.batches++
  for (const r of records) s.bytes += r.Data?.length ?? 0
}

function readProc(pid: number | 'self', file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8')
  } catch {
    return undefined
  }
}

/** The Floe process: CPU time and memory from Node, peak memory, I/O and threads from /proc where there is one. */
export function floeProcess(): ProcessFigures {
  const cpu = process.cpuUsage()
  const mem = process.memoryUsage()
  const status = readProc('self', 'status')
  const st = status ? parseProcStatus(status) : undefined
  const io = readProc('self', 'io')
  return {
    pid: process.pid,
    command: 'floe (node)',
    uptimeSeconds: Math.round(process.uptime() * 1000) / 1000,
    cpu: { userSeconds: cpu.user / 1e6, systemSeconds: cpu.system / 1e6 },
    memory: { rssBytes: mem.rss, peakRssBytes: st?.peakRssBytes ?? null, heapUsedBytes: mem.heapUsed, heapTotalBytes: mem.heapTotal, externalBytes: mem.external },
    io: io ? parseProcIo(io) : null,
    threads: st?.threads ?? null,
  }
}

/** Another process's figures from /proc/<pid>/stat, status and io; null when it cannot be read (not running, not Linux). */
export function childProcess(pid: number, command: string): ProcessFigures | null {
  const stat = readProc(pid, 'stat')
  const status = readProc(pid, 'status')
  if (!stat || !status) return null
  const s = parseProcStat(stat)
  const st = parseProcStatus(status)
  const io = readProc(pid, 'io')
  let bootSeconds: number | null = null
  try {
    bootSeconds = parseUptime(readFileSync('/proc/uptime', 'utf8'))
  } catch {
    // no /proc/uptime: the uptime is unknown
  }
  return {
    pid,
    command,
    uptimeSeconds: bootSeconds === null ? null : Math.max(0, Math.round((bootSeconds - s.startTimeTicks / CLOCK_TICKS) * 1000) / 1000),
    cpu: { userSeconds: s.utimeTicks / CLOCK_TICKS, systemSeconds: s.stimeTicks / CLOCK_TICKS },
    memory: { rssBytes: st.rssBytes ?? 0, peakRssBytes: st.peakRssBytes },
    io: io ? parseProcIo(io) : null,
    threads: st.threads ?? s.threads,
  }
}

function emulatorFigures(e: TrackedEmulator): EmulatorService {
  if (e.runsIn !== 'child') return { kind: 'emulator', runsIn: e.runsIn, process: null }
  const pid = e.pid?.()
  return { kind: 'emulator', runsIn: 'child', process: pid ? childProcess(pid, e.command ?? 'emulator') : null }
}

/** The report of the stack being tracked, as of now. */
export function localReport(now = new Date()): MetricsReport {
  if (inFlight.size > 0) sampleCpu(performance.now())
  const list: InvocationCounters[] = [...counters.values()].map((c) => ({
    function: c.function,
    service: c.service,
    invocations: c.invocations,
    errors: c.errors,
    durationSumMs: c.durationSumMs,
    durationMaxMs: c.durationMaxMs,
    recentDurationsMs: [...c.recent],
    cpuUserMicros: c.cpuUserMicros,
    cpuSystemMicros: c.cpuSystemMicros,
    network: { requests: c.requests, requestBytes: c.requestBytes, responseBytes: c.responseBytes, responses: { ...c.responses } },
    streams: Object.fromEntries(Object.entries(c.streams).map(([k, v]): [string, StreamReadFigures] => [k, { ...v }])),
  }))
  const functions = stack.functions.length ? stack.functions : [...new Set(list.map((c) => c.function))]
  return shapeLocal({
    now,
    since,
    functions,
    serviceOrder: stack.serviceOrder,
    counters: list,
    recentLimit: RECENT_DURATIONS,
    process: floeProcess(),
    emulators: Object.fromEntries(Object.entries(stack.emulators).map(([name, e]) => [name, emulatorFigures(e)])),
  })
}

/**
 * The emulators of a stack as metrics reports them: DynamoDB Local in its own
 * process, kinesalite, s3rver and the search store's PostgreSQL in this one;
 * all `external` when the stack uses emulators it did not start.
 */
export function trackedEmulators(started: { dynamodbPid(): number | undefined } | undefined, hasPostgres: boolean): Record<string, TrackedEmulator> {
  const inFloe: TrackedEmulator = { runsIn: started ? 'floe' : 'external' }
  return {
    dynamodb: started ? { runsIn: 'child', pid: () => started.dynamodbPid(), command: 'DynamoDB Local (java)' } : { runsIn: 'external' },
    kinesis: inFloe,
    s3: inFloe,
    ...(hasPostgres ? { postgres: inFloe } : {}),
  }
}
