import { beforeAll, describe, expect, it } from 'vitest'
import { loadSpec } from '../../../lib/cli/rehearse-sources'
import { environmentSize, LIMITS, policySize } from '../../../lib/core/rehearse/limits'
import type { Spec } from '../../../lib/core/rehearse/spec'
import { checkAssembly } from '../../../lib/core/rehearse/templates'
import type { Template, TemplateResource } from '../../../lib/core/rehearse/template'

let spec: Spec
beforeAll(async () => { spec = await loadSpec() })

const fn = (props: Record<string, unknown> = {}, extra: Partial<TemplateResource> = {}): TemplateResource => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Code: { S3Bucket: 'b', S3Key: 'k.zip' }, Handler: 'index.handler', Runtime: 'nodejs22.x', ...props },
  ...extra,
})
const role: TemplateResource = { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] } } }
const problems = (resources: Record<string, TemplateResource>, o: { outputs?: Template['Outputs']; assetBytes?: Record<string, number> } = {}) =>
  checkAssembly([{ name: 'S', template: { Resources: { Role: role, ...resources }, ...(o.outputs ? { Outputs: o.outputs } : {}) } }], spec, { assetBytes: o.assetBytes ?? {} }).map((v) => `${v.resource}: ${v.problem}`)

const statements = (n: number, arn: unknown) => Array.from({ length: n }, (_, i) => ({ Effect: 'Allow', Action: [`dynamodb:GetItem`, `dynamodb:Query`], Resource: [arn, `arn:aws:dynamodb:us-east-1:000000000000:table/t${i}`] }))

