import { beforeAll, describe, expect, it } from 'vitest'
import { loadActions, loadSpec } from '../../../lib/cli/rehearse-sources'
import { actionProblem, servicesNamed, type ActionCatalogue } from '../../../lib/core/rehearse/iam-actions'
import type { Spec } from '../../../lib/core/rehearse/spec'
import { checkAssembly, checkHandlers, checkResource, handlerFiles } from '../../../lib/core/rehearse/templates'
import type { AssemblyStack, Template, TemplateResource } from '../../../lib/core/rehearse/template'
import { synthTemplates } from '../../support/synth'

let spec: Spec
let actions: ActionCatalogue
const { data, app } = synthTemplates()
const project = (): AssemblyStack[] => [
  { name: 'FloeData', template: structuredClone(data.toJSON()) as Template },
  { name: 'FloeApp', template: structuredClone(app.toJSON()) as Template },
]

beforeAll(async () => {
  spec = await loadSpec()
  actions = await loadActions(servicesNamed(project()))
})

const check = (r: TemplateResource, id = 'R') => checkResource(id, r, spec)

describe('template checks against the CloudFormation resource specification', () => {
  it('the project\'s synthesized stacks pass every check, the IAM actions included', () => {
    const stacks = project()
    expect(Object.keys(stacks[1]!.template.Resources!).length).toBeGreaterThan(100)
    expect(actions.size).toBeGreaterThan(5)
    expect(checkAssembly(stacks, spec, { actions })).toEqual([])
  })

  it('an unknown property added to a table is a violation naming the stack, the table and the property', () => {
    const stacks = project()
    const [tableId, table] = Object.entries(stacks[0]!.template.Resources!).find(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable')!
    ;(table.Properties as Record<string, unknown>).ProvisionedThroughputMode = 'FAST'
    expect(checkAssembly(stacks, spec)).toEqual([{ stack: 'FloeData', resource: tableId, problem: 'ProvisionedThroughputMode: unknown property' }])
  })

  it('an unknown type, a missing required property, a wrong type, a value outside the allowed ones', () => {
    expect(check({ Type: 'AWS::DynamoDB::Tabel', Properties: {} })).toEqual(['unknown resource type AWS::DynamoDB::Tabel'])
    expect(check({ Type: 'AWS::SQS::QueuePolicy', Properties: { Queues: ['q'] } })).toEqual(['PolicyDocument: missing required property'])
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: 'r', Code: { ZipFile: 'x' }, MemorySize: 'lots' } })).toEqual(['MemorySize: expected an integer, got "lots"'])
    expect(check({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 4 } })).toEqual([expect.stringMatching(/^RetentionInDays: 4 is not one of 1, 3, 5, 7, 14, 30, .*3653$/)])
    expect(check({ Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 2, StreamEncryption: 'KMS' } })).toEqual(['StreamEncryption: expected an object (StreamEncryption), got "KMS"'])
    expect(check({ Type: 'AWS::SQS::Queue', Properties: { FifoQueue: 'yes' } })).toEqual(['FifoQueue: expected a boolean, got "yes"'])
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: 'r', Code: { ZipFile: 'x' }, Layers: 'arn' } })).toEqual(['Layers: expected a list, got "arn"'])
  })

  it('nested structures are checked property by property, in lists and maps', () => {
    expect(check({ Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH', Sort: true }, { KeyType: 'RANGE' }] } })).toEqual([
      'KeySchema[0].Sort: unknown property',
      'KeySchema[1].AttributeName: missing required property',
    ])
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: 'r', Code: { ZipFile: 'x' }, Environment: { Variables: { A: 'x', B: ['not', 'a', 'string'] } } } })).toEqual(['Environment.Variables.B: expected a string, got ["not","a","string"]'])
    expect(check({ Type: 'AWS::SQS::Queue', Properties: { Tags: [{ Key: 'a', Value: 'b' }, { Key: 'c' }] } })).toEqual(['Tags[1].Value: missing required property'])
  })

  it('intrinsics stand for any value; AWS::NoValue removes a property; scalars convert as CloudFormation converts them', () => {
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Code: { ZipFile: { 'Fn::Join': ['', ['a']] } }, MemorySize: { Ref: 'Memory' }, Layers: { 'Fn::If': ['C', ['a'], { Ref: 'AWS::NoValue' }] } } })).toEqual([])
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: { Ref: 'AWS::NoValue' }, Code: { ZipFile: 'x' } } })).toEqual(['Role: missing required property'])
    expect(check({ Type: 'AWS::Lambda::Function', Properties: { Role: 'r', Code: { ZipFile: 'x' }, MemorySize: '256', Timeout: 30 } })).toEqual([])
    expect(check({ Type: 'AWS::SQS::Queue', Properties: { FifoQueue: 'true', QueueName: 5 } })).toEqual([])
  })

  it('resource attributes: unknown ones, deletion policies, logical IDs; custom resources need only a service token', () => {
    expect(check({ Type: 'AWS::SQS::Queue', Properties: {}, DeletePolicy: 'Retain' } as TemplateResource)).toEqual(['unknown resource attribute DeletePolicy'])
    expect(check({ Type: 'AWS::SQS::Queue', DeletionPolicy: 'Keep' })).toEqual(['DeletionPolicy "Keep" is not one of Delete, Retain, Snapshot, RetainExceptOnCreate'])
    expect(check({ Type: 'AWS::SQS::Queue', DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'RetainExceptOnCreate' })).toEqual(['UpdateReplacePolicy "RetainExceptOnCreate" is not one of Delete, Retain, Snapshot'])
    expect(check({ Type: 'AWS::SQS::Queue' }, 'My-Queue')).toEqual(['logical ID must be 1 to 255 letters and digits'])
    expect(check({ Type: 'Custom::Anything', Properties: { ServiceToken: 'arn', Whatever: [1] } })).toEqual([])
    expect(check({ Type: 'Custom::Anything', Properties: {} })).toEqual(['ServiceToken: missing required property'])
    expect(check({ Type: 'AWS::CDK::Metadata', Properties: { Analytics: 'v2' } })).toEqual([])
  })
})

