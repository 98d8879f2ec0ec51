/**
 * DynamoDB and DynamoDB Streams (JSON 1.0, `x-amz-target:
 * DynamoDB_20120810.<Op>` / `DynamoDBStreams_20120810.<Op>`, signing name
 * `dynamodb`). A single-table operation is checked on its table (a query or
 * scan of an index on `table/T/index/I`); a batch once per table it names; a
 * transaction once per item, with the action of the item's kind. When the
 * table's partition key is known, item operations and queries of the table
 * carry `dynamodb:LeadingKeys` (the partition key values they touch).
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

/** Single-item operations (their `Key`, or `Item` for a put, names the partition key value). */
const ITEM_OPERATIONS = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'])

/** Operations that take no resource. */
const ACCOUNT_OPERATIONS = new Set(['ListTables', 'DescribeLimits', 'DescribeEndpoints', 'ListBackups', 'ListGlobalTables', 'ListStreams'])

/** The operations classified here (DynamoDB Streams' aside). */
export const DYNAMODB_OPERATIONS: readonly string[] = [...TABLE_OPERATIONS, ...ACCOUNT_OPERATIONS, 'BatchGetItem', 'BatchWriteItem', 'TransactWriteItems', 'TransactGetItems']

/** A table given by name or by ARN. */
export function tableArn(r: ServiceRequest, table: string): string {
  return table.startsWith('arn:') ? table : `arn:${r.partition}:dynamodb:${r.region}:${r.account}:table/${table}`
}

type Item = Record<string, Record<string, unknown> | undefined> | undefined

/** An attribute value as IAM compares it (string, number or binary, as text). */
function scalar(v: Record<string, unknown> | undefined): string | undefined {
  if (!v) return undefined
  const s = v['S'] ?? v['N'] ?? v['B']
  return typeof s === 'string' ? s : undefined
}

/** The partition key value a `KeyConditionExpression` (or legacy `KeyConditions`) fixes. */
function queriedKey(body: Record<string, unknown>, pk: string): string | undefined {
  const legacy = (body['KeyConditions'] as Record<string, { AttributeValueList?: Record<string, unknown>[] }> | undefined)?.[pk]
  if (legacy) return scalar(legacy.AttributeValueList?.[0])
  const expr = str(body['KeyConditionExpression'])
  if (!expr) return undefined
  const names = (body['ExpressionAttributeNames'] ?? {}) as Record<string, string>
  const values = (body['ExpressionAttributeValues'] ?? {}) as Record<string, Record<string, unknown>>
  for (const m of expr.matchAll(/([#\w.]+)\s*=\s*(:\w+)|(:\w+)\s*=\s*([#\w.]+)/g)) {
    const [name, value] = m[1] ? [m[1], m[2]!] : [m[4]!, m[3]!]
    if ((names[name] ?? name) === pk) return scalar(values[value])
  }
  return undefined
}

/** `dynamodb:LeadingKeys` of the items (keys or whole items) an operation names, when the table's partition key is known. */
function leadingKeys(r: ServiceRequest, arn: string, items: readonly Item[]): Record<string, readonly string[]> {
  const pk = r.env.partitionKeyOf?.(arn)
  if (!pk) return {}
  const values = items.map((i) => scalar(i?.[pk]))
  return values.every((v): v is string => v !== undefined) && values.length > 0 ? { 'dynamodb:LeadingKeys': [...new Set(values)] } : {}
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
    const arn = tableArn(r, table)
    checks.push(check(r, TRANSACT_ACTIONS[kind]!, arn, { ...keys(inner!), ...leadingKeys(r, arn, [(inner!['Key'] ?? inner!['Item']) as Item]) }))
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
    const base = tableArn(r, table)
    const arn = base + (index ? `/index/${index}` : '')
    let leading: Record<string, readonly string[]> = {}
    if (ITEM_OPERATIONS.has(op)) leading = leadingKeys(r, base, [(body['Key'] ?? body['Item']) as Item])
    else if (op === 'Query' && !index) {
      const pk = r.env.partitionKeyOf?.(base)
      const v = pk ? queriedKey(body, pk) : undefined
      if (v !== undefined) leading = { 'dynamodb:LeadingKeys': [v] }
    }
    return classified(SERVICE, op, [check(r, `dynamodb:${op}`, arn, { ...keys(body), ...leading })])
  }
  if (op === 'BatchGetItem' || op === 'BatchWriteItem') {
    const items = body['RequestItems']
    const tables = items && typeof items === 'object' ? Object.keys(items) : []
    if (tables.length === 0) return unclassified(SERVICE, `${op} without RequestItems`, op)
    return classified(SERVICE, op, tables.map((table) => {
      const arn = tableArn(r, table)
      const entry = (items as Record<string, unknown>)[table]
      const named: Item[] = op === 'BatchGetItem'
        ? (((entry as { Keys?: Item[] } | undefined)?.Keys) ?? [])
        : ((entry as { PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }[] | undefined) ?? []).map((w) => w.PutRequest?.Item ?? w.DeleteRequest?.Key)
      return check(r, `dynamodb:${op}`, arn, { ...keys(body), ...leadingKeys(r, arn, named) })
    }))
  }
  if (op === 'TransactWriteItems' || op === 'TransactGetItems') return transact(r, op, body)
  return unclassified(SERVICE, `DynamoDB operation ${op} is not classified`, op)
}
