/**
 * `floe rehearse` as a user runs it: the CLI in a process of its own, on the
 * synthesized assembly (one synthesis with bundling for the file, with
 * enrich's licence accepted so that its mapping runs), and on copies of it
 * edited to break what a first deploy would break: a role's grant, a
 * function's environment.
 */
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { synthesize } from '../../../lib/cli/rehearse'
import { projectRoot } from '../../../lib/local/handlers'
import { runFloe } from '../../support/floe-cli'

interface Report {
  ok: boolean
  functions: { logicalId: string; invocations: number; errors: number; log?: string[] }[]
  calls: { function: string; action: string; resource: string; allowed: boolean; count: number }[]
  denied: { function: string; action: string; resource: string; allowed: boolean; count: number }[]
  violations: unknown[]
  scenarios: { name: string; ok: boolean; problem?: string; skipped?: string }[]
  skipped: { what: string; reason: string }[]
  notInvoked: string[]
  created: number
  teardown?: { ok: boolean; deleted: number; left: string[] }
  failure?: string
}

const floe = runFloe

async function rehearse(dir: string, ...more: string[]): Promise<{ code: number | null; report: Report; stderr: string }> {
  const r = await floe(['rehearse', '--assembly', dir, '--json', ...more])
  let report: Report
  try {
    report = JSON.parse(r.stdout) as Report
  } catch {
    throw new Error(`no JSON report (exit ${r.code}): ${r.stdout.slice(0, 2000)}\n${r.stderr.slice(-4000)}`)
  }
  return { code: r.code, report, stderr: r.stderr }
}

/** A copy of the assembly with one template edited. */
function edited(name: string, template: string, edit: (t: any) => void): string {
  const dir = join(root, name)
  cpSync(assembly, dir, { recursive: true })
  const file = join(dir, template)
  const t = JSON.parse(readFileSync(file, 'utf8'))
  edit(t)
  writeFileSync(file, JSON.stringify(t))
  return dir
}

const logicalIdOf = (t: any, type: string, prefix: string): string => Object.keys(t.Resources).find((id) => id.startsWith(prefix) && t.Resources[id].Type === type)!

let root: string
let assembly: string
let app: any

