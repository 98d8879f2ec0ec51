/**
 * The deployed stack's figures from CloudWatch: the GetMetricData request for
 * every function and stream over the last 5 minutes and the last hour, and
 * the shaping of its answer into the report. Pure: the call itself is in
 * `lib/aws/metrics.ts`. The types mirror the SDK's shapes structurally.
 */
import { WINDOWS, type CloudWatchFunctionFigures, type CloudWatchFunctionService, type CloudWatchStreamFigures, type MetricsReport, type ServiceReport, type WindowName } from './report'
import { functionsOfService, servicesOf } from './services'

/**
 * The environment variable of the metrics function on AWS: JSON of
 * `MetricsTargets`, set by the CDK app from the declaration.
 */
export const METRICS_TARGETS_ENV = 'FLOE_METRICS_TARGETS'

/** Physical names of what the metrics function reports on. */
export interface MetricsTargets {
  /** The metrics function's own key: its physical name is `AWS_LAMBDA_FUNCTION_NAME` (a function cannot name itself in its own configuration). */
  readonly self?: string
  /** Function key → physical function name. */
  readonly functions: Readonly<Record<string, string>>
  /** Stream key → physical stream name. */
  readonly streams: Readonly<Record<string, string>>
}

/** Reads `FLOE_METRICS_TARGETS`, adding the running function under its own key. */
export function targetsFromEnv(env: Readonly<Record<string, string | undefined>>): MetricsTargets {
  const raw = env[METRICS_TARGETS_ENV]
  if (!raw) throw new Error(`${METRICS_TARGETS_ENV} is not set: the metrics function needs the names of the functions and streams it reports on`)
  const parsed = JSON.parse(raw) as Partial<MetricsTargets>
  const functions: Record<string, string> = { ...(parsed.functions ?? {}) }
  const self = env.AWS_LAMBDA_FUNCTION_NAME
  if (parsed.self && self) functions[parsed.self] = self
  return { self: parsed.self, functions, streams: { ...(parsed.streams ?? {}) } }
}

export type Stat = 'Sum' | 'Average' | 'Maximum' | 'p95'

/** One `MetricDataQuery` (the SDK's shape). */
export interface MetricQuery {
  readonly Id: string
  readonly MetricStat: {
    readonly Metric: { readonly Namespace: string; readonly MetricName: string; readonly Dimensions: readonly { readonly Name: string; readonly Value: string }[] }
    readonly Period: number
    readonly Stat: Stat
  }
  readonly ReturnData: true
}

/** What a query id stands for. */
export interface QueryMeaning {
  readonly kind: 'function' | 'stream'
  /** Function or stream key. */
  readonly key: string
  readonly metric: string
  readonly stat: Stat
  readonly window: WindowName
}

export interface MetricsRequestPlan {
  readonly startTime: Date
  readonly endTime: Date
  readonly queries: readonly MetricQuery[]
  readonly meanings: Readonly<Record<string, QueryMeaning>>
  readonly targets: MetricsTargets
}

/** The Lambda metrics read per function, with the statistic of each. */
export const FUNCTION_METRICS: readonly { readonly metric: string; readonly stat: Stat }[] = [
  { metric: 'Invocations', stat: 'Sum' },
  { metric: 'Errors', stat: 'Sum' },
  { metric: 'Throttles', stat: 'Sum' },
  { metric: 'Duration', stat: 'Sum' },
  { metric: 'Duration', stat: 'Average' },
  { metric: 'Duration', stat: 'p95' },
  { metric: 'Duration', stat: 'Maximum' },
  { metric: 'ConcurrentExecutions', stat: 'Maximum' },
  { metric: 'IteratorAge', stat: 'Maximum' },
]

/** The Kinesis metrics read per stream. */
export const STREAM_METRICS: readonly { readonly metric: string; readonly stat: Stat }[] = [
  { metric: 'IncomingRecords', stat: 'Sum' },
  { metric: 'IncomingBytes', stat: 'Sum' },
]

