/**
 * `floe teardown --stack <name>`: what a deployment's removal deletes and in
 * which order, from its stacks' resource lists. Pure: the stacks, their
 * resources and what each resource holds come in as data; the steps go out
 * as data (`./teardown-run.ts` carries them out through a port).
 *
 * The order:
 * 1. per stack, the stacks that use the others' exports first: an Aurora
 *    cluster's instances, then the cluster (its deletion protection off),
 *    before its stack, so that the stack can delete the cluster's VPC; the
 *    deletion protection of the stack's other resources turned off and its
 *    non-retained buckets emptied, so CloudFormation can delete them; then
 *    the stack itself;
 * 2. then every resource the stack deletion keeps (`DeletionPolicy: Retain`),
 *    with its protection off and (a bucket) its objects and versions deleted
 *    first; a DB subnet group after its cluster.
 */

/** The resource types the teardown deletes itself when a stack deletion leaves them. */
export const KIND_OF_TYPE = {
  'AWS::DynamoDB::GlobalTable': 'table',
  'AWS::DynamoDB::Table': 'table',
  'AWS::Kinesis::Stream': 'stream',
  'AWS::S3::Bucket': 'bucket',
  'AWS::RDS::DBCluster': 'dbCluster',
  'AWS::RDS::DBInstance': 'dbInstance',
  'AWS::RDS::DBSubnetGroup': 'dbSubnetGroup',
  'AWS::Logs::LogGroup': 'logGroup',
  'AWS::SQS::Queue': 'queue',
} as const

export type ResourceKind = (typeof KIND_OF_TYPE)[keyof typeof KIND_OF_TYPE]

/** One resource of a stack, as CloudFormation lists it, with its template's deletion policy. */
export interface StackResource {
  readonly logicalId: string
  readonly type: string
  readonly physicalId: string
  /** The template's `DeletionPolicy` (absent: `Delete`). */
  readonly deletionPolicy?: string
}

export interface StackDescription {
  readonly name: string
  readonly status: string
  readonly resources: readonly StackResource[]
}

/** What a resource holds now, as its service describes it (what it costs while kept). */
export interface ResourceFacts {
  readonly exists: boolean
  /** Stored bytes: a table's size, a bucket's objects and versions, a log group's stored bytes, a cluster's volume. */
  readonly bytes?: number
  /** A bucket's objects and versions. */
  readonly objects?: number
  /** The bucket has more objects than were counted (`objects` is a lower bound, `bytes` unknown). */
  readonly moreObjects?: boolean
  /** A provisioned stream's open shards. */
  readonly shards?: number
  readonly onDemand?: boolean
  readonly deletionProtection?: boolean
  /** An Aurora Serverless v2 cluster's minimum capacity (ACUs billed while it runs at its floor). */
  readonly minCapacity?: number
}

/** A resource the teardown names, in a stack. */
export interface PlannedResource {
  readonly stack: string
  readonly logicalId: string
  readonly type: string
  readonly kind: ResourceKind | undefined
  readonly physicalId: string
  /** The stack deletion leaves it: the teardown deletes it afterwards. */
  readonly retained: boolean
  readonly facts?: ResourceFacts
}

export type Step =
  | { readonly action: 'unprotect'; readonly resource: PlannedResource }
  | { readonly action: 'empty'; readonly resource: PlannedResource }
  | { readonly action: 'delete'; readonly resource: PlannedResource }
  | { readonly action: 'deleteStack'; readonly stack: string }

/** The subset of the price table the teardown needs (`lib/infra/prices.ts`). */
export interface KeepPrices {
  readonly hoursPerMonth: number
  readonly kinesis: { readonly onDemand: { readonly perStreamHour: number }; readonly provisioned: { readonly perShardHour: number } }
  readonly s3: { readonly perGbMonth: number }
  readonly dynamodb: { readonly perGbMonth: number }
  readonly aurora: { readonly perAcuHour: number; readonly perGbMonth: number }
  readonly logs: { readonly perGbMonthStored: number }
}

