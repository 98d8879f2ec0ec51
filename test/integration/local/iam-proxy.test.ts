/**
 * The authorizing proxy in front of the real emulators (DynamoDB Local,
 * kinesalite, s3rver): real SDK calls, signed with each function's own key,
 * are allowed through to the emulator or refused as AWS refuses them, and
 * every check lands in the call log. The evaluator is a plain allow list of
 * `action resource` lines (IAM's evaluation is tested on its own).
 */
import { randomBytes } from 'node:crypto'
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net'
import { CreateTableCommand, DynamoDBClient, ExecuteStatementCommand, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb'
import { CreateStreamCommand, DescribeStreamSummaryCommand, GetRecordsCommand, GetShardIteratorCommand, KinesisClient, PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startIamProxy, type Authorize, type AuthorizeRequest, type IamProxy, type ProxyIdentity } from '../../../lib/local/iam-proxy'
import { readStream } from '../../support/streams'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

const ACCOUNT = '000000000000'
const REGION = 'us-east-1'
const prefix = uniquePrefix('iam')
const TABLE = `${prefix}-items`
const STREAM = `${prefix}-good`
const BUCKET = `${prefix}-data`
const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE}`
const STREAM_ARN = `arn:aws:kinesis:${REGION}:${ACCOUNT}:stream/${STREAM}`

/** The allow list each identity's "policy" is. */
const identities = new Map<string, ProxyIdentity<readonly string[]>>([
  ['AKIACOLLECTOR', {
    name: 'Collector',
    roleName: 'CollectorRole',
    policies: [
      `dynamodb:PutItem ${TABLE_ARN}`,
      `dynamodb:Query ${TABLE_ARN}/index/byOwner`,
      `kinesis:PutRecords ${STREAM_ARN}`,
      `kinesis:GetShardIterator ${STREAM_ARN}`,
      `kinesis:GetRecords ${STREAM_ARN}`,
      `s3:PutObject arn:aws:s3:::${BUCKET}/in/a.json`,
      `s3:PutObject arn:aws:s3:::${BUCKET}/in/big.bin`,
      `s3:GetObject arn:aws:s3:::${BUCKET}/in/big.bin`,
      `s3:ListBucket arn:aws:s3:::${BUCKET}`,
    ],
  }],
  ['AKIAENRICH', {
    name: 'Enrich',
    policies: [`dynamodb:Query ${TABLE_ARN}`, `kinesis:GetShardIterator ${STREAM_ARN}`],
  }],
])

/** What the evaluator was asked, in order. */
const authorized: AuthorizeRequest[] = []
const authorize: Authorize<readonly string[]> = (identity, r) => {
  authorized.push(r)
  return { decision: identity.policies.includes(`${r.action} ${r.resource}`) ? 'allowed' : 'implicit-deny' }
}

let proxies: { dynamodb: IamProxy; kinesis: IamProxy; s3: IamProxy }

function clientsFor(accessKeyId: string) {
  const base = { region: REGION, credentials: { accessKeyId, secretAccessKey: `secret-of-${accessKeyId}` }, maxAttempts: 1 }
  return {
    ddb: new DynamoDBClient({ ...base, endpoint: proxies.dynamodb.url }),
    kinesis: new KinesisClient({ ...base, endpoint: proxies.kinesis.url, requestHandler: new NodeHttpHandler({ connectionTimeout: 2000 }) }),
    s3: new S3Client({ ...base, endpoint: proxies.s3.url, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }),
  }
}

/** The error a call fails with (or a failure of the test when it succeeds). */
async function failure(p: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('the call succeeded')
}

const direct = () => testClients()

beforeAll(async () => {
  const { ddb, kinesis, s3 } = direct()
  await ddb.send(new CreateTableCommand({
    TableName: TABLE,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'owner', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [{ IndexName: 'byOwner', KeySchema: [{ AttributeName: 'owner', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
  }))
  await kinesis.send(new CreateStreamCommand({ StreamName: STREAM, ShardCount: 1 }))
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }))
  for (;;) {
    const s = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: STREAM }))
    if (s.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') break
    await new Promise((r) => setTimeout(r, 100)) // kinesalite creates a stream after a delay of its own
  }
  const e = sharedEndpoints()
  const common = { identities, authorize, account: ACCOUNT, region: REGION }
  proxies = {
    dynamodb: await startIamProxy({ ...common, target: e.dynamodb, partitionKeyOf: (arn) => (arn === TABLE_ARN ? 'pk' : undefined) }),
    kinesis: await startIamProxy({ ...common, target: e.kinesis }),
    // s3rver checks signatures against its own key pair: the proxy signs again with it.
    s3: await startIamProxy({ ...common, target: e.s3, upstreamCredentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } }),
  }
}, 60_000)

afterAll(async () => {
  if (proxies) await Promise.all(Object.values(proxies).map((p) => p.close()))
})

const allCalls = () => [...proxies.dynamodb.calls, ...proxies.kinesis.calls, ...proxies.s3.calls]

describe('the IAM proxy in front of DynamoDB Local', () => {
  it('an allowed write reaches the table; a denied one fails with AccessDeniedException, is logged, and writes nothing', async () => {
    const collector = clientsFor('AKIACOLLECTOR')
    await collector.ddb.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'a' }, owner: { S: 'o1' } } }))
    expect((await direct().ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' } } }))).Item?.owner?.S).toBe('o1')

    const enrich = clientsFor('AKIAENRICH')
    const err = await failure(enrich.ddb.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'b' }, owner: { S: 'o1' } } })))
    expect(err.name).toBe('AccessDeniedException')
    expect(err.message).toBe(`User: arn:aws:sts::${ACCOUNT}:assumed-role/Enrich/Enrich is not authorized to perform: dynamodb:PutItem on resource: ${TABLE_ARN} because no identity-based policy allows the dynamodb:PutItem action`)
    expect(err.$metadata?.httpStatusCode).toBe(400)
    expect((await direct().ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'b' } } }))).Item).toBeUndefined()
    expect(proxies.dynamodb.calls).toContainEqual(expect.objectContaining({ function: 'Enrich', action: 'dynamodb:PutItem', resource: TABLE_ARN, allowed: false }))
    expect(proxies.dynamodb.calls).toContainEqual(expect.objectContaining({ function: 'Collector', action: 'dynamodb:PutItem', resource: TABLE_ARN, allowed: true }))
    expect(authorized.find((r) => r.action === 'dynamodb:PutItem')?.context).toMatchObject({
      'dynamodb:LeadingKeys': ['a'],
      'aws:PrincipalArn': `arn:aws:iam::${ACCOUNT}:role/CollectorRole`,
      'aws:SecureTransport': true,
    })
  })

  it('a query of an index is authorized on the index: allowed for one role, denied for the one allowed only the table', async () => {
    await direct().ddb.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'q' }, owner: { S: 'o2' } } }))
    const q = new QueryCommand({ TableName: TABLE, IndexName: 'byOwner', KeyConditionExpression: '#o = :o', ExpressionAttributeNames: { '#o': 'owner' }, ExpressionAttributeValues: { ':o': { S: 'o2' } } })
    const res = await clientsFor('AKIACOLLECTOR').ddb.send(q)
    expect(res.Items?.map((i) => i.pk?.S)).toEqual(['q'])
    const err = await failure(clientsFor('AKIAENRICH').ddb.send(q))
    expect(err.name).toBe('AccessDeniedException')
    expect(proxies.dynamodb.calls).toContainEqual(expect.objectContaining({ function: 'Enrich', action: 'dynamodb:Query', resource: `${TABLE_ARN}/index/byOwner`, allowed: false }))
  })

  it('a request it cannot classify is refused, logged as unclassified, and never reaches the table', async () => {
    const err = await failure(clientsFor('AKIACOLLECTOR').ddb.send(new ExecuteStatementCommand({ Statement: `INSERT INTO "${TABLE}" VALUE {'pk': 'p', 'owner': 'o3'}` })))
    expect(err.name).toBe('AccessDeniedException')
    expect((await direct().ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'p' } } }))).Item).toBeUndefined()
    expect(proxies.dynamodb.calls.at(-1)).toMatchObject({ function: 'Collector', action: 'dynamodb:ExecuteStatement', allowed: false, decision: 'unclassified' })
  })

  it('a body too large to read for authorization is refused with 413, unchecked and unforwarded', async () => {
    const small = await startIamProxy({ identities, authorize, account: ACCOUNT, region: REGION, target: sharedEndpoints().dynamodb, maxBody: 1024 })
    try {
      const ddb = new DynamoDBClient({ region: REGION, credentials: { accessKeyId: 'AKIACOLLECTOR', secretAccessKey: 's' }, maxAttempts: 1, endpoint: small.url })
      const err = await failure(ddb.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'large' }, owner: { S: 'x'.repeat(2048) } } })))
      expect(err.$metadata?.httpStatusCode).toBe(413)
      expect(small.calls).toEqual([])
      expect((await direct().ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'large' } } }))).Item).toBeUndefined()
      ddb.destroy()
    } finally {
      await small.close()
    }
  })

  it('an unknown access key is refused as AWS refuses one, before any check', async () => {
    const before = allCalls().length
    const err = await failure(clientsFor('AKIASTRANGER').ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' } } })))
    expect(err.name).toBe('UnrecognizedClientException')
    expect(allCalls().length).toBe(before)
  })
})

describe('the IAM proxy in front of kinesalite', () => {
  it('PutRecords of the allowed role lands on the stream; of the other, fails with AccessDeniedException and writes nothing', async () => {
    const record = (s: string) => ({ Data: new TextEncoder().encode(s), PartitionKey: 'p' })
    const ok = await clientsFor('AKIACOLLECTOR').kinesis.send(new PutRecordsCommand({ StreamName: STREAM, Records: [record('one'), record('two')] }))
    expect(ok.FailedRecordCount).toBe(0)
    const err = await failure(clientsFor('AKIAENRICH').kinesis.send(new PutRecordsCommand({ StreamName: STREAM, Records: [record('three')] })))
    expect(err.name).toBe('AccessDeniedException')
    expect((await readStream(direct().kinesis, STREAM)).map(String)).toEqual(['one', 'two'])
    expect(proxies.kinesis.calls).toContainEqual(expect.objectContaining({ function: 'Enrich', action: 'kinesis:PutRecords', resource: STREAM_ARN, allowed: false }))
  })

  it("a Kinesis client with the SDK's default handler (cleartext HTTP/2) is served and checked alike", async () => {
    const base = { region: REGION, maxAttempts: 1, endpoint: proxies.kinesis.url }
    const h2 = (accessKeyId: string) => new KinesisClient({ ...base, credentials: { accessKeyId, secretAccessKey: 's' } })
    const collector = h2('AKIACOLLECTOR')
    const enrich = h2('AKIAENRICH')
    try {
      expect((await failure(collector.send(new DescribeStreamSummaryCommand({ StreamName: STREAM })))).name).toBe('AccessDeniedException')
      const err = await failure(enrich.send(new PutRecordsCommand({ StreamName: STREAM, Records: [{ Data: new Uint8Array([1]), PartitionKey: 'p' }] })))
      expect(err.name).toBe('AccessDeniedException')
      const it = await collector.send(new GetShardIteratorCommand({ StreamName: STREAM, ShardId: 'shardId-000000000000', ShardIteratorType: 'LATEST' }))
      expect(it.ShardIterator).toBeTruthy()
    } finally {
      collector.destroy()
      enrich.destroy()
    }
  })

  it('GetRecords is authorized on the stream its iterator was issued for', async () => {
    const collector = clientsFor('AKIACOLLECTOR').kinesis
    const it = (await collector.send(new GetShardIteratorCommand({ StreamName: STREAM, ShardId: 'shardId-000000000000', ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator
    const page = await collector.send(new GetRecordsCommand({ ShardIterator: it }))
    expect(page.Records?.map((r) => Buffer.from(r.Data!).toString())).toEqual(['one', 'two'])
    // The next iterator is known too.
    await collector.send(new GetRecordsCommand({ ShardIterator: page.NextShardIterator }))

    const enrich = clientsFor('AKIAENRICH').kinesis
    const it2 = (await enrich.send(new GetShardIteratorCommand({ StreamName: STREAM, ShardId: 'shardId-000000000000', ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator
    const err = await failure(enrich.send(new GetRecordsCommand({ ShardIterator: it2 })))
    expect(err.name).toBe('AccessDeniedException')
    expect(proxies.kinesis.calls.filter((c) => c.action === 'kinesis:GetRecords').map((c) => [c.function, c.resource, c.allowed])).toEqual([
      ['Collector', STREAM_ARN, true],
      ['Collector', STREAM_ARN, true],
      ['Enrich', STREAM_ARN, false],
    ])
  })
})

describe('the IAM proxy in front of s3rver', () => {
  it('an allowed upload and listing go through; the other role gets AccessDenied and nothing is written', async () => {
    const collector = clientsFor('AKIACOLLECTOR').s3
    await collector.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'in/a.json', Body: '{"a":1}' }))
    const listed = await collector.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'in/' }))
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['in/a.json'])

    const enrich = clientsFor('AKIAENRICH').s3
    const put = await failure(enrich.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'in/b.json', Body: '{}' })))
    expect(put.name).toBe('AccessDenied')
    expect(put.$metadata?.httpStatusCode).toBe(403)
    expect(put.message).toMatch(/Enrich is not authorized to perform: s3:PutObject on resource: arn:aws:s3:::.*\/in\/b\.json/)
    const list = await failure(enrich.send(new ListObjectsV2Command({ Bucket: BUCKET })))
    expect(list.name).toBe('AccessDenied')
    expect((await failure(direct().s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'in/b.json' })))).name).toBe('NotFound')
    expect(proxies.s3.calls).toContainEqual(expect.objectContaining({ function: 'Enrich', action: 's3:PutObject', resource: `arn:aws:s3:::${BUCKET}/in/b.json`, allowed: false }))
    expect(proxies.s3.calls).toContainEqual(expect.objectContaining({ function: 'Enrich', action: 's3:ListBucket', resource: `arn:aws:s3:::${BUCKET}`, allowed: false }))
  })

  it('an upload is streamed through intact', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 17)
    const collector = clientsFor('AKIACOLLECTOR').s3
    await collector.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'in/big.bin', Body: body }))
    const got = await collector.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'in/big.bin' }))
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true)
  })

  it('an upload is let to send its body only once it is allowed (Expect: 100-continue)', async () => {
    // A hop between client and proxy that keeps what the proxy answered on each connection.
    const answers: string[] = []
    const hop = createNetServer((c) => {
      const p = connect(Number(new URL(proxies.s3.url).port), '127.0.0.1')
      const i = answers.push('') - 1
      p.on('data', (d: Buffer) => (answers[i] += d.toString('latin1')))
      c.pipe(p).pipe(c)
      c.on('error', () => p.destroy())
      p.on('error', () => c.destroy())
    })
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', () => r()))
    const client = (accessKeyId: string) =>
      new S3Client({ region: REGION, credentials: { accessKeyId, secretAccessKey: 's' }, maxAttempts: 1, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', endpoint: `http://127.0.0.1:${(hop.address() as AddressInfo).port}` })
    const enrich = client('AKIAENRICH')
    const collector = client('AKIACOLLECTOR')
    try {
      const body = randomBytes(2 * 1024 * 1024) // the size from which the S3 client asks first
      const err = await failure(enrich.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'in/refused.bin', Body: body })))
      expect(err.name).toBe('AccessDenied')
      expect(answers).toHaveLength(1)
      expect(answers[0]).toMatch(/^HTTP\/1\.1 403 /) // refused outright: never told to go on
      await collector.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'in/big.bin', Body: body }))
      expect(answers[1]).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
    } finally {
      enrich.destroy()
      collector.destroy()
      hop.close()
    }
  })

  it('an unknown access key gets InvalidAccessKeyId', async () => {
    const err = await failure(clientsFor('AKIASTRANGER').s3.send(new ListObjectsV2Command({ Bucket: BUCKET })))
    expect(err.name).toBe('InvalidAccessKeyId')
  })
})
