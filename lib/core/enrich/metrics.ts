/**
 * Enrich's metrics: counters (raw, good, incomplete, bad, pii, dropped,
 * invalid_enriched) and latency, reported as deltas every period to stdout
 * lines (`<prefix>.<name> = <value>`), to a StatsD daemon over UDP, and as
 * CloudWatch embedded-metric-format JSON lines on AWS.
 */
import { createSocket, type Socket } from 'node:dgram'

export const COUNTERS = ['raw', 'good', 'incomplete', 'bad', 'pii', 'dropped', 'invalid_enriched'] as const
export type CounterName = (typeof COUNTERS)[number]

export interface MetricsSnapshot {
  readonly counters: Readonly<Record<CounterName, number>>
  /** Milliseconds between the oldest collector timestamp of the last written batch and its writing; null when none. */
  readonly latencyMs: number | null
}

export class Metrics {
  private counters: Record<CounterName, number> = zero()
  private latency: number | null = null
  private readonly views: Metrics[] = []

  /** A Metrics that receives every later update, with its own deltas (one per report destination). */
  view(): Metrics {
    const m = new Metrics()
    this.views.push(m)
    return m
  }

  add(name: CounterName, n = 1): void {
    this.counters[name] += n
    for (const v of this.views) v.add(name, n)
  }

  /** Records the latency of a batch just written (the largest since the last report is kept). */
  latencyOf(collectorTimestamp: number | null, now: number): void {
    if (collectorTimestamp === null) return
    const l = Math.max(0, now - collectorTimestamp)
    if (this.latency === null || l > this.latency) this.latency = l
    for (const v of this.views) v.latencyOf(collectorTimestamp, now)
  }

  /** The values since the last call, and resets them. */
  take(): MetricsSnapshot {
    const s = { counters: this.counters, latencyMs: this.latency }
    this.counters = zero()
    this.latency = null
    return s
  }

  /** Current totals without resetting. */
  peek(): MetricsSnapshot {
    return { counters: { ...this.counters }, latencyMs: this.latency }
  }
}

function zero(): Record<CounterName, number> {
  return { raw: 0, good: 0, incomplete: 0, bad: 0, pii: 0, dropped: 0, invalid_enriched: 0 }
}

/** Stdout lines: `<prefix>.<name> = <value>`; latency only when observed. */
export function stdoutLines(s: MetricsSnapshot, prefix: string): string[] {
  const lines = COUNTERS.map((c) => `${prefix}.${c} = ${s.counters[c]}`)
  if (s.latencyMs !== null) lines.push(`${prefix}.latency = ${s.latencyMs}`)
  return lines
}

/** StatsD lines: counters `|c`, latency `|g`, with `|#k:v` tags. */
export function statsdLines(s: MetricsSnapshot, prefix: string, tags: Readonly<Record<string, string>> = {}): string[] {
  const t = Object.entries(tags).map(([k, v]) => `${k}:${v}`).join(',')
  const suffix = t ? `|#${t}` : ''
  const lines = COUNTERS.map((c) => `${prefix}.${c}:${s.counters[c]}|c${suffix}`)
  if (s.latencyMs !== null) lines.push(`${prefix}.latency:${s.latencyMs}|g${suffix}`)
  return lines
}

/** One CloudWatch embedded-metric-format document. */
export function emfLine(s: MetricsSnapshot, namespace: string, dimensions: Readonly<Record<string, string>>, at: number): string {
  const metrics: { Name: string; Unit: string }[] = COUNTERS.map((c) => ({ Name: c, Unit: 'Count' }))
  const values: Record<string, number> = { ...s.counters }
  if (s.latencyMs !== null) {
    metrics.push({ Name: 'latency', Unit: 'Milliseconds' })
    values.latency = s.latencyMs
  }
  return JSON.stringify({
    _aws: { Timestamp: at, CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [Object.keys(dimensions)], Metrics: metrics }] },
    ...dimensions,
    ...values,
  })
}

/** Sends StatsD lines over UDP (one datagram per line). */
export class StatsdClient {
  private readonly socket: Socket
  constructor(private readonly host: string, private readonly port: number) {
    this.socket = createSocket(host.includes(':') ? 'udp6' : 'udp4')
    this.socket.unref()
  }
  send(lines: readonly string[]): Promise<void> {
    return Promise.all(
      lines.map((l) => new Promise<void>((resolve) => this.socket.send(l, this.port, this.host, () => resolve()))),
    ).then(() => undefined)
  }
  close(): void {
    this.socket.close()
  }
}

export interface ReporterOptions {
  readonly metrics: Metrics
  readonly stdout?: { readonly periodMs: number; readonly prefix: string; readonly write: (line: string) => void }
  readonly statsd?: { readonly hostname: string; readonly port: number; readonly periodMs: number; readonly prefix: string; readonly tags: Readonly<Record<string, string>> }
}

/**
 * Reports the metrics periodically. Each destination has its own period and
 * sees the deltas since its own previous report.
 */
export class MetricsReporter {
  private readonly timers: NodeJS.Timeout[] = []
  private readonly statsd?: StatsdClient
  private readonly sinks: { take: () => MetricsSnapshot; report: (s: MetricsSnapshot) => Promise<void> | void }[] = []

  constructor(opts: ReporterOptions) {
    if (opts.stdout) {
      const m = opts.metrics.view()
      const o = opts.stdout
      const sink = { take: () => m.take(), report: (s: MetricsSnapshot) => stdoutLines(s, o.prefix).forEach((l) => o.write(l)) }
      this.sinks.push(sink)
      this.timers.push(setInterval(() => void sink.report(sink.take()), o.periodMs))
    }
    if (opts.statsd) {
      const m = opts.metrics.view()
      const o = opts.statsd
      const client = new StatsdClient(o.hostname, o.port)
      this.statsd = client
      const sink = { take: () => m.take(), report: (s: MetricsSnapshot) => client.send(statsdLines(s, o.prefix, o.tags)) }
      this.sinks.push(sink)
      this.timers.push(setInterval(() => void sink.report(sink.take()), o.periodMs))
    }
    for (const t of this.timers) t.unref()
  }

  /** Reports what is pending to every destination now (at shutdown). */
  async flush(): Promise<void> {
    for (const s of this.sinks) await s.report(s.take())
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t)
    await this.flush()
    this.statsd?.close()
  }
}
