/**
 * Creates on the local emulators the data resources a resource plan reads
 * from an assembly's templates (lib/core/rehearse/resource-plan.ts):
 * DynamoDB tables (keys, indexes, TTL, stream, billing), Kinesis streams
 * (shards, retention) and S3 buckets (versioning). Queues go to the port
 * given for them (an SQS endpoint), else they are listed as not created.
 * Each outcome is read back from the emulator, not assumed.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb'
import { CreateStreamCommand, DescribeStreamSummaryCommand, IncreaseStreamRetentionPeriodCommand, ResourceInUseException as StreamInUse, type KinesisClient } from '@aws-sdk/client-kinesis'
import { CreateBucketCommand, HeadBucketCommand, PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3'
import type { BucketPlan, IndexPlan, QueuePlan, ResourcePlan, StreamPlan, TablePlan } from '../../core/rehearse/resource-plan'

export interface RehearsalClients {
  readonly ddb: DynamoDBClient
  readonly kinesis: KinesisClient
  readonly s3: S3Client
}

export interface CreateOptions {
  /** Creates one queue (with its redrive) on an SQS endpoint; without it, queues are reported as not created. */
  readonly createQueue?: (q: QueuePlan) => Promise<void>
  readonly log?: (line: string) => void
}

export interface Created {
  readonly kind: 'table' | 'stream' | 'bucket' | 'queue'
  readonly stack: string
  readonly logicalId: string
  readonly name: string
  /** False when it was already there (and kept). */
  readonly created: boolean
}

export interface CreateOutcome {
  readonly created: readonly Created[]
  readonly failed: readonly { readonly kind: Created['kind']; readonly stack: string; readonly logicalId: string; readonly name: string; readonly problem: string }[]
}

/** An index of the plan as CreateTable takes it. */
function index(i: IndexPlan) {
  const { ProjectionType, NonKeyAttributes } = i.Projection
  return { IndexName: i.IndexName, KeySchema: [...i.KeySchema], Projection: { ProjectionType, ...(NonKeyAttributes ? { NonKeyAttributes: [...NonKeyAttributes] } : {}) } }
}

async function createTable(ddb: DynamoDBClient, t: TablePlan): Promise<boolean> {
  // Local emulators need throughput for a provisioned table; its figure does not matter locally.
  const throughput = t.billingMode === 'PROVISIONED' ? { ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } } : {}
  let fresh = true
  try {
    await ddb.send(new CreateTableCommand({
      TableName: t.name,
      BillingMode: t.billingMode,
      ...throughput,
      KeySchema: [...t.keySchema],
      AttributeDefinitions: [...t.attributeDefinitions],
      ...(t.globalIndexes.length ? { GlobalSecondaryIndexes: t.globalIndexes.map((i) => ({ ...index(i), ...throughput })) } : {}),
      ...(t.localIndexes.length ? { LocalSecondaryIndexes: t.localIndexes.map(index) } : {}),
      ...(t.streamViewType ? { StreamSpecification: { StreamEnabled: true, StreamViewType: t.streamViewType as 'NEW_IMAGE' } } : {}),
    }))
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err
    fresh = false
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: t.name }))
    if (JSON.stringify(Table?.KeySchema) !== JSON.stringify(t.keySchema)) throw new Error(`exists with key schema ${JSON.stringify(Table?.KeySchema)}, the template declares ${JSON.stringify(t.keySchema)}`)
  }
  await waitUntilTableExists({ client: ddb, maxWaitTime: 60, minDelay: 0.05, maxDelay: 0.2 }, { TableName: t.name })
  if (t.ttlAttribute) {
    const ttl = await ddb.send(new DescribeTimeToLiveCommand({ TableName: t.name }))
    if (ttl.TimeToLiveDescription?.AttributeName !== t.ttlAttribute) {
      await ddb.send(new UpdateTimeToLiveCommand({ TableName: t.name, TimeToLiveSpecification: { AttributeName: t.ttlAttribute, Enabled: true } }))
    }
  }
  return fresh
}

async function createStream(kinesis: KinesisClient, s: StreamPlan): Promise<boolean> {
  let fresh = true
  try {
    await kinesis.send(new CreateStreamCommand({ StreamName: s.name, ShardCount: s.shardCount }))
  } catch (err) {
    if (!(err instanceof StreamInUse)) throw err
    fresh = false
  }
  // A created stream is CREATING for a moment: poll its summary until it is ACTIVE (bounded).
  for (let i = 0; ; i++) {
    const { StreamDescriptionSummary: d } = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: s.name }))
    if (d?.StreamStatus === 'ACTIVE') {
      if (d.OpenShardCount !== s.shardCount) throw new Error(`exists with ${d.OpenShardCount} shards, the template declares ${s.shardCount}`)
      if ((d.RetentionPeriodHours ?? 24) < s.retentionHours) {
        await kinesis.send(new IncreaseStreamRetentionPeriodCommand({ StreamName: s.name, RetentionPeriodHours: s.retentionHours }))
      }
      return fresh
    }
    if (i >= 400) throw new Error('did not become ACTIVE')
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function createBucket(s3: S3Client, b: BucketPlan): Promise<boolean> {
  let fresh = false
  try {
    await s3.send(new HeadBucketCommand({ Bucket: b.name }))
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: b.name }))
    fresh = true
  }
  if (b.versioning) await s3.send(new PutBucketVersioningCommand({ Bucket: b.name, VersioningConfiguration: { Status: 'Enabled' } }))
  return fresh
}

/** Creates every table, stream and bucket of the plan (and its queues, given an SQS port); each failure is reported, the others go on. */
export async function createResources(plan: ResourcePlan, c: RehearsalClients, o: CreateOptions = {}): Promise<CreateOutcome> {
  const created: Created[] = []
  const failed: CreateOutcome['failed'][number][] = []
  const log = o.log ?? (() => {})
  const run = async <P extends { stack: string; logicalId: string; name: string }>(kind: Created['kind'], p: P, make: (p: P) => Promise<boolean>) => {
    try {
      const fresh = await make(p)
      created.push({ kind, stack: p.stack, logicalId: p.logicalId, name: p.name, created: fresh })
      log(`${fresh ? 'created' : 'kept'} ${kind} ${p.name} (${p.logicalId})`)
    } catch (err) {
      failed.push({ kind, stack: p.stack, logicalId: p.logicalId, name: p.name, problem: (err as Error).message || String(err) })
    }
  }
  const queues = async () => {
    // Dead-letter queues first: a redrive policy names its target, which must exist.
    const targets = new Set(plan.queues.map((q) => q.redrive?.deadLetterTargetArn).filter((x): x is string => x !== undefined))
    const ordered = [...plan.queues.filter((q) => targets.has(q.arn)), ...plan.queues.filter((q) => !targets.has(q.arn))]
    for (const q of ordered) {
      if (!o.createQueue) {
        failed.push({ kind: 'queue', stack: q.stack, logicalId: q.logicalId, name: q.name, problem: 'not created: no SQS endpoint given' })
        continue
      }
      const create = o.createQueue
      await run('queue', q, async (x) => (await create(x), true))
    }
  }
  await Promise.all([
    ...plan.tables.map((t) => run('table', t, (x) => createTable(c.ddb, x))),
    ...plan.streams.map((s) => run('stream', s, (x) => createStream(c.kinesis, x))),
    ...plan.buckets.map((b) => run('bucket', b, (x) => createBucket(c.s3, x))),
    queues(),
  ])
  return { created, failed }
}
