/**
 * CloudWatch's metrics API stood in for the rehearsal: an HTTP server
 * speaking the SDK's protocol (JSON 1.0, `x-amz-target:
 * GraniteServiceVersion20100801.<Operation>`, timestamps as epoch seconds,
 * query-compatible errors with `x-amzn-query-error`).
 *
 * - `GetMetricData`: every query with `ReturnData` (default true) answered
 *   `StatusCode: 'Complete'` with the data points the `metrics` port gives
 *   (default: none), its `Id`, and its `Label` (the query's own, else the
 *   metric's name, else the `Id`), ordered by `ScanBy` (default newest
 *   first). Over `MaxDatapoints` (default 100,800) data points, the answer
 *   is paged with `NextToken` (a query cut off is `PartialData`). More than
 *   500 queries, or a query without `Id` or without `MetricStat`/`Expression`,
 *   or no `StartTime`/`EndTime`: 400 `ValidationError`.
 * - `PutMetricData`: accepted (200), nothing kept.
 * - `ListMetrics`: no metrics.
 * - Any other operation: 400 `UnknownOperationException`; a body that is not
 *   a JSON object: 400 `SerializationException`; a body over 1 MiB: 413.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import type { FunctionInventory } from '../../core/rehearse/inventory'
import type { FunctionCount } from './functions'

/** Request body bound (CloudWatch's own limit for PutMetricData is 1 MB). */
export const CLOUDWATCH_BODY_LIMIT = 1024 * 1024
/** GetMetricData's limits. */
export const GET_METRIC_DATA_LIMITS = { queries: 500, defaultMaxDatapoints: 100_800 } as const

const TARGET_PREFIX = 'GraniteServiceVersion20100801.'

/** One metric query as the port sees it. */
export interface MetricQuery {
  readonly id: string
  readonly namespace: string
  readonly metricName: string
  readonly dimensions: readonly { readonly name: string; readonly value: string }[]
  readonly period: number
  readonly stat: string
  readonly startTime: Date
  readonly endTime: Date
}

/** The data points of one query (same length, any order). */
export interface MetricSeries {
  readonly timestamps: readonly Date[]
  readonly values: readonly number[]
}

/** Where the figures come from. */
export type MetricsPort = (query: MetricQuery) => MetricSeries

export interface CloudWatchStandInOptions {
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string
  /** The figures (default: none). */
  readonly metrics?: MetricsPort
  readonly log?: (line: string) => void
}

export interface CloudWatchStandIn {
  readonly url: string
  close(): Promise<void>
}

class ApiError extends Error {
  constructor(readonly type: string, readonly status: number, message: string, readonly queryCode?: string) {
    super(message)
  }
}

