/**
 * The rehearsal's run on a small hand-made assembly: its schedules invoked
 * once, the client scenarios and the search store given as ports, the
 * scenario target's outputs and direct clients, and the function's calls
 * authorized against its role.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb'
import { afterAll, describe, expect, it } from 'vitest'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import { runRehearsal, type ScenarioTarget } from '../../../lib/local/rehearse/rehearsal'

const root = mkdtempSync(join(tmpdir(), 'floe-rehearse-seams-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** One function (reads an item of its table, which its role allows; writes one, which it does not), its table, a daily schedule. */
function assembly(): string {
  const dir = join(root, 'cdk.out')
  mkdirSync(join(dir, 'asset.small'), { recursive: true })
  writeFileSync(join(dir, 'asset.small', 'index.mjs'), [
    'import { DynamoDBClient, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb"',
    'const ddb = new DynamoDBClient({})',
    'export const handler = async (event) => {',
    '  await ddb.send(new GetItemCommand({ TableName: process.env.TABLE, Key: { pk: { S: "a" } } }))',
    '  let denied = null',
    '  try { await ddb.send(new PutItemCommand({ TableName: process.env.TABLE, Item: { pk: { S: "a" } } })) } catch (e) { denied = e.name }',
    '  return { source: event.source ?? null, denied, rds: process.env.AWS_ENDPOINT_URL_RDS_DATA ?? null }',
    '}',
  ].join('\n'))
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ version: '1', artifacts: { Small: { type: 'aws:cloudformation:stack', environment: 'aws://unknown-account/unknown-region', properties: { templateFile: 'Small.template.json' } } } }))
  const table = { 'Fn::GetAtt': ['Table', 'Arn'] }
  writeFileSync(join(dir, 'Small.template.json'), JSON.stringify({
    Resources: {
      Role: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] }, Policies: [{ PolicyName: 'read', PolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table }] } }] } },
      Table: { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' } },
      Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Code: { S3Bucket: 'b', S3Key: 'small.zip' }, Handler: 'index.handler', Runtime: 'nodejs22.x', Timeout: 30, Environment: { Variables: { TABLE: { Ref: 'Table' } } } }, Metadata: { 'aws:asset:path': 'asset.small' } },
      Daily: { Type: 'AWS::Events::Rule', Properties: { ScheduleExpression: 'rate(1 day)', Targets: [{ Id: 'fn', Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] } }] } },
    },
    Outputs: { TableName: { Value: { Ref: 'Table' } } },
  }))
  return dir
}

describe('the rehearsal\'s run and its ports', { timeout: 300_000 }, () => {
  it('invokes each schedule once, runs the scenarios given against the target, starts and closes the search store given, authorizes each call', async () => {
    const dir = assembly()
    // a Data API stand-in: only whether it is started, given to the functions and closed is checked here
    const api = createServer((_req, res) => res.end('{}'))
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', () => r()))
    const store = { started: 0, closed: 0 }
    let seen: { outputs: ScenarioTarget['outputs']; tableStatus?: string; url: string } | undefined
    const run = await runRehearsal({
      dir,
      stacks: readAssembly(dir).stacks,
      waitMs: 5_000,
      searchStore: async () => {
        store.started++
        return { endpoint: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, close: async () => { store.closed++ } }
      },
      scenarios: async (t) => {
        const table = t.outputs.Small?.TableName
        const d = table ? await t.clients.ddb.send(new DescribeTableCommand({ TableName: table })) : undefined
        seen = { outputs: t.outputs, url: t.url, ...(d?.Table?.TableStatus ? { tableStatus: d.Table.TableStatus } : {}) }
        return [{ name: 'a scenario of its own', ok: false, problem: 'failed on purpose' }]
      },
    })
    api.close()
    expect(run.failure).toBeUndefined()
    expect(store).toEqual({ started: 1, closed: 1 })
    expect(seen).toMatchObject({ outputs: { Small: { TableName: expect.stringMatching(/^Small-Table/) } }, tableStatus: 'ACTIVE', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) })
    expect(run.scenarios).toContainEqual({ name: 'schedule Daily invokes Fn', ok: true })
    expect(run.scenarios).toContainEqual({ name: 'a scenario of its own', ok: false, problem: 'failed on purpose' })
    expect(run.functions).toEqual([{ logicalId: 'Fn', invocations: 1, errors: 0 }])
    const arn = expect.stringMatching(/^arn:aws:dynamodb:us-east-1:000000000000:table\/Small-Table/)
    expect(run.calls).toEqual([
      { function: 'Fn', action: 'dynamodb:GetItem', resource: arn, allowed: true, count: 1 },
      { function: 'Fn', action: 'dynamodb:PutItem', resource: arn, allowed: false, count: 1 },
    ])
    expect(run.denied).toEqual([{ function: 'Fn', action: 'dynamodb:PutItem', resource: arn, allowed: false, count: 1 }])
    expect(run.teardown).toMatchObject({ ok: true, deleted: 1, left: [] })
  })
})
