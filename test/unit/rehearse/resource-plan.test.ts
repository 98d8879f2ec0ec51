import { describe, expect, it } from 'vitest'
import { formatPlan, resourcePlan } from '../../../lib/core/rehearse/resource-plan'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'

const stacks: AssemblyStack[] = [{
  name: 'S',
  template: {
    Resources: {
      T: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          TableName: 'orders',
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }, { AttributeName: 'n', AttributeType: 'N' }],
          LocalSecondaryIndexes: [{ IndexName: 'byN', KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'n', KeyType: 'RANGE' }], Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['x'] } }],
          StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
          TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: false },
          ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 },
        },
      },
      K: { Type: 'AWS::Kinesis::Stream', Properties: { StreamModeDetails: { StreamMode: 'ON_DEMAND' }, RetentionPeriodHours: 48 } },
      B: { Type: 'AWS::S3::Bucket', Properties: { BucketName: { 'Fn::Sub': 'b-${AWS::AccountId}' }, VersioningConfiguration: { Status: 'Enabled' } } },
      D: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
      Q: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true, VisibilityTimeout: 90, RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['D', 'Arn'] }, maxReceiveCount: 3 } } },
      C: { Type: 'AWS::RDS::DBCluster', Properties: {} },
      U: { Type: 'AWS::Kinesis::Stream', Properties: { Name: { Ref: 'Missing' } } },
    },
  },
}]

describe('resource plan', () => {
  const plan = resourcePlan(stacks, assemblyResolver(stacks))

  it('reads a table\'s keys, local indexes, stream and billing; TTL only when enabled', () => {
    expect(plan.tables).toEqual([{
      stack: 'S', logicalId: 'T', name: 'orders',
      keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      attributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }, { AttributeName: 'n', AttributeType: 'N' }],
      globalIndexes: [],
      localIndexes: [{ IndexName: 'byN', KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'n', KeyType: 'RANGE' }], Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['x'] } }],
      streamViewType: 'NEW_AND_OLD_IMAGES',
      billingMode: 'PROVISIONED',
    }])
  })

  it('an on-demand stream is one shard locally; names resolve through the resolver', () => {
    expect(plan.streams).toEqual([expect.objectContaining({ logicalId: 'K', shardCount: 1, declared: 'ON_DEMAND', retentionHours: 48 })])
    expect(plan.streams[0]!.name).toMatch(/^S-K-/)
    expect(plan.buckets).toEqual([{ stack: 'S', logicalId: 'B', name: 'b-000000000000', versioning: true }])
  })

  it('a queue\'s redrive names its dead-letter queue\'s ARN; FIFO names end in .fifo', () => {
    const q = plan.queues.find((x) => x.logicalId === 'Q')!
    const d = plan.queues.find((x) => x.logicalId === 'D')!
    expect(d.name).toMatch(/\.fifo$/)
    expect(q).toMatchObject({ fifo: true, visibilityTimeoutSeconds: 90, messageRetentionSeconds: 345_600, redrive: { deadLetterTargetArn: d.arn, maxReceiveCount: 3 } })
  })

  it('lists what is not created with its stand-in, and what cannot be resolved as a problem', () => {
    expect(plan.notCreated).toEqual([expect.objectContaining({ logicalId: 'C', type: 'AWS::RDS::DBCluster', standsIn: expect.stringMatching(/PostgreSQL/) })])
    expect(plan.problems).toEqual([{ stack: 'S', resource: 'U', problem: expect.stringMatching(/^not created locally: /) }])
    expect(formatPlan(plan)).toMatch(/not created locally: AWS::RDS::DBCluster ×1, stands in: /)
  })
})