/** GetMetricData's limit of queries per request. */
export const MAX_QUERIES = 500

/**
 * The request: both windows in one call, each query with its window as its
 * period over the last hour, ending at the current whole minute (CloudWatch
 * rounds start times down to the minute): the hour is one data point, the
 * last 5 minutes the newest of twelve.
 */
export function planMetricsRequest(targets: MetricsTargets, now: Date): MetricsRequestPlan {
  const endTime = new Date(Math.floor(now.getTime() / 60_000) * 60_000)
  const startTime = new Date(endTime.getTime() - WINDOWS['1h'] * 1000)
  const queries: MetricQuery[] = []
  const meanings: Record<string, QueryMeaning> = {}
  const add = (meaning: QueryMeaning, namespace: string, dimension: string, value: string) => {
    const Id = `q${queries.length}`
    meanings[Id] = meaning
    queries.push({
      Id,
      MetricStat: { Metric: { Namespace: namespace, MetricName: meaning.metric, Dimensions: [{ Name: dimension, Value: value }] }, Period: WINDOWS[meaning.window], Stat: meaning.stat },
      ReturnData: true,
    })
  }
  for (const window of Object.keys(WINDOWS) as WindowName[]) {
    for (const [key, name] of Object.entries(targets.functions)) {
      for (const m of FUNCTION_METRICS) add({ kind: 'function', key, metric: m.metric, stat: m.stat, window }, 'AWS/Lambda', 'FunctionName', name)
    }
    for (const [key, name] of Object.entries(targets.streams)) {
      for (const m of STREAM_METRICS) add({ kind: 'stream', key, metric: m.metric, stat: m.stat, window }, 'AWS/Kinesis', 'StreamName', name)
    }
  }
  return { startTime, endTime, queries, meanings, targets }
}

/** One `MetricDataResult` (the SDK's shape). */
export interface MetricResult {
  readonly Id?: string
  readonly Timestamps?: readonly Date[]
  readonly Values?: readonly number[]
  readonly StatusCode?: string
}

/**
 * The value of one query in its window: the data points inside the window
 * (for 5 minutes, the newest period), combined by the statistic; `null` when
 * there was none.
 */
function windowValue(plan: MetricsRequestPlan, meaning: QueryMeaning, result: MetricResult | undefined): number | null {
  if (!result?.Values?.length) return null
  const from = plan.endTime.getTime() - WINDOWS[meaning.window] * 1000
  const values: number[] = []
  result.Values.forEach((v, i) => {
    const t = result.Timestamps?.[i]
    if (t === undefined || new Date(t).getTime() >= from) values.push(v)
  })
  if (values.length === 0) return null
  if (meaning.stat === 'Sum') return values.reduce((a, b) => a + b, 0)
  if (meaning.stat === 'Average') return values.reduce((a, b) => a + b, 0) / values.length
  return Math.max(...values)
}

const round = (n: number | null, digits = 3) => (n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits)

type Values = Map<string, number | null>
const valueKey = (kind: string, key: string, metric: string, stat: Stat, window: WindowName) => `${kind}|${key}|${metric}|${stat}|${window}`

function functionFigures(values: Values, fns: readonly string[], window: WindowName): CloudWatchFunctionFigures {
  const get = (fn: string, metric: string, stat: Stat) => values.get(valueKey('function', fn, metric, stat, window)) ?? null
  const sum = (metric: string, stat: Stat) => fns.reduce((a, fn) => a + (get(fn, metric, stat) ?? 0), 0)
  const max = (metric: string, stat: Stat) =>
    fns.reduce<number | null>((a, fn) => {
      const v = get(fn, metric, stat)
      return v === null ? a : Math.max(a ?? v, v)
    }, null)
  const invocations = sum('Invocations', 'Sum')
  const durationSum = sum('Duration', 'Sum')
  const avg = fns.length === 1 ? get(fns[0]!, 'Duration', 'Average') : invocations > 0 ? durationSum / invocations : null
  return {
    invocations,
    errors: sum('Errors', 'Sum'),
    throttles: sum('Throttles', 'Sum'),
    duration: { sumMs: round(durationSum)!, avgMs: round(avg), p95Ms: round(max('Duration', 'p95')), maxMs: round(max('Duration', 'Maximum')) },
    concurrentExecutionsMax: max('ConcurrentExecutions', 'Maximum'),
    iteratorAgeMaxMs: max('IteratorAge', 'Maximum'),
  }
}

