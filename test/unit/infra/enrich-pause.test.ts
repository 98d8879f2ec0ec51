/**
 * Enrich's pause on AWS, as deployed: enrich and the control plane may list
 * event source mappings and update enrich's only; the control plane is told
 * enrich's mapping; the health function reads the settings table and, in a
 * deployment without the licence, is told enrich is off.
 */
import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { FloeAppStack, FloeDataStack } from '../../../lib/infra/stacks'
import { projectRoot } from '../../../lib/local/handlers'

function synth(licence: boolean): Template {
  const before = process.env.ACCEPT_LIMITED_USE_LICENSE
  if (licence) process.env.ACCEPT_LIMITED_USE_LICENSE = 'yes'
  else delete process.env.ACCEPT_LIMITED_USE_LICENSE
  try {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
    const data = new FloeDataStack(app, 'D')
    return Template.fromStack(new FloeAppStack(app, 'A', { data: data.data, projectRoot }))
  } finally {
    if (before === undefined) delete process.env.ACCEPT_LIMITED_USE_LICENSE
    else process.env.ACCEPT_LIMITED_USE_LICENSE = before
  }
}

const fnId = (t: Template, prefix: string) => Object.keys(t.findResources('AWS::Lambda::Function')).find((id) => id.startsWith(`${prefix}Function`))!
const envOf = (t: Template, prefix: string) => t.findResources('AWS::Lambda::Function')[fnId(t, prefix)]!.Properties.Environment.Variables as Record<string, unknown>
const roleOf = (t: Template, prefix: string) => (t.findResources('AWS::Lambda::Function')[fnId(t, prefix)]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]

/** The Lambda statements of the policies attached to the role of the function `prefix`. */
function lambdaStatements(t: Template, prefix: string): unknown[] {
  const role = roleOf(t, prefix)
  return Object.values(t.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
    .filter((s) => ([] as string[]).concat(s.Action).some((a) => a.startsWith('lambda:')))
}

const mappingArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':event-source-mapping:*']] }

describe("enrich's pause on AWS", () => {
  const t = synth(true)
  const enrichArn = { 'Fn::GetAtt': [fnId(t, 'Enrich'), 'Arn'] }

  it.each(['Enrich', 'ControlPlane'])('%s may list mappings and update the mappings of enrich only', (prefix) => {
    expect(lambdaStatements(t, prefix)).toEqual([
      { Effect: 'Allow', Action: 'lambda:ListEventSourceMappings', Resource: '*' },
      { Effect: 'Allow', Action: 'lambda:UpdateEventSourceMapping', Resource: mappingArn, Condition: { StringEquals: { 'lambda:FunctionArn': enrichArn } } },
    ])
  })

  it('no other function may touch mappings', () => {
    for (const prefix of ['Health', 'Collector', 'Archive', 'Registry', 'Ui', 'Metrics', 'Authorizer']) expect(lambdaStatements(t, prefix)).toEqual([])
  })

  it("gives the control plane enrich's function and stream names", () => {
    const value = JSON.stringify(envOf(t, 'ControlPlane').FLOE_ENRICH_TRIGGER)
    expect(value).toContain(fnId(t, 'Enrich'))
    expect(value).toContain('RawStream')
  })

  it('lets enrich record why it paused, and the health function read it', () => {
    expect(envOf(t, 'Health').FLOE_TABLE_SETTINGS).toBeDefined()
    expect(envOf(t, 'Enrich').FLOE_TABLE_SETTINGS).toBeDefined()
    // enrich writes the record (PutItem on the settings table)
    const role = roleOf(t, 'Enrich')
    const statements = Object.values(t.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
    expect(statements.some((s) => ([] as string[]).concat(s.Action).includes('dynamodb:PutItem') && JSON.stringify(s.Resource).includes('SettingsTable'))).toBe(true)
  })

  it('tells the health function that enrich is off only in a deployment without the licence', () => {
    expect(envOf(t, 'Health').FLOE_ENRICH_OFF).toBeUndefined()
    expect(envOf(synth(false), 'Health').FLOE_ENRICH_OFF).toBe('licence')
  })
})
