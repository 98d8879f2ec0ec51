/**
 * The limits that CloudFormation and the services enforce at deploy time
 * (or at first invocation) and that a template can break while fitting the
 * resource specification. Each number is the documented default quota.
 */
import type { AssemblyResolver } from './resolve'
import { allowedValues, type Spec } from './spec'
import { intrinsicName, type AssemblyStack, type TemplateResource, type Violation } from './template'

export const LIMITS = {
  /** CloudFormation, per template */
  resourcesPerStack: 500,
  outputsPerStack: 200,
  parametersPerStack: 200,
  mappingsPerStack: 200,
  templateBytes: 1_000_000,
  /** IAM, characters without white space */
  roleInlinePolicies: 10_240,
  userInlinePolicies: 2_048,
  groupInlinePolicies: 5_120,
  managedPolicy: 6_144,
  trustPolicy: 2_048,
  managedPoliciesPerRole: 10,
  /** Lambda */
  environmentBytes: 4_096,
  unzippedCodeBytes: 262_144_000,
  memoryMb: [128, 10_240],
  timeoutSeconds: [1, 900],
  ephemeralStorageMb: [512, 10_240],
  /** Event source mappings */
  batchingWindowSeconds: [0, 300],
  parallelizationFactor: [1, 10],
  streamBatchSize: [1, 10_000],
  queueBatchSize: [1, 10_000],
  fifoQueueBatchSize: [1, 10],
  retryAttempts: [-1, 10_000],
  recordAgeSeconds: [60, 604_800],
  tumblingWindowSeconds: [0, 900],
  /** SQS */
  visibilityTimeoutSeconds: [0, 43_200],
  messageRetentionSeconds: [60, 1_209_600],
  delaySeconds: [0, 900],
  maxReceiveCount: [1, 1_000],
  /** Kinesis */
  retentionHours: [24, 8_760],
  /** DynamoDB */
  globalIndexesPerTable: 20,
  localIndexesPerTable: 5,
} as const

/** Log retention values CloudFormation accepts when the spec does not say (it does, for `AWS::Logs::LogGroup`). */
const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653]

/** Characters of a policy document as IAM counts them: its JSON without white space. */
export function policySize(doc: unknown): number {
  return JSON.stringify(doc).replace(/\s/g, '').length
}

/** The size of a function's environment as Lambda measures it: the JSON of its variables. */
export function environmentSize(variables: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(variables), 'utf8')
}

type Add = (resource: string, problem: string) => void

/** A literal number (or numeric string); undefined for an intrinsic or nothing. */
function literal(v: unknown): number | undefined {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  return undefined
}

function range(add: Add, id: string, name: string, v: unknown, [lo, hi]: readonly [number, number], unit = ''): void {
  const n = literal(v)
  if (n !== undefined && (n < lo || n > hi)) add(id, `${name} ${n}${unit} is outside ${lo}–${hi}${unit}`)
}