const validation = (message: string) => new ApiError('com.amazon.coral.validate#ValidationException', 400, message, 'ValidationError;Sender')

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A timestamp of the request: epoch seconds (the SDK's form), or an ISO string. */
function timestamp(v: unknown, name: string): Date {
  const d = typeof v === 'number' ? new Date(v * 1000) : typeof v === 'string' ? new Date(v) : new Date(NaN)
  if (Number.isNaN(d.getTime())) throw validation(`1 validation error detected: Value at '${name}' failed to satisfy constraint: Member must not be null`)
  return d
}

interface Answered {
  readonly Id: string
  readonly Label: string
  readonly points: { t: number; v: number }[]
}

/** The GetMetricData answer to a request body (pure but for the port). */
export function getMetricData(body: Json, metrics: MetricsPort): Json {
  const queries = body.MetricDataQueries
  if (!Array.isArray(queries)) throw validation("1 validation error detected: Value null at 'metricDataQueries' failed to satisfy constraint: Member must not be null")
  if (queries.length > GET_METRIC_DATA_LIMITS.queries) {
    throw validation(`1 validation error detected: Value at 'metricDataQueries' failed to satisfy constraint: Member must have length less than or equal to ${GET_METRIC_DATA_LIMITS.queries}`)
  }
  const startTime = timestamp(body.StartTime, 'startTime')
  const endTime = timestamp(body.EndTime, 'endTime')
  if (startTime.getTime() >= endTime.getTime()) throw new ApiError('com.amazonaws.cloudwatch#InvalidParameterValueException', 400, 'The parameter StartTime must be less than the parameter EndTime.', 'InvalidParameterValue;Sender')
  const maxDatapoints = body.MaxDatapoints === undefined ? GET_METRIC_DATA_LIMITS.defaultMaxDatapoints : Number(body.MaxDatapoints)
  if (!Number.isInteger(maxDatapoints) || maxDatapoints < 1) throw new ApiError('com.amazonaws.cloudwatch#InvalidParameterValueException', 400, 'The parameter MaxDatapoints must be greater than 0.', 'InvalidParameterValue;Sender')
  const ascending = body.ScanBy === 'TimestampAscending'

  const answered: Answered[] = []
  for (const [i, q] of queries.entries()) {
    if (!isObject(q) || typeof q.Id !== 'string' || q.Id === '') throw validation(`The value for field MetricDataQueries.member.${i + 1}.Id must not be empty.`)
    const stat = isObject(q.MetricStat) ? q.MetricStat : undefined
    if (!stat && typeof q.Expression !== 'string') throw validation(`Exactly one element of the MetricStat or Expression fields must be specified in MetricDataQueries.member.${i + 1}.`)
    if (q.ReturnData === false) continue
    const metric = stat && isObject(stat.Metric) ? stat.Metric : {}
    const metricName = typeof metric.MetricName === 'string' ? metric.MetricName : ''
    const label = typeof q.Label === 'string' ? q.Label : metricName || q.Id
    let points: { t: number; v: number }[] = []
    if (stat) {
      const dims = Array.isArray(metric.Dimensions) ? metric.Dimensions.filter(isObject) : []
      const series = metrics({
        id: q.Id,
        namespace: typeof metric.Namespace === 'string' ? metric.Namespace : '',
        metricName,
        dimensions: dims.map((d) => ({ name: String(d.Name ?? ''), value: String(d.Value ?? '') })),
        period: Number(stat.Period ?? q.Period ?? 60),
        stat: String(stat.Stat ?? ''),
        startTime,
        endTime,
      })
      points = series.values.map((v, k) => ({ t: series.timestamps[k]!.getTime(), v }))
      points.sort((a, b) => (ascending ? a.t - b.t : b.t - a.t))
    }
    answered.push({ Id: q.Id, Label: label, points })
  }

  // Paging: NextToken is `<query index>:<data points of it already given>`.
  const token = typeof body.NextToken === 'string' && body.NextToken !== '' ? /^(\d+):(\d+)$/.exec(body.NextToken) : ['', '0', '0']
  if (!token) throw new ApiError('com.amazonaws.cloudwatch#InvalidNextToken', 400, 'The service couldn\'t process your request because the value of NextToken is not valid.', 'InvalidNextToken;Sender')
  const results: Json[] = []
  let next: string | undefined
  let room = maxDatapoints
  for (let i = Number(token[1]); i < answered.length; i++) {
    const a = answered[i]!
    const skip = i === Number(token[1]) ? Number(token[2]) : 0
    const page = a.points.slice(skip, skip + room)
    room -= page.length
    const partial = skip + page.length < a.points.length
    if (partial && page.length === 0) { next = `${i}:${skip}`; break }
    results.push({ Id: a.Id, Label: a.Label, Timestamps: page.map((p) => p.t / 1000), Values: page.map((p) => p.v), StatusCode: partial ? 'PartialData' : 'Complete' })
    if (partial) { next = `${i}:${skip + page.length}`; break }
  }
  return { MetricDataResults: results, Messages: [], ...(next ? { NextToken: next } : {}) }
}

/**
 * The rehearsal's own Lambda figures: `AWS/Lambda` `Invocations` and
 * `Errors` by `FunctionName` (the function's physical name as the inventory
 * resolves it), the counts of the function host so far, as one data point
 * (statistic `Sum`) at the start of the query's newest period. Anything else:
 * no data.
 */
export function lambdaMetricsFrom(report: () => readonly FunctionCount[], functions: readonly FunctionInventory[]): MetricsPort {
  return (q) => {
    const none = { timestamps: [], values: [] }
    if (q.namespace !== 'AWS/Lambda' || q.stat !== 'Sum' || (q.metricName !== 'Invocations' && q.metricName !== 'Errors')) return none
    if (q.dimensions.length !== 1 || q.dimensions[0]!.name !== 'FunctionName') return none
    const fn = functions.find((f) => f.name === q.dimensions[0]!.value)
    const count = fn && report().find((c) => c.logicalId === fn.logicalId)
    if (!count) return none
    const value = q.metricName === 'Invocations' ? count.invocations : count.errors
    const period = Math.max(1, q.period) * 1000
    const at = Math.max(q.startTime.getTime(), q.endTime.getTime() - period)
    return { timestamps: [new Date(at)], values: [value] }
  }
}

/** Starts the stand-in on a free port. */
export async function startCloudWatchStandIn(o: CloudWatchStandInOptions = {}): Promise<CloudWatchStandIn> {
  const metrics: MetricsPort = o.metrics ?? (() => ({ timestamps: [], values: [] }))
  const operations: Record<string, (body: Json) => Json> = {
    GetMetricData: (b) => getMetricData(b, metrics),
    PutMetricData: () => ({}),
    ListMetrics: () => ({ Metrics: [] }),
  }

  const answer = (res: ServerResponse, status: number, body: Json, queryError?: string) => {
    if (res.headersSent) return
    const text = JSON.stringify(body)
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
      ...(queryError ? { 'x-amzn-query-error': queryError } : {}),
    })
    res.end(text)
  }
  const fail = (res: ServerResponse, e: ApiError) => answer(res, e.status, { __type: e.type, message: e.message }, e.queryCode)

  /** The body, or undefined once refused (over the bound: 413, the rest is read and dropped). */
  const readBody = (req: IncomingMessage, res: ServerResponse) =>
    new Promise<Buffer | undefined>((resolve, reject) => {
      const tooLarge = () => {
        answer(res, 413, { __type: 'RequestEntityTooLargeException', message: `Request body over ${CLOUDWATCH_BODY_LIMIT} bytes` })
        resolve(undefined)
      }
      if (Number(req.headers['content-length'] ?? 0) > CLOUDWATCH_BODY_LIMIT) {
        req.resume()
        return tooLarge()
      }
      const chunks: Buffer[] = []
      let size = 0
      let refused = false
      req.on('data', (c: Buffer) => {
        if (refused) return
        size += c.length
        if (size > CLOUDWATCH_BODY_LIMIT) { refused = true; chunks.length = 0; return tooLarge() }
        chunks.push(c)
      })
      req.on('end', () => { if (!refused) resolve(Buffer.concat(chunks)) })
      req.on('error', reject)
    })

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req, res)
      if (raw === undefined) return
      const target = String(req.headers['x-amz-target'] ?? '')
      const op = req.method === 'POST' && target.startsWith(TARGET_PREFIX) ? operations[target.slice(TARGET_PREFIX.length)] : undefined
      if (!op) return fail(res, new ApiError('com.amazon.coral.service#UnknownOperationException', 400, `${target || `${req.method} ${req.url}`} is not an operation of the CloudWatch stand-in`))
      let body: Json
      try {
        const parsed = JSON.parse(raw.length === 0 ? '{}' : raw.toString('utf8')) as unknown
        if (!isObject(parsed)) throw new Error('not an object')
        body = parsed
      } catch {
        return fail(res, new ApiError('com.amazon.coral.service#SerializationException', 400, 'The request body is not a JSON object'))
      }
      try {
        answer(res, 200, op(body))
      } catch (err) {
        if (err instanceof ApiError) return fail(res, err)
        throw err
      }
    })().catch((err: Error) => {
      o.log?.(`CloudWatch stand-in: ${err.message}`)
      answer(res, 500, { __type: 'com.amazonaws.cloudwatch#InternalServiceFault', message: 'Internal error' }, 'InternalServiceError;Receiver')
    })
  })
  const host = o.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => { server.off('error', reject); resolve() })
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