describe('IAM actions against the catalogue', () => {
  it('an action its service does not have, an unknown service, a wildcard matching nothing', () => {
    expect(actionProblem('kinesis:PutRecords', actions)).toBeUndefined()
    expect(actionProblem('KINESIS:putrecords', actions)).toBeUndefined()
    expect(actionProblem('s3:Get*', actions)).toBeUndefined()
    expect(actionProblem('*', actions)).toBeUndefined()
    expect(actionProblem('kinesis:PutRecordz', actions)).toBe('action kinesis:PutRecordz does not exist in kinesis')
    expect(actionProblem('kinesys:PutRecord', actions)).toBe('action kinesys:PutRecord: no service has the prefix kinesys')
    expect(actionProblem('dynamodb:Fly*', actions)).toBe('action dynamodb:Fly* matches no action of dynamodb')
    expect(actionProblem('PutRecord', actions)).toBe('action "PutRecord" is not service:action')
  })

  it('a misspelt action in a role\'s policy is a violation naming the policy and the statement', () => {
    const stacks = project()
    const [policyId, policy] = Object.entries(stacks[1]!.template.Resources!).find(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('CollectorRole'))!
    const statements = (policy.Properties as { PolicyDocument: { Statement: { Action: string | string[] }[] } }).PolicyDocument.Statement
    const i = statements.findIndex((s) => JSON.stringify(s.Action).includes('kinesis:PutRecords'))
    statements[i]!.Action = ['kinesis:PutRecordz']
    expect(checkAssembly(stacks, spec, { actions })).toEqual([{ stack: 'FloeApp', resource: policyId, problem: `PolicyDocument.Statement[${i}].Action: action kinesis:PutRecordz does not exist in kinesis` }])
  })
})

describe('handlers and bundles', () => {
  const fn = (Handler: string, Runtime = 'nodejs22.x', path = 'asset.a'): TemplateResource => ({ Type: 'AWS::Lambda::Function', Properties: { Role: 'r', Code: { S3Bucket: 'b', S3Key: 'k' }, Handler, Runtime }, Metadata: { 'aws:asset:path': path } })
  const bundle = new Map([['asset.a', new Set(['index.mjs', 'lib/worker.js', 'app/main.py'])]])
  const has = (path: string, file: string) => bundle.get(path)?.has(file)
  const handlers = (resources: Record<string, TemplateResource>) => checkHandlers([{ name: 'S', template: { Resources: resources } }], has).map((v) => `${v.resource}: ${v.problem}`)

  it('a handler names a file of its bundle, in the runtime\'s way', () => {
    expect(handlerFiles('nodejs22.x', 'lib/worker.handler')).toEqual(['lib/worker.js', 'lib/worker.mjs', 'lib/worker.cjs'])
    expect(handlerFiles('python3.12', 'app.main.handler')).toEqual(['app/main.py'])
    expect(handlerFiles('provided.al2023', 'bootstrap')).toBeUndefined()
    expect(handlers({ A: fn('index.handler'), B: fn('lib/worker.run'), C: fn('app.main.handler', 'python3.12'), D: fn('bootstrap', 'provided.al2023') })).toEqual([])
    expect(handlers({ A: fn('main.handler'), B: fn('handler') })).toEqual([
      'A: Handler main.handler: the bundle asset.a has no main.js, main.mjs, main.cjs',
      'B: Handler "handler" is not file.function',
    ])
  })

  it('an assembly synthesized without its bundles is not judged on them', () => {
    expect(handlers({ A: fn('main.handler', 'nodejs22.x', 'asset.missing') })).toEqual([])
  })
})

