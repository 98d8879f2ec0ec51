/**
 * What the rehearsal creates on the local emulators, read from a cloud
 * assembly's templates (not from the source's declaration): each DynamoDB
 * table with its keys, attribute definitions, indexes, TTL, stream and
 * billing; each Kinesis stream with its shards (on demand: one locally) and
 * retention; each S3 bucket with its versioning; each SQS queue with its
 * settings and dead-letter redrive. Names are the resolver's physical names,
 * so every intrinsic of a function's environment or policy resolves to what
 * was created. What cannot be created locally is listed with what stands in
 * for it. Outcomes as data: what cannot be resolved is a problem.
 */
import type { AssemblyResolver } from './resolve'
import type { AssemblyStack, TemplateResource, Violation } from './template'

export interface KeyElement { readonly AttributeName: string; readonly KeyType: 'HASH' | 'RANGE' }
export interface AttributeDefinition { readonly AttributeName: string; readonly AttributeType: 'S' | 'N' | 'B' }
export interface Projection { readonly ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; readonly NonKeyAttributes?: readonly string[] }
export interface IndexPlan { readonly IndexName: string; readonly KeySchema: readonly KeyElement[]; readonly Projection: Projection }

interface Planned {
  readonly stack: string
  readonly logicalId: string
  /** The physical name (what `Ref` gives). */
  readonly name: string
}

export interface TablePlan extends Planned {
  readonly keySchema: readonly KeyElement[]
  readonly attributeDefinitions: readonly AttributeDefinition[]
  readonly globalIndexes: readonly IndexPlan[]
  readonly localIndexes: readonly IndexPlan[]
  /** The TTL attribute, when TTL is enabled. */
  readonly ttlAttribute?: string
  /** The stream's view type, when the table has a stream. */
  readonly streamViewType?: string
  readonly billingMode: 'PAY_PER_REQUEST' | 'PROVISIONED'
}

export interface StreamPlan extends Planned {
  /** Shards created locally (on demand: 1). */
  readonly shardCount: number
  /** What the template declares: a shard count or `ON_DEMAND`. */
  readonly declared: number | 'ON_DEMAND'
  readonly retentionHours: number
}

export interface BucketPlan extends Planned {
  readonly versioning: boolean
}

export interface QueuePlan extends Planned {
  /** The queue's ARN and URL as the resolver gives them. */
  readonly arn: string
  readonly fifo: boolean
  readonly contentBasedDeduplication: boolean
  readonly visibilityTimeoutSeconds: number
  readonly messageRetentionSeconds: number
  readonly delaySeconds: number
  readonly receiveWaitSeconds: number
  /** The dead-letter queue's ARN and after how many receives a message goes there. */
  readonly redrive?: { readonly deadLetterTargetArn: string; readonly maxReceiveCount: number }
}

/** A resource the rehearsal does not create, and what stands in for it locally. */
export interface StandIn {
  readonly stack: string
  readonly logicalId: string
  readonly type: string
  readonly standsIn: string
}

export interface ResourcePlan {
  readonly tables: readonly TablePlan[]
  readonly streams: readonly StreamPlan[]
  readonly buckets: readonly BucketPlan[]
  readonly queues: readonly QueuePlan[]
  readonly notCreated: readonly StandIn[]
  readonly problems: readonly Violation[]
}

/** SQS's defaults when the template says nothing. */
export const SQS_DEFAULTS = { visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345_600, delaySeconds: 0, receiveWaitSeconds: 0 } as const