const RETAINING = new Set(['Retain', 'RetainExceptOnCreate', 'Snapshot'])

/** The stacks one Floe deployment is made of, from the name of one of them: `FloeApp[-stage]` and `FloeData[-stage]`, the stack using the other's exports first. Any other name: that stack alone. */
export function deploymentStacks(name: string): string[] {
  const m = /^Floe(App|Data)(-[A-Za-z0-9-]+)?$/.exec(name)
  if (!m) return [name]
  const suffix = m[2] ?? ''
  return [`FloeApp${suffix}`, `FloeData${suffix}`]
}

/** The resources of the stacks, in the order given, each with its kind and whether the stack deletion keeps it. */
export function plannedResources(stacks: readonly StackDescription[], facts: ReadonlyMap<string, ResourceFacts> = new Map()): PlannedResource[] {
  return stacks.flatMap((s) =>
    s.resources.map((r) => {
      const kind = (KIND_OF_TYPE as Record<string, ResourceKind>)[r.type]
      const f = facts.get(resourceKey(s.name, r.logicalId))
      return { stack: s.name, logicalId: r.logicalId, type: r.type, kind, physicalId: r.physicalId, retained: RETAINING.has(r.deletionPolicy ?? 'Delete'), ...(f ? { facts: f } : {}) }
    }),
  )
}

export const resourceKey = (stack: string, logicalId: string): string => `${stack}/${logicalId}`

/** The resources the teardown reaches through their own service (the others go with their stack). */
export const handled = (r: PlannedResource): boolean => r.kind !== undefined && r.physicalId !== ''

const needsUnprotect = (r: PlannedResource): boolean => (r.kind === 'table' || r.kind === 'dbCluster') && r.facts?.deletionProtection !== false

/** Retained resources in deletion order: the database first (instances, cluster, subnet group), then data, then logs and queues. */
const RETAINED_ORDER: readonly ResourceKind[] = ['dbInstance', 'dbCluster', 'dbSubnetGroup', 'table', 'stream', 'bucket', 'queue', 'logGroup']

/**
 * The steps that remove the stacks (in the order given: the stack using the
 * others' exports first) and everything they keep. A resource known to be
 * gone already (`facts.exists === false`) gets no step.
 */
export function teardownSteps(stacks: readonly StackDescription[], facts: ReadonlyMap<string, ResourceFacts> = new Map()): Step[] {
  const all = plannedResources(stacks, facts).filter(handled).filter((r) => r.facts?.exists !== false)
  const steps: Step[] = []
  for (const s of stacks) {
    const own = all.filter((r) => r.stack === s.name)
    // the database before its stack: the stack deletes the VPC its cluster's network interfaces use
    for (const r of own.filter((r) => r.kind === 'dbInstance')) steps.push({ action: 'delete', resource: r })
    for (const r of own.filter((r) => r.kind === 'dbCluster')) {
      if (needsUnprotect(r)) steps.push({ action: 'unprotect', resource: r })
      steps.push({ action: 'delete', resource: r })
    }
    for (const r of own.filter((r) => !r.retained && r.kind === 'table' && needsUnprotect(r))) steps.push({ action: 'unprotect', resource: r })
    for (const r of own.filter((r) => !r.retained && r.kind === 'bucket')) steps.push({ action: 'empty', resource: r })
    // a stack deleted already (a run stopped part-way) still lists what it kept
    if (s.status !== 'DELETE_COMPLETE') steps.push({ action: 'deleteStack', stack: s.name })
  }
  const kept = all.filter((r) => r.retained && r.kind !== 'dbInstance' && r.kind !== 'dbCluster')
  for (const kind of RETAINED_ORDER) {
    for (const r of kept.filter((r) => r.kind === kind)) {
      if (kind === 'table' && needsUnprotect(r)) steps.push({ action: 'unprotect', resource: r })
      if (kind === 'bucket') steps.push({ action: 'empty', resource: r })
      steps.push({ action: 'delete', resource: r })
    }
  }
  return steps
}

