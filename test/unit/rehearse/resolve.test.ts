import { describe, expect, it } from 'vitest'
import { evaluate } from '../../../lib/core/rehearse/iam'
import { generatedName } from '../../../lib/core/rehearse/physical'
import { assemblyResolver, templateResolver } from '../../../lib/core/rehearse/resolve'
import { checkRoles, functionRole, rolePolicies } from '../../../lib/core/rehearse/roles'
import type { AssemblyStack, Template } from '../../../lib/core/rehearse/template'
import { synthTemplates } from '../../support/synth'

const template: Template = {
  Parameters: { Stage: { Type: 'String', Default: 'prod' } },
  Conditions: { IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] }, NotProd: { 'Fn::Not': [{ Condition: 'IsProd' }] } },
  Mappings: { Sizes: { prod: { Memory: 1024 } } },
  Resources: {
    Table: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, 'settings']] } } },
    Stream: { Type: 'AWS::Kinesis::Stream', Properties: {} },
    Queue: { Type: 'AWS::SQS::Queue', Properties: { QueueName: 'jobs' } },
    Bucket: { Type: 'AWS::S3::Bucket' },
    Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
    Role: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'fn-role' } },
  },
}

describe('resolving a template\'s intrinsics to local values', () => {
  const r = templateResolver(template, 'Data', { region: 'eu-west-1' })
  const ok = (v: unknown) => {
    const x = r.resolve('Data', v)
    if (!x.ok) throw new Error(x.problem)
    return x.value
  }

  it('pseudo parameters: account 000000000000, the given region, aws partition and URL suffix, the stack name', () => {
    expect(ok({ 'Fn::Join': [':', [{ Ref: 'AWS::Partition' }, { Ref: 'AWS::Region' }, { Ref: 'AWS::AccountId' }, { Ref: 'AWS::URLSuffix' }, { Ref: 'AWS::StackName' }]] })).toBe('aws:eu-west-1:000000000000:amazonaws.com:Data')
    expect(templateResolver(template, 'X').place('X').region).toBe('us-east-1')
    expect(ok({ Ref: 'AWS::StackId' })).toBe('arn:aws:cloudformation:eu-west-1:000000000000:stack/Data/00000000-0000-0000-0000-000000000000')
    expect(ok({ 'Fn::Base64': { 'Fn::Sub': '#!/bin/sh\necho ${AWS::Region}' } })).toBe(Buffer.from('#!/bin/sh\necho eu-west-1').toString('base64'))
  })

  it('Ref and Fn::GetAtt give each type\'s name and ARN, with the name the template sets (itself resolved)', () => {
    expect(ok({ Ref: 'Table' })).toBe('Data-settings')
    expect(ok({ 'Fn::GetAtt': ['Table', 'Arn'] })).toBe('arn:aws:dynamodb:eu-west-1:000000000000:table/Data-settings')
    expect(ok({ 'Fn::GetAtt': 'Table.StreamArn' })).toMatch(/^arn:aws:dynamodb:eu-west-1:000000000000:table\/Data-settings\/stream\//)
    expect(ok({ Ref: 'Queue' })).toBe('https://sqs.eu-west-1.amazonaws.com/000000000000/jobs')
    expect(ok({ 'Fn::GetAtt': ['Queue', 'Arn'] })).toBe('arn:aws:sqs:eu-west-1:000000000000:jobs')
    expect(ok({ 'Fn::GetAtt': ['Role', 'Arn'] })).toBe('arn:aws:iam::000000000000:role/fn-role')
    // no name set: CloudFormation's shape, stack-logicalId-SUFFIX, the same every time
    const streamName = ok({ Ref: 'Stream' }) as string
    expect(streamName).toMatch(/^Data-Stream-[0-9A-Z]{12}$/)
    expect(streamName).toBe(generatedName('Data', 'Stream', 'AWS::Kinesis::Stream'))
    expect(ok({ 'Fn::GetAtt': ['Stream', 'Arn'] })).toBe(`arn:aws:kinesis:eu-west-1:000000000000:stream/${streamName}`)
    expect(ok({ 'Fn::GetAtt': ['Bucket', 'Arn'] })).toMatch(/^arn:aws:s3:::data-bucket-[0-9a-z]{12}$/)
    expect(generatedName('FloeApp', 'AVeryLongLogicalIdForAFunctionThatGoesOnAndOnAndOn0123456789', 'AWS::Lambda::Function').length).toBeLessThanOrEqual(64)
  })

  it('Fn::Sub with pseudo parameters, resource attributes, its own variables and ${!…} literals', () => {
    expect(ok({ 'Fn::Sub': 'arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/${Fn}:*' })).toMatch(/^arn:aws:logs:eu-west-1:000000000000:log-group:\/aws\/lambda\/Data-Fn-[0-9A-Z]{12}:\*$/)
    expect(ok({ 'Fn::Sub': '${Table.Arn}/index/*' })).toBe('arn:aws:dynamodb:eu-west-1:000000000000:table/Data-settings/index/*')
    expect(ok({ 'Fn::Sub': ['${Name}-${!Literal}', { Name: { Ref: 'Table' } }] })).toBe('Data-settings-${Literal}')
  })

  it('Fn::Select, Fn::Split, Fn::If with the template\'s conditions, Fn::FindInMap, Fn::GetAZs, parameters, AWS::NoValue', () => {
    expect(ok({ 'Fn::Select': [1, { 'Fn::Split': [':', { 'Fn::GetAtt': ['Queue', 'Arn'] }] }] })).toBe('aws')
    expect(ok({ 'Fn::Select': [0, { 'Fn::GetAZs': '' }] })).toBe('eu-west-1a')
    expect(ok({ 'Fn::If': ['IsProd', 'big', 'small'] })).toBe('big')
    expect(ok({ 'Fn::If': ['NotProd', 'small', { 'Fn::FindInMap': ['Sizes', { Ref: 'Stage' }, 'Memory'] }] })).toBe(1024)
    expect(ok({ A: 1, B: { Ref: 'AWS::NoValue' }, C: [1, { Ref: 'AWS::NoValue' }, 2] })).toEqual({ A: 1, C: [1, 2] })
    const staging = templateResolver(template, 'Data', { parameters: { Data: { Stage: 'staging' } } })
    expect(staging.resolve('Data', { 'Fn::If': ['IsProd', 'big', 'small'] })).toEqual({ ok: true, value: 'small' })
  })

  it('what cannot be resolved is said as data, not thrown', () => {
    expect(r.resolve('Data', { Ref: 'Nope' })).toEqual({ ok: false, problem: 'Data has no resource Nope' })
    expect(r.resolve('Data', { 'Fn::GetAtt': ['Queue', 'Nope'] })).toEqual({ ok: false, problem: 'Queue has no attribute Nope here' })
    expect(r.resolve('Data', { 'Fn::ImportValue': 'Missing' })).toEqual({ ok: false, problem: 'no stack exports Missing' })
    expect(r.resolve('Data', { 'Fn::Cidr': ['10.0.0.0/16', 2, 8] })).toEqual({ ok: false, problem: 'Fn::Cidr is not resolved here' })
    const loop = templateResolver({ Resources: { T: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: { 'Fn::GetAtt': ['T', 'Arn'] } } } } }, 'S')
    expect(loop.resolve('S', { Ref: 'T' })).toEqual({ ok: false, problem: 'the name of T refers to itself' })
    expect(r.physical('Data', 'Nope')).toBeUndefined()
  })

  it('the caller\'s own physical names and attributes win (local endpoints)', () => {
    const local = templateResolver(template, 'Data', { physical: { Data: { Queue: { ref: 'http://127.0.0.1:9324/000000000000/jobs' }, Table: { attributes: { StreamArn: 'arn:local:stream' } } } } })
    expect(local.resolve('Data', { Ref: 'Queue' })).toEqual({ ok: true, value: 'http://127.0.0.1:9324/000000000000/jobs' })
    expect(local.resolve('Data', { 'Fn::GetAtt': ['Queue', 'Arn'] })).toEqual({ ok: true, value: 'arn:aws:sqs:us-east-1:000000000000:jobs' })
    expect(local.resolve('Data', { 'Fn::GetAtt': ['Table', 'StreamArn'] })).toEqual({ ok: true, value: 'arn:local:stream' })
  })

  it('Fn::ImportValue reads another stack\'s export, itself resolved in that stack', () => {
    const stacks: AssemblyStack[] = [
      { name: 'Data', template, region: 'eu-west-1' },
      { name: 'App', template: { Resources: {}, Outputs: { Chained: { Value: { 'Fn::Join': ['', [{ 'Fn::ImportValue': 'Data:TableArn' }, '/index/*']] }, Export: { Name: { 'Fn::Sub': '${AWS::StackName}:Indexes' } } } } } },
    ]
    const withOutputs: AssemblyStack[] = [{ ...stacks[0]!, template: { ...template, Outputs: { TableArn: { Value: { 'Fn::GetAtt': ['Table', 'Arn'] }, Export: { Name: 'Data:TableArn' } } } } }, stacks[1]!]
    // an export whose name cannot be resolved does not hide the others
    withOutputs.unshift({ name: 'Odd', template: { Outputs: { X: { Value: 'x', Export: { Name: { Ref: 'Unknown' } } } } } })
    const a = assemblyResolver(withOutputs)
    expect(a.resolve('App', { 'Fn::ImportValue': 'Data:TableArn' })).toEqual({ ok: true, value: 'arn:aws:dynamodb:eu-west-1:000000000000:table/Data-settings' })
    expect(a.exportValue('App:Indexes')).toBe('arn:aws:dynamodb:eu-west-1:000000000000:table/Data-settings/index/*')
    expect(a.exportValue('Nope')).toBeUndefined()
  })
})

