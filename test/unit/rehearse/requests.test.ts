/**
 * The request classifier on the requests the SDK actually sends: each
 * command runs through the project's clients (or a plain client of the
 * service) and its final, signed HTTP request is captured before the
 * network and classified.
 */
import { BatchGetItemCommand, BatchWriteItemCommand, DeleteItemCommand, DescribeTableCommand, ExecuteStatementCommand as DdbExecuteStatementCommand, GetItemCommand, ListTablesCommand, PutItemCommand, QueryCommand, ScanCommand, TransactGetItemsCommand, TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import { CloudWatchClient, GetMetricDataCommand, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch'
import { DescribeStreamSummaryCommand, GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, PutRecordCommand, PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { InvokeCommand, LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda'
import { BatchExecuteStatementCommand, BeginTransactionCommand, CommitTransactionCommand, ExecuteStatementCommand, RDSDataClient, RollbackTransactionCommand } from '@aws-sdk/client-rds-data'
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3'
import { DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs'
import { describe, expect, it } from 'vitest'
import { makeClients } from '../../../lib/aws/clients'
import { classify, needsBody, signatureScope, type AwsHttpRequest, type Classification, type ClassifyEnv } from '../../../lib/core/rehearse/requests'
import { captureRequest } from '../../support/sdk-capture'

const ACCOUNT = '123456789012'
const REGION = 'eu-west-1'
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }
const env: ClassifyEnv = { account: ACCOUNT }

/** The project's clients, pointed at addresses nothing is asked of (the handler captures first). */
function local() {
  const before = process.env.AWS_REGION
  process.env.AWS_REGION = REGION
  try {
    return makeClients({ dynamodb: 'http://127.0.0.1:9', kinesis: 'http://127.0.0.1:9', s3: 'http://127.0.0.1:9' })
  } finally {
    if (before === undefined) delete process.env.AWS_REGION
    else process.env.AWS_REGION = before
  }
}

const plain = { region: REGION, credentials, maxAttempts: 1 }

async function classifyCommand(client: Parameters<typeof captureRequest>[0], command: unknown, e: ClassifyEnv = env, secure = true): Promise<{ c: Classification; req: AwsHttpRequest }> {
  const req = await captureRequest(client, command, secure)
  const scope = signatureScope(req.headers, req.query)
  expect(scope).toBeDefined()
  return { c: classify(req, scope!, e), req }
}

/** The checks as `action resource` lines. */
async function checks(client: Parameters<typeof captureRequest>[0], command: unknown, e?: ClassifyEnv): Promise<string[]> {
  const { c } = await classifyCommand(client, command, e)
  if (c.kind !== 'classified') throw new Error(`unclassified: ${c.reason}`)
  return c.checks.map((k) => `${k.action} ${k.resource}`)
}

// The project's clients talk to the emulators with the local key pair and us-east-1 unless AWS_REGION says otherwise.
const T = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`

describe('DynamoDB requests', () => {
  const { ddb } = local()
  const key = { pk: { S: 'a' } }
  it('item operations are checked on their table', async () => {
    expect(await checks(ddb, new GetItemCommand({ TableName: 'Items', Key: key }))).toEqual([`dynamodb:GetItem ${T('Items')}`])
    expect(await checks(ddb, new PutItemCommand({ TableName: 'Items', Item: key }))).toEqual([`dynamodb:PutItem ${T('Items')}`])
    expect(await checks(ddb, new DeleteItemCommand({ TableName: 'Items', Key: key }))).toEqual([`dynamodb:DeleteItem ${T('Items')}`])
    expect(await checks(ddb, new DescribeTableCommand({ TableName: 'Items' }))).toEqual([`dynamodb:DescribeTable ${T('Items')}`])
    expect(await checks(ddb, new ScanCommand({ TableName: 'Items' }))).toEqual([`dynamodb:Scan ${T('Items')}`])
  })
  it('an update states its ReturnValues as a condition key', async () => {
    const { c } = await classifyCommand(ddb, new UpdateItemCommand({ TableName: 'Items', Key: key, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': { N: '1' } }, ReturnValues: 'ALL_NEW' }))
    expect(c).toMatchObject({ kind: 'classified', operation: 'UpdateItem', checks: [{ action: 'dynamodb:UpdateItem', resource: T('Items'), context: { 'dynamodb:ReturnValues': 'ALL_NEW', 'aws:RequestedRegion': REGION } }] })
  })
  it('a query of an index is checked on the index; of the table, on the table', async () => {
    expect(await checks(ddb, new QueryCommand({ TableName: 'Items', IndexName: 'byOwner', KeyConditionExpression: 'o = :o', ExpressionAttributeValues: { ':o': { S: 'x' } } }))).toEqual([`dynamodb:Query ${T('Items')}/index/byOwner`])
    expect(await checks(ddb, new QueryCommand({ TableName: 'Items', KeyConditionExpression: 'pk = :o', ExpressionAttributeValues: { ':o': { S: 'x' } } }))).toEqual([`dynamodb:Query ${T('Items')}`])
  })
  it('a table named by its ARN is checked on that ARN', async () => {
    const arn = 'arn:aws:dynamodb:eu-west-1:210987654321:table/Other'
    expect(await checks(ddb, new GetItemCommand({ TableName: arn, Key: key }))).toEqual([`dynamodb:GetItem ${arn}`])
  })
  it('batches are checked once per table', async () => {
    expect(await checks(ddb, new BatchGetItemCommand({ RequestItems: { A: { Keys: [key] }, B: { Keys: [key] } } }))).toEqual([`dynamodb:BatchGetItem ${T('A')}`, `dynamodb:BatchGetItem ${T('B')}`])
    expect(await checks(ddb, new BatchWriteItemCommand({ RequestItems: { A: [{ PutRequest: { Item: key } }], B: [{ DeleteRequest: { Key: key } }] } }))).toEqual([`dynamodb:BatchWriteItem ${T('A')}`, `dynamodb:BatchWriteItem ${T('B')}`])
  })
  it("a transaction is checked per item, with the action of the item's kind", async () => {
    const cmd = new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: 'A', Item: key } },
        { Update: { TableName: 'B', Key: key, UpdateExpression: 'SET n = :n', ExpressionAttributeValues: { ':n': { N: '1' } } } },
        { Delete: { TableName: 'A', Key: { pk: { S: 'b' } } } },
        { ConditionCheck: { TableName: 'C', Key: key, ConditionExpression: 'attribute_exists(pk)' } },
        { Put: { TableName: 'A', Item: { pk: { S: 'c' } } } },
      ],
    })
    expect(await checks(ddb, cmd)).toEqual([`dynamodb:PutItem ${T('A')}`, `dynamodb:UpdateItem ${T('B')}`, `dynamodb:DeleteItem ${T('A')}`, `dynamodb:ConditionCheckItem ${T('C')}`])
    expect(await checks(ddb, new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: 'A', Key: key } }, { Get: { TableName: 'B', Key: key } }] }))).toEqual([`dynamodb:GetItem ${T('A')}`, `dynamodb:GetItem ${T('B')}`])
  })
  it('with the partition key known, item operations and queries of the table carry dynamodb:LeadingKeys', async () => {
    const e: ClassifyEnv = { ...env, partitionKeyOf: (arn) => (arn === T('Items') || arn === T('B') ? 'pk' : undefined) }
    const leading = async (command: unknown) => {
      const { c } = await classifyCommand(ddb, command, e)
      return c.kind === 'classified' ? c.checks.map((k) => k.context['dynamodb:LeadingKeys']) : c.reason
    }
    expect(await leading(new GetItemCommand({ TableName: 'Items', Key: { pk: { S: 'org-1' }, sk: { S: 'x' } } }))).toEqual([['org-1']])
    expect(await leading(new PutItemCommand({ TableName: 'Items', Item: { pk: { S: 'org-2' }, n: { N: '1' } } }))).toEqual([['org-2']])
    expect(await leading(new QueryCommand({ TableName: 'Items', KeyConditionExpression: '#p = :p AND begins_with(sk, :s)', ExpressionAttributeNames: { '#p': 'pk' }, ExpressionAttributeValues: { ':p': { S: 'org-3' }, ':s': { S: 'a' } } }))).toEqual([['org-3']])
    expect(await leading(new QueryCommand({ TableName: 'Items', IndexName: 'byOwner', KeyConditionExpression: 'o = :o', ExpressionAttributeValues: { ':o': { S: 'x' } } }))).toEqual([undefined])
    expect(await leading(new BatchWriteItemCommand({ RequestItems: { Items: [{ PutRequest: { Item: { pk: { S: 'a' } } } }, { DeleteRequest: { Key: { pk: { S: 'b' } } } }], Other: [{ PutRequest: { Item: { pk: { S: 'c' } } } }] } }))).toEqual([['a', 'b'], undefined])
    expect(await leading(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: 'Items', Item: { pk: { S: 't1' } } } }, { Delete: { TableName: 'B', Key: { pk: { S: 't2' } } } }] }))).toEqual([['t1'], ['t2']])
    expect(await leading(new ScanCommand({ TableName: 'Items' }))).toEqual([undefined])
  })
  it('ListTables takes no resource', async () => {
    expect(await checks(ddb, new ListTablesCommand({}))).toEqual(['dynamodb:ListTables *'])
  })
  it('an operation it does not know is unclassified, named', async () => {
    const { c } = await classifyCommand(ddb, new DdbExecuteStatementCommand({ Statement: 'SELECT * FROM Items' }))
    expect(c).toMatchObject({ kind: 'unclassified', service: 'dynamodb', operation: 'ExecuteStatement' })
  })
  it('the request over plain HTTP has aws:SecureTransport false', async () => {
    const req = await captureRequest(ddb, new GetItemCommand({ TableName: 'Items', Key: key }), false)
    const c = classify(req, signatureScope(req.headers, req.query)!, env)
    expect(c.kind === 'classified' && c.checks[0]!.context['aws:SecureTransport']).toBe(false)
  })
})

describe('Kinesis requests', () => {
  const { kinesis } = local()
  const S = (name: string) => `arn:aws:kinesis:${REGION}:${ACCOUNT}:stream/${name}`
  it('stream operations are checked on the stream, named or by ARN', async () => {
    const data = new Uint8Array([1])
    expect(await checks(kinesis, new PutRecordCommand({ StreamName: 'good', Data: data, PartitionKey: 'p' }))).toEqual([`kinesis:PutRecord ${S('good')}`])
    expect(await checks(kinesis, new PutRecordsCommand({ StreamName: 'good', Records: [{ Data: data, PartitionKey: 'p' }] }))).toEqual([`kinesis:PutRecords ${S('good')}`])
    const arn = `arn:aws:kinesis:${REGION}:${ACCOUNT}:stream/raw`
    expect(await checks(kinesis, new PutRecordsCommand({ StreamARN: arn, Records: [{ Data: data, PartitionKey: 'p' }] }))).toEqual([`kinesis:PutRecords ${arn}`])
    expect(await checks(kinesis, new DescribeStreamSummaryCommand({ StreamName: 'good' }))).toEqual([`kinesis:DescribeStreamSummary ${S('good')}`])
    expect(await checks(kinesis, new ListShardsCommand({ StreamName: 'good' }))).toEqual([`kinesis:ListShards ${S('good')}`])
    expect(await checks(kinesis, new GetShardIteratorCommand({ StreamName: 'good', ShardId: 'shardId-000000000000', ShardIteratorType: 'TRIM_HORIZON' }))).toEqual([`kinesis:GetShardIterator ${S('good')}`])
  })
  it('GetRecords is checked on the stream its iterator was issued for, and unclassified for an iterator never seen', async () => {
    const seen = new Map([['it-1', S('good')]])
    expect(await checks(kinesis, new GetRecordsCommand({ ShardIterator: 'it-1' }), { ...env, iteratorStream: (i) => seen.get(i) })).toEqual([`kinesis:GetRecords ${S('good')}`])
    const { c } = await classifyCommand(kinesis, new GetRecordsCommand({ ShardIterator: 'it-2' }), { ...env, iteratorStream: (i) => seen.get(i) })
    expect(c).toMatchObject({ kind: 'unclassified', operation: 'GetRecords' })
  })
  it('ListShards by NextToken alone names no stream: unclassified', async () => {
    const { c } = await classifyCommand(kinesis, new ListShardsCommand({ NextToken: 'tok' }))
    expect(c).toMatchObject({ kind: 'unclassified', operation: 'ListShards' })
  })
})

describe('S3 requests', () => {
  const { s3 } = local() // path-style, as the emulator needs
  const virtual = new S3Client({ ...plain })
  const O = (key: string) => `arn:aws:s3:::data/${key}`
  it('object operations are checked on bucket/key, path-style and virtual-hosted alike', async () => {
    for (const client of [s3, virtual]) {
      expect(await checks(client, new GetObjectCommand({ Bucket: 'data', Key: 'a/b c+é.json' }))).toEqual([`s3:GetObject ${O('a/b c+é.json')}`])
      expect(await checks(client, new PutObjectCommand({ Bucket: 'data', Key: 'x/y', Body: 'hello' }))).toEqual([`s3:PutObject ${O('x/y')}`])
      expect(await checks(client, new DeleteObjectCommand({ Bucket: 'data', Key: 'x/y' }))).toEqual([`s3:DeleteObject ${O('x/y')}`])
      expect(await checks(client, new HeadObjectCommand({ Bucket: 'data', Key: 'x/y' }))).toEqual([`s3:GetObject ${O('x/y')}`])
      expect(await checks(client, new GetObjectCommand({ Bucket: 'data', Key: 'x/y', VersionId: 'v1' }))).toEqual([`s3:GetObjectVersion ${O('x/y')}`])
    }
    const req = await captureRequest(virtual, new GetObjectCommand({ Bucket: 'data', Key: 'k' }))
    expect(req.host).toMatch(/^data\.s3\./) // the virtual-hosted form was the one sent
  })
  it('an endpoint given by address is path-style; one named localhost is virtual-hosted on bucket.localhost', async () => {
    const byAddress = new S3Client({ ...plain, endpoint: 'http://127.0.0.1:9' })
    const byName = new S3Client({ ...plain, endpoint: 'http://localhost:9' })
    expect((await captureRequest(byAddress, new GetObjectCommand({ Bucket: 'data', Key: 'k' }))).path).toBe('/data/k')
    expect((await captureRequest(byName, new GetObjectCommand({ Bucket: 'data', Key: 'k' }))).host).toBe('data.localhost:9')
    for (const client of [byAddress, byName]) {
      expect(await checks(client, new GetObjectCommand({ Bucket: 'data', Key: 'k/l' }))).toEqual([`s3:GetObject ${O('k/l')}`])
      expect(await checks(client, new ListObjectsV2Command({ Bucket: 'data' }))).toEqual(['s3:ListBucket arn:aws:s3:::data'])
    }
  })
  it('ListObjectsV2 is s3:ListBucket on the bucket, with its prefix as s3:prefix; HeadBucket is s3:ListBucket', async () => {
    for (const client of [s3, virtual]) {
      const { c } = await classifyCommand(client, new ListObjectsV2Command({ Bucket: 'data', Prefix: 'archive/', MaxKeys: 10 }))
      expect(c).toMatchObject({ kind: 'classified', operation: 'ListObjectsV2', checks: [{ action: 's3:ListBucket', resource: 'arn:aws:s3:::data', context: { 's3:prefix': 'archive/', 's3:max-keys': 10 } }] })
      expect(await checks(client, new HeadBucketCommand({ Bucket: 'data' }))).toEqual(['s3:ListBucket arn:aws:s3:::data'])
    }
    expect(await checks(s3, new CreateBucketCommand({ Bucket: 'data' }))).toEqual(['s3:CreateBucket arn:aws:s3:::data'])
  })
  it('DeleteObjects is one s3:DeleteObject per key, read from its body', async () => {
    const cmd = new DeleteObjectsCommand({ Bucket: 'data', Delete: { Objects: [{ Key: 'a&b<c>.txt' }, { Key: 'd/e' }, { Key: 'f', VersionId: 'v' }] } })
    const req = await captureRequest(s3, cmd)
    expect(needsBody('s3', req.method, req.query)).toBe(true)
    expect(await checks(s3, cmd)).toEqual([`s3:DeleteObject ${O('a&b<c>.txt')}`, `s3:DeleteObject ${O('d/e')}`, `s3:DeleteObjectVersion ${O('f')}`])
  })
  it("a multipart upload's steps are s3:PutObject, its abort s3:AbortMultipartUpload", async () => {
    expect(await checks(s3, new CreateMultipartUploadCommand({ Bucket: 'data', Key: 'big' }))).toEqual([`s3:PutObject ${O('big')}`])
    expect(await checks(s3, new UploadPartCommand({ Bucket: 'data', Key: 'big', UploadId: 'u', PartNumber: 1, Body: 'x' }))).toEqual([`s3:PutObject ${O('big')}`])
    expect(await checks(s3, new CompleteMultipartUploadCommand({ Bucket: 'data', Key: 'big', UploadId: 'u', MultipartUpload: { Parts: [{ PartNumber: 1, ETag: 'e' }] } }))).toEqual([`s3:PutObject ${O('big')}`])
    expect(await checks(s3, new AbortMultipartUploadCommand({ Bucket: 'data', Key: 'big', UploadId: 'u' }))).toEqual([`s3:AbortMultipartUpload ${O('big')}`])
  })
  it('a copy also reads its source; an ACL header also needs s3:PutObjectAcl', async () => {
    expect(await checks(s3, new CopyObjectCommand({ Bucket: 'data', Key: 'to', CopySource: 'other/from%20here' }))).toEqual([`s3:PutObject ${O('to')}`, 's3:GetObject arn:aws:s3:::other/from here'])
    expect(await checks(s3, new PutObjectCommand({ Bucket: 'data', Key: 'k', Body: 'x', ACL: 'public-read' }))).toEqual([`s3:PutObject ${O('k')}`, `s3:PutObjectAcl ${O('k')}`])
  })
  it('an upload is classified without reading its body', async () => {
    const req = await captureRequest(s3, new PutObjectCommand({ Bucket: 'data', Key: 'k', Body: 'x' }))
    expect(needsBody('s3', req.method, req.query)).toBe(false)
    expect(classify({ ...req, body: new Uint8Array() }, signatureScope(req.headers, req.query)!, env)).toMatchObject({ kind: 'classified', operation: 'PutObject' })
  })
})

describe('SQS requests (JSON protocol)', () => {
  const aws = new SQSClient({ ...plain })
  const localSqs = new SQSClient({ ...plain, endpoint: 'http://127.0.0.1:4566' })
  const Q = 'arn:aws:sqs:eu-west-1:123456789012:recover-runs'
  it('queue operations are checked on the queue of the URL, AWS-style or a local server', async () => {
    for (const [sqs, url] of [[aws, `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/recover-runs`], [localSqs, `http://127.0.0.1:4566/${ACCOUNT}/recover-runs`]] as const) {
      expect(await checks(sqs, new SendMessageCommand({ QueueUrl: url, MessageBody: '{}' }))).toEqual([`sqs:SendMessage ${Q}`])
      expect(await checks(sqs, new ReceiveMessageCommand({ QueueUrl: url }))).toEqual([`sqs:ReceiveMessage ${Q}`])
      expect(await checks(sqs, new DeleteMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: '1', ReceiptHandle: 'r' }] }))).toEqual([`sqs:DeleteMessage ${Q}`])
    }
    expect(await checks(aws, new GetQueueUrlCommand({ QueueName: 'recover-runs' }))).toEqual([`sqs:GetQueueUrl ${Q}`])
  })
})