export function checkLimits(stacks: readonly AssemblyStack[], resolver: AssemblyResolver, spec: Spec, assetBytes: Readonly<Record<string, number>>): Violation[] {
  const out: Violation[] = []
  // SQS queues and functions anywhere in the assembly, by ARN, for the mappings that name them
  const queues = new Map<string, TemplateResource>()
  const functions = new Map<string, { stack: string; id: string; r: TemplateResource }>()
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      const p = resolver.physical(s.name, id)
      if (!p) continue
      if (r.Type === 'AWS::SQS::Queue') queues.set(p.attributes.Arn!, r)
      if (r.Type === 'AWS::Lambda::Function') {
        for (const key of [p.ref, p.attributes.Arn!]) functions.set(key, { stack: s.name, id, r })
      }
    }
  }

  for (const s of stacks) {
    const add: Add = (resource, problem) => out.push({ stack: s.name, resource, problem })
    const t = s.template
    const count = (x: object | undefined) => Object.keys(x ?? {}).length
    if (count(t.Resources) > LIMITS.resourcesPerStack) add('(template)', `${count(t.Resources)} resources, more than ${LIMITS.resourcesPerStack}`)
    if (count(t.Outputs) > LIMITS.outputsPerStack) add('(template)', `${count(t.Outputs)} outputs, more than ${LIMITS.outputsPerStack}`)
    if (count(t.Parameters) > LIMITS.parametersPerStack) add('(template)', `${count(t.Parameters)} parameters, more than ${LIMITS.parametersPerStack}`)
    if (count(t.Mappings) > LIMITS.mappingsPerStack) add('(template)', `${count(t.Mappings)} mappings, more than ${LIMITS.mappingsPerStack}`)
    if (s.templateBytes !== undefined && s.templateBytes > LIMITS.templateBytes) add('(template)', `template of ${s.templateBytes} bytes, more than ${LIMITS.templateBytes}`)

    const resolved = (v: unknown): unknown => {
      const r = resolver.resolve(s.name, v)
      return r.ok ? r.value : v
    }
    const resources = Object.entries(t.Resources ?? {})
    const inlineByRole = new Map<string, number>()
    for (const [id, r] of resources) {
      const p = r.Properties ?? {}
      switch (r.Type) {
        case 'AWS::IAM::Role': {
          const inline = Array.isArray(p.Policies) ? (p.Policies as { PolicyDocument?: unknown }[]) : []
          inlineByRole.set(id, (inlineByRole.get(id) ?? 0) + inline.reduce((n, x) => n + policySize(resolved(x.PolicyDocument)), 0))
          if (p.AssumeRolePolicyDocument !== undefined) {
            const size = policySize(resolved(p.AssumeRolePolicyDocument))
            if (size > LIMITS.trustPolicy) add(id, `trust policy of ${size} characters, more than ${LIMITS.trustPolicy}`)
          }
          const managed = resolved(p.ManagedPolicyArns)
          if (Array.isArray(managed) && managed.length > LIMITS.managedPoliciesPerRole) add(id, `${managed.length} managed policies attached, more than ${LIMITS.managedPoliciesPerRole}`)
          break
        }
        case 'AWS::IAM::User':
        case 'AWS::IAM::Group': {
          const inline = Array.isArray(p.Policies) ? (p.Policies as { PolicyDocument?: unknown }[]) : []
          const size = inline.reduce((n, x) => n + policySize(resolved(x.PolicyDocument)), 0)
          const max = r.Type === 'AWS::IAM::User' ? LIMITS.userInlinePolicies : LIMITS.groupInlinePolicies
          if (size > max) add(id, `inline policies of ${size} characters in all, more than ${max}`)
          break
        }
        case 'AWS::IAM::Policy': {
          const size = policySize(resolved(p.PolicyDocument))
          for (const role of Array.isArray(p.Roles) ? p.Roles : []) {
            const target = intrinsicName(role) === 'Ref' ? String((role as { Ref: unknown }).Ref) : undefined
            if (target !== undefined && t.Resources?.[target]?.Type === 'AWS::IAM::Role') inlineByRole.set(target, (inlineByRole.get(target) ?? 0) + size)
          }
          break
        }
        case 'AWS::IAM::ManagedPolicy': {
          const size = policySize(resolved(p.PolicyDocument))
          if (size > LIMITS.managedPolicy) add(id, `managed policy of ${size} characters, more than ${LIMITS.managedPolicy}`)
          break
        }
        case 'AWS::Lambda::Function':
          lambdaLimits(add, id, r, resolved, assetBytes, t.Resources ?? {})
          break
        case 'AWS::Lambda::EventSourceMapping':
          mappingLimits(add, id, p, resolved, queues, functions)
          break
        case 'AWS::SQS::Queue': {
          range(add, id, 'VisibilityTimeout', p.VisibilityTimeout, LIMITS.visibilityTimeoutSeconds, ' s')
          range(add, id, 'MessageRetentionPeriod', p.MessageRetentionPeriod, LIMITS.messageRetentionSeconds, ' s')
          range(add, id, 'DelaySeconds', p.DelaySeconds, LIMITS.delaySeconds, ' s')
          const redrive = resolved(p.RedrivePolicy) as { maxReceiveCount?: unknown } | undefined
          if (redrive && typeof redrive === 'object') range(add, id, 'RedrivePolicy.maxReceiveCount', redrive.maxReceiveCount, LIMITS.maxReceiveCount)
          break
        }
        case 'AWS::Kinesis::Stream':
          range(add, id, 'RetentionPeriodHours', p.RetentionPeriodHours, LIMITS.retentionHours, ' h')
          if (literal(p.ShardCount) !== undefined && literal(p.ShardCount)! < 1) add(id, `ShardCount ${p.ShardCount} is less than 1`)
          break
        case 'AWS::DynamoDB::Table':
        case 'AWS::DynamoDB::GlobalTable': {
          const gsi = Array.isArray(p.GlobalSecondaryIndexes) ? p.GlobalSecondaryIndexes.length : 0
          const lsi = Array.isArray(p.LocalSecondaryIndexes) ? p.LocalSecondaryIndexes.length : 0
          if (gsi > LIMITS.globalIndexesPerTable) add(id, `${gsi} global secondary indexes, more than ${LIMITS.globalIndexesPerTable}`)
          if (lsi > LIMITS.localIndexesPerTable) add(id, `${lsi} local secondary indexes, more than ${LIMITS.localIndexesPerTable}`)
          break
        }
        case 'Custom::LogRetention': {
          // CDK's log retention resource: CloudFormation does not check its value, CloudWatch Logs refuses it at deploy time
          const allowed = (allowedValues(spec, 'AWS::Logs::LogGroup', 'RetentionInDays') as readonly number[] | undefined) ?? RETENTION_DAYS
          const days = literal(p.RetentionInDays)
          if (days !== undefined && !allowed.includes(days)) add(id, `RetentionInDays ${days} is not one of ${allowed.join(', ')}`)
          break
        }
      }
    }
    for (const [role, size] of inlineByRole) {
      if (size > LIMITS.roleInlinePolicies) add(role, `inline policies of ${size} characters in all, more than ${LIMITS.roleInlinePolicies}`)
    }
  }
  return out
}