/** What stands in locally for the resources the rehearsal does not create, by type. */
const STAND_INS: Readonly<Record<string, string>> = {
  'AWS::RDS::DBCluster': 'the search store\'s PostgreSQL (PGlite on the wire protocol), reached through the RDS Data API path',
  'AWS::RDS::DBInstance': 'the search store\'s PostgreSQL (the cluster\'s stand-in)',
  'AWS::RDS::DBSubnetGroup': 'nothing: no network locally',
  'AWS::SecretsManager::Secret': 'nothing: the Data API stand-in needs no database credentials',
  'AWS::SecretsManager::SecretTargetAttachment': 'nothing: the Data API stand-in needs no database credentials',
  'AWS::EC2::VPC': 'nothing: no network locally',
  'AWS::EC2::Subnet': 'nothing: no network locally',
  'AWS::EC2::RouteTable': 'nothing: no network locally',
  'AWS::EC2::SubnetRouteTableAssociation': 'nothing: no network locally',
  'AWS::EC2::SecurityGroup': 'nothing: no network locally',
  'AWS::Lambda::Function': 'the function host: each function run from its bundle in a process of its own',
  'AWS::Lambda::EventSourceMapping': 'the local trigger emulators, with the mapping\'s settings',
  'AWS::Lambda::Permission': 'the IAM evaluator (API Gateway\'s permission to invoke is checked statically)',
  'AWS::IAM::Role': 'the IAM evaluator: each function\'s calls are authorized against its role\'s policies',
  'AWS::IAM::Policy': 'the IAM evaluator',
  'AWS::IAM::ManagedPolicy': 'the IAM evaluator',
  'AWS::S3::BucketPolicy': 'the IAM evaluator (resource-based policy)',
  'AWS::SQS::QueuePolicy': 'the IAM evaluator (resource-based policy)',
  'AWS::SNS::TopicPolicy': 'the IAM evaluator (resource-based policy)',
  'AWS::ApiGatewayV2::Api': 'the local HTTP gateway, with the template\'s routes',
  'AWS::ApiGatewayV2::Route': 'the local HTTP gateway',
  'AWS::ApiGatewayV2::Integration': 'the local HTTP gateway',
  'AWS::ApiGatewayV2::Stage': 'the local HTTP gateway',
  'AWS::ApiGatewayV2::Authorizer': 'the local HTTP gateway, invoking the authorizer function',
  'AWS::Logs::LogGroup': 'each function\'s standard output and error',
  'AWS::CloudWatch::Alarm': 'nothing: alarms are not evaluated locally',
  'AWS::CloudWatch::Dashboard': 'nothing: dashboards are not drawn locally',
  'AWS::SNS::Topic': 'nothing: no alarm is raised locally',
  'AWS::SNS::Subscription': 'nothing: no alarm is raised locally',
  'AWS::CDK::Metadata': 'nothing: CDK\'s own metadata',
}

const CREATED = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable', 'AWS::Kinesis::Stream', 'AWS::S3::Bucket', 'AWS::SQS::Queue'])

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined)
const bool = (v: unknown): boolean => v === true || v === 'true'
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {})
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])

function index(v: unknown): IndexPlan {
  const i = obj(v)
  const p = obj(i.Projection)
  const type = p.ProjectionType === 'KEYS_ONLY' || p.ProjectionType === 'INCLUDE' ? p.ProjectionType : 'ALL'
  return {
    IndexName: String(i.IndexName),
    KeySchema: list(i.KeySchema).map((k) => ({ AttributeName: String(obj(k).AttributeName), KeyType: obj(k).KeyType === 'RANGE' ? 'RANGE' : 'HASH' })),
    Projection: { ProjectionType: type, ...(type === 'INCLUDE' ? { NonKeyAttributes: list(p.NonKeyAttributes).map(String) } : {}) },
  }
}

function table(base: Planned, p: Record<string, unknown>, global: boolean): TablePlan {
  const ttl = obj(p.TimeToLiveSpecification)
  const stream = obj(p.StreamSpecification)
  // AWS::DynamoDB::Table: a StreamSpecification means a stream; GlobalTable: the same, its StreamViewType required.
  const view = typeof stream.StreamViewType === 'string' && (global || stream.StreamEnabled !== false) ? stream.StreamViewType : undefined
  return {
    ...base,
    keySchema: index({ IndexName: '', KeySchema: p.KeySchema }).KeySchema,
    attributeDefinitions: list(p.AttributeDefinitions).map((a) => ({ AttributeName: String(obj(a).AttributeName), AttributeType: (['S', 'N', 'B'].includes(String(obj(a).AttributeType)) ? obj(a).AttributeType : 'S') as 'S' | 'N' | 'B' })),
    globalIndexes: list(p.GlobalSecondaryIndexes).map(index),
    localIndexes: list(p.LocalSecondaryIndexes).map(index),
    ...(bool(ttl.Enabled) && typeof ttl.AttributeName === 'string' ? { ttlAttribute: ttl.AttributeName } : {}),
    ...(view !== undefined ? { streamViewType: view } : {}),
    // A Table without BillingMode is provisioned; a GlobalTable's default is PROVISIONED too.
    billingMode: p.BillingMode === 'PAY_PER_REQUEST' ? 'PAY_PER_REQUEST' : 'PROVISIONED',
  }
}

