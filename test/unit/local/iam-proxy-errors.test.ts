/**
 * The proxy's refusals, read by each service's own SDK client: a tiny
 * local server answers every request with the refusal, and the error the
 * SDK raises is the one it raises against AWS.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { CloudWatchClient, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch'
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb'
import { KinesisClient, PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda'
import { ExecuteStatementCommand, RDSDataClient } from '@aws-sdk/client-rds-data'
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signatureScope } from '../../../lib/core/rehearse/requests'
import { deniedMessage, refusal, type Refusal } from '../../../lib/local/iam-proxy-errors'

let server: Server
let url: string
let kind: Refusal = 'access-denied'
const MESSAGE = deniedMessage('arn:aws:sts::123456789012:assumed-role/R/F', 'x:Y', 'arn:aws:x:::z', false)

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const scope = signatureScope({ authorization: req.headers.authorization }, '')
      const a = refusal(scope!.service, req.method ?? 'GET', kind, MESSAGE)
      res.writeHead(a.status, a.headers)
      res.end(a.body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const base = () => ({ region: 'us-east-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, endpoint: url })

async function errorOf(p: Promise<unknown>): Promise<{ name: string; message: string; status?: number }> {
  try {
    await p
  } catch (e) {
    const err = e as Error & { $metadata?: { httpStatusCode?: number } }
    return { name: err.name, message: err.message, status: err.$metadata?.httpStatusCode }
  }
  throw new Error('the call succeeded')
}

const calls = () => ({
  dynamodb: () => new DynamoDBClient(base()).send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } })),
  kinesis: () => new KinesisClient({ ...base(), requestHandler: new NodeHttpHandler() }).send(new PutRecordsCommand({ StreamName: 's', Records: [{ Data: new Uint8Array([1]), PartitionKey: 'p' }] })),
  sqs: () => new SQSClient(base()).send(new SendMessageCommand({ QueueUrl: `${url}/123456789012/q`, MessageBody: 'x' })),
  cloudwatch: () => new CloudWatchClient(base()).send(new PutMetricDataCommand({ Namespace: 'N', MetricData: [{ MetricName: 'm', Value: 1 }] })),
  rdsData: () => new RDSDataClient(base()).send(new ExecuteStatementCommand({ resourceArn: 'arn:c', secretArn: 'arn:s', sql: 'SELECT 1' })),
  lambda: () => new LambdaClient(base()).send(new InvokeCommand({ FunctionName: 'f' })),
  s3: () => new S3Client({ ...base(), forcePathStyle: true }).send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: 'x' })),
})

describe('refusals as the SDK reads them', () => {
  it('a denied call is AccessDeniedException on the JSON and REST-JSON services, AccessDenied on S3 and the query-compatible ones, with the message', async () => {
    kind = 'access-denied'
    const c = calls()
    const got: Record<string, unknown> = {}
    for (const [k, f] of Object.entries(c)) got[k] = await errorOf(f())
    expect(got).toEqual({
      dynamodb: { name: 'AccessDeniedException', message: MESSAGE, status: 400 },
      kinesis: { name: 'AccessDeniedException', message: MESSAGE, status: 400 },
      sqs: { name: 'AccessDenied', message: MESSAGE, status: 403 },
      cloudwatch: { name: 'AccessDenied', message: MESSAGE, status: 403 },
      rdsData: { name: 'AccessDeniedException', message: MESSAGE, status: 403 },
      lambda: { name: 'AccessDeniedException', message: MESSAGE, status: 403 },
      s3: { name: 'AccessDenied', message: MESSAGE, status: 403 },
    })
  })

  it('a HEAD of an object is refused with a bare 403, as S3 does', async () => {
    kind = 'access-denied'
    const e = await errorOf(new S3Client({ ...base(), forcePathStyle: true }).send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' })))
    expect(e.status).toBe(403)
  })

  it('an unknown key is UnrecognizedClientException (InvalidAccessKeyId on S3)', async () => {
    kind = 'unknown-key'
    const c = calls()
    expect((await errorOf(c.dynamodb())).name).toBe('UnrecognizedClientException')
    expect((await errorOf(c.kinesis())).name).toBe('UnrecognizedClientException')
    expect((await errorOf(c.s3())).name).toBe('InvalidAccessKeyId')
    expect((await errorOf(c.rdsData())).name).toBe('UnrecognizedClientException')
  })
})