function lambdaLimits(add: Add, id: string, r: TemplateResource, resolved: (v: unknown) => unknown, assetBytes: Readonly<Record<string, number>>, resources: Record<string, TemplateResource>): void {
  const p = r.Properties ?? {}
  range(add, id, 'MemorySize', p.MemorySize, LIMITS.memoryMb, ' MB')
  range(add, id, 'Timeout', p.Timeout, LIMITS.timeoutSeconds, ' s')
  range(add, id, 'EphemeralStorage.Size', (p.EphemeralStorage as { Size?: unknown } | undefined)?.Size, LIMITS.ephemeralStorageMb, ' MB')
  const env = resolved((p.Environment as { Variables?: unknown } | undefined)?.Variables)
  if (env && typeof env === 'object') {
    const size = environmentSize(env as Record<string, unknown>)
    if (size > LIMITS.environmentBytes) add(id, `environment of ${size} bytes, more than ${LIMITS.environmentBytes}`)
  }
  // the function's bundle and its layers', unzipped
  const assetOf = (res: TemplateResource | undefined) => {
    const path = res?.Metadata?.['aws:asset:path']
    return typeof path === 'string' ? assetBytes[path] : undefined
  }
  const own = assetOf(r)
  if (own === undefined) return
  let total = own
  for (const layer of Array.isArray(p.Layers) ? p.Layers : []) {
    const target = intrinsicName(layer) === 'Ref' ? String((layer as { Ref: unknown }).Ref) : undefined
    total += (target === undefined ? undefined : assetOf(resources[target])) ?? 0
  }
  if (total > LIMITS.unzippedCodeBytes) add(id, `code and layers of ${(total / 1_048_576).toFixed(1)} MB unzipped, more than 250 MB`)
}

function mappingLimits(add: Add, id: string, p: Record<string, unknown>, resolved: (v: unknown) => unknown, queues: Map<string, TemplateResource>, functions: Map<string, { r: TemplateResource }>): void {
  const source = resolved(p.EventSourceArn)
  const service = typeof source === 'string' ? source.split(':')[2] : undefined
  const stream = service === 'kinesis' || service === 'dynamodb'
  range(add, id, 'MaximumBatchingWindowInSeconds', p.MaximumBatchingWindowInSeconds, LIMITS.batchingWindowSeconds, ' s')
  if (stream) {
    range(add, id, 'ParallelizationFactor', p.ParallelizationFactor, LIMITS.parallelizationFactor)
    range(add, id, 'BatchSize', p.BatchSize, LIMITS.streamBatchSize)
    range(add, id, 'MaximumRetryAttempts', p.MaximumRetryAttempts, LIMITS.retryAttempts)
    const age = literal(p.MaximumRecordAgeInSeconds)
    if (age !== undefined && age !== -1) range(add, id, 'MaximumRecordAgeInSeconds', age, LIMITS.recordAgeSeconds, ' s')
    range(add, id, 'TumblingWindowInSeconds', p.TumblingWindowInSeconds, LIMITS.tumblingWindowSeconds, ' s')
    if (p.StartingPosition === undefined) add(id, `StartingPosition is required for a ${service} source`)
  }
  if (service === 'sqs') {
    const queue = queues.get(source as string)
    const fifo = queue?.Properties?.FifoQueue === true || queue?.Properties?.FifoQueue === 'true' || String(source).endsWith('.fifo')
    range(add, id, 'BatchSize', p.BatchSize, fifo ? LIMITS.fifoQueueBatchSize : LIMITS.queueBatchSize)
    const batch = literal(p.BatchSize)
    const window = literal(p.MaximumBatchingWindowInSeconds) ?? 0
    if (batch !== undefined && batch > 10 && window < 1) add(id, `BatchSize ${batch} above 10 needs MaximumBatchingWindowInSeconds of at least 1 s`)
    for (const k of ['ParallelizationFactor', 'StartingPosition', 'BisectBatchOnFunctionError', 'MaximumRetryAttempts', 'MaximumRecordAgeInSeconds', 'TumblingWindowInSeconds']) {
      if (p[k] !== undefined) add(id, `${k} does not apply to an SQS source`)
    }
    // the queue must hide a message at least as long as the function may take on it
    const fnName = resolved(p.FunctionName)
    const fn = typeof fnName === 'string' ? functions.get(fnName) : undefined
    if (queue && fn) {
      const visibility = literal(queue.Properties?.VisibilityTimeout) ?? 30
      const timeout = literal(fn.r.Properties?.Timeout) ?? 3
      if (visibility < timeout) add(id, `the queue's visibility timeout (${visibility} s) is shorter than the function's timeout (${timeout} s)`)
    }
  }
}
