/**
 * The AWS port's calls for the services no emulator here serves (RDS,
 * CloudWatch Logs), against stand-ins that answer as those services do:
 * the order and parameters of the calls, and the wait for "not found".
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs'
import type { RDSClient } from '@aws-sdk/client-rds'
import { describe, expect, it } from 'vitest'
import { deletionPolicies, teardownPort, type StackSource } from '../../../lib/aws/teardown'
import { plannedResources, teardownSteps, type StackDescription } from '../../../lib/core/teardown/teardown-plan'
import { runTeardown } from '../../../lib/core/teardown/teardown-run'

type Call = { readonly command: string; readonly input: Record<string, unknown> }

const notFound = (name: string) => Object.assign(new Error(`${name}`), { name })

/** An RDS stand-in: a cluster with deletion protection and one instance; deletions take two looks to finish. */
function fakeRds(calls: Call[]) {
  const state = { cluster: 'available' as string | undefined, instance: 'available' as string | undefined, subnets: true, protection: true, looks: 0 }
  const client = {
    async send(cmd: { constructor: { name: string }; input: Record<string, unknown> }) {
      const command = cmd.constructor.name.replace(/Command$/, '')
      if (!command.startsWith('Describe')) calls.push({ command, input: cmd.input })
      switch (command) {
        case 'DescribeDBClusters':
          if (state.cluster === 'deleting' && ++state.looks > 1) state.cluster = undefined
          if (!state.cluster) throw notFound('DBClusterNotFoundFault')
          return { DBClusters: [{ DeletionProtection: state.protection, Status: state.cluster, ServerlessV2ScalingConfiguration: { MinCapacity: 0 } }] }
        case 'DescribeDBInstances':
          if (state.instance === 'deleting' && ++state.looks > 1) state.instance = undefined
          if (!state.instance) throw notFound('DBInstanceNotFoundFault')
          return { DBInstances: [{ DBInstanceStatus: state.instance }] }
        case 'DescribeDBSubnetGroups':
          if (!state.subnets) throw notFound('DBSubnetGroupNotFoundFault')
          return { DBSubnetGroups: [{}] }
        case 'ModifyDBCluster':
          state.protection = false
          return {}
        case 'DeleteDBInstance':
          state.instance = 'deleting'
          state.looks = 0
          return {}
        case 'DeleteDBCluster':
          if (state.protection) throw Object.assign(new Error('Cannot delete protected Cluster'), { name: 'InvalidParameterCombination' })
          if (state.instance) throw Object.assign(new Error('Cluster cannot be deleted, it still contains DB instances'), { name: 'InvalidDBClusterStateFault' })
          state.cluster = 'deleting'
          state.looks = 0
          return {}
        case 'DeleteDBSubnetGroup':
          state.subnets = false
          return {}
      }
      throw new Error(`unexpected ${command}`)
    },
  }
  return client as unknown as RDSClient
}

function fakeLogs(calls: Call[], groups: Map<string, number>) {
  return {
    async send(cmd: { constructor: { name: string }; input: Record<string, unknown> }) {
      const command = cmd.constructor.name.replace(/Command$/, '')
      if (command === 'DescribeLogGroups') {
        const prefix = String(cmd.input.logGroupNamePrefix)
        return { logGroups: [...groups].filter(([n]) => n.startsWith(prefix)).map(([logGroupName, storedBytes]) => ({ logGroupName, storedBytes })) }
      }
      calls.push({ command, input: cmd.input })
      if (command === 'DeleteLogGroup') {
        if (!groups.delete(String(cmd.input.logGroupName))) throw notFound('ResourceNotFoundException')
        return {}
      }
      throw new Error(`unexpected ${command}`)
    },
  } as unknown as CloudWatchLogsClient
}