describe('floe rehearse runs the synthesized assembly', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'floe-rehearse-run-'))
    assembly = join(root, 'cdk.out')
    const licence = process.env.ACCEPT_LIMITED_USE_LICENSE
    process.env.ACCEPT_LIMITED_USE_LICENSE = 'yes'
    try {
      await synthesize(assembly, () => {})
    } finally {
      if (licence === undefined) delete process.env.ACCEPT_LIMITED_USE_LICENSE
      else process.env.ACCEPT_LIMITED_USE_LICENSE = licence
    }
    app = JSON.parse(readFileSync(join(assembly, 'FloeApp.template.json'), 'utf8'))
  }, 900_000)
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it('the assembly as synthesized: exit 0, every function listed and invoked, calls checked, nothing denied, every scenario passed', async () => {
    const { code, report, stderr } = await rehearse(assembly)
    expect(code, `${JSON.stringify({ ...report, skipped: undefined, calls: undefined })}\n${stderr.slice(-3000)}`).toBe(0)
    expect(report.ok).toBe(true)
    expect(report.violations).toEqual([])
    expect(report.denied).toEqual([])
    const declared = Object.keys(app.Resources).filter((id) => app.Resources[id].Type === 'AWS::Lambda::Function').sort()
    expect(report.functions.map((f) => f.logicalId).sort()).toEqual(declared)
    expect(report.functions.filter((f) => f.errors > 0)).toEqual([])
    const ran = (prefix: string) => report.functions.find((f) => f.logicalId.startsWith(prefix))!.invocations
    expect([ran('CollectorFunction'), ran('EnrichFunction'), ran('ArchiveFunction'), ran('HealthFunction')].every((n) => n > 0)).toBe(true)
    expect(report.scenarios.slice(0, 4).map((s) => [s.name, s.ok])).toEqual([
      ['tracker GET /i and POST /com.snowplowanalytics.snowplow/tp2 through the HTTP API', true],
      ['the two events enriched onto the good stream', true],
      ['the registry lists its schemas; a page behind the authorizer asks for credentials', true],
      ['GET /health', true],
    ])
    // the client scenarios, each passed and none skipped (every part is stood in), then the built-in archive check once they waited out its window
    expect(report.scenarios.slice(4).map((s) => [s.name, s.ok, s.skipped])).toEqual([
      ...['health', 'control-plane', 'trackers', 'micro', 'tracking-design', 'registry', 'recovery', 'metrics', 'stack-cli', 'functions'].map((n) => [n, true, undefined]),
      ['the archive function wrote the streams to the archive bucket', true, undefined],
    ])
    expect(report.notInvoked).toEqual([])
    expect([ran('RegistryFunction'), ran('AuthorizerFunction'), ran('UiFunction')].every((n) => n > 0)).toBe(true)
    // the teardown rehearsed: every resource created, deleted and read back as gone
    expect(report.teardown).toMatchObject({ ok: true, left: [] })
    expect(report.teardown!.deleted).toBe(report.created)
    expect(report.calls.length).toBeGreaterThan(0)
    // the collector's write to the raw stream, checked against its role and allowed
    expect(report.calls).toContainEqual(expect.objectContaining({ function: expect.stringMatching(/^CollectorFunction/), action: 'kinesis:PutRecords', resource: expect.stringMatching(/:stream\/FloeData-RawStream/), allowed: true }))
    // Lambda's reads of enrich's stream are made with enrich's role
    expect(report.calls).toContainEqual(expect.objectContaining({ function: expect.stringMatching(/^EnrichFunction/), action: 'kinesis:GetRecords', allowed: true }))
    // what did not run says so
    expect(report.notInvoked).toEqual(report.functions.filter((f) => f.invocations === 0).map((f) => f.logicalId))
    // the search store stood in by the Data API: the loader's statements authorized against its role, with the secret
    expect(ran('SearchLoaderFunction')).toBeGreaterThan(0)
    for (const action of ['rds-data:ExecuteStatement', 'secretsmanager:GetSecretValue']) {
      expect(report.calls).toContainEqual(expect.objectContaining({ function: expect.stringMatching(/^SearchLoaderFunction/), action, allowed: true }))
    }
    // the recovery worker's queue polled with its role
    expect(report.calls).toContainEqual(expect.objectContaining({ function: expect.stringMatching(/^RecoverWorkerFunction/), action: 'sqs:ReceiveMessage', resource: expect.stringMatching(/:FloeApp-RecoverRunsQueue.*\.fifo$/), allowed: true }))
  })

  it('the statement granting the collector its Kinesis write removed from its role\'s policy: the denial is reported for the collector; exit 1', async () => {
    const dir = edited('no-collector-write', 'FloeApp.template.json', (t) => {
      const policy = t.Resources[logicalIdOf(t, 'AWS::IAM::Policy', 'CollectorRoleDefaultPolicy')].Properties.PolicyDocument
      const before = policy.Statement.length
      policy.Statement = policy.Statement.filter((s: { Action: string | string[] }) => ![s.Action].flat().includes('kinesis:PutRecords'))
      expect(policy.Statement.length).toBeLessThan(before)
    })
    const { code, report } = await rehearse(dir, '--quick', '--wait', '30')
    expect(code).toBe(1)
    expect(report.ok).toBe(false)
    expect(report.violations).toEqual([])
    const collector = logicalIdOf(app, 'AWS::Lambda::Function', 'CollectorFunction')
    expect(report.denied).toContainEqual(expect.objectContaining({ function: collector, action: 'kinesis:PutRecords', resource: expect.stringMatching(/^arn:aws:kinesis:us-east-1:000000000000:stream\/FloeData-RawStream/), allowed: false }))
    expect(report.denied.every((d) => d.function === collector)).toBe(true)
    expect(report.scenarios[0]).toMatchObject({ ok: false })
  })

  it('an environment variable of enrich removed: enrich\'s errors are reported; exit 1', async () => {
    const enrich = logicalIdOf(app, 'AWS::Lambda::Function', 'EnrichFunction')
    const dir = edited('no-enrich-good-stream', 'FloeApp.template.json', (t) => {
      const variables = t.Resources[enrich].Properties.Environment.Variables
      expect(variables.FLOE_STREAM_GOOD).toBeDefined()
      delete variables.FLOE_STREAM_GOOD
    })
    const { code, report } = await rehearse(dir, '--quick', '--wait', '30')
    expect(code).toBe(1)
    expect(report.ok).toBe(false)
    expect(report.violations).toEqual([])
    // Without its variable, enrich falls back on its configuration's stream name ("good"), which its role is not granted: refused as AWS would refuse it,
    // and each batch answers its records as failed (counted as errors).
    expect(report.denied).toEqual([expect.objectContaining({ function: enrich, action: 'kinesis:PutRecords', resource: 'arn:aws:kinesis:us-east-1:000000000000:stream/good', allowed: false })])
    const counted = report.functions.find((f) => f.logicalId === enrich)!
    expect(counted.errors).toBeGreaterThan(0)
    expect(report.functions.filter((f) => f.errors > 0).map((f) => f.logicalId)).toEqual([enrich])
    expect(report.scenarios.find((s) => s.name === 'the two events enriched onto the good stream')).toMatchObject({ ok: false })
  })

  it('interrupted (SIGINT) once its emulators run: stops them, removes its directory, exits 130', async () => {
    const own = join(root, 'tmp')
    mkdirSync(own)
    const child = spawn(process.execPath, [join(projectRoot, 'bin/floe.mjs'), 'rehearse', '--assembly', assembly, '--json'], { cwd: projectRoot, env: { ...process.env, TMPDIR: own, FLOE_REHEARSE_LOG: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    // whatever fails below, the rehearsal is stopped as a user stops it (its emulators with it)
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT')
        await exited
      }
    })
    // once a table is created, DynamoDB Local runs from the rehearsal's directory
    await new Promise<void>((resolve) => {
      let err = ''
      child.stderr.on('data', (d) => {
        err += d
        if (/created table/.test(err)) resolve()
      })
      void exited.then(() => resolve())
    })
    const rehearsals = () => readdirSync(own).filter((d) => d.startsWith('floe-rehearsal-'))
    expect(rehearsals().length).toBe(1)
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, failure: 'interrupted' })
    expect(rehearsals()).toEqual([])
    // no process left running from it (DynamoDB Local's Java process was started on a path under it)
    const left = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(own) } catch { return false }
    })
    expect(left).toEqual([])
  })
})
