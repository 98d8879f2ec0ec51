/**
 * The answer of `GET /metrics`: one entry per service, as JSON (this shape) or
 * in Prometheus' text format (`./prometheus.ts`). Two sources fill it:
 *
 * - `local`: counters kept by the local runtime since the stack started, and
 *   the figures of the processes themselves (`shapeLocal`);
 * - `cloudwatch`: the deployed functions' and streams' CloudWatch metrics over
 *   the last 5 minutes and the last hour (`./cloudwatch.ts`).
 *
 * No AWS or Node-specific imports: the shaping is pure.
 */
import { functionsOfService } from './services'

export type MetricsSource = 'local' | 'cloudwatch'

/** Durations of invocations, in milliseconds; `null` when there was none. */
export interface DurationFigures {
  readonly sumMs: number
  readonly avgMs: number | null
  readonly p95Ms: number | null
  readonly maxMs: number | null
}

/** CPU time and memory of one operating-system process. */
export interface ProcessFigures {
  readonly pid: number
  /** What runs in it, e.g. `floe` or `DynamoDB Local (java)`. */
  readonly command: string
  readonly uptimeSeconds: number | null
  readonly cpu: { readonly userSeconds: number; readonly systemSeconds: number }
  readonly memory: {
    readonly rssBytes: number
    readonly peakRssBytes: number | null
    /** V8 heap (the Floe process only). */
    readonly heapUsedBytes?: number
    readonly heapTotalBytes?: number
    readonly externalBytes?: number
  }
  /** Bytes read and written by the process through any file descriptor: files and sockets alike (`/proc/<pid>/io`). */
  readonly io: { readonly readBytes: number; readonly writtenBytes: number } | null
  readonly threads: number | null
}

/** What the local gateway passed to and from a function. */
export interface NetworkFigures {
  readonly requests: number
  /** Request line, headers and body of every request routed to the function. */
  readonly requestBytes: number
  /** Status line, headers and body of every response, as written to the socket. */
  readonly responseBytes: number
  /** Responses by status class: `2xx`, `3xx`, `4xx`, `5xx`. */
  readonly responses: Readonly<Record<string, number>>
}

/** What the stream triggers of a function read from one stream. */
export interface StreamReadFigures {
  readonly records: number
  readonly bytes: number
  readonly batches: number
}

export interface LocalFunctionService {
  readonly kind: 'function'
  /** The functions whose invocations are counted here. */
  readonly functions: readonly string[]
  /** Functions run inside the Floe process: its CPU and memory are `process` of the report. */
  readonly runsIn: 'floe'
  readonly invocations: number
  /** Invocations that threw or timed out (as Lambda counts `Errors`); answers with a 5xx status are in `network.responses`. */
  readonly errors: number
  /** `p95Ms` over the latest invocations (`recentInvocations` of the report). */
  readonly duration: DurationFigures
  /** Its share of the process CPU time spent while its invocations ran; concurrent invocations share each interval in proportion to their time in flight, so the figures add up to at most the process total. */
  readonly cpu: { readonly userSeconds: number; readonly systemSeconds: number }
  readonly network: NetworkFigures
  /** Records read by its stream triggers, by stream key. */
  readonly streams: Readonly<Record<string, StreamReadFigures>>
}

export interface EmulatorService {
  readonly kind: 'emulator'
  /**
   * `child`: a process of its own (`process` holds its figures); `floe`: inside
   * the Floe process (its figures are part of the report's `process`);
   * `external`: emulators this stack did not start (shared ones), not measured.
   */
  readonly runsIn: 'child' | 'floe' | 'external'
  readonly process: ProcessFigures | null
}

export type WindowName = '5m' | '1h'
export const WINDOWS: Readonly<Record<WindowName, number>> = { '5m': 300, '1h': 3600 }

/** A function's CloudWatch figures over one window; `null` where CloudWatch had no data point. */
export interface CloudWatchFunctionFigures {
  readonly invocations: number
  readonly errors: number
  readonly throttles: number
  readonly duration: DurationFigures
  readonly concurrentExecutionsMax: number | null
  /** Stream-triggered functions: the age of the last record read when it was read. */
  readonly iteratorAgeMaxMs: number | null
}

export interface CloudWatchFunctionService {
  readonly kind: 'function'
  readonly functions: readonly string[]
  /** Physical function names. */
  readonly functionNames: Readonly<Record<string, string>>
  /** Other services of the same function(s): CloudWatch counts per function, so they show the same figures. */
  readonly sharedWith?: readonly string[]
  readonly windows: Readonly<Record<WindowName, CloudWatchFunctionFigures>>
}

export interface CloudWatchStreamFigures {
  readonly incomingRecords: number
  readonly incomingBytes: number
}

export type ServiceReport = LocalFunctionService | EmulatorService | CloudWatchFunctionService

export interface MetricsReport {
  readonly generatedAt: string
  readonly source: MetricsSource
  /** How to read the figures (what is shared, what is estimated). */
  readonly notes: readonly string[]
  /** Local: when the counters started. */
  readonly since?: string
  /** Local: how many of the latest invocations `duration.p95Ms` is computed over, per service. */
  readonly recentInvocations?: number
  /** Local: the Floe process, where every function and the in-process emulators run. */
  readonly process?: ProcessFigures
  /** CloudWatch: the windows, `[start, end)` as ISO times. */
  readonly windows?: Readonly<Record<WindowName, { readonly start: string; readonly end: string }>>
  readonly services: Readonly<Record<string, ServiceReport>>
  /** CloudWatch: Kinesis figures per stream key. */
  readonly streams?: Readonly<Record<string, { readonly name: string; readonly windows: Readonly<Record<WindowName, CloudWatchStreamFigures>> }>>
}

