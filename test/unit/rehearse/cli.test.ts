import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { run } from '../../../lib/cli/index'
import { formatReport } from '../../../lib/core/rehearse/report'
import { projectRoot } from '../../../lib/local/handlers'
import { synthAssembly } from '../../support/synth'
import { runFloe } from '../../support/floe-cli'

const root = mkdtempSync(join(tmpdir(), 'floe-rehearse-test-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const assembly = synthAssembly(join(root, 'cdk.out'))

const floe = runFloe

describe('floe rehearse --assembly', () => {
  it('passes the project\'s own assembly: exit 0, ok, no violation', async () => {
    const r = await floe(['rehearse', '--assembly', assembly, '--json'])
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ ok: true, stacks: 2, violations: [] })
    expect(report.resources).toBeGreaterThan(100)
    expect(report.policyActions).toBeGreaterThan(100)
    expect(report.notRun.length).toBeGreaterThan(0)
  })

  it('an unknown property added to a table: the violation names the stack, the table and the property; exit 1', async () => {
    const edited = join(root, 'edited')
    synthAssembly(edited)
    const file = join(edited, 'FloeData.template.json')
    const t = JSON.parse(readFileSync(file, 'utf8'))
    const [tableId, table] = Object.entries<any>(t.Resources).find(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable')!
    table.Properties.TimeToLiveSpecification = { AttributeName: 'expiresAt', Enabled: true, AttributeNames: 'expiresAt' }
    table.Properties.WarmThroughputMode = 'ON'
    writeFileSync(file, JSON.stringify(t, null, 1))
    const r = await floe(['rehearse', '--assembly', edited, '--json'])
    expect(r.code, r.stderr).toBe(1)
    const report = JSON.parse(r.stdout)
    expect(report.ok).toBe(false)
    expect(report.violations).toEqual([
      { stack: 'FloeData', resource: tableId, problem: 'TimeToLiveSpecification.AttributeNames: unknown property' },
      { stack: 'FloeData', resource: tableId, problem: 'WarmThroughputMode: unknown property' },
    ])
    const text = await floe(['rehearse', '--assembly', edited])
    expect(text.code).toBe(1)
    expect(text.stdout).toContain(`FloeData/${tableId}: WarmThroughputMode: unknown property`)
  })

  it('a bundle without the handler\'s file, read from a hand-made assembly: exit 1 naming the function', async () => {
    const dir = join(root, 'handmade')
    mkdirSync(join(dir, 'asset.abc'), { recursive: true })
    writeFileSync(join(dir, 'asset.abc', 'main.mjs'), 'export const handler = async () => 1\n')
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ version: '1', artifacts: { Small: { type: 'aws:cloudformation:stack', environment: 'aws://unknown-account/eu-west-1', properties: { templateFile: 'Small.template.json' } } } }))
    const fn = (Handler: string) => ({ Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] }, Code: { S3Bucket: 'b', S3Key: 'abc.zip' }, Handler, Runtime: 'nodejs22.x' }, Metadata: { 'aws:asset:path': 'asset.abc' } })
    const role = { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] } } }
    writeFileSync(join(dir, 'Small.template.json'), JSON.stringify({ Resources: { Role: role, Good: fn('main.handler'), Bad: fn('index.handler') } }))
    const r = await floe(['rehearse', '--assembly', dir, '--static', '--json'])
    expect(r.code, r.stderr).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, stacks: 1, resources: 3, violations: [{ stack: 'Small', resource: 'Bad', problem: 'Handler index.handler: the bundle asset.abc has no index.js, index.mjs, index.cjs' }] })
  })

  it('a usage error exits 2: an unknown option, a directory that is no assembly, a missing value', async () => {
    const err: string[] = []
    const write = process.stderr.write
    process.stderr.write = ((s: string) => { err.push(String(s)); return true }) as typeof process.stderr.write
    try {
      expect(await run(['rehearse', '--fast'])).toBe(2)
      expect(await run(['rehearse', '--assembly', root])).toBe(2)
      expect(await run(['rehearse', '--assembly'])).toBe(2)
      expect(await run(['rehearse', '--wait', 'soon'])).toBe(2)
    } finally {
      process.stderr.write = write
    }
    expect(err.join('')).toContain('unknown argument --fast')
    expect(err.join('')).toContain('is not a cloud assembly directory (no manifest.json)')
    expect(err.join('')).toContain('--assembly needs a directory')
    expect(err.join('')).toContain('--wait needs a number of seconds (1–3600)')
  })

  it('the text report says what ran, what did not, and each violation', () => {
    const text = formatReport({ ok: false, assembly: 'cdk.out', ran: ['a'], notRun: ['b'], stacks: 1, resources: 2, policyActions: 3, violations: [{ stack: 'S', resource: 'R', problem: 'P' }], ms: 1500 })
    expect(text).toBe('Rehearsal of cdk.out: 1 stacks, 2 resources, 3 policy actions checked in 1.5 s.\nRan: a.\nNot run: b.\n1 violation:\n  S/R: P\nRehearsal FAILED.\n')
  })
})
