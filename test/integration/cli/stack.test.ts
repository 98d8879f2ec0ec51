/**
 * `floe … --stack <name>`: the commands find a deployment through its
 * CloudFormation outputs and act on it with the caller's credentials. Here the
 * deployment is a local stack on the emulators, described by a CloudFormation
 * endpoint the test serves; the CLI runs as a separate process with the AWS
 * SDK's standard endpoint variables pointing at them, and no `endpoints.json`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DynamoCredentialStore } from '../../../lib/aws/credentials-store'
import { DynamoKeyStore } from '../../../lib/aws/registry-store'
import { verifyCredentials } from '../../../lib/core/auth/basic'
import { hashKey } from '../../../lib/core/iglu/apikeys'
import { API_URL_OUTPUT, declaredOutputs, outputKey } from '../../../lib/infra/outputs'
import { startCloudFormationServer, type CloudFormationServer } from '../../support/cloudformation-server'
import { startCloudWatchLogsServer, type CloudWatchLogsServer } from '../../support/cloudwatch-logs-server'
import { call } from '../../support/http'
import { runFloe } from '../../support/process'
import { testClients, useLocalStack } from '../../support/stack'

const SUPER = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b'
const stack = useLocalStack({ triggers: false, environment: { FLOE_SUPER_API_KEY: SUPER } })
const dir = mkdtempSync(join(tmpdir(), 'floe-stack-cli-'))
let cfn: CloudFormationServer
let logs: CloudWatchLogsServer
let env: Record<string, string>

beforeAll(async () => {
  const s = stack.current
  const outputs: Record<string, string> = { [API_URL_OUTPUT]: s.url }
  for (const [k, v] of Object.entries(s.names.tables)) outputs[outputKey('table', k)] = v
  for (const [k, v] of Object.entries(s.names.streams)) outputs[outputKey('stream', k)] = v
  for (const [k, v] of Object.entries(s.names.buckets)) outputs[outputKey('bucket', k)] = v
  const { [outputKey('table', 'apiKeys')]: _dropped, ...partial } = outputs
  cfn = await startCloudFormationServer([
    { name: 'FloeApp', outputs },
    { name: 'FloeData', outputs: {} },
    { name: 'FloeOld', status: 'UPDATE_COMPLETE', outputs: partial },
  ])
  const t = Date.now()
  logs = await startCloudWatchLogsServer({
    '/floe/FloeApp/enrich': [
      { timestamp: t - 2 * 3_600_000, message: '{"level":"info","msg":"two hours ago"}\n' },
      { timestamp: t - 60_000, message: '{"level":"info","msg":"a minute ago"}\n' },
      { timestamp: t - 1_000, message: '{"level":"warn","msg":"a second ago"}\n' },
    ],
  })
  // A profile in a credentials file of its own: the standard AWS configuration chain finds it.
  writeFileSync(join(dir, 'credentials'), '[floe-test]\naws_access_key_id = PROFILEKEY\naws_secret_access_key = secret\n')
  writeFileSync(join(dir, 'config'), '[profile floe-test]\nregion = eu-west-1\n')
  env = {
    FLOE_DATA_DIR: join(dir, 'no-local-stack'),
    AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.url,
    AWS_ENDPOINT_URL_DYNAMODB: s.endpoints.dynamodb,
    AWS_ENDPOINT_URL_KINESIS: s.endpoints.kinesis,
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: logs.url,
    AWS_ACCESS_KEY_ID: 'ENVKEY',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    AWS_CONFIG_FILE: join(dir, 'config'),
  }
})

afterAll(async () => {
  await cfn?.close()
  await logs?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs the CLI with only the AWS configuration given here (none of this process's, which the local stack sets). */
function floe(args: string[], extra: Record<string, string> = {}) {
  const own: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AWS_') && !k.startsWith('FLOE_')) own[k] = v
  return runFloe(args, { ...own, ...env, ...extra }, { replaceEnvironment: true })
}
const onStack = ['--stack', 'FloeApp', '--region', 'us-east-1']

