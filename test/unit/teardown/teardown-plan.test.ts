import { describe, expect, it } from 'vitest'
import {
  deploymentStacks,
  describeResource,
  describeStep,
  dollars,
  monthlyCostWhileKept,
  plannedResources,
  resourceKey,
  teardownSteps,
  totalWhileKept,
  type ResourceFacts,
  type StackDescription,
} from '../../../lib/core/teardown/teardown-plan'
import { runTeardown, type TeardownPort } from '../../../lib/core/teardown/teardown-run'
import { prices } from '../../../lib/infra/prices'

/** The two stacks of a deployment with the search store, as CloudFormation lists them (a shortened set). */
const app: StackDescription = {
  name: 'FloeApp',
  status: 'UPDATE_COMPLETE',
  resources: [
    { logicalId: 'CollectorFn', type: 'AWS::Lambda::Function', physicalId: 'FloeApp-Collector-1' },
    { logicalId: 'CollectorLogs', type: 'AWS::Logs::LogGroup', physicalId: '/floe/FloeApp/collector', deletionPolicy: 'Retain' },
    { logicalId: 'RecoverRunsQueue', type: 'AWS::SQS::Queue', physicalId: 'https://sqs.us-east-1.amazonaws.com/1/recover.fifo', deletionPolicy: 'Delete' },
    { logicalId: 'ScratchBucket', type: 'AWS::S3::Bucket', physicalId: 'floeapp-scratch' },
  ],
}
const data: StackDescription = {
  name: 'FloeData',
  status: 'CREATE_COMPLETE',
  resources: [
    { logicalId: 'EventsTable', type: 'AWS::DynamoDB::GlobalTable', physicalId: 'FloeData-Events', deletionPolicy: 'Retain' },
    { logicalId: 'RawStream', type: 'AWS::Kinesis::Stream', physicalId: 'FloeData-Raw', deletionPolicy: 'Retain' },
    { logicalId: 'ArchiveBucket', type: 'AWS::S3::Bucket', physicalId: 'floedata-archive', deletionPolicy: 'Retain' },
    { logicalId: 'SearchDatabaseSubnets', type: 'AWS::RDS::DBSubnetGroup', physicalId: 'floedata-subnets', deletionPolicy: 'Retain' },
    { logicalId: 'SearchDatabase', type: 'AWS::RDS::DBCluster', physicalId: 'floedata-search', deletionPolicy: 'Retain' },
    { logicalId: 'SearchDatabaseWriter', type: 'AWS::RDS::DBInstance', physicalId: 'floedata-search-writer', deletionPolicy: 'Retain' },
    { logicalId: 'DatabaseVpc', type: 'AWS::EC2::VPC', physicalId: 'vpc-1' },
  ],
}

const withFacts = (entries: [string, string, ResourceFacts][]) => new Map(entries.map(([s, id, f]) => [resourceKey(s, id), f]))

describe('deploymentStacks', () => {
  it('names both stacks of a deployment from either, the app stack first', () => {
    expect(deploymentStacks('FloeApp')).toEqual(['FloeApp', 'FloeData'])
    expect(deploymentStacks('FloeData')).toEqual(['FloeApp', 'FloeData'])
    expect(deploymentStacks('FloeApp-staging')).toEqual(['FloeApp-staging', 'FloeData-staging'])
    expect(deploymentStacks('Something')).toEqual(['Something'])
  })
})

