/**
 * Where `GET /metrics` reads its figures when the functions run in the local
 * stack's process: the local runtime hands its counters in here when it starts
 * tracking the stack (`lib/local/metrics.ts`); on AWS nothing does, and the
 * metrics function reads CloudWatch.
 */
import type { MetricsReport } from '../core/metrics/report'

let source: (() => MetricsReport) | undefined

/** Makes `report` the answer of the metrics function in this process. */
export function provideLocalMetrics(report: () => MetricsReport): void {
  source = report
}

/** The in-process report, when the functions run in the local stack. */
export function localMetrics(): (() => MetricsReport) | undefined {
  return source
}