describe('RDS Data API requests', () => {
  const rds = new RDSDataClient({ ...plain })
  const cluster = `arn:aws:rds:${REGION}:${ACCOUNT}:cluster:search`
  const secret = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:search-AbCdEf`
  const both = (action: string) => [`rds-data:${action} ${cluster}`, `secretsmanager:GetSecretValue ${secret}`]
  it('each operation is checked on the cluster, and the secret is read as the caller', async () => {
    const base = { resourceArn: cluster, secretArn: secret }
    expect(await checks(rds, new ExecuteStatementCommand({ ...base, sql: 'SELECT 1', database: 'floe' }))).toEqual(both('ExecuteStatement'))
    expect(await checks(rds, new BatchExecuteStatementCommand({ ...base, sql: 'SELECT 1' }))).toEqual(both('BatchExecuteStatement'))
    expect(await checks(rds, new BeginTransactionCommand({ ...base }))).toEqual(both('BeginTransaction'))
    expect(await checks(rds, new CommitTransactionCommand({ ...base, transactionId: 't' }))).toEqual(both('CommitTransaction'))
    expect(await checks(rds, new RollbackTransactionCommand({ ...base, transactionId: 't' }))).toEqual(both('RollbackTransaction'))
  })
})

describe('CloudWatch requests', () => {
  const cw = new CloudWatchClient({ ...plain })
  it('PutMetricData carries its namespace as cloudwatch:namespace; GetMetricData takes no resource', async () => {
    const { c } = await classifyCommand(cw, new PutMetricDataCommand({ Namespace: 'Floe', MetricData: [{ MetricName: 'm', Value: 1 }] }))
    expect(c).toMatchObject({ kind: 'classified', checks: [{ action: 'cloudwatch:PutMetricData', resource: '*', context: { 'cloudwatch:namespace': 'Floe' } }] })
    expect(await checks(cw, new GetMetricDataCommand({ MetricDataQueries: [], StartTime: new Date(0), EndTime: new Date(1000) }))).toEqual(['cloudwatch:GetMetricData *'])
  })
})

describe('Lambda requests', () => {
  const lambda = new LambdaClient({ ...plain })
  const F = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:recover`
  it('Invoke is lambda:InvokeFunction on the function, by name, ARN or with a qualifier', async () => {
    expect(await checks(lambda, new InvokeCommand({ FunctionName: 'recover' }))).toEqual([`lambda:InvokeFunction ${F}`])
    expect(await checks(lambda, new InvokeCommand({ FunctionName: F }))).toEqual([`lambda:InvokeFunction ${F}`])
    expect(await checks(lambda, new InvokeCommand({ FunctionName: 'recover', Qualifier: 'live' }))).toEqual([`lambda:InvokeFunction ${F}:live`])
  })
  it('event source mappings: listing takes no resource, an update is checked on the mapping', async () => {
    const { c } = await classifyCommand(lambda, new ListEventSourceMappingsCommand({ FunctionName: 'enrich' }))
    expect(c).toMatchObject({ kind: 'classified', checks: [{ action: 'lambda:ListEventSourceMappings', resource: '*', context: { 'lambda:FunctionArn': `arn:aws:lambda:${REGION}:${ACCOUNT}:function:enrich` } }] })
    const mappings = new Map([['abc-1', `arn:aws:lambda:${REGION}:${ACCOUNT}:function:enrich`]])
    const update = await classifyCommand(lambda, new UpdateEventSourceMappingCommand({ UUID: 'abc-1', Enabled: false }), { ...env, eventSourceMappingFunction: (u) => mappings.get(u) })
    // The stacks grant this action on any mapping under a lambda:FunctionArn condition: the key must be there.
    expect(update.c).toMatchObject({ kind: 'classified', operation: 'UpdateEventSourceMapping', checks: [{ action: 'lambda:UpdateEventSourceMapping', resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:event-source-mapping:abc-1`, context: { 'lambda:FunctionArn': mappings.get('abc-1') } }] })
  })
})

describe('requests no client here sends, built by hand', () => {
  const req = (headers: Record<string, string>, body: string): AwsHttpRequest => ({ method: 'POST', host: 'h', path: '/', query: '', headers, body: new TextEncoder().encode(body), secure: true })
  const lines = (c: Classification) => (c.kind === 'classified' ? c.checks.map((k) => `${k.action} ${k.resource}`) : [c.reason])
  const scope = (service: string) => ({ region: REGION, service })
  it('DynamoDB Streams: on the stream ARN, GetRecords by the iterator it was issued for', () => {
    const stream = `${T('Items')}/stream/2026-01-01T00:00:00.000`
    const target = (op: string) => ({ 'x-amz-target': `DynamoDBStreams_20120810.${op}`, 'content-type': 'application/x-amz-json-1.0' })
    expect(lines(classify(req(target('GetShardIterator'), JSON.stringify({ StreamArn: stream, ShardId: 's', ShardIteratorType: 'LATEST' })), scope('dynamodb'), env))).toEqual([`dynamodb:GetShardIterator ${stream}`])
    expect(lines(classify(req(target('GetRecords'), JSON.stringify({ ShardIterator: 'i' })), scope('dynamodb'), { ...env, iteratorStream: () => stream }))).toEqual([`dynamodb:GetRecords ${stream}`])
    expect(classify(req(target('GetRecords'), JSON.stringify({ ShardIterator: 'i' })), scope('dynamodb'), env).kind).toBe('unclassified')
  })
  it('the query protocol (form-encoded) of SQS and CloudWatch', () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }
    const url = encodeURIComponent(`https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/q1`)
    expect(lines(classify(req(form, `Action=SendMessageBatch&QueueUrl=${url}&Version=2012-11-05`), scope('sqs'), env))).toEqual([`sqs:SendMessage arn:aws:sqs:${REGION}:${ACCOUNT}:q1`])
    const put = classify(req(form, 'Action=PutMetricData&Namespace=Floe%2FCollector&Version=2010-08-01'), scope('monitoring'), env)
    expect(put).toMatchObject({ kind: 'classified', checks: [{ action: 'cloudwatch:PutMetricData', resource: '*', context: { 'cloudwatch:namespace': 'Floe/Collector' } }] })
  })
})

describe('the signature scope and unknown services', () => {
  it('reads the access key, region and service of the Authorization header and of a presigned query', () => {
    expect(signatureScope({ authorization: 'AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/kinesis/aws4_request, SignedHeaders=host, Signature=ab', 'x-amz-security-token': 'tok' }, '')).toEqual({ accessKeyId: 'AKID', region: 'eu-west-1', service: 'kinesis', sessionToken: 'tok' })
    expect(signatureScope({}, 'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=ab')).toEqual({ accessKeyId: 'AKID', region: 'us-east-1', service: 's3' })
    expect(signatureScope({ authorization: 'AWS AKID:sig' }, '')).toBeUndefined()
    expect(signatureScope({}, '')).toBeUndefined()
  })
  it('a service it does not classify is unclassified, and so is a malformed body', () => {
    const req: AwsHttpRequest = { method: 'POST', host: 'sts.amazonaws.com', path: '/', query: '', headers: {}, body: new TextEncoder().encode('Action=GetCallerIdentity'), secure: true }
    expect(classify(req, { region: 'us-east-1', service: 'sts' }, env)).toMatchObject({ kind: 'unclassified', service: 'sts' })
    const bad: AwsHttpRequest = { ...req, headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem' }, body: new TextEncoder().encode('{not json') }
    expect(classify(bad, { region: 'us-east-1', service: 'dynamodb' }, env)).toMatchObject({ kind: 'unclassified', reason: expect.stringMatching(/malformed/) })
  })
})