/**
 * The report from GetMetricData results (every page's `MetricDataResults`
 * together). Services in `serviceOrder`, then the other functions by key; a
 * function of several services (the search loader) shows its figures under
 * each, with `sharedWith`.
 */
export function shapeCloudWatch(plan: MetricsRequestPlan, results: readonly MetricResult[], now: Date, serviceOrder: readonly string[]): MetricsReport {
  const byId = new Map<string, MetricResult>()
  for (const r of results) {
    if (!r.Id) continue
    const prev = byId.get(r.Id)
    // Pages of one query: their data points together.
    byId.set(r.Id, prev ? { Id: r.Id, Timestamps: [...(prev.Timestamps ?? []), ...(r.Timestamps ?? [])], Values: [...(prev.Values ?? []), ...(r.Values ?? [])] } : r)
  }
  const values: Values = new Map()
  for (const [id, m] of Object.entries(plan.meanings)) values.set(valueKey(m.kind, m.key, m.metric, m.stat, m.window), windowValue(plan, m, byId.get(id)))
  const fnKeys = Object.keys(plan.targets.functions)
  const names = serviceOrder.filter((n) => functionsOfService(n, fnKeys).length > 0)
  for (const fn of fnKeys) if (!names.some((n) => functionsOfService(n, fnKeys).includes(fn))) names.push(fn)
  const services: Record<string, ServiceReport> = {}
  for (const name of names) {
    const fns = functionsOfService(name, fnKeys)
    const shared = [...new Set(fns.flatMap((f) => servicesOf(f)))].filter((s) => s !== name)
    const entry: CloudWatchFunctionService = {
      kind: 'function',
      functions: fns,
      functionNames: Object.fromEntries(fns.map((f) => [f, plan.targets.functions[f]!])),
      ...(shared.length ? { sharedWith: shared } : {}),
      windows: { '5m': functionFigures(values, fns, '5m'), '1h': functionFigures(values, fns, '1h') },
    }
    services[name] = entry
  }
  const streams: Record<string, { name: string; windows: Record<WindowName, CloudWatchStreamFigures> }> = {}
  for (const [key, name] of Object.entries(plan.targets.streams)) {
    const w = (window: WindowName): CloudWatchStreamFigures => ({
      incomingRecords: values.get(valueKey('stream', key, 'IncomingRecords', 'Sum', window)) ?? 0,
      incomingBytes: values.get(valueKey('stream', key, 'IncomingBytes', 'Sum', window)) ?? 0,
    })
    streams[key] = { name, windows: { '5m': w('5m'), '1h': w('1h') } }
  }
  const windows = Object.fromEntries(
    (Object.keys(WINDOWS) as WindowName[]).map((w) => [w, { start: new Date(plan.endTime.getTime() - WINDOWS[w] * 1000).toISOString(), end: plan.endTime.toISOString() }]),
  ) as Record<WindowName, { start: string; end: string }>
  return {
    generatedAt: now.toISOString(),
    source: 'cloudwatch',
    notes: [
      'Figures of the deployed functions and streams from CloudWatch (AWS/Lambda and AWS/Kinesis), over the windows in "windows"; CloudWatch publishes them with a delay of a minute or more, so the newest minutes may be incomplete.',
      'CloudWatch counts per function: a function of several services (the search loader: esLoaderGood and esLoaderBad) shows the same figures under each (see "sharedWith"). Memory and CPU per invocation are in the functions\' REPORT log lines, not in these metrics.',
    ],
    windows,
    services,
    streams,
  }
}