const data: StackDescription = {
  name: 'FloeData',
  status: 'CREATE_COMPLETE',
  resources: [
    { logicalId: 'Subnets', type: 'AWS::RDS::DBSubnetGroup', physicalId: 'floe-subnets', deletionPolicy: 'Retain' },
    { logicalId: 'Cluster', type: 'AWS::RDS::DBCluster', physicalId: 'floe-search', deletionPolicy: 'Retain' },
    { logicalId: 'Writer', type: 'AWS::RDS::DBInstance', physicalId: 'floe-search-writer', deletionPolicy: 'Retain' },
    { logicalId: 'EnrichLogs', type: 'AWS::Logs::LogGroup', physicalId: '/floe/FloeApp/enrich', deletionPolicy: 'Retain' },
  ],
}

function port(calls: Call[], finalSnapshot?: string) {
  const groups = new Map([['/floe/FloeApp/enrich', 2048], ['/floe/FloeApp/enrich-other', 1]])
  let gone = false
  const stacks: StackSource = {
    describe: async () => (gone ? undefined : data),
    delete: async (name) => {
      calls.push({ command: 'DeleteStack', input: { StackName: name } })
      gone = true
    },
  }
  const unused = {} as never
  return { groups, port: teardownPort({ stacks, ddb: unused, kinesis: unused, s3: unused, sqs: unused, rds: fakeRds(calls), logs: fakeLogs(calls, groups), pollMs: 1, sleep: async () => {}, ...(finalSnapshot ? { finalSnapshot } : {}) }) }
}

describe('the AWS port: the database and log groups', () => {
  it('deletes the instance, turns off protection, deletes the cluster without a final snapshot, then the stack, the subnet group and the log group', async () => {
    const calls: Call[] = []
    const { port: p, groups } = port(calls)
    const resources = plannedResources([data])
    const out = await runTeardown(p, [data], resources, teardownSteps([data]))
    expect(out.ok).toBe(true)
    expect(calls).toEqual([
      { command: 'DeleteDBInstance', input: { DBInstanceIdentifier: 'floe-search-writer' } },
      { command: 'ModifyDBCluster', input: { DBClusterIdentifier: 'floe-search', DeletionProtection: false, ApplyImmediately: true } },
      { command: 'DeleteDBCluster', input: { DBClusterIdentifier: 'floe-search', SkipFinalSnapshot: true } },
      { command: 'DeleteStack', input: { StackName: 'FloeData' } },
      { command: 'DeleteDBSubnetGroup', input: { DBSubnetGroupName: 'floe-subnets' } },
      { command: 'DeleteLogGroup', input: { logGroupName: '/floe/FloeApp/enrich' } },
    ])
    // a log group of a longer name with the same prefix is not this one
    expect([...groups.keys()]).toEqual(['/floe/FloeApp/enrich-other'])
  })

  it('takes a final snapshot when asked', async () => {
    const calls: Call[] = []
    const { port: p } = port(calls, 'floe-final')
    await runTeardown(p, [data], plannedResources([data]), teardownSteps([data]))
    expect(calls.find((c) => c.command === 'DeleteDBCluster')?.input).toEqual({ DBClusterIdentifier: 'floe-search', FinalDBSnapshotIdentifier: 'floe-final' })
  })

  it('reads a cluster\u2019s protection and minimum capacity and a log group\u2019s stored bytes', async () => {
    const { port: p } = port([])
    const [subnets, cluster, , logs] = plannedResources([data])
    expect(await p.facts(cluster!)).toEqual({ exists: true, deletionProtection: true, minCapacity: 0 })
    expect(await p.facts(logs!)).toEqual({ exists: true, bytes: 2048 })
    expect(await p.facts(subnets!)).toEqual({ exists: true })
  })
})

describe('deletionPolicies', () => {
  it('reads each resource\u2019s DeletionPolicy from a JSON template; none from YAML or nothing', () => {
    expect(deletionPolicies(JSON.stringify({ Resources: { A: { Type: 'x', DeletionPolicy: 'Retain' }, B: { Type: 'y' } } }))).toEqual({ A: 'Retain' })
    expect(deletionPolicies('Resources:\n  A: {}')).toEqual({})
    expect(deletionPolicies(undefined)).toEqual({})
  })
})