describe('deploy-time limits', () => {
  it('resources and outputs per stack', () => {
    const many = Object.fromEntries(Array.from({ length: LIMITS.resourcesPerStack }, (_, i) => [`Q${i}`, { Type: 'AWS::SQS::Queue' }]))
    // with the role: 501 resources
    expect(problems(many)).toEqual(['(template): 501 resources, more than 500'])
    const outputs = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`O${i}`, { Value: 'x' }]))
    expect(problems({}, { outputs })).toEqual(['(template): 201 outputs, more than 200'])
  })

  it('a role\'s inline policies in all, counted after resolving the ARNs and without white space', () => {
    const arn = { 'Fn::GetAtt': ['Table', 'Arn'] }
    const doc = (n: number) => ({ Version: '2012-10-17', Statement: statements(n, arn) })
    const policy = (n: number): TemplateResource => ({ Type: 'AWS::IAM::Policy', Properties: { PolicyName: 'p', Roles: [{ Ref: 'Role' }], PolicyDocument: doc(n) } })
    const table: TemplateResource = { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }] } }
    expect(problems({ Table: table, P1: policy(20) })).toEqual([])
    // two policies that each fit but not together
    const one = policySize({ Version: '2012-10-17', Statement: statements(30, 'arn:aws:dynamodb:us-east-1:000000000000:table/S-Table-XXXXXXXXXXXX') })
    expect(one).toBeLessThan(LIMITS.roleInlinePolicies)
    expect(problems({ Table: table, P1: policy(30), P2: policy(30) })).toEqual([expect.stringMatching(/^Role: inline policies of \d+ characters in all, more than 10240$/)])
    expect(policySize({ a: 'x y', b: [1, 2] })).toBe('{"a":"xy","b":[1,2]}'.length)
  })

  it('a managed policy\'s size and the number attached to a role', () => {
    const managed: TemplateResource = { Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: { Version: '2012-10-17', Statement: statements(60, '*') } } }
    expect(problems({ M: managed })).toEqual([expect.stringMatching(/^M: managed policy of \d+ characters, more than 6144$/)])
    const arns = Array.from({ length: 11 }, (_, i) => `arn:aws:iam::aws:policy/P${i}`)
    expect(problems({ Role: { ...role, Properties: { ...role.Properties, ManagedPolicyArns: arns } } })).toEqual(['Role: 11 managed policies attached, more than 10'])
  })

  it('a function\'s environment of more than 4 KB, as Lambda measures it (the JSON of the variables), intrinsics resolved', () => {
    const vars = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`FLOE_TABLE_${i}`, { 'Fn::GetAtt': ['Role', 'Arn'] }]))
    const [problem] = problems({ F: fn({ Environment: { Variables: vars } }) })
    expect(problem).toMatch(/^F: environment of (\d+) bytes, more than 4096$/)
    expect(Number(/of (\d+) bytes/.exec(problem!)![1])).toBeGreaterThan(60 * 'arn:aws:iam::000000000000:role/'.length)
    expect(problems({ F: fn({ Environment: { Variables: { A: 'x'.repeat(4000) } } }) })).toEqual([])
    expect(environmentSize({ A: 'x' })).toBe(9)
  })

  it('memory, timeout and ephemeral storage ranges', () => {
    expect(problems({ F: fn({ MemorySize: 127, Timeout: 901, EphemeralStorage: { Size: 511 } }) })).toEqual([
      'F: MemorySize 127 MB is outside 128–10240 MB',
      'F: Timeout 901 s is outside 1–900 s',
      'F: EphemeralStorage.Size 511 MB is outside 512–10240 MB',
    ])
    expect(problems({ F: fn({ MemorySize: 10240, Timeout: 900 }) })).toEqual([])
  })

  it('the unzipped bundle, with its layers, up to 250 MB', () => {
    const meta = (path: string) => ({ Metadata: { 'aws:asset:path': path } })
    const layer: TemplateResource = { Type: 'AWS::Lambda::LayerVersion', Properties: { Content: { S3Bucket: 'b', S3Key: 'l.zip' } }, ...meta('asset.layer') }
    const assetBytes = { 'asset.fn': 200 * 1_048_576, 'asset.layer': 60 * 1_048_576 }
    expect(problems({ F: fn({}, meta('asset.fn')) }, { assetBytes })).toEqual([])
    expect(problems({ L: layer, F: fn({ Layers: [{ Ref: 'L' }] }, meta('asset.fn')) }, { assetBytes })).toEqual(['F: code and layers of 260.0 MB unzipped, more than 250 MB'])
  })

  it('log retention values of CDK\'s log retention resource are the ones CloudWatch Logs accepts', () => {
    expect(problems({ LR: { Type: 'Custom::LogRetention', Properties: { ServiceToken: 'arn', LogGroupName: 'g', RetentionInDays: 31 } } })).toEqual([expect.stringMatching(/^LR: RetentionInDays 31 is not one of 1, 3, 5, 7, 14, 30, 60/)])
    expect(problems({ LR: { Type: 'Custom::LogRetention', Properties: { ServiceToken: 'arn', LogGroupName: 'g', RetentionInDays: 30 } } })).toEqual([])
  })

  describe('event source mappings', () => {
    const queue = (props: Record<string, unknown> = {}): TemplateResource => ({ Type: 'AWS::SQS::Queue', Properties: props })
    const sqsMapping = (props: Record<string, unknown> = {}): TemplateResource => ({ Type: 'AWS::Lambda::EventSourceMapping', Properties: { FunctionName: { Ref: 'F' }, EventSourceArn: { 'Fn::GetAtt': ['Q', 'Arn'] }, ...props } })
    const stream: TemplateResource = { Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 1 } }
    const kinesisMapping = (props: Record<string, unknown> = {}): TemplateResource => ({ Type: 'AWS::Lambda::EventSourceMapping', Properties: { FunctionName: { Ref: 'F' }, EventSourceArn: { 'Fn::GetAtt': ['K', 'Arn'] }, StartingPosition: 'TRIM_HORIZON', ...props } })

    it('an SQS queue hides a message at least as long as its function may run', () => {
      expect(problems({ F: fn({ Timeout: 60 }), Q: queue(), M: sqsMapping() })).toEqual(["M: the queue's visibility timeout (30 s) is shorter than the function's timeout (60 s)"])
      expect(problems({ F: fn({ Timeout: 60 }), Q: queue({ VisibilityTimeout: 360 }), M: sqsMapping() })).toEqual([])
      // defaults: 30 s visibility, 3 s timeout
      expect(problems({ F: fn(), Q: queue(), M: sqsMapping() })).toEqual([])
    })

    it('SQS batch sizes: above 10 only with a batching window, at most 10 from a FIFO queue; stream settings refused', () => {
      expect(problems({ F: fn(), Q: queue(), M: sqsMapping({ BatchSize: 11 }) })).toEqual(['M: BatchSize 11 above 10 needs MaximumBatchingWindowInSeconds of at least 1 s'])
      expect(problems({ F: fn(), Q: queue(), M: sqsMapping({ BatchSize: 100, MaximumBatchingWindowInSeconds: 5 }) })).toEqual([])
      expect(problems({ F: fn(), Q: queue({ FifoQueue: true }), M: sqsMapping({ BatchSize: 11, MaximumBatchingWindowInSeconds: 5 }) })).toEqual(['M: BatchSize 11 is outside 1–10'])
      expect(problems({ F: fn(), Q: queue(), M: sqsMapping({ StartingPosition: 'LATEST' }) })).toEqual(['M: StartingPosition does not apply to an SQS source'])
    })

    it('Kinesis batching window 0–300 s, parallelization 1–10, batch size 1–10000, retries and record age, a starting position', () => {
      expect(problems({ F: fn(), K: stream, M: kinesisMapping({ MaximumBatchingWindowInSeconds: 301, ParallelizationFactor: 11, BatchSize: 10_001, MaximumRetryAttempts: 10_001, MaximumRecordAgeInSeconds: 59 }) })).toEqual([
      'M: MaximumBatchingWindowInSeconds 301 s is outside 0–300 s',
      'M: ParallelizationFactor 11 is outside 1–10',
      'M: BatchSize 10001 is outside 1–10000',
      'M: MaximumRetryAttempts 10001 is outside -1–10000',
      'M: MaximumRecordAgeInSeconds 59 s is outside 60–604800 s',
      ])
      expect(problems({ F: fn(), K: stream, M: kinesisMapping({ MaximumBatchingWindowInSeconds: 300, ParallelizationFactor: 10, BatchSize: 10_000, MaximumRecordAgeInSeconds: -1 }) })).toEqual([])
      expect(problems({ F: fn(), K: stream, M: kinesisMapping({ StartingPosition: { Ref: 'AWS::NoValue' } }) })).toEqual([])
      const { StartingPosition: _, ...rest } = kinesisMapping().Properties!
      expect(problems({ F: fn(), K: stream, M: { Type: 'AWS::Lambda::EventSourceMapping', Properties: rest } })).toEqual(['M: StartingPosition is required for a kinesis source'])
    })
  })

  it('queues, streams and tables: their documented ranges and index counts', () => {
    expect(problems({ Q: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 43_201, MessageRetentionPeriod: 59, DelaySeconds: 901, RedrivePolicy: { deadLetterTargetArn: 'arn', maxReceiveCount: 0 } } } })).toEqual([
      'Q: VisibilityTimeout 43201 s is outside 0–43200 s',
      'Q: MessageRetentionPeriod 59 s is outside 60–1209600 s',
      'Q: DelaySeconds 901 s is outside 0–900 s',
      'Q: RedrivePolicy.maxReceiveCount 0 is outside 1–1000',
    ])
    expect(problems({ K: { Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 1, RetentionPeriodHours: 23 } } })).toEqual(['K: RetentionPeriodHours 23 h is outside 24–8760 h'])
    const gsi = Array.from({ length: 21 }, (_, i) => ({ IndexName: `i${i}`, KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }))
    expect(problems({ T: { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], GlobalSecondaryIndexes: gsi } } })).toEqual(['T: 21 global secondary indexes, more than 20'])
  })
})