describe('commands on a deployed stack (--stack)', () => {
  it('the app stack declares an output for every name the commands read', () => {
    const keys = declaredOutputs().map((o) => o.key)
    expect(keys).toContain('ApiUrl')
    expect(keys).toContain('ApiKeysTableName')
    expect(keys).toContain('RawStreamName')
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('creates an organization and an API key, which obtains tokens, and revokes it', async () => {
    const org = await floe(['org', 'create', '--name', 'Acme', ...onStack])
    expect(org.stderr).toBe('')
    expect(org.code).toBe(0)
    const orgId = org.stdout.trim()
    expect(orgId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(cfn.requests.at(-1)).toEqual({ action: 'DescribeStacks', stackName: 'FloeApp', accessKeyId: 'ENVKEY', region: 'us-east-1' })

    // --profile: credentials and region from the profile
    const key = await floe(['apikey', 'create', '--org', orgId, '--json', '--stack=FloeApp', '--profile', 'floe-test'], { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' })
    expect(key.stderr).toBe('')
    expect(key.code).toBe(0)
    expect(cfn.requests.at(-1)).toMatchObject({ accessKeyId: 'PROFILEKEY', region: 'eu-west-1' })
    const { apiKeyId, apiKey } = JSON.parse(key.stdout) as { apiKeyId: string; apiKey: string }

    const base = `${stack.current.url}/api/msc/v1/organizations/${orgId}`
    const token = () => call(`${base}/credentials/v3/token`, 'GET', { headers: { 'X-API-Key-ID': apiKeyId, 'X-API-Key': apiKey } })
    expect((await token()).status).toBe(200)

    const revoke = await floe(['apikey', 'revoke', apiKeyId, ...onStack])
    expect(revoke).toMatchObject({ code: 0, stdout: `revoked ${apiKeyId}\n` })
    expect((await token()).status).toBe(401)
    // the same errors as locally
    const again = await floe(['apikey', 'revoke', apiKeyId, ...onStack])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^floe apikey revoke: /)
    const unknown = await floe(['apikey', 'create', '--org', '00000000-0000-4000-8000-000000000000', ...onStack])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('does not exist')
  })

  it('tails a deployed stream from the start, across all shards', async () => {
    for (const eid of ['s-1', 's-2', 's-3', 's-4']) expect((await fetch(`${stack.current.url}/i?e=pv&eid=${eid}`)).status).toBe(200)
    const tail = await floe(['tail', 'raw', '--from-start', '--count', '4', '--json', ...onStack])
    expect(tail.stderr).toBe('')
    expect(tail.code).toBe(0)
    const eids = tail.stdout.trim().split('\n').map((l) => new URLSearchParams((JSON.parse(l) as { querystring: string }).querystring).get('eid'))
    expect(eids.sort()).toEqual(['s-1', 's-2', 's-3', 's-4'])
  })

  it('changes the registry super API key of the deployment, at its API URL', async () => {
    const next = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'
    const r = await floe(['registry', 'superkey', SUPER, next, ...onStack])
    expect(r).toMatchObject({ code: 0, stdout: 'Super API key changed.\n' })
    const api = `${stack.current.url}/registry-server/api`
    expect((await call(`${api}/auth/keygen`, 'POST', { headers: { apikey: next }, body: { vendorPrefix: 'com.acme' } })).status).toBe(200)
    const arn = 'arn:aws:cloudformation:eu-north-1:000000000000:stack/FloeApp/6d0c1f2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f'
    const [wrong, keygen, byId] = await Promise.all([
      floe(['registry', 'superkey', 'ffffffff-ffff-4fff-bfff-ffffffffffff', ...onStack]),
      floe(['registry', 'keygen', 'com.example', next, ...onStack]),
      // a stack id names its region
      floe(['registry', 'keygen', 'com.example.two', next, '--stack', arn]),
    ])
    expect(byId.stderr).toBe('')
    expect(cfn.requests).toContainEqual({ action: 'DescribeStacks', stackName: arn, accessKeyId: 'ENVKEY', region: 'eu-north-1' })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/^changing the super API key failed: HTTP 40[13]/)
    expect(keygen.stderr).toBe('')
    expect(keygen.stdout).toMatch(/^Read key: +[0-9a-f-]{36}\nWrite key: +[0-9a-f-]{36}\n$/)
  })

  it('names what is wrong with the stack: unknown, not the app stack, missing outputs', async () => {
    const [missing, data, old, noRegion, local] = await Promise.all([
      floe(['org', 'create', '--name', 'x', '--stack', 'Nope', '--region', 'us-east-1']),
      floe(['tail', 'raw', '--stack', 'FloeData', '--region', 'us-east-1']),
      floe(['apikey', 'revoke', 'k', '--stack', 'FloeOld', '--region', 'us-east-1']),
      floe(['org', 'create', '--name', 'x', '--stack', 'FloeApp']),
      floe(['org', 'create', '--name', 'x', '--region', 'us-east-1']),
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe("floe org create: no stack 'Nope' found: Stack with id Nope does not exist (check --stack, --region and --profile)\n")
    expect(data.code).toBe(2)
    expect(data.stderr).toMatch(/^floe tail: stack 'FloeData' \(CREATE_COMPLETE\) has no outputs ApiUrl, EventSpecsTableName, .* and \d+ more: name the app stack of a Floe deployment/)
    expect(old.code).toBe(2)
    expect(old.stderr).toContain("stack 'FloeOld' (UPDATE_COMPLETE) has no output ApiKeysTableName:")
    expect(noRegion.code).toBe(2)
    expect(noRegion.stderr).toBe("floe org create: no AWS region for stack 'FloeApp': pass --region or set AWS_REGION\n")
    expect(local.code).toBe(2)
    expect(local.stderr).toContain('--region goes with --stack <name>')
  })
})

describe('a newcomer on a deployed stack (--stack): credentials, super key, keys, schemas, logs', () => {
  it('credentials reset --stack stores new credentials in the deployed settings table and prints the password once', { timeout: 180_000 }, async () => {
    const r = await floe(['credentials', 'reset', ...onStack])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const password = /^Credentials set: username floe, password ([A-Za-z0-9]{20})\nThe password is shown only this once\.\n/.exec(r.stdout)?.[1]
    expect(password).toBeDefined()
    const stored = await new DynamoCredentialStore(testClients().ddb, stack.current.names.tables.settings).get()
    expect(await verifyCredentials(stored!, 'floe', password!)).toBe(true)
    // FLOE_PASSWORD and FLOE_USERNAME from the caller's environment
    const chosen = await floe(['credentials', 'reset', ...onStack], { FLOE_USERNAME: 'admin', FLOE_PASSWORD: 'ChosenPassword77' })
    expect(chosen).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Credentials set: username admin, password from FLOE_PASSWORD\.\n/) })
    const after = await new DynamoCredentialStore(testClients().ddb, stack.current.names.tables.settings).get()
    expect(await verifyCredentials(after!, 'admin', 'ChosenPassword77')).toBe(true)
  })

  it('registry superkey --reset --stack stores a new super key, hashed; keygen and push --stack use the deployed registry', { timeout: 180_000 }, async () => {
    const reset = await floe(['registry', 'superkey', '--reset', ...onStack])
    expect(reset.stderr).toBe('')
    expect(reset.code).toBe(0)
    const key = /New key \(shown once\): ([0-9a-f-]{36})\n/.exec(reset.stdout)?.[1]
    expect(key).toBeDefined()
    const keys = new DynamoKeyStore(testClients().ddb, stack.current.names.tables.apiKeys, stack.current.names.tables.settings)
    expect(await keys.getSuperKeyHash()).toBe(hashKey(key!))

    // the deployment's FLOE_SUPER_API_KEY stays valid while it is set
    const keygen = await floe(['registry', 'keygen', 'com.acme', SUPER, ...onStack])
    expect(keygen.stderr).toBe('')
    const write = /Write key: +([0-9a-f-]{36})/.exec(keygen.stdout)?.[1]
    expect(write).toBeDefined()
    const schemas = join(dir, 'schemas', 'com.acme', 'button_click', 'jsonschema')
    mkdirSync(schemas, { recursive: true })
    writeFileSync(join(schemas, '1-0-0'), JSON.stringify({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      description: 'A button click',
      self: { vendor: 'com.acme', name: 'button_click', format: 'jsonschema', version: '1-0-0' },
      type: 'object',
      properties: { id: { type: 'string', maxLength: 64 } },
      additionalProperties: false,
    }))
    const push = await floe(['registry', 'push', join(dir, 'schemas'), write!, ...onStack])
    expect(push.stderr).toBe('')
    expect(push).toMatchObject({ code: 0, stdout: expect.stringContaining('created   iglu:com.acme/button_click/jsonschema/1-0-0') })
    const got = await call(`${stack.current.url}/registry-server/api/schemas/com.acme/button_click/jsonschema/1-0-0`, 'GET', { headers: { apikey: write! } })
    expect(got.status).toBe(200)
  })

  it('logs --stack prints the last lines of the deployed function\'s log group, read with the caller\'s credentials', { timeout: 180_000 }, async () => {
    const r = await floe(['logs', 'enrich', '-n', '2', ...onStack])
    expect(r.stderr).toBe('')
    expect(r).toMatchObject({ code: 0, stdout: '{"level":"info","msg":"a minute ago"}\n{"level":"warn","msg":"a second ago"}\n' })
    expect(cfn.requests.at(-1)).toEqual({ action: 'DescribeStacks', stackName: 'FloeApp', accessKeyId: 'ENVKEY', region: 'us-east-1' })
    expect(logs.requests.at(-1)).toMatchObject({
      target: 'Logs_20140328.FilterLogEvents', accessKeyId: 'ENVKEY', region: 'us-east-1', service: 'logs',
      body: { logGroupName: '/floe/FloeApp/enrich', startTime: expect.any(Number), endTime: expect.any(Number) },
    })
    const [all, missing, own] = await Promise.all([
      floe(['logs', 'enrich', ...onStack]),
      floe(['logs', 'search-loader', ...onStack]),
      floe(['logs', 'floe', ...onStack]),
    ])
    expect(all.stdout.split('\n')[0]).toBe('{"level":"info","msg":"two hours ago"}')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('floe logs: stack FloeApp has no log group /floe/FloeApp/search-loader (The specified log group does not exist.): is that function deployed? (-c searchStore=false leaves the search functions out)\n')
    expect(own.code).toBe(2)
    expect(own.stderr).toMatch(/^floe logs: 'floe' is the local stack's own log/)
  })
})
