import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb'
import { DescribeStreamSummaryCommand } from '@aws-sdk/client-kinesis'
import { GetBucketVersioningCommand, HeadBucketCommand } from '@aws-sdk/client-s3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import { resourcePlan, type ResourcePlan } from '../../../lib/core/rehearse/resource-plan'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'
import { createResources, type CreateOutcome } from '../../../lib/local/rehearse/resources'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'
import { projectRoot } from '../../../lib/local/handlers'
import { spawn } from 'node:child_process'
import { synthAssembly } from '../../support/synth'

/**
 * The data resources of the synthesized assembly, created on the emulators
 * from the templates and described back: what was created is what the
 * templates declare.
 */
describe('rehearsal resources from the templates', () => {
  const c = testClients()
  let dir: string
  let stacks: AssemblyStack[]
  let plan: ResourcePlan
  let outcome: CreateOutcome

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-resources-'))
    synthAssembly(dir)
    // Stack names of their own: the generated physical names then do not clash with another file's.
    const prefix = uniquePrefix('R')
    stacks = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    plan = resourcePlan(stacks, assemblyResolver(stacks))
    outcome = await createResources(plan, c)
  }, 180_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('plans every table, stream, bucket and queue of the templates and lists what is not created', () => {
    const count = (type: string) => stacks.reduce((n, s) => n + Object.values(s.template.Resources ?? {}).filter((r) => r.Type === type).length, 0)
    expect(plan.tables).toHaveLength(count('AWS::DynamoDB::GlobalTable') + count('AWS::DynamoDB::Table'))
    expect(plan.streams).toHaveLength(count('AWS::Kinesis::Stream'))
    expect(plan.buckets).toHaveLength(count('AWS::S3::Bucket'))
    expect(plan.queues).toHaveLength(count('AWS::SQS::Queue'))
    expect(plan.problems).toEqual([])
    expect(plan.notCreated.find((x) => x.type === 'AWS::RDS::DBCluster')?.standsIn).toMatch(/Data API/)
    // queues wait for an SQS endpoint: reported, not silently skipped
    expect(outcome.failed.map((f) => f.kind)).toEqual(plan.queues.map(() => 'queue'))
  })

  it('creates each table with the template\'s keys, attributes, indexes, TTL and billing', async () => {
    expect(plan.tables.length).toBeGreaterThan(0)
    for (const t of plan.tables) {
      const declared = stacks.find((s) => s.name === t.stack)!.template.Resources![t.logicalId]!.Properties as Record<string, any>
      const { Table } = await c.ddb.send(new DescribeTableCommand({ TableName: t.name }))
      expect(Table?.KeySchema, t.logicalId).toEqual(declared.KeySchema)
      const sortByName = (xs: { AttributeName?: string }[]) => [...xs].sort((a, b) => String(a.AttributeName).localeCompare(String(b.AttributeName)))
      expect(sortByName(Table?.AttributeDefinitions ?? []), t.logicalId).toEqual(sortByName(declared.AttributeDefinitions))
      const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((g) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection })).sort((a, b) => String(a.IndexName).localeCompare(String(b.IndexName)))
      const declaredIndexes = (declared.GlobalSecondaryIndexes ?? []).map((g: any) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection })).sort((a: any, b: any) => a.IndexName.localeCompare(b.IndexName))
      expect(indexes, t.logicalId).toEqual(declaredIndexes)
      expect(Table?.BillingModeSummary?.BillingMode ?? 'PROVISIONED', t.logicalId).toBe(declared.BillingMode ?? 'PROVISIONED')
      const ttl = await c.ddb.send(new DescribeTimeToLiveCommand({ TableName: t.name }))
      if (declared.TimeToLiveSpecification?.Enabled) expect(ttl.TimeToLiveDescription, t.logicalId).toMatchObject({ AttributeName: declared.TimeToLiveSpecification.AttributeName, TimeToLiveStatus: 'ENABLED' })
      else expect(ttl.TimeToLiveDescription?.TimeToLiveStatus ?? 'DISABLED', t.logicalId).toBe('DISABLED')
      expect(Table?.StreamSpecification?.StreamViewType, t.logicalId).toBe(declared.StreamSpecification?.StreamViewType)
    }
  })

  it('creates each stream with the template\'s shard count and retention', async () => {
    expect(plan.streams.length).toBeGreaterThan(0)
    for (const s of plan.streams) {
      const declared = stacks.find((x) => x.name === s.stack)!.template.Resources![s.logicalId]!.Properties as Record<string, any>
      const { StreamDescriptionSummary: d } = await c.kinesis.send(new DescribeStreamSummaryCommand({ StreamName: s.name }))
      expect(d?.StreamStatus).toBe('ACTIVE')
      expect(d?.OpenShardCount, s.logicalId).toBe(declared.StreamModeDetails?.StreamMode === 'ON_DEMAND' ? 1 : declared.ShardCount ?? 1)
      expect(d?.RetentionPeriodHours ?? 24, s.logicalId).toBe(declared.RetentionPeriodHours ?? 24)
    }
  })

  it('creates each bucket under the resolver\'s physical name, versioned as declared', async () => {
    expect(plan.buckets.length).toBeGreaterThan(0)
    for (const b of plan.buckets) {
      await c.s3.send(new HeadBucketCommand({ Bucket: b.name }))
      const declared = stacks.find((x) => x.name === b.stack)!.template.Resources![b.logicalId]!.Properties as Record<string, any>
      const v = await c.s3.send(new GetBucketVersioningCommand({ Bucket: b.name }))
      expect(v.Status === 'Enabled', b.logicalId).toBe(declared.VersioningConfiguration?.Status === 'Enabled')
    }
    expect(outcome.created.filter((x) => x.kind !== 'queue')).toHaveLength(plan.tables.length + plan.streams.length + plan.buckets.length)
  })

  it('a second creation keeps what is there', async () => {
    const again = await createResources({ ...plan, queues: [] }, c)
    expect(again.failed).toEqual([])
    expect(again.created.filter((x) => x.created)).toEqual([])
  })

  it('a creation killed mid-way (kill -9) is completed by the next one: every resource there as declared', async () => {
    const prefix = uniquePrefix('K')
    const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/rehearse-create.mts'), dir, prefix, JSON.stringify(sharedEndpoints())], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    // killed as soon as the first resource is reported created: the others are in flight or not begun
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d) => {
        out += d
        if (/^created /m.test(out)) { child.kill('SIGKILL'); resolve() }
      })
      child.once('exit', () => resolve())
    })
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)))
    expect(child.signalCode, out).toBe('SIGKILL')
    const renamed = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    const again = resourcePlan(renamed, assemblyResolver(renamed))
    const done = await createResources({ ...again, queues: [] }, c)
    expect(done.failed).toEqual([])
    expect(done.created).toHaveLength(again.tables.length + again.streams.length + again.buckets.length)
    for (const t of again.tables) expect((await c.ddb.send(new DescribeTableCommand({ TableName: t.name }))).Table?.TableStatus).toBe('ACTIVE')
    for (const s of again.streams) expect((await c.kinesis.send(new DescribeStreamSummaryCommand({ StreamName: s.name }))).StreamDescriptionSummary).toMatchObject({ StreamStatus: 'ACTIVE', OpenShardCount: s.shardCount })
    for (const b of again.buckets) await c.s3.send(new HeadBucketCommand({ Bucket: b.name }))
  }, 120_000)
})
