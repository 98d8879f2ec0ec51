/**
 * `floe teardown` against the stacks the CDK app synthesizes: everything the
 * templates keep on a stack deletion is of a kind the teardown deletes, and
 * the plan deletes the database before the data stack and the rest after it.
 */
import { describe, expect, it } from 'vitest'
import { describeStep, KIND_OF_TYPE, teardownSteps, type StackDescription } from '../../../lib/core/teardown/teardown-plan'
import { synthTemplates } from '../../support/synth'
import { functions } from '../../../lib/infra/functions'

const { app, data } = synthTemplates()

/** A stack as CloudFormation would list it after a deploy: the logical id stands for the physical one. */
function listed(name: string, template: { toJSON(): Record<string, any> }): StackDescription {
  const resources = Object.entries<any>(template.toJSON().Resources ?? {}).map(([logicalId, r]) => ({
    logicalId,
    type: r.Type as string,
    physicalId: logicalId,
    ...(r.DeletionPolicy ? { deletionPolicy: r.DeletionPolicy as string } : {}),
  }))
  return { name, status: 'CREATE_COMPLETE', resources }
}

const stacks = [listed('FloeApp', app), listed('FloeData', data)]
const steps = teardownSteps(stacks).map(describeStep)

describe('teardown of the synthesized stacks', () => {
  it('every resource the templates retain is of a kind the teardown deletes itself', () => {
    const retained = stacks.flatMap((s) => s.resources.filter((r) => r.deletionPolicy === 'Retain' || r.deletionPolicy === 'RetainExceptOnCreate' || r.deletionPolicy === 'Snapshot'))
    expect(retained.length).toBeGreaterThan(0)
    const unhandled = retained.filter((r) => !(r.type in KIND_OF_TYPE)).map((r) => `${r.type} ${r.logicalId}`)
    expect(unhandled).toEqual([])
    for (const r of retained) expect(steps).toContain(`delete ${r.type} ${r.logicalId}`)
  })

  it('keeps the data: tables, streams, buckets, the cluster with its instance and subnet group, and the log groups', () => {
    const count = (s: StackDescription, type: string) => s.resources.filter((r) => r.type === type && r.deletionPolicy === 'Retain').length
    const [appStack, dataStack] = stacks as [StackDescription, StackDescription]
    // the figures the deploy guide gives
    expect(count(dataStack, 'AWS::DynamoDB::GlobalTable')).toBe(5)
    expect(count(dataStack, 'AWS::Kinesis::Stream')).toBe(5)
    expect(count(dataStack, 'AWS::S3::Bucket')).toBe(2)
    expect(count(dataStack, 'AWS::RDS::DBCluster')).toBe(1)
    expect(count(dataStack, 'AWS::RDS::DBInstance')).toBe(1)
    expect(count(dataStack, 'AWS::RDS::DBSubnetGroup')).toBe(1)
    // one per function and the API's access log
    expect(count(appStack, 'AWS::Logs::LogGroup')).toBe(Object.keys(functions).length + 1)
  })

  it('deletes the app stack first, the database before the data stack, the rest after it; the queues go with their stack', () => {
    const at = (prefix: string) => steps.findIndex((s) => s.startsWith(prefix))
    expect(at('delete stack FloeApp')).toBeGreaterThanOrEqual(0)
    expect(at('delete stack FloeApp')).toBeLessThan(at('delete AWS::RDS::DBInstance'))
    expect(at('delete AWS::RDS::DBInstance')).toBeLessThan(at('delete AWS::RDS::DBCluster'))
    expect(at('delete AWS::RDS::DBCluster')).toBeLessThan(at('delete stack FloeData'))
    expect(at('delete stack FloeData')).toBeLessThan(at('delete AWS::DynamoDB::GlobalTable'))
    expect(at('delete stack FloeData')).toBeLessThan(at('delete AWS::Logs::LogGroup'))
    expect(steps.filter((s) => s.includes('AWS::SQS::Queue'))).toEqual([])
  })
})
