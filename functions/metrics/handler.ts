import { httpLambda } from '../../lib/aws/lambda'
import { LOCAL_ENDPOINTS_ENV } from '../../lib/aws/clients'
import { cloudWatchReport } from '../../lib/aws/metrics'
import { answerMetrics } from '../../lib/core/metrics/http'
import { localReport } from '../../lib/local/metrics'

/** `GET /metrics`: per service, from the local runtime's counters and processes, or from CloudWatch on AWS. */
export const handler = httpLambda((req) => answerMetrics(req, () => (process.env[LOCAL_ENDPOINTS_ENV] ? localReport() : cloudWatchReport())), { auth: 'basic' })