describe('the project\'s own synthesized stacks', () => {
  const { data, app } = synthTemplates()
  const stacks: AssemblyStack[] = [{ name: 'FloeData', template: data.toJSON() as Template }, { name: 'FloeApp', template: app.toJSON() as Template }]
  const resolver = assemblyResolver(stacks)
  const appTemplate = stacks[1]!.template

  it('every function\'s environment and every role policy resolves completely, across the stacks\' exports', () => {
    const fns = Object.entries(appTemplate.Resources!).filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    expect(fns.length).toBeGreaterThan(5)
    for (const [id, fn] of fns) {
      const env = resolver.resolve('FloeApp', fn.Properties?.Environment ?? {})
      expect(env, id).toMatchObject({ ok: true })
      expect(JSON.stringify(env), id).not.toMatch(/"(Ref|Fn::[A-Za-z]+)"/)
    }
    for (const s of stacks) {
      for (const [id, r] of Object.entries(s.template.Resources!)) {
        if (!r.Type.startsWith('AWS::IAM::')) continue
        expect(resolver.resolve(s.name, r.Properties), `${s.name}/${id}`).toMatchObject({ ok: true })
      }
    }
  })

  it('the collector\'s role may put records on the raw stream and read the settings table, and nothing on the good stream', () => {
    const [collectorId] = Object.keys(appTemplate.Resources!).filter((id) => /^CollectorFunction[0-9A-F]{8}$/.test(id))
    const roleId = functionRole(appTemplate, collectorId!)!
    expect(roleId).toMatch(/^CollectorRole/)
    const role = rolePolicies(stacks, 'FloeApp', roleId, resolver)
    expect(role.problems).toEqual([])
    expect(role.policies.length).toBeGreaterThan(0)
    const dataIds = Object.keys(stacks[0]!.template.Resources!)
    const arnOf = (prefix: string) => resolver.physical('FloeData', dataIds.find((id) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id))!)!.attributes.Arn!
    const env = resolver.resolve('FloeApp', appTemplate.Resources![collectorId!]!.Properties!.Environment) as { ok: true; value: { Variables: Record<string, string> } }
    // the ARN the policy grants is the one of the stream the function's environment names
    expect(arnOf('RawStream')).toBe(`arn:aws:kinesis:us-east-1:000000000000:stream/${env.value.Variables.FLOE_STREAM_RAW}`)
    expect(evaluate(role.policies, { action: 'kinesis:PutRecords', resource: arnOf('RawStream') }).decision).toBe('allowed')
    expect(evaluate(role.policies, { action: 'kinesis:PutRecords', resource: arnOf('GoodStream') }).decision).toBe('implicit-deny')
    expect(evaluate(role.policies, { action: 'kinesis:DeleteStream', resource: arnOf('RawStream') }).decision).toBe('implicit-deny')
    expect(evaluate(role.policies, { action: 'dynamodb:GetItem', resource: arnOf('SettingsTable') }).decision).toBe('allowed')
    expect(evaluate(role.policies, { action: 'dynamodb:Query', resource: `${arnOf('SettingsTable')}/index/byName` }).decision).toBe('allowed')
    expect(evaluate(role.policies, { action: 'dynamodb:PutItem', resource: arnOf('SettingsTable') }).decision).toBe('implicit-deny')
  })

  it('a statement removed from the collector\'s policy leaves its Kinesis write implicitly denied', () => {
    const [collectorId] = Object.keys(appTemplate.Resources!).filter((id) => /^CollectorFunction[0-9A-F]{8}$/.test(id))
    const roleId = functionRole(appTemplate, collectorId!)!
    const edited = structuredClone(appTemplate) as { Resources: Record<string, any> }
    for (const r of Object.values(edited.Resources)) {
      if (r.Type !== 'AWS::IAM::Policy' || r.Properties.Roles?.[0]?.Ref !== roleId) continue
      r.Properties.PolicyDocument.Statement = r.Properties.PolicyDocument.Statement.filter((s: any) => !JSON.stringify(s.Action).includes('kinesis:PutRecords'))
    }
    const es: AssemblyStack[] = [stacks[0]!, { name: 'FloeApp', template: edited as Template }]
    const er = assemblyResolver(es)
    const role = rolePolicies(es, 'FloeApp', roleId, er)
    const raw = er.physical('FloeData', Object.keys(stacks[0]!.template.Resources!).find((id) => /^RawStream[0-9A-F]{8}$/.test(id))!)!.attributes.Arn!
    expect(evaluate(role.policies, { action: 'kinesis:PutRecords', resource: raw })).toEqual({ decision: 'implicit-deny' })
  })

  it('the control plane may pause enrich\'s trigger and no other function\'s (a condition on lambda:FunctionArn)', () => {
    const roleId = Object.keys(appTemplate.Resources!).find((id) => /^ControlPlaneRole[0-9A-F]{8}$/.test(id))!
    const role = rolePolicies(stacks, 'FloeApp', roleId, resolver)
    const fnArn = (prefix: string) => resolver.physical('FloeApp', Object.keys(appTemplate.Resources!).find((id) => new RegExp(`^${prefix}Function[0-9A-F]{8}$`).test(id))!)!.attributes.Arn!
    const mapping = 'arn:aws:lambda:us-east-1:000000000000:event-source-mapping:0f3c2a1b-0000-4000-8000-000000000000'
    const update = (fn: string) => evaluate(role.policies, { action: 'lambda:UpdateEventSourceMapping', resource: mapping, context: { 'lambda:FunctionArn': fn } }).decision
    expect(update(fnArn('Enrich'))).toBe('allowed')
    expect(update(fnArn('Collector'))).toBe('implicit-deny')
    expect(evaluate(role.policies, { action: 'lambda:UpdateEventSourceMapping', resource: mapping }).decision).toBe('implicit-deny')
  })

  it('every role of the stacks has policies the evaluator can read; one it cannot is a violation naming the role', () => {
    expect(checkRoles(stacks, resolver)).toEqual([])
    const roleId = Object.keys(appTemplate.Resources!).find((id) => /^CollectorRole[0-9A-F]{8}$/.test(id))!
    const edited = structuredClone(appTemplate) as { Resources: Record<string, any> }
    const policy = Object.values(edited.Resources).find((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles?.[0]?.Ref === roleId)!
    policy.Properties.PolicyDocument.Statement[0].Condition = { StringAlmostEquals: { 'aws:SourceVpc': 'vpc-1' } }
    policy.Properties.PolicyDocument.Statement.push({ Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::GetAtt': ['NoSuchBucket', 'Arn'] } })
    const es: AssemblyStack[] = [stacks[0]!, { name: 'FloeApp', template: edited as Template }]
    const found = checkRoles(es, assemblyResolver(es))
    expect(found).toEqual([{ stack: 'FloeApp', resource: roleId, problem: expect.stringMatching(/^policy CollectorRoleDefaultPolicy[0-9A-F]{8}: FloeApp has no resource NoSuchBucket$/) }])
    policy.Properties.PolicyDocument.Statement.pop()
    expect(checkRoles(es, assemblyResolver(es))).toEqual([{ stack: 'FloeApp', resource: roleId, problem: expect.stringMatching(/^policy CollectorRoleDefaultPolicy[0-9A-F]{8}: statement 0: unknown condition operator StringAlmostEquals$/) }])
  })
})
