/**
 * `floe recover --stack <name>`: the request reaches the deployment's
 * recovery worker by a direct Lambda invocation with the caller's
 * credentials, the function named by the stack's `RecoverFunctionName`
 * output. CloudFormation and Lambda are fakes served here (no emulator has
 * them); the test checks the exact requests. The worker's side of these
 * invocations is `answerRecover`/`answerStatus`, tested with the API.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_URL_OUTPUT, outputKey, RECOVER_FUNCTION_OUTPUT } from '../../../lib/infra/outputs'
import { localNames } from '../../../lib/infra/resources'
import { recoverOnStack } from '../../../lib/cli/recover-stack'
import { stackTarget } from '../../../lib/cli/target'
import { startCloudFormationServer, type CloudFormationServer } from '../../support/cloudformation-server'
import { startLambdaServer, type LambdaServer } from '../../support/lambda-server'
import { runFloe } from '../../support/process'

const WORKER = 'FloeApp-RecoverWorkerFunction-AbC123'
const RUN = 'recover-20261127T081500-0a1b2c3d'
const report = (o: Record<string, unknown>) => ({ runId: RUN, dryRun: false, selected: 0, unrecoverable: 0, fixed: 0, broken: 0, wouldBeGood: 0, stillFailing: 0, replayed: 0, claimedElsewhere: 0, reasons: [], ...o })

let cfn: CloudFormationServer
let lambda: LambdaServer
let answers: unknown[] = []
const dir = mkdtempSync(join(tmpdir(), 'floe-recover-stack-'))
let env: Record<string, string>

beforeAll(async () => {
  const names = localNames('floe')
  const outputs: Record<string, string> = { [API_URL_OUTPUT]: 'https://api.example.com', [RECOVER_FUNCTION_OUTPUT]: WORKER }
  for (const [k, v] of Object.entries(names.tables)) outputs[outputKey('table', k)] = v
  for (const [k, v] of Object.entries(names.streams)) outputs[outputKey('stream', k)] = v
  for (const [k, v] of Object.entries(names.buckets)) outputs[outputKey('bucket', k)] = v
  const { [RECOVER_FUNCTION_OUTPUT]: _w, ...noWorker } = outputs
  cfn = await startCloudFormationServer([
    { name: 'FloeApp', outputs },
    { name: 'FloeNoSearch', outputs: noWorker },
  ])
  lambda = await startLambdaServer(() => answers.shift() ?? { status: 500, body: { message: 'no answer queued' } })
  env = {
    FLOE_DATA_DIR: join(dir, 'no-local-stack'),
    AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.url,
    AWS_ENDPOINT_URL_LAMBDA: lambda.url,
    AWS_ACCESS_KEY_ID: 'ENVKEY',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    AWS_CONFIG_FILE: join(dir, 'none'),
  }
})

afterAll(async () => {
  await cfn?.close()
  await lambda?.close()
  rmSync(dir, { recursive: true, force: true })
})

function floe(args: string[]) {
  const own: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AWS_') && !k.startsWith('FLOE_')) own[k] = v
  return runFloe(args, { ...own, ...env }, { replaceEnvironment: true })
}
const onStack = ['--stack', 'FloeApp', '--region', 'eu-west-1']

describe('floe recover --stack', () => {
  it('invokes the recovery worker named by the stack output with the request, and prints its report', async () => {
    const steps = join(dir, 'steps.json')
    const doc = { name: 'rename', steps: [{ op: 'renameSchema', from: 'iglu:com.acme/x/jsonschema/1-0-1', to: '1-0-0' }] }
    writeFileSync(steps, JSON.stringify(doc))
    answers = [{ status: 200, body: report({ selected: 3, fixed: 3, wouldBeGood: 3, replayed: 3 }) }]
    const before = lambda.requests.length
    const r = await floe(['recover', '--failure-type', 'schema_violations', '--since', '2026-11-27T00:00:00Z', '--steps', steps, '--json', ...onStack])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ runId: RUN, selected: 3, replayed: 3 })
    expect(cfn.requests.at(-1)).toEqual({ action: 'DescribeStacks', stackName: 'FloeApp', accessKeyId: 'ENVKEY', region: 'eu-west-1' })
    expect(lambda.requests.slice(before)).toEqual([
      {
        method: 'POST',
        functionName: WORKER,
        invocationType: undefined,
        payload: { recover: { failureType: 'schema_violations', since: '2026-11-27T00:00:00Z', steps: doc } },
        accessKeyId: 'ENVKEY',
        region: 'eu-west-1',
      },
    ])
  })

  it('exits 1 when nothing is selected, 2 on a refusal, and refuses bad options before invoking anything', async () => {
    answers = [{ status: 404, body: { ...report({}), message: 'the selection matches no bad row that is not recovered yet' } }]
    const none = await floe(['recover', '--dry-run', ...onStack])
    expect(none.code).toBe(1)
    expect(none.stdout).toContain('Run ')
    expect(lambda.requests.at(-1)!.payload).toEqual({ recover: { dryRun: true } })

    answers = [{ status: 400, body: { message: 'the search store refuses the query: unbalanced parenthesis' } }]
    const refused = await floe(['recover', '--query', '(oops', ...onStack])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('stack FloeApp: the search store refuses the query: unbalanced parenthesis')

    const before = lambda.requests.length
    const bad = await floe(['recover', '--since', 'yesterday', ...onStack])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('since must be an ISO time')
    const noWorker = await floe(['recover', '--stack', 'FloeNoSearch', '--region', 'eu-west-1'])
    expect(noWorker.code).toBe(2)
    expect(noWorker.stderr).toContain('has no output RecoverFunctionName')
    expect(lambda.requests.length).toBe(before)
  })

  it('says why a queued run failed, and exits 1', async () => {
    answers = [
      { status: 202, body: { runId: RUN, selected: 12_000, status: `/control-plane/recover/${RUN}`, message: 'queued' } },
      { status: 200, body: { runId: RUN, state: 'failed', failure: { share: 1, reason: 'share 1 failed 3 times and was moved to the dead-letter queue: timeout' }, report: { ...report({ selected: 5_000, replayed: 5_000 }), shares: 1 } } },
    ]
    const r = await floe(['recover', '--failure-type', 'schema_violations', ...onStack])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`recover: run ${RUN} failed: 5000 selected`)
    expect(r.stderr).toContain(`floe recover: run ${RUN} failed: share 1 failed 3 times and was moved to the dead-letter queue: timeout`)
  })

  it('prints the summary of a queued run once, on stdout', async () => {
    answers = [
      { status: 202, body: { runId: RUN, selected: 7, status: `/control-plane/recover/${RUN}`, message: 'queued' } },
      { status: 200, body: { runId: RUN, state: 'done', report: { ...report({ selected: 7, fixed: 7, wouldBeGood: 7, replayed: 7 }), shares: 1 } } },
    ]
    const r = await floe(['recover', '--failure-type', 'schema_violations', ...onStack])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.match(/7 selected/g)).toHaveLength(1)
    expect(r.stderr).not.toMatch(/7 selected/)
    expect(r.stderr).toBe(`recover: run ${RUN} queued\n`)
  })

  it('follows a queued run through its record until it is done', async () => {
    const old = { ...process.env }
    Object.assign(process.env, env)
    try {
      const target = await stackTarget({ stack: 'FloeApp', region: 'eu-west-1' })
      answers = [
        { status: 202, body: { runId: RUN, selected: 12_000, status: `/control-plane/recover/${RUN}`, message: 'queued' } },
        { status: 200, body: { runId: RUN, state: 'running', report: { ...report({ selected: 5_000, replayed: 5_000 }), shares: 1 } } },
        { status: 200, body: { runId: RUN, state: 'done', report: { ...report({ selected: 12_000, replayed: 12_000 }), shares: 3 } } },
      ]
      const seen: unknown[] = []
      let sleeps = 0
      const before = lambda.requests.length
      const a = await recoverOnStack(target, { failureType: 'schema_violations' }, { progress: (b) => seen.push(b.state ?? 'queued'), sleep: async () => void sleeps++ })
      expect(a).toMatchObject({ status: 200, body: { state: 'done', report: { replayed: 12_000 } } })
      expect(seen).toEqual(['queued', 'running', 'done'])
      expect(sleeps).toBe(2)
      expect(lambda.requests.slice(before).map((r) => [r.functionName, r.payload])).toEqual([
        [WORKER, { recover: { failureType: 'schema_violations' } }],
        [WORKER, { recoverStatus: RUN }],
        [WORKER, { recoverStatus: RUN }],
      ])
    } finally {
      process.env = old
    }
  })

  it('after a queued run is done, follows its outcome in the store until no event is pending, and prints it', async () => {
    const old = { ...process.env }
    Object.assign(process.env, env)
    try {
      const target = await stackTarget({ stack: 'FloeApp', region: 'eu-west-1' })
      const done = (outcome: Record<string, unknown>) => ({ status: 200, body: { runId: RUN, state: 'done', report: { ...report({ selected: 6_000, replayed: 6_000 }), shares: 2 }, outcome } })
      answers = [
        { status: 202, body: { runId: RUN, selected: 6_000, status: `/control-plane/recover/${RUN}`, message: 'queued' } },
        done({ nowGood: 1_000, failedAgain: 0, stillPending: 5_000, untracked: 0, failedAgainReasons: [] }),
        done({ nowGood: 5_990, failedAgain: 10, stillPending: 0, untracked: 0, failedAgainReasons: [{ reason: 'schema_violations: x', count: 10 }] }),
      ]
      let t = 0
      const a = await recoverOnStack(target, { failureType: 'schema_violations' }, { sleep: async (ms) => void (t += ms), now: () => t, waitMs: 60_000 })
      expect(a.body).toMatchObject({ state: 'done', outcome: { nowGood: 5_990, failedAgain: 10, stillPending: 0 } })
      // the wait ends it: a run whose events do not settle is answered as it is then
      answers = [
        { status: 202, body: { runId: RUN, selected: 6_000, status: `/control-plane/recover/${RUN}`, message: 'queued' } },
        ...Array.from({ length: 20 }, () => done({ nowGood: 0, failedAgain: 0, stillPending: 6_000, untracked: 0, failedAgainReasons: [] })),
      ]
      t = 0
      const b = await recoverOnStack(target, { failureType: 'schema_violations' }, { sleep: async (ms) => void (t += ms), now: () => t, waitMs: 12_000 })
      expect(b.body).toMatchObject({ state: 'done', outcome: { stillPending: 6_000 } })
      expect(t).toBeLessThanOrEqual(5_000 + 12_000)
    } finally {
      process.env = old
      answers = []
    }
  })
})
