/**
 * DynamoDB and DynamoDB Streams (JSON 1.0, `x-amz-target:
 * DynamoDB_20120810.<Op>` / `DynamoDBStreams_20120810.<Op>`, signing name
 * `dynamodb`). A single-table operation is checked on its table (a query or
 * scan of an index on `table/T/index/I`); a batch once per table it names; a
 * transaction once per item, with the action of the item's kind.
 */
import { check, classified, jsonBody, str, target, unclassified, type Check, type Classification, type ServiceRequest } from './common'

const SERVICE = 'dynamodb'

/** Operations on one table named by `TableName` (checked as `dynamodb:<Op>`). */
const TABLE_OPERATIONS = new Set([
  'GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan',
  'DescribeTable', 'CreateTable', 'UpdateTable', 'DeleteTable',
  'DescribeTimeToLive', 'UpdateTimeToLive', 'DescribeContinuousBackups', 'UpdateContinuousBackups',
  'DescribeKinesisStreamingDestination', 'DescribeContributorInsights', 'DescribeTableReplicaAutoScaling',
  'ListTagsOfResource', 'TagResource', 'UntagResource',
])

/** Operations that take no resource. */
const ACCOUNT_OPERATIONS = new Set(['ListTables', 'DescribeLimits', 'DescribeEndpoints', 'ListBackups', 'ListGlobalTables', 'ListStreams'])

/** The operations classified here (DynamoDB Streams' aside). */
export const DYNAMODB_OPERATIONS: readonly string[] = [...TABLE_OPERATIONS, ...ACCOUNT_OPERATIONS, 'BatchGetItem', 'BatchWriteItem', 'TransactWriteItems', 'TransactGetItems']

/** A table given by name or by ARN. */
export function tableArn(r: ServiceRequest, table: string): string {
  return table.startsWith('arn:') ? table : `arn:${r.partition}:dynamodb:${r.region}:${r.account}:table/${table}`
}

/** DynamoDB's condition keys that the request states outright. */
function keys(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of ['ReturnValues', 'Select', 'ReturnConsumedCapacity'] as const) {
    const v = str(body[k])
    if (v) out[`dynamodb:${k}`] = v
  }
  return out
}

const TRANSACT_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Get: 'dynamodb:GetItem',
}

function transact(r: ServiceRequest, op: string, body: Record<string, unknown>): Classification {
  const items = body['TransactItems']
  if (!Array.isArray(items) || items.length === 0) return unclassified(SERVICE, `${op} without TransactItems`, op)
  const checks: Check[] = []
  for (const item of items as Record<string, unknown>[]) {
    const kinds = Object.keys(item ?? {})
    const kind = kinds.find((k) => TRANSACT_ACTIONS[k])
    const inner = kind ? (item[kind] as Record<string, unknown> | undefined) : undefined
    const table = str(inner?.['TableName'])
    if (!kind || !table) return unclassified(SERVICE, `${op} item without a known kind and TableName (${kinds.join(', ') || 'empty'})`, op)
    checks.push(check(r, TRANSACT_ACTIONS[kind]!, tableArn(r, table), keys(inner!)))
  }
  return classified(SERVICE, op, dedupe(checks))
}

/** One check per distinct action and resource, in first-seen order (AWS authorizes each once). */
function dedupe(checks: readonly Check[]): Check[] {
  const seen = new Set<string>()
  return checks.filter((c) => {
    const k = `${c.action} ${c.resource} ${JSON.stringify(c.context)}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

function streams(r: ServiceRequest, op: string, body: Record<string, unknown>): Classification {
  if (op === 'ListStreams') return classified(SERVICE, op, [check(r, 'dynamodb:ListStreams', '*')])
  let stream = str(body['StreamArn'])
  if (!stream && op === 'GetRecords') {
    const it = str(body['ShardIterator'])
    stream = it ? r.env.iteratorStream?.(it) : undefined
    if (!stream) return unclassified(SERVICE, 'GetRecords with a shard iterator this proxy did not see issued', op)
  }
  if (!stream) return unclassified(SERVICE, `${op} without StreamArn`, op)
  if (!['DescribeStream', 'GetShardIterator', 'GetRecords'].includes(op)) return unclassified(SERVICE, `DynamoDB Streams operation ${op} is not classified`, op)
  return classified(SERVICE, op, [check(r, `dynamodb:${op}`, stream)])
}

export function classifyDynamoDb(r: ServiceRequest): Classification {
  const t = target(r)
  if (!t) return unclassified(SERVICE, 'no x-amz-target header')
  const op = t.operation
  const body = jsonBody(r)
  if (t.prefix.startsWith('DynamoDBStreams_')) return streams(r, op, body)
  if (!t.prefix.startsWith('DynamoDB_')) return unclassified(SERVICE, `unknown target ${t.prefix}.${op}`, op)
  if (ACCOUNT_OPERATIONS.has(op)) return classified(SERVICE, op, [check(r, `dynamodb:${op}`, '*')])
  if (TABLE_OPERATIONS.has(op)) {
    const table = str(body['TableName']) ?? str(body['ResourceArn'])
    if (!table) return unclassified(SERVICE, `${op} without TableName`, op)
    const index = (op === 'Query' || op === 'Scan') ? str(body['IndexName']) : undefined
    const arn = tableArn(r, table) + (index ? `/index/${index}` : '')
    return classified(SERVICE, op, [check(r, `dynamodb:${op}`, arn, keys(body))])
  }
  if (op === 'BatchGetItem' || op === 'BatchWriteItem') {
    const items = body['RequestItems']
    const tables = items && typeof items === 'object' ? Object.keys(items) : []
    if (tables.length === 0) return unclassified(SERVICE, `${op} without RequestItems`, op)
    return classified(SERVICE, op, tables.map((table) => check(r, `dynamodb:${op}`, tableArn(r, table), keys(body))))
  }
  if (op === 'TransactWriteItems' || op === 'TransactGetItems') return transact(r, op, body)
  return unclassified(SERVICE, `DynamoDB operation ${op} is not classified`, op)
}
