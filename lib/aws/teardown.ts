/**
 * The AWS side of `floe teardown` (`lib/core/teardown/`): each resource kind
 * through its own service's API, the stacks through CloudFormation. Every
 * delete resolves only once the service answers "not found" for it.
 */
import { CloudFormationClient, DeleteStackCommand, DescribeStackEventsCommand, DescribeStacksCommand, GetTemplateCommand, paginateListStackResources, paginateListStacks } from '@aws-sdk/client-cloudformation'
import { CloudWatchLogsClient, DeleteLogGroupCommand, DescribeLogGroupsCommand } from '@aws-sdk/client-cloudwatch-logs'
import { DeleteTableCommand, DescribeTableCommand, UpdateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { DeleteStreamCommand, DescribeStreamSummaryCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import {
  DeleteDBClusterCommand,
  DeleteDBInstanceCommand,
  DeleteDBSubnetGroupCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBSubnetGroupsCommand,
  ModifyDBClusterCommand,
  RDSClient,
} from '@aws-sdk/client-rds'
import { DeleteBucketCommand, DeleteObjectsCommand, HeadBucketCommand, ListObjectsV2Command, ListObjectVersionsCommand, type ListObjectVersionsCommandOutput, type ObjectIdentifier, type S3Client } from '@aws-sdk/client-s3'
import { DeleteQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs'
import type { PlannedResource, ResourceFacts, StackDescription, StackResource } from '../core/teardown/teardown-plan'
import type { TeardownPort } from '../core/teardown/teardown-run'

/** Where the stacks come from: CloudFormation, or a stand-in in tests. */
export interface StackSource {
  describe(name: string): Promise<StackDescription | undefined>
  /** Deletes the stack; resolves when it is deleted, rejects with CloudFormation's reasons when the deletion fails. */
  delete(name: string): Promise<void>
}

export interface TeardownClients {
  readonly stacks: StackSource
  readonly ddb: DynamoDBClient
  readonly kinesis: KinesisClient
  readonly s3: S3Client
  readonly sqs: SQSClient
  readonly logs: CloudWatchLogsClient
  readonly rds: RDSClient
  /** The identifier of a final snapshot of an Aurora cluster (none: deleted without one). */
  readonly finalSnapshot?: string
  /** Pause between two looks at a deletion in progress. */
  readonly pollMs?: number
  readonly sleep?: (ms: number) => Promise<void>
  /** Longest wait for one deletion (an Aurora cluster takes minutes). */
  readonly timeoutMs?: number
}

/** Objects and versions counted for the listing before it says "more than". */
const COUNT_PAGES = 20

const NOT_FOUND = new Set([
  'ResourceNotFoundException',
  'NotFound',
  'NoSuchBucket',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'DBClusterNotFoundFault',
  'DBInstanceNotFoundFault',
  'DBSubnetGroupNotFoundFault',
])

export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } }
  return NOT_FOUND.has(e?.name ?? '') || NOT_FOUND.has(e?.Code ?? '') || (e?.name === 'Unknown' && e.$metadata?.httpStatusCode === 404)
}

/** Resolves to `fallback` when the call answers "not found". */
async function orNotFound<T>(call: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (isNotFound(err)) return fallback
    throw err
  }
}

const GONE: ResourceFacts = { exists: false }