describe('teardownSteps', () => {
  it('deletes the app stack, then the database, then the data stack, then what the stacks kept', () => {
    const steps = teardownSteps([app, data]).map(describeStep)
    expect(steps).toEqual([
      // the app stack's non-retained bucket emptied so CloudFormation can delete it
      'empty AWS::S3::Bucket floeapp-scratch (objects and versions)',
      'delete stack FloeApp',
      // the cluster before its stack (its VPC): instance, protection off, cluster
      'delete AWS::RDS::DBInstance floedata-search-writer',
      'turn off deletion protection of AWS::RDS::DBCluster floedata-search',
      'delete AWS::RDS::DBCluster floedata-search',
      'delete stack FloeData',
      'delete AWS::RDS::DBSubnetGroup floedata-subnets',
      'turn off deletion protection of AWS::DynamoDB::GlobalTable FloeData-Events',
      'delete AWS::DynamoDB::GlobalTable FloeData-Events',
      'delete AWS::Kinesis::Stream FloeData-Raw',
      'empty AWS::S3::Bucket floedata-archive (objects and versions)',
      'delete AWS::S3::Bucket floedata-archive',
      'delete AWS::Logs::LogGroup /floe/FloeApp/collector',
    ])
  })

  it('leaves out what is gone already and a protection that is off', () => {
    const facts = withFacts([
      ['FloeData', 'RawStream', { exists: false }],
      ['FloeData', 'EventsTable', { exists: true, deletionProtection: false }],
      ['FloeData', 'SearchDatabase', { exists: true, deletionProtection: false }],
    ])
    const steps = teardownSteps([data], facts).map(describeStep)
    expect(steps).not.toContain('delete AWS::Kinesis::Stream FloeData-Raw')
    expect(steps.filter((s) => s.startsWith('turn off'))).toEqual([])
    expect(steps).toContain('delete AWS::DynamoDB::GlobalTable FloeData-Events')
  })

  it('a stack deleted already (a run stopped part-way): no stack deletion, only what it kept and is still there', () => {
    const facts = withFacts([['FloeData', 'SearchDatabase', { exists: false }], ['FloeData', 'SearchDatabaseWriter', { exists: false }], ['FloeData', 'RawStream', { exists: false }]])
    const steps = teardownSteps([{ ...data, status: 'DELETE_COMPLETE' }], facts).map(describeStep)
    expect(steps).toEqual([
      'delete AWS::RDS::DBSubnetGroup floedata-subnets',
      'turn off deletion protection of AWS::DynamoDB::GlobalTable FloeData-Events',
      'delete AWS::DynamoDB::GlobalTable FloeData-Events',
      'empty AWS::S3::Bucket floedata-archive (objects and versions)',
      'delete AWS::S3::Bucket floedata-archive',
    ])
  })

  it('a stack alone (no sibling): its own steps, the stack deletion before what it keeps', () => {
    const steps = teardownSteps([app]).map(describeStep)
    expect(steps.indexOf('delete stack FloeApp')).toBeLessThan(steps.indexOf('delete AWS::Logs::LogGroup /floe/FloeApp/collector'))
    // the queue goes with its stack
    expect(steps.some((s) => s.includes('SQS'))).toBe(false)
  })
})

