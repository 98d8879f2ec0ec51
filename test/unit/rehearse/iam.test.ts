import { describe, expect, it } from 'vitest'
import { evaluate, evaluateAccess, documentProblems, principalMatches, type NamedPolicy, type PolicyDocument, type Request } from '../../../lib/core/rehearse/iam'
import { actionMatches, arnMatches } from '../../../lib/core/rehearse/iam-match'
import { conditionHolds, inCidr } from '../../../lib/core/rehearse/iam-conditions'

const V = '2012-10-17'
const policy = (name: string, ...Statement: PolicyDocument['Statement'][]): NamedPolicy => ({ name, document: { Version: V, Statement: Statement.flat() as never } })
const decide = (policies: NamedPolicy[], r: Request) => evaluate(policies, r).decision

describe('IAM evaluation: the documented order (explicit deny, then allow, else implicit deny)', () => {
  const readAll = policy('ReadAll', { Sid: 'Everything', Effect: 'Allow', Action: 's3:*', Resource: '*' })
  const noDelete = policy('NoDelete', { Sid: 'NeverDelete', Effect: 'Deny', Action: 's3:DeleteBucket', Resource: '*' })

  it('a request no statement covers is denied implicitly', () => {
    expect(evaluate([readAll], { action: 'dynamodb:GetItem', resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/t' })).toEqual({ decision: 'implicit-deny' })
    expect(evaluate([], { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k' })).toEqual({ decision: 'implicit-deny' })
  })

  it('an allow grants, naming the statement that did', () => {
    expect(evaluate([readAll], { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k' })).toEqual({ decision: 'allowed', statement: { policy: 'ReadAll', index: 0, sid: 'Everything' } })
  })

  it('an explicit deny in any attached policy wins over an allow in another, whichever comes first', () => {
    const r = { action: 's3:DeleteBucket', resource: 'arn:aws:s3:::b' }
    expect(evaluate([readAll, noDelete], r)).toEqual({ decision: 'explicit-deny', statement: { policy: 'NoDelete', index: 0, sid: 'NeverDelete' } })
    expect(decide([noDelete, readAll], r)).toBe('explicit-deny')
    // the deny covers only its action
    expect(decide([readAll, noDelete], { action: 's3:PutObject', resource: 'arn:aws:s3:::b/k' })).toBe('allowed')
  })

  it('a deny alone does not grant anything else', () => {
    expect(decide([noDelete], { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k' })).toBe('implicit-deny')
  })

  it('a statement holds only when its action, its resource and its condition all hold', () => {
    const p = policy('P', { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: 'arn:aws:sqs:us-east-1:000000000000:q', Condition: { Bool: { 'aws:SecureTransport': 'true' } } })
    const ok = { action: 'sqs:SendMessage', resource: 'arn:aws:sqs:us-east-1:000000000000:q', context: { 'aws:SecureTransport': true } }
    expect(decide([p], ok)).toBe('allowed')
    expect(decide([p], { ...ok, action: 'sqs:ReceiveMessage' })).toBe('implicit-deny')
    expect(decide([p], { ...ok, resource: 'arn:aws:sqs:us-east-1:000000000000:other' })).toBe('implicit-deny')
    expect(decide([p], { ...ok, context: { 'aws:SecureTransport': false } })).toBe('implicit-deny')
  })
})

describe('IAM evaluation: a bucket and its objects are different resources', () => {
  it('ListBucket is granted on the bucket\'s ARN, GetObject on its objects\' ARNs; each grant covers only its own', () => {
    const p = policy('Bucket',
      { Sid: 'List', Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::example-bucket' },
      { Sid: 'Objects', Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: 'arn:aws:s3:::example-bucket/*' })
    expect(decide([p], { action: 's3:ListBucket', resource: 'arn:aws:s3:::example-bucket' })).toBe('allowed')
    expect(decide([p], { action: 's3:GetObject', resource: 'arn:aws:s3:::example-bucket/reports/2024.csv' })).toBe('allowed')
    expect(decide([p], { action: 's3:GetObject', resource: 'arn:aws:s3:::example-bucket' })).toBe('implicit-deny')
    expect(decide([p], { action: 's3:ListBucket', resource: 'arn:aws:s3:::example-bucket/reports' })).toBe('implicit-deny')
    expect(decide([p], { action: 's3:GetObject', resource: 'arn:aws:s3:::example-bucket-2/x' })).toBe('implicit-deny')
  })
})

describe('IAM evaluation: NotAction and NotResource', () => {
  it('Allow with NotAction grants every action except the listed ones (which stay implicitly denied)', () => {
    const p = policy('AllButIam', { Effect: 'Allow', NotAction: 'iam:*', Resource: '*' })
    expect(decide([p], { action: 'ec2:RunInstances', resource: '*' })).toBe('allowed')
    expect(decide([p], { action: 'iam:CreateUser', resource: 'arn:aws:iam::000000000000:user/u' })).toBe('implicit-deny')
  })

  it('Deny with NotAction refuses everything but the listed actions unless a condition spares the request (MFA example)', () => {
    const p = policy('MfaOrNothing',
      { Effect: 'Allow', Action: '*', Resource: '*' },
      { Sid: 'DenyAllExceptListedIfNoMFA', Effect: 'Deny', NotAction: ['iam:ChangePassword', 'iam:GetUser', 'sts:GetSessionToken'], Resource: '*', Condition: { BoolIfExists: { 'aws:MultiFactorAuthPresent': 'false' } } })
    // no MFA key in the context at all: BoolIfExists holds, so the deny applies
    expect(decide([p], { action: 's3:ListAllMyBuckets', resource: '*' })).toBe('explicit-deny')
    expect(decide([p], { action: 's3:ListAllMyBuckets', resource: '*', context: { 'aws:MultiFactorAuthPresent': 'false' } })).toBe('explicit-deny')
    expect(decide([p], { action: 's3:ListAllMyBuckets', resource: '*', context: { 'aws:MultiFactorAuthPresent': 'true' } })).toBe('allowed')
    // the listed actions are outside the deny
    expect(decide([p], { action: 'iam:ChangePassword', resource: 'arn:aws:iam::000000000000:user/u' })).toBe('allowed')
  })

  it('Deny with NotResource refuses the action on every resource but the listed ones', () => {
    const p = policy('OnlyPayroll',
      { Effect: 'Allow', Action: 's3:*', Resource: '*' },
      { Effect: 'Deny', Action: 's3:*', NotResource: ['arn:aws:s3:::hr-bucket/Payroll', 'arn:aws:s3:::hr-bucket/Payroll/*'] })
    expect(decide([p], { action: 's3:GetObject', resource: 'arn:aws:s3:::hr-bucket/Payroll/march.csv' })).toBe('allowed')
    expect(decide([p], { action: 's3:GetObject', resource: 'arn:aws:s3:::hr-bucket/Other/x' })).toBe('explicit-deny')
  })

  it('a document that gives neither Action nor NotAction, or an unknown operator, is reported as one that cannot be judged', () => {
    expect(documentProblems({ Version: V, Statement: [{ Effect: 'Allow', Resource: '*' }] })).toEqual(['statement 0: needs exactly one of Action and NotAction'])
    expect(documentProblems({ Version: V, Statement: { Sid: 'X', Effect: 'Permit', Action: 's3:*', Resource: '*', Condition: { StringFuzzy: { a: 'b' } } } })).toEqual(['X: Effect "Permit" is neither Allow nor Deny', 'X: unknown condition operator StringFuzzy'])
  })
})

describe('IAM matching: actions and ARNs', () => {
  it('actions match case-insensitively, with * and ? wildcards, within one service', () => {
    expect(actionMatches('s3:GetObject', 's3:getobject')).toBe(true)
    expect(actionMatches('S3:Get*', 's3:GetObjectAcl')).toBe(true)
    expect(actionMatches('s3:Get*', 's3:PutObject')).toBe(false)
    expect(actionMatches('dynamodb:?etItem', 'dynamodb:GetItem')).toBe(true)
    expect(actionMatches('dynamodb:?etItem', 'dynamodb:BatchGetItem')).toBe(false)
    expect(actionMatches('*', 'kinesis:PutRecords')).toBe(true)
    expect(actionMatches('kinesis:*', 'kinesisanalytics:ListApplications')).toBe(false)
  })

  it('ARNs match case-sensitively, segment by segment; a wildcard in one segment does not reach into the next', () => {
    expect(arnMatches('arn:aws:s3:::bucket/*', 'arn:aws:s3:::bucket/a/b.txt')).toBe(true)
    expect(arnMatches('arn:aws:s3:::bucket/*', 'arn:aws:s3:::Bucket/a')).toBe(false)
    expect(arnMatches('arn:aws:iam::*:role/*', 'arn:aws:iam::123456789012:role/admin')).toBe(true)
    // '*' in the region segment does not swallow the account
    expect(arnMatches('arn:aws:dynamodb:*:table/t', 'arn:aws:dynamodb:us-east-1:000000000000:table/t')).toBe(false)
    expect(arnMatches('arn:aws:dynamodb:*:*:table/t', 'arn:aws:dynamodb:us-east-1:000000000000:table/t')).toBe(true)
    // the resource segment keeps its colons
    expect(arnMatches('arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/f:*', 'arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/f:log-stream:2024/x')).toBe(true)
    expect(arnMatches('arn:aws:lambda:us-east-1:000000000000:function:f', 'arn:aws:lambda:us-east-1:000000000000:function:f:1')).toBe(false)
    expect(arnMatches('arn:aws:kinesis:us-east-1:000000000000:stream/raw?', 'arn:aws:kinesis:us-east-1:000000000000:stream/raw1')).toBe(true)
    // a table's index or stream is another resource than the table
    expect(arnMatches('arn:aws:dynamodb:us-east-1:000000000000:table/t', 'arn:aws:dynamodb:us-east-1:000000000000:table/t/index/i')).toBe(false)
    expect(arnMatches('*', 'arn:aws:anything')).toBe(true)
  })
})

describe('IAM policy variables', () => {
  const home = policy('Home', { Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::bucket/home/${aws:username}/*' })

  it('a variable in Resource takes the request\'s value: each user reaches only their own prefix', () => {
    expect(decide([home], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/home/alice/a.txt', context: { 'aws:username': 'alice' } })).toBe('allowed')
    expect(decide([home], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/home/bob/a.txt', context: { 'aws:username': 'alice' } })).toBe('implicit-deny')
  })

  it('without a value for the variable, the entry matches nothing; a default value stands in', () => {
    expect(decide([home], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/home//a.txt' })).toBe('implicit-deny')
    const withDefault = policy('D', { Effect: 'Allow', Action: 's3:GetObject', Resource: "arn:aws:s3:::bucket/${aws:PrincipalTag/team, 'shared'}/*" })
    expect(decide([withDefault], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/shared/x' })).toBe('allowed')
    expect(decide([withDefault], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/red/x', context: { 'aws:PrincipalTag/team': 'red' } })).toBe('allowed')
  })

  it('a value holding * is matched literally, and ${*} is a literal asterisk', () => {
    expect(decide([home], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/home/bob/a.txt', context: { 'aws:username': '*' } })).toBe('implicit-deny')
    const star = policy('Star', { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::bucket/${*}' })
    expect(decide([star], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/*' })).toBe('allowed')
    expect(decide([star], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/x' })).toBe('implicit-deny')
  })

  it('under the 2008-10-17 language, ${…} is plain text', () => {
    const old: NamedPolicy = { name: 'Old', document: { Version: '2008-10-17', Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: 'arn:aws:s3:::bucket/${aws:username}/*' }] } }
    expect(decide([old], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/alice/x', context: { 'aws:username': 'alice' } })).toBe('implicit-deny')
    expect(decide([old], { action: 's3:GetObject', resource: 'arn:aws:s3:::bucket/${aws:username}/x', context: { 'aws:username': 'alice' } })).toBe('allowed')
  })
})

describe('IAM conditions', () => {
  it('several keys under one operator, and several operators, must all hold; several values of one key: any', () => {
    const block = { StringEquals: { 'aws:PrincipalTag/dept': ['eng', 'ops'], 'aws:RequestedRegion': 'eu-west-1' }, Bool: { 'aws:SecureTransport': 'true' } }
    const ctx = { 'aws:PrincipalTag/dept': 'ops', 'aws:RequestedRegion': 'eu-west-1', 'aws:SecureTransport': 'true' }
    expect(conditionHolds(block, ctx)).toBe(true)
    expect(conditionHolds(block, { ...ctx, 'aws:PrincipalTag/dept': 'sales' })).toBe(false)
    expect(conditionHolds(block, { ...ctx, 'aws:SecureTransport': 'false' })).toBe(false)
    expect(conditionHolds(block, { ...ctx, 'aws:RequestedRegion': 'us-east-1' })).toBe(false)
  })

  it('a key missing from the request fails a positive operator and satisfies a negated one', () => {
    expect(conditionHolds({ StringEquals: { 'aws:PrincipalTag/dept': 'eng' } }, {})).toBe(false)
    expect(conditionHolds({ StringNotEquals: { 'aws:PrincipalTag/dept': 'eng' } }, {})).toBe(true)
    expect(conditionHolds({ ArnNotLike: { 'aws:SourceArn': 'arn:aws:sns:*:*:t' } }, {})).toBe(true)
    expect(conditionHolds({ StringEqualsIfExists: { 'ec2:InstanceType': 't3.micro' } }, {})).toBe(true)
    expect(conditionHolds({ StringEqualsIfExists: { 'ec2:InstanceType': 't3.micro' } }, { 'ec2:InstanceType': 'm5.large' })).toBe(false)
  })

  it('a negated operator with several values requires the request value to be none of them', () => {
    const block = { StringNotEquals: { 'aws:PrincipalTag/role': ['audit', 'security'] } }
    expect(conditionHolds(block, { 'aws:PrincipalTag/role': 'audit' })).toBe(false)
    expect(conditionHolds(block, { 'aws:PrincipalTag/role': 'security' })).toBe(false)
    expect(conditionHolds(block, { 'aws:PrincipalTag/role': 'dev' })).toBe(true)
  })

  it('Null tests presence', () => {
    expect(conditionHolds({ Null: { 'aws:TokenIssueTime': 'true' } }, {})).toBe(true)
    expect(conditionHolds({ Null: { 'aws:TokenIssueTime': 'true' } }, { 'aws:TokenIssueTime': '2024-01-01T00:00:00Z' })).toBe(false)
    expect(conditionHolds({ Null: { 'aws:TokenIssueTime': 'false' } }, { 'aws:TokenIssueTime': '2024-01-01T00:00:00Z' })).toBe(true)
  })

  it('ForAllValues holds when every request value is allowed (and when there are none); ForAnyValue when one is', () => {
    const all = { 'ForAllValues:StringEquals': { 'aws:TagKeys': ['environment', 'cost-center'] } }
    expect(conditionHolds(all, { 'aws:TagKeys': ['environment'] })).toBe(true)
    expect(conditionHolds(all, { 'aws:TagKeys': ['environment', 'owner'] })).toBe(false)
    expect(conditionHolds(all, {})).toBe(true)
    expect(conditionHolds(all, { 'aws:TagKeys': [] })).toBe(true)
    const any = { 'ForAnyValue:StringEquals': { 'aws:TagKeys': ['environment', 'cost-center'] } }
    expect(conditionHolds(any, { 'aws:TagKeys': ['owner', 'cost-center'] })).toBe(true)
    expect(conditionHolds(any, { 'aws:TagKeys': ['owner'] })).toBe(false)
    expect(conditionHolds(any, {})).toBe(false)
    // with a negated operator: no request value may be one of the listed
    expect(conditionHolds({ 'ForAllValues:StringNotEquals': { 'aws:TagKeys': ['secret'] } }, { 'aws:TagKeys': ['a', 'b'] })).toBe(true)
    expect(conditionHolds({ 'ForAllValues:StringNotEquals': { 'aws:TagKeys': ['secret'] } }, { 'aws:TagKeys': ['a', 'secret'] })).toBe(false)
  })

  it('StringLike and ArnLike take wildcards; StringEquals does not; IgnoreCase ignores case', () => {
    expect(conditionHolds({ StringLike: { 's3:prefix': ['home/*'] } }, { 's3:prefix': 'home/alice/' })).toBe(true)
    expect(conditionHolds({ StringEquals: { 's3:prefix': 'home/*' } }, { 's3:prefix': 'home/alice/' })).toBe(false)
    expect(conditionHolds({ StringEqualsIgnoreCase: { 'aws:PrincipalTag/x': 'ABC' } }, { 'aws:PrincipalTag/x': 'abc' })).toBe(true)
    expect(conditionHolds({ ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:us-east-1:000000000000:alarm:*' } }, { 'aws:SourceArn': 'arn:aws:cloudwatch:us-east-1:000000000000:alarm:Lag' })).toBe(true)
    expect(conditionHolds({ ArnEquals: { 'aws:SourceArn': 'arn:aws:sns:*:000000000000:t' } }, { 'aws:SourceArn': 'arn:aws:sns:eu-west-1:000000000000:t' })).toBe(true)
    expect(conditionHolds({ ArnLike: { 'aws:SourceArn': 'arn:aws:sns:*:000000000000:t' } }, { 'aws:SourceArn': 'arn:aws:sns:eu-west-1:111111111111:t' })).toBe(false)
  })

  it('a policy variable in a condition value takes the request\'s value', () => {
    const block = { StringLike: { 's3:prefix': ['home/${aws:username}/*'] } }
    expect(conditionHolds(block, { 's3:prefix': 'home/alice/x', 'aws:username': 'alice' })).toBe(true)
    expect(conditionHolds(block, { 's3:prefix': 'home/bob/x', 'aws:username': 'alice' })).toBe(false)
  })

  it('numbers, dates, booleans and addresses compare as such', () => {
    expect(conditionHolds({ NumericLessThanEquals: { 's3:max-keys': '10' } }, { 's3:max-keys': 10 })).toBe(true)
    expect(conditionHolds({ NumericLessThan: { 's3:max-keys': '10' } }, { 's3:max-keys': '10' })).toBe(false)
    expect(conditionHolds({ NumericGreaterThan: { 'x:n': '2' } }, { 'x:n': 'abc' })).toBe(false)
    expect(conditionHolds({ DateGreaterThan: { 'aws:CurrentTime': '2020-04-01T00:00:00Z' } }, { 'aws:CurrentTime': '2020-06-30T12:00:00Z' })).toBe(true)
    expect(conditionHolds({ DateLessThan: { 'aws:EpochTime': '1700000000' } }, { 'aws:EpochTime': '1600000000' })).toBe(true)
    expect(conditionHolds({ Bool: { 'aws:SecureTransport': 'false' } }, { 'aws:SecureTransport': false })).toBe(true)
    expect(conditionHolds({ Bool: { 'aws:SecureTransport': 'false' } }, { 'aws:SecureTransport': true })).toBe(false)
    expect(conditionHolds({ IpAddress: { 'aws:SourceIp': ['203.0.113.0/24', '2001:DB8:1234:5678::/64'] } }, { 'aws:SourceIp': '203.0.113.77' })).toBe(true)
    expect(conditionHolds({ IpAddress: { 'aws:SourceIp': ['203.0.113.0/24', '2001:DB8:1234:5678::/64'] } }, { 'aws:SourceIp': '2001:db8:1234:5678::9' })).toBe(true)
    expect(conditionHolds({ NotIpAddress: { 'aws:SourceIp': '203.0.113.0/24' } }, { 'aws:SourceIp': '198.51.100.1' })).toBe(true)
    expect(inCidr('10.0.0.1', '10.0.0.1')).toBe(true)
    expect(inCidr('10.0.0.2', '10.0.0.1/32')).toBe(false)
  })

  it('an unknown operator is an error, not a silent match', () => {
    expect(() => conditionHolds({ StringSorta: { a: 'b' } }, {})).toThrow(/unknown condition operator StringSorta/)
  })
})

describe('IAM evaluation with a resource-based policy (same account)', () => {
  const role = { arn: 'arn:aws:iam::000000000000:role/worker', account: '000000000000' }
  const queue = 'arn:aws:sqs:us-east-1:000000000000:jobs'
  const send = policy('Send', { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queue })
  // the shape of the queue policies CDK writes when a queue enforces TLS
  const tlsOnly = policy('QueuePolicy', { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'sqs:*', Resource: queue, Condition: { Bool: { 'aws:SecureTransport': 'false' } } })

  it('a deny in the resource\'s policy wins over the caller\'s allow; when it does not apply, the caller\'s allow grants', () => {
    expect(evaluateAccess([send], [tlsOnly], role, { action: 'sqs:SendMessage', resource: queue, context: { 'aws:SecureTransport': 'false' } })).toEqual({ decision: 'explicit-deny', statement: { policy: 'QueuePolicy', index: 0 } })
    expect(evaluateAccess([send], [tlsOnly], role, { action: 'sqs:SendMessage', resource: queue, context: { 'aws:SecureTransport': 'true' } })).toEqual({ decision: 'allowed', statement: { policy: 'Send', index: 0 } })
    expect(evaluateAccess([], [tlsOnly], role, { action: 'sqs:SendMessage', resource: queue, context: { 'aws:SecureTransport': 'true' } }).decision).toBe('implicit-deny')
  })

  it('an allow in the resource\'s policy for the caller is enough without one of its own; a principal it does not name gets nothing', () => {
    const byRole = policy('QueueAllow', { Effect: 'Allow', Principal: { AWS: role.arn }, Action: 'sqs:SendMessage', Resource: queue })
    expect(evaluateAccess([], [byRole], role, { action: 'sqs:SendMessage', resource: queue }).decision).toBe('allowed')
    expect(evaluateAccess([], [byRole], { arn: 'arn:aws:iam::000000000000:role/other', account: '000000000000' }, { action: 'sqs:SendMessage', resource: queue }).decision).toBe('implicit-deny')
    // a resource policy's statement without a principal applies to no one
    const noPrincipal = policy('Odd', { Effect: 'Deny', Action: 'sqs:*', Resource: queue })
    expect(evaluateAccess([send], [noPrincipal], role, { action: 'sqs:SendMessage', resource: queue }).decision).toBe('allowed')
  })

  it('principals: everyone, an ARN, an account by ID or root ARN, a service', () => {
    expect(principalMatches('*', role)).toBe(true)
    expect(principalMatches({ AWS: ['arn:aws:iam::000000000000:root'] }, role)).toBe(true)
    expect(principalMatches({ AWS: '000000000000' }, role)).toBe(true)
    expect(principalMatches({ AWS: 'arn:aws:iam::111111111111:root' }, role)).toBe(false)
    expect(principalMatches({ Service: 'apigateway.amazonaws.com' }, { service: 'apigateway.amazonaws.com' })).toBe(true)
    expect(principalMatches({ Service: 'lambda.amazonaws.com' }, { service: 'apigateway.amazonaws.com' })).toBe(false)
  })
})

