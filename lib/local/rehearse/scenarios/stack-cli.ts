/**
 * `floe … --stack <name>` against the rehearsal: a CloudFormation endpoint
 * answers `DescribeStacks` with the stacks' resolved outputs, and the `floe`
 * command runs as a child process, as a user runs it against a deployment,
 * with `AWS_ENDPOINT_URL_CLOUDFORMATION` and the emulators' endpoints.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { startCloudFormationServer } from '../cloudformation'
import { endpointVariable } from '../functions'
import { readStream } from './streams'
import { check, ScenarioFailure, type ScenarioContext } from './target'

const FLOE_BIN = fileURLToPath(new URL('../../../../bin/floe.mjs', import.meta.url))
const PROJECT_ROOT = fileURLToPath(new URL('../../../..', import.meta.url))

export interface FloeRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `floe <args>` with the environment given (and nothing of this process's AWS configuration), for at most `timeoutMs`. */
export async function runFloe(args: readonly string[], env: Record<string, string>, o: { bin?: string; timeoutMs?: number } = {}): Promise<FloeRun> {
  const child = spawn(process.execPath, [o.bin ?? FLOE_BIN, ...args], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 120_000)
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject)
      child.once('exit', (c) => resolve(c))
    })
    return { code, stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}

export async function stackCliScenario(ctx: ScenarioContext): Promise<string> {
  const stacks = Object.entries(ctx.target.stackOutputs).map(([name, outputs]) => ({ name, outputs }))
  const cfn = await startCloudFormationServer(stacks)
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-rehearse-cli-'))
  const creds = ctx.target.cliCredentials ?? { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dataDir,
    // no local stack: a command that fell back to it would fail
    FLOE_DATA_DIR: join(dataDir, 'no-local-stack'),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: creds.accessKeyId,
    AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    [endpointVariable('cloudformation')]: cfn.url,
  }
  for (const [service, url] of Object.entries(ctx.target.endpoints)) env[endpointVariable(service)] = url
  const stack = ctx.appStack
  const floe = async (args: string[], extra: Record<string, string> = {}): Promise<string> => {
    const r = await runFloe([...args, '--stack', stack], { ...env, ...extra }, { ...(ctx.options.floeBin ? { bin: ctx.options.floeBin } : {}) })
    if (r.code !== 0) throw new ScenarioFailure(`floe ${[...args, '--stack', stack].join(' ')}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(-400)}`)
    return r.stdout
  }
  try {
    const described = cfn.requests.length
    const org = (await floe(['org', 'create', '--name', 'Rehearsal CLI'])).trim()
    check(/^[0-9a-f-]{36}$/.test(org), `floe org create --stack printed ${org.slice(0, 100)}`)
    const key = JSON.parse(await floe(['apikey', 'create', '--org', org, '--json'])) as { apiKeyId?: string; apiKey?: string }
    check(key.apiKeyId && key.apiKey, 'floe apikey create --json --stack printed no key')
    // the key works through the rehearsal's API: the CLI wrote where the functions read
    const token = await fetch(ctx.url(`/api/msc/v1/organizations/${org}/credentials/v3/token`), { headers: { 'X-API-Key-ID': key.apiKeyId!, 'X-API-Key': key.apiKey! } })
    check(token.status === 200, `the key floe apikey create --stack made: token ${token.status}`)
    await token.arrayBuffer()
    const reset = await floe(['credentials', 'reset'], { FLOE_USERNAME: ctx.username, FLOE_PASSWORD: ctx.password })
    check(/Credentials set: username/.test(reset), `floe credentials reset --stack printed ${reset.slice(0, 200)}`)
    const vendor = `com.rehearsalcli${randomBytes(3).toString('hex')}`
    const keygen = await floe(['registry', 'keygen', vendor, await ctx.superKey()])
    check(/[0-9a-f]{8}-[0-9a-f]{4}-/.test(keygen), `floe registry keygen --stack printed ${keygen.slice(0, 200)}`)
    // tail: the deployed raw stream read through the emulator, every record so far (a request of its own among them)
    const aid = `rehearsal-tail-${randomBytes(4).toString('hex')}`
    const sent = await fetch(ctx.url(`/i?e=pv&aid=${aid}&p=web&tv=node-4.8.0`))
    check(sent.status === 200, `GET /i: ${sent.status}`)
    await sent.arrayBuffer()
    const records = await ctx.until(`the request of ${aid} on the raw stream`, async () => {
      const all = await readStream(ctx.target.clients.kinesis, ctx.names.streams.raw)
      return all.some((b) => b.includes(aid)) ? all.length : undefined
    })
    const tailed = await floe(['tail', 'raw', '--from-start', '--count', String(records)])
    check(tailed.includes(aid), `floe tail raw --from-start --count ${records} --stack did not print the request of ${aid}: ${tailed.slice(-300)}`)
    const named = cfn.requests.slice(described).filter((r) => r.action === 'DescribeStacks' && r.stackName === stack).length
    check(named >= 5, `the commands asked CloudFormation for stack ${stack} ${named} times (expected one each)`)
    return `org create, apikey create (its key takes a token), credentials reset, registry keygen ${vendor}, tail raw (${records} records): each found stack ${stack} through DescribeStacks (${named} calls)`
  } finally {
    await cfn.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
