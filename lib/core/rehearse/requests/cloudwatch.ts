/**
 * CloudWatch metrics (signing name `monitoring`; JSON 1.0 with
 * `x-amz-target: GraniteServiceVersion20100801.<Op>` as SDK v3 sends it, or
 * the query protocol's form-encoded `Action=<Op>`). The metric operations
 * take no resource; `PutMetricData` carries `cloudwatch:namespace`.
 */
import { check, classified, formBody, isFormEncoded, jsonBody, str, target, unclassified, type CheckContext, type Classification, type ServiceRequest } from './common'

const SERVICE = 'monitoring'

const METRIC_OPERATIONS = new Set(['PutMetricData', 'GetMetricData', 'GetMetricStatistics', 'ListMetrics', 'GetMetricWidgetImage'])

/** The operations classified here. */
export const CLOUDWATCH_OPERATIONS: readonly string[] = [...METRIC_OPERATIONS]

export function classifyCloudWatch(r: ServiceRequest): Classification {
  let op: string | undefined
  let namespace: string | undefined
  if (isFormEncoded(r)) {
    const form = formBody(r)
    op = form.get('Action') ?? undefined
    namespace = form.get('Namespace') ?? undefined
  } else {
    op = target(r)?.operation
    namespace = str(jsonBody(r)['Namespace'])
  }
  if (!op) return unclassified(SERVICE, 'no operation')
  if (!METRIC_OPERATIONS.has(op)) return unclassified(SERVICE, `CloudWatch operation ${op} is not classified`, op)
  const extra: CheckContext = op === 'PutMetricData' && namespace ? { 'cloudwatch:namespace': namespace } : {}
  return classified(SERVICE, op, [check(r, `cloudwatch:${op}`, '*', extra)])
}
