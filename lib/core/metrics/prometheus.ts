/**
 * The report in Prometheus' text exposition format, version 0.0.4: a `# HELP`
 * and a `# TYPE` line per metric family, then its samples, label values
 * escaped (`\\`, `\"`, `\n`).
 */
import type { CloudWatchFunctionService, EmulatorService, LocalFunctionService, MetricsReport, ProcessFigures, WindowName } from './report'

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export type MetricType = 'counter' | 'gauge' | 'summary' | 'untyped'

export interface Sample {
  /** Appended to the family name, e.g. `_sum` and `_count` of a summary. */
  readonly suffix?: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface MetricFamily {
  readonly name: string
  readonly help: string
  readonly type: MetricType
  readonly samples: readonly Sample[]
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** A label value inside double quotes: backslash, double quote and line feed escaped. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** `# HELP` text: backslash and line feed escaped. */
export function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

/** A sample value as Go's ParseFloat reads it: `NaN`, `+Inf`, `-Inf` or a number. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** Renders families; a family without samples is left out. */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) throw new Error(`invalid metric name '${f.name}'`)
    if (seen.has(f.name)) throw new Error(`metric family '${f.name}' is defined twice`)
    seen.add(f.name)
    if (f.samples.length === 0) continue
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) {
      const labels = Object.entries(s.labels)
      for (const [k] of labels) if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new Error(`invalid label name '${k}'`)
      const body = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}` : ''
      lines.push(`${f.name}${s.suffix ?? ''}${body} ${formatValue(s.value)}`)
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : ''
}

/** Milliseconds as seconds, to the microsecond (no binary-fraction noise such as 0.011021000000000001). */
const seconds = (ms: number | null): number | null => (ms === null ? null : Math.round(ms * 1000) / 1e6)

/** Collects samples per family in the order families are first named. */
class Families {
  private readonly list: { name: string; help: string; type: MetricType; samples: Sample[] }[] = []
  add(name: string, type: MetricType, help: string, labels: Record<string, string>, value: number | null | undefined, suffix?: string): void {
    if (value === null || value === undefined) return
    let f = this.list.find((x) => x.name === name)
    if (!f) this.list.push((f = { name, help, type, samples: [] }))
    f.samples.push({ labels, value, ...(suffix ? { suffix } : {}) })
  }
  all(): MetricFamily[] {
    return this.list
  }
}

function processSamples(out: Families, label: string, p: ProcessFigures): void {
  const l = { process: label, pid: String(p.pid) }
  out.add('floe_process_cpu_seconds_total', 'counter', 'CPU time of the process, by mode (user, system).', { ...l, mode: 'user' }, p.cpu.userSeconds)
  out.add('floe_process_cpu_seconds_total', 'counter', '', { ...l, mode: 'system' }, p.cpu.systemSeconds)
  out.add('floe_process_resident_memory_bytes', 'gauge', 'Resident set size of the process.', l, p.memory.rssBytes)
  out.add('floe_process_resident_memory_peak_bytes', 'gauge', 'Peak resident set size of the process.', l, p.memory.peakRssBytes)
  out.add('floe_process_heap_used_bytes', 'gauge', 'V8 heap in use (the Floe process).', l, p.memory.heapUsedBytes)
  out.add('floe_process_heap_total_bytes', 'gauge', 'V8 heap allocated (the Floe process).', l, p.memory.heapTotalBytes)
  out.add('floe_process_io_read_bytes_total', 'counter', 'Bytes the process read through any file descriptor, files and sockets alike.', l, p.io?.readBytes)
  out.add('floe_process_io_written_bytes_total', 'counter', 'Bytes the process wrote through any file descriptor, files and sockets alike.', l, p.io?.writtenBytes)
  out.add('floe_process_threads', 'gauge', 'Threads of the process.', l, p.threads)
  out.add('floe_process_uptime_seconds', 'gauge', 'Seconds since the process started.', l, p.uptimeSeconds)
}

function localFunctionSamples(out: Families, service: string, s: LocalFunctionService): void {
  const l = { function: s.functions.join(','), service }
  out.add('floe_function_invocations_total', 'counter', 'Invocations of the function since the stack started.', l, s.invocations)
  out.add('floe_function_errors_total', 'counter', 'Invocations that threw or timed out.', l, s.errors)
  if (s.duration.p95Ms !== null) out.add('floe_function_duration_seconds', 'summary', 'Duration of invocations; the 0.95 quantile over the latest invocations.', { ...l, quantile: '0.95' }, seconds(s.duration.p95Ms))
  out.add('floe_function_duration_seconds', 'summary', 'Duration of invocations; the 0.95 quantile over the latest invocations.', l, seconds(s.duration.sumMs), '_sum')
  out.add('floe_function_duration_seconds', 'summary', '', l, s.invocations, '_count')
  out.add('floe_function_duration_max_seconds', 'gauge', 'Longest invocation since the stack started.', l, seconds(s.duration.maxMs))
  const cpuHelp = 'The function\'s share of the process CPU time spent while its invocations ran, by mode; concurrent invocations share each interval in proportion to their time in flight.'
  out.add('floe_function_cpu_seconds_total', 'counter', cpuHelp, { ...l, mode: 'user' }, s.cpu.userSeconds)
  out.add('floe_function_cpu_seconds_total', 'counter', cpuHelp, { ...l, mode: 'system' }, s.cpu.systemSeconds)
  out.add('floe_function_http_requests_total', 'counter', 'Requests the gateway routed to the function.', l, s.network.requests)
  for (const [code, n] of Object.entries(s.network.responses)) out.add('floe_function_http_responses_total', 'counter', 'Responses of the function, by status class.', { ...l, code }, n)
  out.add('floe_function_http_request_bytes_total', 'counter', 'Bytes of the requests routed to the function (request line, headers, body).', l, s.network.requestBytes)
  out.add('floe_function_http_response_bytes_total', 'counter', 'Bytes of the responses of the function, as written to the socket.', l, s.network.responseBytes)
  for (const [stream, r] of Object.entries(s.streams)) {
    const sl = { ...l, stream }
    out.add('floe_function_stream_records_read_total', 'counter', 'Records the function\'s stream triggers read.', sl, r.records)
    out.add('floe_function_stream_bytes_read_total', 'counter', 'Bytes of the records the function\'s stream triggers read.', sl, r.bytes)
    out.add('floe_function_stream_batches_read_total', 'counter', 'Reads by the function\'s stream triggers that returned records.', sl, r.batches)
  }
}

function cloudWatchFunctionSamples(out: Families, service: string, s: CloudWatchFunctionService): void {
  const l = { function: s.functions.join(','), service: [service, ...(s.sharedWith ?? [])].join(',') }
  for (const window of Object.keys(s.windows) as WindowName[]) {
    const w = s.windows[window]
    const lw = { ...l, window }
    out.add('floe_function_invocations', 'gauge', 'Invocations in the window (CloudWatch AWS/Lambda Invocations, Sum).', lw, w.invocations)
    out.add('floe_function_errors', 'gauge', 'Invocations that failed in the window (Errors, Sum).', lw, w.errors)
    out.add('floe_function_throttles', 'gauge', 'Throttled invocation requests in the window (Throttles, Sum).', lw, w.throttles)
    const d = (stat: string, ms: number | null) => out.add('floe_function_duration_seconds', 'gauge', 'Duration of invocations in the window, by statistic (sum, avg, p95, max).', { ...lw, stat }, seconds(ms))
    d('sum', w.duration.sumMs)
    d('avg', w.duration.avgMs)
    d('p95', w.duration.p95Ms)
    d('max', w.duration.maxMs)
    out.add('floe_function_concurrent_executions_max', 'gauge', 'Most concurrent executions in the window (ConcurrentExecutions, Maximum).', lw, w.concurrentExecutionsMax)
    out.add('floe_function_iterator_age_max_seconds', 'gauge', 'Age of the oldest record read by a stream trigger in the window (IteratorAge, Maximum).', lw, seconds(w.iteratorAgeMaxMs))
  }
}

/** The families of a report: per function, per process, per stream, and one info gauge per service. */
export function reportFamilies(report: MetricsReport): MetricFamily[] {
  const out = new Families()
  const shown = new Set<string>()
  for (const [name, s] of Object.entries(report.services)) {
    if (s.kind === 'emulator') {
      const e = s as EmulatorService
      out.add('floe_service_info', 'gauge', 'One per service: its kind and where it runs (floe: inside the Floe process; child: its own process; external: not started by this stack).', { service: name, kind: 'emulator', runs_in: e.runsIn }, 1)
      if (e.process) processSamples(out, name, e.process)
      continue
    }
    if ('windows' in s) {
      const cw = s as CloudWatchFunctionService
      out.add('floe_service_info', 'gauge', 'One per service: its kind and where it runs.', { service: name, kind: 'function', functions: cw.functions.join(','), runs_in: 'lambda' }, 1)
      // A function shared by several services is one CloudWatch series: rendered once, under all their names.
      const key = cw.functions.join(',')
      if (shown.has(key)) continue
      shown.add(key)
      cloudWatchFunctionSamples(out, name, cw)
      continue
    }
    const local = s as LocalFunctionService
    out.add('floe_service_info', 'gauge', 'One per service: its kind and where it runs (floe: inside the Floe process; child: its own process; external: not started by this stack).', { service: name, kind: 'function', functions: local.functions.join(','), runs_in: local.runsIn }, 1)
    localFunctionSamples(out, name, local)
  }
  if (report.process) processSamples(out, 'floe', report.process)
  for (const [key, st] of Object.entries(report.streams ?? {})) {
    for (const window of Object.keys(st.windows) as WindowName[]) {
      const l = { stream: key, stream_name: st.name, window }
      out.add('floe_stream_incoming_records', 'gauge', 'Records put to the stream in the window (AWS/Kinesis IncomingRecords, Sum).', l, st.windows[window].incomingRecords)
      out.add('floe_stream_incoming_bytes', 'gauge', 'Bytes put to the stream in the window (AWS/Kinesis IncomingBytes, Sum).', l, st.windows[window].incomingBytes)
    }
  }
  out.add('floe_metrics_generated_timestamp_seconds', 'gauge', `When these figures were collected (source: ${report.source}).`, { source: report.source }, Date.parse(report.generatedAt) / 1000)
  return out.all()
}

/** The report in the text exposition format. */
export function toPrometheus(report: MetricsReport): string {
  return renderPrometheus(reportFamilies(report))
}