export function teardownPort(c: TeardownClients): TeardownPort {
  const sleep = c.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  const pollMs = c.pollMs ?? 5000
  const timeoutMs = c.timeoutMs ?? 60 * 60_000

  async function untilGone(r: PlannedResource): Promise<void> {
    // quick looks first (most deletions take a moment), then every pollMs
    for (let waited = 0, i = 0; ; i++) {
      if (!(await facts(r)).exists) return
      if (waited >= timeoutMs) throw new Error(`${r.type} ${r.physicalId} is still there after ${Math.round(timeoutMs / 1000)} s`)
      const pause = Math.min(pollMs, 100 * 2 ** i)
      await sleep(pause)
      waited += pause
    }
  }

  /** A bucket's object versions, or nothing from a store without versioning (it refuses the call). */
  async function versionsPage(input: { Bucket: string; MaxKeys?: number; KeyMarker?: string; VersionIdMarker?: string }): Promise<ListObjectVersionsCommandOutput> {
    try {
      return await c.s3.send(new ListObjectVersionsCommand(input))
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } }
      if (e?.name === 'MethodNotAllowed' || e?.name === 'NotImplemented' || e?.$metadata?.httpStatusCode === 405 || e?.$metadata?.httpStatusCode === 501) return { $metadata: {} }
      throw err
    }
  }

  async function bucketPage(bucket: string): Promise<{ keys: ObjectIdentifier[]; bytes: number }> {
    // versions and delete markers first; a store without versioning answers the plain listing
    const v = await versionsPage({ Bucket: bucket, MaxKeys: 1000 })
    const versions = [...(v.Versions ?? []), ...(v.DeleteMarkers ?? [])].filter((x) => x.Key !== undefined)
    if (versions.length > 0) {
      return {
        keys: versions.map((x) => ({ Key: x.Key!, ...(x.VersionId && x.VersionId !== 'null' ? { VersionId: x.VersionId } : {}) })),
        bytes: (v.Versions ?? []).reduce((n, x) => n + (x.Size ?? 0), 0),
      }
    }
    const o = await c.s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1000 }))
    const objects = (o.Contents ?? []).filter((x) => x.Key !== undefined)
    return { keys: objects.map((x) => ({ Key: x.Key! })), bytes: objects.reduce((n, x) => n + (x.Size ?? 0), 0) }
  }

  async function bucketFacts(bucket: string): Promise<ResourceFacts> {
    await c.s3.send(new HeadBucketCommand({ Bucket: bucket }))
    let objects = 0
    let bytes = 0
    let token: string | undefined
    let keyMarker: string | undefined
    let versionMarker: string | undefined
    for (let page = 0; page < COUNT_PAGES; page++) {
      const v = await versionsPage({ Bucket: bucket, KeyMarker: keyMarker, VersionIdMarker: versionMarker })
      const versions = [...(v.Versions ?? []), ...(v.DeleteMarkers ?? [])]
      if (page === 0 && versions.length === 0) break
      objects += versions.length
      bytes += (v.Versions ?? []).reduce((n, x) => n + (x.Size ?? 0), 0)
      if (!v.IsTruncated) return { exists: true, objects, bytes }
      keyMarker = v.NextKeyMarker
      versionMarker = v.NextVersionIdMarker
      if (page === COUNT_PAGES - 1) return { exists: true, objects, moreObjects: true }
    }
    for (let page = 0; page < COUNT_PAGES; page++) {
      const o = await c.s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }))
      objects += o.Contents?.length ?? 0
      bytes += (o.Contents ?? []).reduce((n, x) => n + (x.Size ?? 0), 0)
      if (!o.IsTruncated) return { exists: true, objects, bytes }
      token = o.NextContinuationToken
    }
    return { exists: true, objects, moreObjects: true }
  }

  async function facts(r: PlannedResource): Promise<ResourceFacts> {
    const id = r.physicalId
    switch (r.kind) {
      case 'table':
        return orNotFound(async (): Promise<ResourceFacts> => {
          const { Table: t } = await c.ddb.send(new DescribeTableCommand({ TableName: id }))
          return { exists: true, bytes: t?.TableSizeBytes ?? 0, deletionProtection: t?.DeletionProtectionEnabled === true }
        }, GONE)
      case 'stream':
        return orNotFound(async (): Promise<ResourceFacts> => {
          const { StreamDescriptionSummary: s } = await c.kinesis.send(new DescribeStreamSummaryCommand({ StreamName: id }))
          return { exists: true, shards: s?.OpenShardCount ?? 0, onDemand: s?.StreamModeDetails?.StreamMode === 'ON_DEMAND' }
        }, GONE)
      case 'bucket':
        return orNotFound(() => bucketFacts(id), GONE)
      case 'queue':
        return orNotFound(async (): Promise<ResourceFacts> => {
          await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: id, AttributeNames: ['QueueArn'] }))
          return { exists: true }
        }, GONE)
      case 'logGroup': {
        const { logGroups = [] } = await c.logs.send(new DescribeLogGroupsCommand({ logGroupNamePrefix: id }))
        const g = logGroups.find((x) => x.logGroupName === id)
        return g ? { exists: true, bytes: g.storedBytes ?? 0 } : GONE
      }
      case 'dbCluster':
        return orNotFound(async (): Promise<ResourceFacts> => {
          const { DBClusters = [] } = await c.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: id }))
          const k = DBClusters[0]
          if (!k) return GONE
          return { exists: true, deletionProtection: k.DeletionProtection === true, minCapacity: k.ServerlessV2ScalingConfiguration?.MinCapacity ?? 0 }
        }, GONE)
      case 'dbInstance':
        return orNotFound(async (): Promise<ResourceFacts> => {
          const { DBInstances = [] } = await c.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))
          return DBInstances.length > 0 ? { exists: true } : GONE
        }, GONE)
      case 'dbSubnetGroup':
        return orNotFound(async (): Promise<ResourceFacts> => {
          const { DBSubnetGroups = [] } = await c.rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: id }))
          return DBSubnetGroups.length > 0 ? { exists: true } : GONE
        }, GONE)
      default:
        return GONE
    }
  }

  return {
    describeStack: (name) => c.stacks.describe(name),
    facts,
    async unprotect(r) {
      if (r.kind === 'table') await c.ddb.send(new UpdateTableCommand({ TableName: r.physicalId, DeletionProtectionEnabled: false }))
      else if (r.kind === 'dbCluster') await c.rds.send(new ModifyDBClusterCommand({ DBClusterIdentifier: r.physicalId, DeletionProtection: false, ApplyImmediately: true }))
    },
    async empty(r) {
      let deleted = 0
      for (;;) {
        const { keys } = await orNotFound(() => bucketPage(r.physicalId), { keys: [], bytes: 0 })
        if (keys.length === 0) return deleted
        const out = await c.s3.send(new DeleteObjectsCommand({ Bucket: r.physicalId, Delete: { Objects: keys, Quiet: true } }))
        const failed = out.Errors ?? []
        if (failed.length > 0) throw new Error(`${failed.length} objects of ${r.physicalId} could not be deleted: ${failed[0]?.Key} ${failed[0]?.Code} ${failed[0]?.Message ?? ''}`.trim())
        deleted += keys.length
      }
    },
    async delete(r) {
      const id = r.physicalId
      await orNotFound(async () => {
        switch (r.kind) {
          case 'table':
            await c.ddb.send(new DeleteTableCommand({ TableName: id }))
            break
          case 'stream':
            await c.kinesis.send(new DeleteStreamCommand({ StreamName: id, EnforceConsumerDeletion: true }))
            break
          case 'bucket':
            await c.s3.send(new DeleteBucketCommand({ Bucket: id }))
            break
          case 'queue':
            await c.sqs.send(new DeleteQueueCommand({ QueueUrl: id }))
            break
          case 'logGroup':
            await c.logs.send(new DeleteLogGroupCommand({ logGroupName: id }))
            break
          case 'dbInstance':
            await c.rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: id }))
            break
          case 'dbCluster':
            await c.rds.send(new DeleteDBClusterCommand({ DBClusterIdentifier: id, ...(c.finalSnapshot ? { FinalDBSnapshotIdentifier: c.finalSnapshot } : { SkipFinalSnapshot: true }) }))
            break
          case 'dbSubnetGroup':
            await c.rds.send(new DeleteDBSubnetGroupCommand({ DBSubnetGroupName: id }))
            break
          default:
            return
        }
      }, undefined)
      await untilGone(r)
    },
    deleteStack: (name) => c.stacks.delete(name),
  }
}

