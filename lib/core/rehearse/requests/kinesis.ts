/**
 * Kinesis Data Streams (JSON 1.1, `x-amz-target: Kinesis_20131202.<Op>`).
 * Stream operations are checked on `arn:…:kinesis:R:A:stream/N`, from
 * `StreamARN` or `StreamName`; `GetRecords` names only a shard iterator, so
 * its stream comes from the iterators the caller saw issued.
 */
import { check, classified, jsonBody, str, target, unclassified, type Classification, type ServiceRequest } from './common'

const SERVICE = 'kinesis'

const STREAM_OPERATIONS = new Set([
  'PutRecord', 'PutRecords', 'GetShardIterator', 'DescribeStream', 'DescribeStreamSummary', 'ListShards',
  'CreateStream', 'DeleteStream', 'UpdateShardCount', 'MergeShards', 'SplitShard',
  'IncreaseStreamRetentionPeriod', 'DecreaseStreamRetentionPeriod', 'ListStreamConsumers', 'RegisterStreamConsumer',
  'AddTagsToStream', 'RemoveTagsFromStream', 'ListTagsForStream', 'StartStreamEncryption', 'StopStreamEncryption',
  'EnableEnhancedMonitoring', 'DisableEnhancedMonitoring', 'UpdateStreamMode',
])

const ACCOUNT_OPERATIONS = new Set(['ListStreams', 'DescribeLimits'])

/** The operations classified here. */
export const KINESIS_OPERATIONS: readonly string[] = [...STREAM_OPERATIONS, ...ACCOUNT_OPERATIONS, 'GetRecords']

export function streamArn(r: ServiceRequest, name: string): string {
  return `arn:${r.partition}:kinesis:${r.region}:${r.account}:stream/${name}`
}

export function classifyKinesis(r: ServiceRequest): Classification {
  const t = target(r)
  if (!t || !t.prefix.startsWith('Kinesis_')) return unclassified(SERVICE, 'no Kinesis x-amz-target header')
  const op = t.operation
  const body = jsonBody(r)
  if (ACCOUNT_OPERATIONS.has(op)) return classified(SERVICE, op, [check(r, `kinesis:${op}`, '*')])
  const named = str(body['StreamARN']) ?? (str(body['StreamName']) ? streamArn(r, str(body['StreamName'])!) : undefined)
  if (op === 'GetRecords') {
    const it = str(body['ShardIterator'])
    const stream = named ?? (it ? r.env.iteratorStream?.(it) : undefined)
    if (!stream) return unclassified(SERVICE, 'GetRecords with a shard iterator this proxy did not see issued', op)
    return classified(SERVICE, op, [check(r, 'kinesis:GetRecords', stream)])
  }
  if (STREAM_OPERATIONS.has(op)) {
    if (!named) return unclassified(SERVICE, `${op} names no stream (StreamName or StreamARN)`, op)
    return classified(SERVICE, op, [check(r, `kinesis:${op}`, named)])
  }
  return unclassified(SERVICE, `Kinesis operation ${op} is not classified`, op)
}
