import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb'
import { DescribeStreamSummaryCommand } from '@aws-sdk/client-kinesis'
import { HeadBucketCommand } from '@aws-sdk/client-s3'
import { beforeAll, describe, expect, it } from 'vitest'
import { buckets, localNames, streams, tables } from '../../../lib/infra/resources'
import { logicalId } from '../../../lib/infra/stacks'
import { provision } from '../../../lib/local/provision'
import { testClients, uniquePrefix } from '../../support/stack'
import { resourcesNamed, synthTemplates } from '../../support/synth'

const aws = testClients()
const names = localNames(uniquePrefix())
const { data } = synthTemplates()

const sortKeys = <T extends { AttributeName?: string }>(xs: T[] | undefined) => [...(xs ?? [])].sort((a, b) => a.AttributeName!.localeCompare(b.AttributeName!))

beforeAll(async () => {
  await provision(aws, names)
  // Provisioning twice changes nothing and does not fail.
  await provision(aws, names)
})

/** The properties of the one template resource of `type` whose logical id starts with `name`. */
function oneResource(type: string, name: string): any {
  const found = Object.values(resourcesNamed(data, type, name))
  expect(found, `template ${type} ${name}`).toHaveLength(1)
  return found[0].Properties
}

describe('the local runtime creates exactly what the CDK app deploys', () => {
  it('has one table per template table, with the same keys, indexes and TTL', async () => {
    const templateTables = data.findResources('AWS::DynamoDB::GlobalTable')
    expect(Object.keys(templateTables)).toHaveLength(Object.keys(tables).length)
    for (const key of Object.keys(tables) as (keyof typeof tables)[]) {
      const cfn = oneResource('AWS::DynamoDB::GlobalTable', `${logicalId(key)}Table`)
      const { Table: local } = await aws.ddb.send(new DescribeTableCommand({ TableName: names.tables[key] }))
      expect(local!.KeySchema).toEqual(cfn.KeySchema)
      expect(sortKeys(local!.AttributeDefinitions)).toEqual(sortKeys(cfn.AttributeDefinitions))
      const localIndexes = (local!.GlobalSecondaryIndexes ?? []).map((g) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema })).sort((a, b) => a.IndexName!.localeCompare(b.IndexName!))
      const cfnIndexes = (cfn.GlobalSecondaryIndexes ?? []).map((g: any) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema }))
      expect(localIndexes).toEqual(cfnIndexes)
      const ttl = await aws.ddb.send(new DescribeTimeToLiveCommand({ TableName: names.tables[key] }))
      const cfnTtl = cfn.TimeToLiveSpecification
      if (cfnTtl?.Enabled) {
        expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: cfnTtl.AttributeName, TimeToLiveStatus: 'ENABLED' })
      } else {
        expect(ttl.TimeToLiveDescription?.TimeToLiveStatus ?? 'DISABLED').toBe('DISABLED')
      }
      expect(cfn.BillingMode).toBe('PAY_PER_REQUEST')
    }
  })

  it('has one stream per template stream, with the same shard count and retention', async () => {
    expect(Object.keys(data.findResources('AWS::Kinesis::Stream'))).toHaveLength(Object.keys(streams).length)
    for (const key of Object.keys(streams) as (keyof typeof streams)[]) {
      const cfn = oneResource('AWS::Kinesis::Stream', `${logicalId(key)}Stream`)
      const { StreamDescriptionSummary: local } = await aws.kinesis.send(new DescribeStreamSummaryCommand({ StreamName: names.streams[key] }))
      expect(local!.OpenShardCount).toBe(cfn.ShardCount)
      expect(local!.RetentionPeriodHours).toBe(cfn.RetentionPeriodHours)
    }
  })

  it('has one bucket per template bucket', async () => {
    expect(Object.keys(data.findResources('AWS::S3::Bucket'))).toHaveLength(Object.keys(buckets).length)
    for (const key of Object.keys(buckets) as (keyof typeof buckets)[]) {
      expect(Object.keys(resourcesNamed(data, 'AWS::S3::Bucket', `${logicalId(key)}Bucket`)), `template bucket for ${key}`).toHaveLength(1)
      await expect(aws.s3.send(new HeadBucketCommand({ Bucket: names.buckets[key] }))).resolves.toBeDefined()
    }
  })
})