/** The resources' `DeletionPolicy` from a template (JSON, as the CDK writes it; YAML templates give none). */
export function deletionPolicies(templateBody: string | undefined): Record<string, string> {
  if (!templateBody) return {}
  try {
    const t = JSON.parse(templateBody) as { Resources?: Record<string, { DeletionPolicy?: unknown }> }
    return Object.fromEntries(Object.entries(t.Resources ?? {}).flatMap(([id, r]) => (typeof r?.DeletionPolicy === 'string' ? [[id, r.DeletionPolicy]] : [])))
  } catch {
    return {}
  }
}

const RETAINING = new Set(['Retain', 'RetainExceptOnCreate', 'Snapshot'])

const STACK_GONE = (err: unknown): boolean => /does not exist/.test((err as Error)?.message ?? '')

/** The deployment's stacks through CloudFormation. */
export function cloudFormationStacks(cfn: CloudFormationClient, o: { pollMs?: number; sleep?: (ms: number) => Promise<void>; timeoutMs?: number } = {}): StackSource {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  const pollMs = o.pollMs ?? 10_000
  const timeoutMs = o.timeoutMs ?? 2 * 60 * 60_000
  async function status(name: string): Promise<{ id: string; status: string } | undefined> {
    try {
      const s = (await cfn.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0]
      return s ? { id: s.StackId ?? name, status: s.StackStatus ?? 'UNKNOWN' } : undefined
    } catch (err) {
      if (STACK_GONE(err)) return undefined
      throw err
    }
  }
  /** The latest deleted stack of that name (CloudFormation keeps a deleted stack's resources and template for 90 days, by its id). */
  async function deleted(name: string): Promise<{ id: string; status: string } | undefined> {
    let latest: { id: string; at: number } | undefined
    for await (const page of paginateListStacks({ client: cfn }, { StackStatusFilter: ['DELETE_COMPLETE'] })) {
      for (const s of page.StackSummaries ?? []) {
        const at = s.DeletionTime?.getTime() ?? 0
        if (s.StackName === name && s.StackId && (!latest || at > latest.at)) latest = { id: s.StackId, at }
      }
    }
    return latest && { id: latest.id, status: 'DELETE_COMPLETE' }
  }
  return {
    async describe(name) {
      const s = (await status(name)) ?? (await deleted(name))
      if (!s) return undefined
      const resources: StackResource[] = []
      const template = await cfn.send(new GetTemplateCommand({ StackName: s.id, TemplateStage: 'Original' }))
      const policies = deletionPolicies(template.TemplateBody)
      for await (const page of paginateListStackResources({ client: cfn }, { StackName: s.id })) {
        for (const r of page.StackResourceSummaries ?? []) {
          if (!r.LogicalResourceId || !r.ResourceType) continue
          const policy = policies[r.LogicalResourceId]
          // a deleted resource: gone (a retained one is DELETE_SKIPPED, and still there)
          if (r.ResourceStatus === 'DELETE_COMPLETE' && !RETAINING.has(policy ?? 'Delete')) continue
          resources.push({ logicalId: r.LogicalResourceId, type: r.ResourceType, physicalId: r.PhysicalResourceId ?? '', ...(policy ? { deletionPolicy: policy } : {}) })
        }
      }
      return { name, status: s.status, resources }
    },
    async delete(name) {
      const before = await status(name)
      if (!before || before.status === 'DELETE_COMPLETE') return
      // by id: once deleted, a stack is found by its id only
      await cfn.send(new DeleteStackCommand({ StackName: before.id }))
      for (let waited = 0; ; waited += pollMs) {
        const now = await status(before.id)
        if (!now || now.status === 'DELETE_COMPLETE') return
        if (now.status === 'DELETE_FAILED') {
          const { StackEvents = [] } = await cfn.send(new DescribeStackEventsCommand({ StackName: before.id }))
          const reasons = StackEvents.filter((e) => e.ResourceStatus === 'DELETE_FAILED' && e.LogicalResourceId !== name)
            .slice(0, 3)
            .map((e) => `${e.LogicalResourceId}: ${e.ResourceStatusReason ?? 'no reason given'}`)
          throw new Error(`the deletion of stack ${name} failed${reasons.length ? `: ${reasons.join('; ')}` : ''}`)
        }
        if (waited >= timeoutMs) throw new Error(`stack ${name} is still ${now.status} after ${Math.round(timeoutMs / 60_000)} minutes`)
        await sleep(pollMs)
      }
    },
  }
}

export { CloudFormationClient, CloudWatchLogsClient, RDSClient }