/** The plan of every stack of the assembly. */
export function resourcePlan(stacks: readonly AssemblyStack[], resolver: AssemblyResolver): ResourcePlan {
  const tables: TablePlan[] = []
  const streams: StreamPlan[] = []
  const buckets: BucketPlan[] = []
  const queues: QueuePlan[] = []
  const notCreated: StandIn[] = []
  const problems: Violation[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {}) as [string, TemplateResource][]) {
      if (!CREATED.has(r.Type)) {
        notCreated.push({ stack: s.name, logicalId: id, type: r.Type, standsIn: STAND_INS[r.Type] ?? 'nothing: not needed to run the functions' })
        continue
      }
      const physical = resolver.physical(s.name, id)
      const props = resolver.resolve(s.name, r.Properties ?? {})
      if (!physical || !props.ok) {
        problems.push({ stack: s.name, resource: id, problem: `not created locally: ${props.ok ? 'no physical name' : props.problem}` })
        continue
      }
      const p = obj(props.value)
      const base: Planned = { stack: s.name, logicalId: id, name: physical.ref }
      switch (r.Type) {
        case 'AWS::DynamoDB::Table':
        case 'AWS::DynamoDB::GlobalTable':
          tables.push(table(base, p, r.Type === 'AWS::DynamoDB::GlobalTable'))
          break
        case 'AWS::Kinesis::Stream': {
          const onDemand = obj(p.StreamModeDetails).StreamMode === 'ON_DEMAND'
          const shards = num(p.ShardCount) ?? 1
          streams.push({ ...base, shardCount: onDemand ? 1 : shards, declared: onDemand ? 'ON_DEMAND' : shards, retentionHours: num(p.RetentionPeriodHours) ?? 24 })
          break
        }
        case 'AWS::S3::Bucket':
          buckets.push({ ...base, versioning: obj(p.VersioningConfiguration).Status === 'Enabled' })
          break
        case 'AWS::SQS::Queue': {
          const redrive = obj(typeof p.RedrivePolicy === 'string' ? safeJson(p.RedrivePolicy) : p.RedrivePolicy)
          const target = redrive.deadLetterTargetArn
          queues.push({
            ...base,
            name: physical.attributes.QueueName ?? physical.ref,
            arn: physical.attributes.Arn ?? '',
            fifo: bool(p.FifoQueue),
            contentBasedDeduplication: bool(p.ContentBasedDeduplication),
            visibilityTimeoutSeconds: num(p.VisibilityTimeout) ?? SQS_DEFAULTS.visibilityTimeoutSeconds,
            messageRetentionSeconds: num(p.MessageRetentionPeriod) ?? SQS_DEFAULTS.messageRetentionSeconds,
            delaySeconds: num(p.DelaySeconds) ?? SQS_DEFAULTS.delaySeconds,
            receiveWaitSeconds: num(p.ReceiveMessageWaitTimeSeconds) ?? SQS_DEFAULTS.receiveWaitSeconds,
            ...(typeof target === 'string' ? { redrive: { deadLetterTargetArn: target, maxReceiveCount: num(redrive.maxReceiveCount) ?? 10 } } : {}),
          })
          break
        }
      }
    }
  }
  return { tables, streams, buckets, queues, notCreated, problems }
}

function safeJson(text: string): unknown {
  try { return JSON.parse(text) } catch { return {} }
}

/** The plan as lines of text: what is created, and what is not with what stands in. */
export function formatPlan(plan: ResourcePlan): string {
  const lines: string[] = []
  for (const t of plan.tables) lines.push(`table ${t.name} (${t.logicalId}): keys ${t.keySchema.map((k) => `${k.AttributeName} ${k.KeyType}`).join(', ')}; ${t.globalIndexes.length} global, ${t.localIndexes.length} local indexes${t.ttlAttribute ? `; TTL ${t.ttlAttribute}` : ''}${t.streamViewType ? `; stream ${t.streamViewType}` : ''}; ${t.billingMode}`)
  for (const s of plan.streams) lines.push(`stream ${s.name} (${s.logicalId}): ${s.shardCount} shard${s.shardCount === 1 ? '' : 's'}${s.declared === 'ON_DEMAND' ? ' (on demand in the template)' : ''}; retention ${s.retentionHours} h`)
  for (const b of plan.buckets) lines.push(`bucket ${b.name} (${b.logicalId})${b.versioning ? ': versioned' : ''}`)
  for (const q of plan.queues) lines.push(`queue ${q.name} (${q.logicalId})${q.fifo ? ': FIFO' : ''}; visibility ${q.visibilityTimeoutSeconds} s${q.redrive ? `; dead letters after ${q.redrive.maxReceiveCount} receives to ${q.redrive.deadLetterTargetArn}` : ''}`)
  const byType = new Map<string, { n: number; standsIn: string }>()
  for (const x of plan.notCreated) byType.set(x.type, { n: (byType.get(x.type)?.n ?? 0) + 1, standsIn: x.standsIn })
  for (const [type, { n, standsIn }] of byType) lines.push(`not created locally: ${type} ×${n}, stands in: ${standsIn}`)
  for (const p of plan.problems) lines.push(`${p.stack}/${p.resource}: ${p.problem}`)
  return lines.join('\n') + (lines.length ? '\n' : '')
}
