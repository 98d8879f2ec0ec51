import { httpLambda } from '../../lib/aws/lambda'
import { cloudWatchReport } from '../../lib/aws/metrics'
import { answerMetrics } from '../../lib/core/metrics/http'
import { localMetrics } from '../../lib/runtime/metrics-source'

/** `GET /metrics`: per service, from the local runtime's counters and processes when it runs the functions, or from CloudWatch on AWS. */
export const handler = httpLambda((req) => answerMetrics(req, () => localMetrics()?.() ?? cloudWatchReport()), { auth: 'basic' })
