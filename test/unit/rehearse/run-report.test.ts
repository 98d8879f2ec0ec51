import { describe, expect, it } from 'vitest'
import { functionIdentities, authorizeByPolicies } from '../../../lib/local/rehearse/identities'
import { formatReport, rehearsalReport } from '../../../lib/core/rehearse/report'
import { runProblems, summarizeCalls, type RunSection } from '../../../lib/core/rehearse/run-report'
import { schedules } from '../../../lib/core/rehearse/schedules'
import { functionInventory } from '../../../lib/core/rehearse/inventory'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'

const run = (over: Partial<RunSection> = {}): RunSection => ({
  functions: [{ logicalId: 'A', invocations: 2, errors: 0 }, { logicalId: 'B', invocations: 0, errors: 0 }],
  calls: [], denied: [], notInvoked: ['B'], scenarios: [{ name: 's', ok: true }], skipped: [], created: 3, notCreated: [], ...over,
})
const checked = { assembly: 'cdk.out', ran: ['a'], notRun: [], stacks: 1, resources: 2, policyActions: 3, violations: [], ms: 10 }

describe('the run section of the rehearsal report', () => {
  it('counts each distinct call once, with how often it was made, in a stable order', () => {
    const c = (fn: string, action: string, allowed = true) => ({ function: fn, action, resource: 'r', allowed })
    expect(summarizeCalls([c('B', 'x:Y'), c('A', 'x:Z'), c('A', 'x:Z'), c('A', 'x:Z', false)])).toEqual([
      { ...c('A', 'x:Z', false), count: 1 }, { ...c('A', 'x:Z'), count: 2 }, { ...c('B', 'x:Y'), count: 1 },
    ])
  })

  it('ok only without a denial, a function error, a failed scenario, a resource not created or a run that did not complete; a function not invoked is a warning', () => {
    expect(rehearsalReport(checked, run()).ok).toBe(true)
    expect(runProblems(run())).toEqual([])
    const denied = { function: 'A', action: 'kinesis:PutRecords', resource: 'arn:s', allowed: false, count: 2 }
    expect(runProblems(run({ denied: [denied] }))).toEqual(['denied: A kinesis:PutRecords on arn:s (2 times)'])
    expect(rehearsalReport(checked, run({ functions: [{ logicalId: 'A', invocations: 2, errors: 1 }] })).ok).toBe(false)
    expect(rehearsalReport(checked, run({ scenarios: [{ name: 's', ok: false, problem: 'p' }] })).ok).toBe(false)
    expect(rehearsalReport(checked, run({ notCreated: [{ stack: 'S', resource: 'Q', problem: 'p' }] })).ok).toBe(false)
    expect(rehearsalReport(checked, run({ failure: 'no Java' })).ok).toBe(false)
    expect(rehearsalReport({ ...checked, violations: [{ stack: 'S', resource: 'R', problem: 'P' }] }, run()).ok).toBe(false)
    const text = formatReport(rehearsalReport(checked, run({ denied: [denied], functions: [{ logicalId: 'A', invocations: 2, errors: 1, log: ['boom'] }, { logicalId: 'B', invocations: 0, errors: 0 }] })))
    expect(text).toContain('Run: 1 of 2 functions invoked, 0 calls checked (0 distinct), 1 denied, 3 resources created; scenarios 1/1 passed.')
    expect(text).toContain('  denied: A kinesis:PutRecords on arn:s (2 times)\n  A: 1 error in 2 invocations\n    A log: boom\n')
    expect(text).toContain('Warning: not invoked by the rehearsal (not proven): B.')
    expect(text.endsWith('Rehearsal FAILED.\n')).toBe(true)
  })
})

const stack: AssemblyStack = {
  name: 'S',
  template: {
    Resources: {
      Role: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: {}, Policies: [{ PolicyName: 'p', PolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::GetAtt': ['Table', 'Arn'] } }] } }] } },
      Table: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 't' } },
      Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Handler: 'index.handler', Runtime: 'nodejs22.x' } },
      Nightly: { Type: 'AWS::Events::Rule', Properties: { ScheduleExpression: 'rate(1 day)', Targets: [{ Id: 't', Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] } }] } },
      Paused: { Type: 'AWS::Events::Rule', Properties: { ScheduleExpression: 'cron(0 1 * * ? *)', State: 'DISABLED', Targets: [{ Id: 't', Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, Input: '{"job":"x"}' }] } },
    },
  },
} as unknown as AssemblyStack

describe('identities and schedules of an assembly', () => {
  const resolver = assemblyResolver([stack])
  const fns = functionInventory([stack], resolver)

  it('each function gets its own temporary key pair, decided on its role\'s policies', () => {
    let n = 0
    const ids = functionIdentities([stack], resolver, fns, (size) => Buffer.alloc(size, ++n))
    const c = ids.credentials.get('Fn')!
    expect(c.accessKeyId).toMatch(/^ASIA[0-9A-F]{16}$/)
    expect(c.sessionToken).toBeDefined()
    const identity = ids.byKey.get(c.accessKeyId)!
    expect(identity).toMatchObject({ name: 'Fn', sessionToken: c.sessionToken })
    const table = 'arn:aws:dynamodb:us-east-1:000000000000:table/t'
    expect(authorizeByPolicies(identity, { action: 'dynamodb:GetItem', resource: table, context: {} })).toMatchObject({ decision: 'allowed' })
    expect(authorizeByPolicies(identity, { action: 'dynamodb:PutItem', resource: table, context: {} })).toEqual({ decision: 'implicit-deny' })
    expect(ids.problems).toEqual([])
  })

  it('the schedules that invoke a function, with EventBridge\'s scheduled event or the target\'s input', () => {
    const s = schedules([stack], resolver, fns, new Date('2026-01-02T03:04:05.678Z'))
    expect(s).toEqual([
      expect.objectContaining({ logicalId: 'Nightly', function: 'Fn', enabled: true, expression: 'rate(1 day)', event: expect.objectContaining({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-01-02T03:04:05Z' }) }),
      expect.objectContaining({ logicalId: 'Paused', function: 'Fn', enabled: false, event: { job: 'x' } }),
    ])
  })
})

describe('the log lines a function with errors is reported with', () => {
  it('those that name an error or a failure, the last five; else the last lines', async () => {
    const { telling } = await import('../../../lib/local/rehearse/rehearsal')
    const noise = ['(node:1) Warning: NodeVersionSupportWarning: The AWS SDK for JavaScript (v3)', 'will require node >=22.']
    expect(telling([...noise, '{"level":"error","msg":"collector write failed"}', 'ok'])).toEqual(['{"level":"error","msg":"collector write failed"}'])
    expect(telling(['a', 'b', 'c', 'd', 'e', 'f'])).toEqual(['b', 'c', 'd', 'e', 'f'])
  })
})
