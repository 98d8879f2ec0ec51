import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type AttributeDefinition,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb'
import { CreateStreamCommand, DescribeStreamSummaryCommand, ResourceInUseException as StreamInUse } from '@aws-sdk/client-kinesis'
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3'
import type { AwsClients } from '../aws/clients'
import { buckets, streams, tables, type IndexDecl, type KeyDecl, type ResourceNames, type TableDecl } from '../infra/resources'

function keySchema(pk: KeyDecl, sk?: KeyDecl): KeySchemaElement[] {
  return [{ AttributeName: pk.name, KeyType: 'HASH' }, ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : [])]
}

function attributeDefinitions(t: TableDecl): AttributeDefinition[] {
  const defs = new Map<string, KeyDecl>()
  const add = (k?: KeyDecl) => k && defs.set(k.name, k)
  add(t.partitionKey)
  add(t.sortKey)
  for (const ix of Object.values<IndexDecl>(t.indexes ?? {})) {
    add(ix.partitionKey)
    add(ix.sortKey)
  }
  return [...defs.values()].map((k) => ({ AttributeName: k.name, AttributeType: k.type }))
}

function gsi(name: string, ix: IndexDecl) {
  return { IndexName: name, KeySchema: keySchema(ix.partitionKey, ix.sortKey), Projection: { ProjectionType: 'ALL' as const } }
}

async function ensureTable(c: AwsClients, name: string, t: TableDecl, log: (l: string) => void): Promise<void> {
  try {
    await c.ddb.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: keySchema(t.partitionKey, t.sortKey),
        AttributeDefinitions: attributeDefinitions(t),
        GlobalSecondaryIndexes: t.indexes ? Object.entries(t.indexes).map(([n, ix]) => gsi(n, ix)) : undefined,
      }),
    )
    log(`created table ${name}`)
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err
    // Exists: check the key schema and add indexes declared since it was created.
    const { Table } = await c.ddb.send(new DescribeTableCommand({ TableName: name }))
    const want = JSON.stringify(keySchema(t.partitionKey, t.sortKey))
    if (JSON.stringify(Table?.KeySchema) !== want) {
      throw new Error(`Table ${name} exists with key schema ${JSON.stringify(Table?.KeySchema)}, but ${want} is declared. Delete the data directory to start afresh.`)
    }
    const have = new Set((Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName))
    for (const [n, ix] of Object.entries(t.indexes ?? {})) {
      if (have.has(n)) continue
      await c.ddb.send(new UpdateTableCommand({ TableName: name, AttributeDefinitions: attributeDefinitions(t), GlobalSecondaryIndexUpdates: [{ Create: gsi(n, ix) }] }))
      log(`added index ${n} to table ${name}`)
    }
  }
  await waitUntilTableExists({ client: c.ddb, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { TableName: name })
  if (t.ttlAttribute) {
    const ttl = await c.ddb.send(new DescribeTimeToLiveCommand({ TableName: name }))
    if (ttl.TimeToLiveDescription?.AttributeName !== t.ttlAttribute) {
      await c.ddb.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: t.ttlAttribute, Enabled: true } }))
    }
  }
}

async function ensureStream(c: AwsClients, name: string, shards: number, log: (l: string) => void): Promise<void> {
  try {
    await c.kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: shards }))
    log(`created stream ${name} (${shards} shard${shards === 1 ? '' : 's'})`)
  } catch (err) {
    if (!(err instanceof StreamInUse)) throw err
  }
  for (let i = 0; i < 200; i++) {
    const { StreamDescriptionSummary: s } = await c.kinesis.send(new DescribeStreamSummaryCommand({ StreamName: name }))
    if (s?.StreamStatus === 'ACTIVE') {
      if (s.OpenShardCount !== shards) log(`stream ${name} has ${s.OpenShardCount} shards; ${shards} are declared (kept as is)`)
      return
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`Stream ${name} did not become ACTIVE`)
}

async function ensureBucket(c: AwsClients, name: string, log: (l: string) => void): Promise<void> {
  try {
    await c.s3.send(new HeadBucketCommand({ Bucket: name }))
  } catch {
    await c.s3.send(new CreateBucketCommand({ Bucket: name }))
    log(`created bucket ${name}`)
  }
}

/**
 * Creates every declared table, stream and bucket under the given physical
 * names. Idempotent: existing resources are kept (indexes declared since are added).
 */
export async function provision(c: AwsClients, names: ResourceNames, log: (l: string) => void = () => {}): Promise<void> {
  await Promise.all([
    ...Object.entries<TableDecl>(tables).map(([k, t]) => ensureTable(c, names.tables[k as keyof typeof tables], t, log)),
    ...Object.entries(streams).map(([k, s]) => ensureStream(c, names.streams[k as keyof typeof streams], s.shards, log)),
    ...Object.keys(buckets).map((k) => ensureBucket(c, names.buckets[k as keyof typeof buckets], log)),
  ])
}