describe('monthly cost while kept', () => {
  const r = (stack: StackDescription, id: string, f: ResourceFacts) => plannedResources([stack], withFacts([[stack.name, id, f]])).find((x) => x.logicalId === id)!

  it('prices a provisioned stream by its shards and an on-demand one by the stream hour', () => {
    expect(monthlyCostWhileKept(r(data, 'RawStream', { exists: true, shards: 7 }), prices)).toBeCloseTo(7 * 0.015 * 730) // the deploy guide's $77 for seven shards
    expect(monthlyCostWhileKept(r(data, 'RawStream', { exists: true, onDemand: true, shards: 4 }), prices)).toBeCloseTo(0.04 * 730)
  })

  it('prices stored bytes of tables, buckets and log groups; a queue costs nothing kept; an unknown size has no price', () => {
    const GiB = 1024 ** 3
    expect(monthlyCostWhileKept(r(data, 'EventsTable', { exists: true, bytes: 2 * GiB }), prices)).toBeCloseTo(0.5)
    expect(monthlyCostWhileKept(r(data, 'ArchiveBucket', { exists: true, bytes: 10 * GiB }), prices)).toBeCloseTo(0.23)
    expect(monthlyCostWhileKept(r(app, 'CollectorLogs', { exists: true, bytes: GiB }), prices)).toBeCloseTo(0.03)
    expect(monthlyCostWhileKept(r(app, 'RecoverRunsQueue', { exists: true }), prices)).toBe(0)
    expect(monthlyCostWhileKept(r(data, 'ArchiveBucket', { exists: true, objects: 20_000, moreObjects: true }), prices)).toBeUndefined()
    expect(monthlyCostWhileKept(r(data, 'DatabaseVpc', { exists: true }), prices)).toBeUndefined()
  })

  it('prices a cluster by its minimum capacity (0: nothing while paused)', () => {
    expect(monthlyCostWhileKept(r(data, 'SearchDatabase', { exists: true, minCapacity: 0 }), prices)).toBe(0)
    expect(monthlyCostWhileKept(r(data, 'SearchDatabase', { exists: true, minCapacity: 0.5 }), prices)).toBeCloseTo(0.5 * 0.12 * 730)
  })

  it('sums the known costs and counts the unknown ones; lines show cost and what happens', () => {
    const facts = withFacts([
      ['FloeData', 'RawStream', { exists: true, shards: 2 }],
      ['FloeData', 'EventsTable', { exists: true, bytes: 0, deletionProtection: true }],
    ])
    const resources = plannedResources([data], facts)
    const total = totalWhileKept(resources, prices)
    expect(total.dollars).toBeCloseTo(2 * 0.015 * 730)
    expect(total.unknown).toBe(4) // bucket, subnet group, cluster, instance: no facts
    const line = describeResource(resources.find((x) => x.logicalId === 'EventsTable')!, prices)
    expect(line).toBe('FloeData  AWS::DynamoDB::GlobalTable  FloeData-Events  (kept by the stack deletion: deleted after it; deletion protection on: turned off)  $0.00/month')
    expect(dollars(0.001)).toBe('<$0.01')
    expect(dollars(76.65)).toBe('$76.65')
  })
})

describe('runTeardown', () => {
  function fakePort(failOn?: string): { port: TeardownPort; calls: string[] } {
    const calls: string[] = []
    const gone = new Set<string>()
    const port: TeardownPort = {
      describeStack: async (name) => (gone.has(name) ? undefined : [app, data].find((s) => s.name === name)),
      facts: async (r) => ({ exists: !gone.has(r.physicalId) && !(r.retained === false && gone.has(r.stack)) }),
      unprotect: async (r) => void calls.push(`unprotect ${r.physicalId}`),
      empty: async (r) => (calls.push(`empty ${r.physicalId}`), 3),
      delete: async (r) => {
        if (r.physicalId === failOn) throw new Error('refused')
        calls.push(`delete ${r.physicalId}`)
        gone.add(r.physicalId)
      },
      deleteStack: async (name) => {
        calls.push(`deleteStack ${name}`)
        gone.add(name)
      },
    }
    return { port, calls }
  }

  it('carries out the steps in order and reads everything back as gone', async () => {
    const { port, calls } = fakePort()
    const resources = plannedResources([app, data])
    const out = await runTeardown(port, [app, data], resources, teardownSteps([app, data]))
    expect(calls[0]).toBe('empty floeapp-scratch')
    expect(calls.indexOf('deleteStack FloeApp')).toBeLessThan(calls.indexOf('delete floedata-search'))
    expect(calls.indexOf('delete floedata-search')).toBeLessThan(calls.indexOf('deleteStack FloeData'))
    expect(out.ok).toBe(true)
    expect(out.readBack.every((r) => r.gone)).toBe(true)
    expect(out.readBack.map((r) => r.what)).toContain('stack FloeData')
    expect(out.steps.find((s) => s.step.startsWith('empty'))?.detail).toBe('3 objects and versions deleted')
  })

  it('stops at a failed step and reads back what is left', async () => {
    const { port, calls } = fakePort('floedata-search')
    const resources = plannedResources([app, data])
    const out = await runTeardown(port, [app, data], resources, teardownSteps([app, data]))
    expect(out.ok).toBe(false)
    expect(out.steps.at(-1)).toEqual({ step: 'delete AWS::RDS::DBCluster floedata-search', ok: false, detail: 'refused' })
    expect(calls).not.toContain('deleteStack FloeData')
    expect(out.readBack.filter((r) => !r.gone).map((r) => r.what)).toContain('stack FloeData')
  })
})
