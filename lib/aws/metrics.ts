/**
 * The deployed stack's metrics from CloudWatch: one GetMetricData request for
 * every function and stream over the last 5 minutes and the last hour (see
 * `lib/core/metrics/cloudwatch.ts` for the request and the shaping).
 */
import { CloudWatchClient, GetMetricDataCommand, type GetMetricDataCommandOutput } from '@aws-sdk/client-cloudwatch'
import { MAX_QUERIES, planMetricsRequest, shapeCloudWatch, targetsFromEnv, type MetricResult, type MetricsTargets } from '../core/metrics/cloudwatch'
import type { MetricsReport } from '../core/metrics/report'
import { mappedServices } from '../core/metrics/services'

/** What the function needs of a CloudWatch client (a stub in tests). */
export interface MetricDataClient {
  send(command: GetMetricDataCommand): Promise<Pick<GetMetricDataCommandOutput, 'MetricDataResults' | 'NextToken'>>
}

let shared: CloudWatchClient | undefined

/**
 * Reads the figures and shapes the report: one request (more only past
 * GetMetricData's 500 queries), following `NextToken` pages.
 */
export async function cloudWatchReport(opts: { client?: MetricDataClient; targets?: MetricsTargets; now?: Date } = {}): Promise<MetricsReport> {
  const now = opts.now ?? new Date()
  const targets = opts.targets ?? targetsFromEnv(process.env)
  const client = opts.client ?? (shared ??= new CloudWatchClient({}))
  const plan = planMetricsRequest(targets, now)
  const results: MetricResult[] = []
  for (let i = 0; i < plan.queries.length; i += MAX_QUERIES) {
    let token: string | undefined
    do {
      const out = await client.send(
        new GetMetricDataCommand({
          MetricDataQueries: plan.queries.slice(i, i + MAX_QUERIES).map((q) => ({ ...q, MetricStat: { ...q.MetricStat, Metric: { ...q.MetricStat.Metric, Dimensions: [...q.MetricStat.Metric.Dimensions] } } })),
          StartTime: plan.startTime,
          EndTime: plan.endTime,
          ScanBy: 'TimestampDescending',
          NextToken: token,
        }),
      )
      results.push(...((out.MetricDataResults ?? []) as MetricResult[]))
      token = out.NextToken
    } while (token)
  }
  return shapeCloudWatch(plan, results, now, mappedServices)
}