/** The raw counters of one function's invocations attributed to one service. */
export interface InvocationCounters {
  readonly function: string
  readonly service: string
  readonly invocations: number
  readonly errors: number
  readonly durationSumMs: number
  readonly durationMaxMs: number
  /** The latest durations (at most `LocalInput.recentLimit`). */
  readonly recentDurationsMs: readonly number[]
  readonly cpuUserMicros: number
  readonly cpuSystemMicros: number
  readonly network: NetworkFigures
  readonly streams: Readonly<Record<string, StreamReadFigures>>
}

export interface LocalInput {
  readonly now: Date
  readonly since: Date
  /** Every function of the stack, so services without invocations are reported too. */
  readonly functions: readonly string[]
  /** The service names to report, in order (a function not covered by one is reported under its key). */
  readonly serviceOrder: readonly string[]
  readonly counters: readonly InvocationCounters[]
  readonly recentLimit: number
  readonly process: ProcessFigures
  readonly emulators: Readonly<Record<string, EmulatorService>>
}

/** The 95th percentile (nearest rank) of a list of numbers; `null` when empty. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

const round = (n: number, digits = 3) => {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

const emptyNetwork = (): NetworkFigures => ({ requests: 0, requestBytes: 0, responseBytes: 0, responses: {} })

function addCounts(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

/** The figures of the counters of one service (several functions or streams added up). */
function localService(functions: readonly string[], counters: readonly InvocationCounters[], recentLimit: number): LocalFunctionService {
  let invocations = 0
  let errors = 0
  let sum = 0
  let max: number | null = null
  let user = 0
  let system = 0
  let recent: number[] = []
  let network = emptyNetwork()
  const streams: Record<string, StreamReadFigures> = {}
  for (const c of counters) {
    invocations += c.invocations
    errors += c.errors
    sum += c.durationSumMs
    if (c.invocations > 0) max = Math.max(max ?? 0, c.durationMaxMs)
    user += c.cpuUserMicros
    system += c.cpuSystemMicros
    recent = recent.concat(c.recentDurationsMs)
    network = {
      requests: network.requests + c.network.requests,
      requestBytes: network.requestBytes + c.network.requestBytes,
      responseBytes: network.responseBytes + c.network.responseBytes,
      responses: addCounts(network.responses, c.network.responses),
    }
    for (const [stream, s] of Object.entries(c.streams)) {
      const prev = streams[stream] ?? { records: 0, bytes: 0, batches: 0 }
      streams[stream] = { records: prev.records + s.records, bytes: prev.bytes + s.bytes, batches: prev.batches + s.batches }
    }
  }
  if (recent.length > recentLimit) recent = recent.slice(-recentLimit)
  const p95 = percentile(recent, 95)
  return {
    kind: 'function',
    functions,
    runsIn: 'floe',
    invocations,
    errors,
    duration: { sumMs: round(sum), avgMs: invocations > 0 ? round(sum / invocations) : null, p95Ms: p95 === null ? null : round(p95), maxMs: max === null ? null : round(max) },
    cpu: { userSeconds: round(user / 1e6, 6), systemSeconds: round(system / 1e6, 6) },
    network,
    streams,
  }
}

/** The local report: one entry per service (in `serviceOrder`, then the remaining functions by key), then the emulators. */
export function shapeLocal(input: LocalInput): MetricsReport {
  const services: Record<string, ServiceReport> = {}
  const names = [...input.serviceOrder]
  for (const fn of input.functions) {
    if (!names.some((n) => functionsOfService(n, input.functions).includes(fn))) names.push(fn)
  }
  for (const name of names) {
    const fns = functionsOfService(name, input.functions)
    services[name] = localService(fns, input.counters.filter((c) => c.service === name), input.recentLimit)
  }
  // Counters of functions this stack does not declare (none normally) keep their own entry.
  for (const c of input.counters) {
    if (!(c.service in services)) services[c.service] = localService([c.function], input.counters.filter((x) => x.service === c.service), input.recentLimit)
  }
  for (const [name, e] of Object.entries(input.emulators)) services[name] = e
  const inFloe = Object.entries(input.emulators).filter(([, e]) => e.runsIn === 'floe').map(([n]) => n)
  const children = Object.entries(input.emulators).filter(([, e]) => e.runsIn === 'child').map(([n]) => n)
  const external = Object.entries(input.emulators).filter(([, e]) => e.runsIn === 'external').map(([n]) => n)
  const notes = [
    `Every function runs inside the Floe process (pid ${input.process.pid}): its CPU and memory are the figures of "process". A function's "cpu" is its share of the process CPU time spent while its invocations ran: concurrent invocations (of it or of other functions) share each interval in proportion to their time in flight, so these figures add up to at most the process total.`,
    'Counters (invocations, errors, durations, CPU, network, stream reads) count since the stack started; "network" is what the local gateway received and sent for the function\'s routes.',
  ]
  if (inFloe.length) notes.push(`${inFloe.join(', ')} run${inFloe.length === 1 ? 's' : ''} inside the Floe process: ${inFloe.length === 1 ? 'its' : 'their'} CPU and memory are part of "process".`)
  if (children.length) notes.push(`${children.join(', ')} run${children.length === 1 ? 's' : ''} in ${children.length === 1 ? 'a child process' : 'child processes'}, read from /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/io.`)
  if (external.length) notes.push(`${external.join(', ')} ${external.length === 1 ? 'was' : 'were'} not started by this stack (shared emulators): not measured.`)
  return {
    generatedAt: input.now.toISOString(),
    source: 'local',
    notes,
    since: input.since.toISOString(),
    recentInvocations: input.recentLimit,
    process: input.process,
    services,
  }
}
