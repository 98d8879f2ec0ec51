/**
 * `floe teardown --stack` rehearsed against the rehearsal's resources: the
 * teardown's own plan and run (lib/core/teardown) through the port it uses
 * on AWS (lib/aws/teardown.ts), on the emulators. CloudFormation is stood in
 * by the stacks as the templates declare them (each created resource with
 * its `DeletionPolicy`); deleting a stack deletes what it does not retain as
 * CloudFormation does, failing as it fails on a table with deletion
 * protection or a bucket that is not empty. The outcome is read back from
 * the emulators.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { KinesisClient } from '@aws-sdk/client-kinesis'
import type { S3Client } from '@aws-sdk/client-s3'
import type { SQSClient } from '@aws-sdk/client-sqs'
import { CloudWatchLogsClient, RDSClient, teardownPort, type StackSource } from '../../aws/teardown'
import type { ResourcePlan } from '../../core/rehearse/resource-plan'
import type { AssemblyStack } from '../../core/rehearse/template'
import { deploymentStacks, handled, plannedResources, resourceKey, teardownSteps, type ResourceFacts, type StackDescription, type StackResource } from '../../core/teardown/teardown-plan'
import { runTeardown } from '../../core/teardown/teardown-run'

export interface TeardownRehearsal {
  readonly ok: boolean
  /** Each step as the command prints it, with its outcome. */
  readonly steps: readonly { readonly step: string; readonly ok: boolean; readonly detail?: string }[]
  /** Resources the teardown deleted (read back as gone). */
  readonly deleted: number
  /** What is still there after it. */
  readonly left: readonly string[]
}

export interface TeardownRehearsalOptions {
  readonly stacks: readonly AssemblyStack[]
  readonly plan: ResourcePlan
  /** A queue's URL by its ARN. */
  readonly queueUrls: Readonly<Record<string, string>>
  readonly clients: { readonly ddb: DynamoDBClient; readonly kinesis: KinesisClient; readonly s3: S3Client; readonly sqs: SQSClient }
  readonly log?: (line: string) => void
}

/** The created resources of each stack as CloudFormation would list them. */
export function rehearsalStacks(o: Pick<TeardownRehearsalOptions, 'stacks' | 'plan' | 'queueUrls'>): StackDescription[] {
  const byStack = new Map<string, StackResource[]>()
  const add = (stack: string, logicalId: string, physicalId: string) => {
    const r = o.stacks.find((s) => s.name === stack)?.template.Resources?.[logicalId]
    if (!r) return
    const policy = (r as { DeletionPolicy?: unknown }).DeletionPolicy
    byStack.set(stack, [...(byStack.get(stack) ?? []), { logicalId, type: r.Type, physicalId, ...(typeof policy === 'string' ? { deletionPolicy: policy } : {}) }])
  }
  for (const t of o.plan.tables) add(t.stack, t.logicalId, t.name)
  for (const s of o.plan.streams) add(s.stack, s.logicalId, s.name)
  for (const b of o.plan.buckets) add(b.stack, b.logicalId, b.name)
  for (const q of o.plan.queues) add(q.stack, q.logicalId, o.queueUrls[q.arn] ?? q.name)
  return o.stacks.map((s) => ({ name: s.name, status: 'CREATE_COMPLETE', resources: byStack.get(s.name) ?? [] }))
}

export async function rehearseTeardown(o: TeardownRehearsalOptions): Promise<TeardownRehearsal> {
  const all = rehearsalStacks(o)
  const deleted = new Set<string>()
  // Unused: the rehearsal creates no log group or database; the port needs clients for them.
  const logs = new CloudWatchLogsClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } })
  const rds = new RDSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } })
  const stacks: StackSource = {
    describe: async (name) => (deleted.has(name) ? undefined : all.find((s) => s.name === name)),
    delete: async (name) => {
      const s = all.find((x) => x.name === name)
      if (!s) return
      const problems: string[] = []
      for (const r of plannedResources([s]).filter((x) => handled(x) && !x.retained)) {
        const f = await port.facts(r)
        if (!f.exists) continue
        if (f.deletionProtection) { problems.push(`${r.logicalId}: deletion protection is enabled`); continue }
        if ((f.objects ?? 0) > 0) { problems.push(`${r.logicalId}: The bucket you tried to delete is not empty`); continue }
        await port.delete(r)
      }
      if (problems.length > 0) throw new Error(`DELETE_FAILED: ${problems.join('; ')}`)
      deleted.add(name)
    },
  }
  const port = teardownPort({ stacks, ...o.clients, logs, rds, pollMs: 100 })
  try {
    const names = deploymentStacks(all[0]?.name ?? '').filter((n) => all.some((s) => s.name === n))
    const ordered = [...names.map((n) => all.find((s) => s.name === n)!), ...all.filter((s) => !names.includes(s.name))]
    const facts = new Map<string, ResourceFacts>()
    const listed = plannedResources(ordered).filter(handled)
    await Promise.all(listed.map(async (r) => facts.set(resourceKey(r.stack, r.logicalId), await port.facts(r))))
    const resources = plannedResources(ordered, facts)
    const outcome = await runTeardown(port, ordered, resources, teardownSteps(ordered, facts), o.log)
    const left: string[] = []
    for (const r of listed) if ((await port.facts(r)).exists) left.push(`${r.stack}/${r.logicalId}`)
    return { ok: outcome.ok && left.length === 0, steps: outcome.steps, deleted: listed.length - left.length, left }
  } finally {
    logs.destroy()
    rds.destroy()
  }
}