const GB = 1024 ** 3

/**
 * What a resource costs per month while it is kept and unused, in US dollars,
 * where the price table has it: a stream's shard or stream hours, stored
 * bytes of a table, bucket, log group or cluster volume, a cluster's minimum
 * capacity. Undefined where it has no standing charge of its own in the table
 * (it goes with its stack) or its size is unknown.
 */
export function monthlyCostWhileKept(r: PlannedResource, p: KeepPrices): number | undefined {
  const f = r.facts
  if (!f || !f.exists) return undefined
  const stored = (perGb: number) => (f.bytes === undefined ? undefined : (f.bytes / GB) * perGb)
  switch (r.kind) {
    case 'stream':
      if (f.onDemand) return p.kinesis.onDemand.perStreamHour * p.hoursPerMonth
      return f.shards === undefined ? undefined : f.shards * p.kinesis.provisioned.perShardHour * p.hoursPerMonth
    case 'table':
      return stored(p.dynamodb.perGbMonth)
    case 'bucket':
      return stored(p.s3.perGbMonth)
    case 'logGroup':
      return stored(p.logs.perGbMonthStored)
    case 'dbCluster': {
      const compute = (f.minCapacity ?? 0) * p.aurora.perAcuHour * p.hoursPerMonth
      return compute + (stored(p.aurora.perGbMonth) ?? 0)
    }
    case 'queue':
      return 0 // SQS bills requests, not queues
    default:
      return undefined
  }
}

/** The sum of the known monthly costs, and how many resources have none known. */
export function totalWhileKept(resources: readonly PlannedResource[], p: KeepPrices): { dollars: number; unknown: number } {
  let dollars = 0
  let unknown = 0
  for (const r of resources) {
    if (!handled(r) || r.facts?.exists === false) continue
    const c = monthlyCostWhileKept(r, p)
    if (c === undefined) unknown++
    else dollars += c
  }
  return { dollars, unknown }
}

/** `$77.00`, `$0.01`, `<$0.01`. */
export function dollars(n: number): string {
  if (n > 0 && n < 0.005) return '<$0.01'
  return `$${n.toFixed(2)}`
}

/** One line of the listing: stack, type, name, what the teardown does with it, its size and monthly cost. */
export function describeResource(r: PlannedResource, p: KeepPrices): string {
  const f = r.facts
  const notes: string[] = []
  if (r.retained) notes.push('kept by the stack deletion: deleted after it')
  if (f?.deletionProtection) notes.push('deletion protection on: turned off')
  if (f?.objects !== undefined) notes.push(`${f.moreObjects ? 'more than ' : ''}${f.objects} object${f.objects === 1 ? '' : 's'} and versions`)
  if (r.kind === 'stream' && f?.exists) notes.push(f.onDemand ? 'on-demand' : `${f.shards ?? '?'} shard${f.shards === 1 ? '' : 's'}`)
  if (r.kind === 'dbCluster') notes.push('deleted before its stack, without a final snapshot unless --final-snapshot')
  if (f?.exists === false) notes.push('already gone')
  const cost = monthlyCostWhileKept(r, p)
  const costText = cost === undefined ? '' : `  ${dollars(cost)}/month`
  return `${r.stack}  ${r.type}  ${r.physicalId}${notes.length ? `  (${notes.join('; ')})` : ''}${costText}`
}

/** What a step does, for progress lines. */
export function describeStep(s: Step): string {
  if (s.action === 'deleteStack') return `delete stack ${s.stack}`
  const r = s.resource
  const what = `${r.type} ${r.physicalId}`
  if (s.action === 'unprotect') return `turn off deletion protection of ${what}`
  if (s.action === 'empty') return `empty ${what} (objects and versions)`
  return `delete ${what}`
}
