/**
 * Secrets are never in logs: a generated sign-in password or registry super
 * API key is shown on the terminal (the banner of `floe start`, the output of
 * `floe credentials reset` and `floe registry superkey --reset`) and in no
 * file under `logs/`, whoever generates it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DynamoKeyStore } from '../../../lib/aws/registry-store'
import { hashKey } from '../../../lib/core/iglu/apikeys'
import { firstStartSecrets } from '../../../lib/local/first-start'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { eventually, runFloe } from '../../support/process'
import { basicAuth, sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

const UUID_V4 = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/i

// No configured secrets: they are generated.
for (const v of ['FLOE_USERNAME', 'FLOE_PASSWORD', 'FLOE_SUPER_API_KEY']) delete process.env[v]

function logText(dir: string): string {
  return readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n')
}

function withStack(): { readonly stack: LocalStack; readonly logsDir: string; readonly prefix: string } {
  const holder: { stack?: LocalStack; logsDir: string; prefix: string } = { logsDir: mkdtempSync(join(tmpdir(), 'floe-secret-logs-')), prefix: uniquePrefix() }
  beforeAll(async () => {
    holder.stack = await startLocalStack({ endpoints: sharedEndpoints(), namePrefix: holder.prefix, triggers: false, logsDir: holder.logsDir })
  })
  afterAll(async () => {
    await holder.stack?.stop()
    rmSync(holder.logsDir, { recursive: true, force: true })
  })
  return {
    get stack() {
      return holder.stack!
    },
    logsDir: holder.logsDir,
    prefix: holder.prefix,
  }
}

describe('secrets of a first start, and new ones from the command line', () => {
  const s = withStack()
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-secret-cli-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  const signIn = (password: string) => fetch(`${s.stack.url}/micro/all`, { headers: { authorization: basicAuth('floe', password) } })

  it('the start banner shows the generated super key and password, no log has them, and they work', async () => {
    const { lines, warnings } = await firstStartSecrets(testClients().ddb, s.stack.names, {})
    expect(warnings).toEqual([])
    const banner = lines.join('\n')
    const key = UUID_V4.exec(banner)?.[0]
    const password = /password ([A-Za-z0-9]{20})/.exec(banner)?.[1]
    expect(key).toBeDefined()
    expect(password).toBeDefined()
    expect((await fetch(`${s.stack.url}/registry-server/api/meta/health`)).status).toBe(200)
    expect((await signIn(password!)).status).toBe(200)
    expect((await signIn('NotThePassword1')).status).toBe(401)
    const res = await fetch(`${s.stack.url}/registry-server/api/auth/keygen`, {
      method: 'POST', headers: { apikey: key!, 'content-type': 'application/json' }, body: JSON.stringify({ vendorPrefix: 'com.acme' }),
    })
    expect(res.status).toBe(200)
    const logs = logText(s.logsDir)
    expect(logs).not.toContain(key!)
    expect(logs).not.toContain(password!)
    // a second start shows neither again
    expect((await firstStartSecrets(testClients().ddb, s.stack.names, {})).lines.join('\n')).not.toMatch(/password [A-Za-z0-9]{20}|generated one/)
  })

  it('a second start with other FLOE_USERNAME/FLOE_PASSWORD warns that they are not applied, and how to apply them', async () => {
    const { warnings } = await firstStartSecrets(testClients().ddb, s.stack.names, { FLOE_USERNAME: 'ops', FLOE_PASSWORD: 'AnotherPassword9' })
    expect(warnings).toEqual([
      "credentials: FLOE_USERNAME and FLOE_PASSWORD differ from the stored credentials, which stay in force (the variables apply at the first start only); to apply them, run 'npx floe credentials reset' with them set",
    ])
  })

  it('floe credentials reset and floe registry superkey --reset print new secrets once; they work, and no log has them', { timeout: 180_000 }, async () => {
    const ep = s.stack.endpoints
    writeFileSync(join(dataDir, 'endpoints.json'), JSON.stringify({ http: s.stack.url, dynamodb: ep.dynamodb, kinesis: ep.kinesis, s3: ep.s3, namePrefix: s.prefix }))
    const reset = await runFloe(['credentials', 'reset'], { FLOE_DATA_DIR: dataDir })
    expect(reset.stderr).toBe('')
    expect(reset.code).toBe(0)
    const password = /username floe, password ([A-Za-z0-9]{20})\nThe password is shown only this once\./.exec(reset.stdout)?.[1]
    expect(password).toBeDefined()
    // the running stack reads the stored credentials again within seconds
    await eventually(async () => ((await signIn(password!)).status === 200 ? true : undefined), 'the new password to be accepted')

    const superkey = await runFloe(['registry', 'superkey', '--reset'], { FLOE_DATA_DIR: dataDir })
    expect(superkey.code).toBe(0)
    const key = UUID_V4.exec(superkey.stdout)?.[0]
    expect(key).toBeDefined()
    const keys = new DynamoKeyStore(testClients().ddb, s.stack.names.tables.apiKeys, s.stack.names.tables.settings)
    expect(await keys.getSuperKeyHash()).toBe(hashKey(key!))

    // FLOE_PASSWORD applies a chosen password; one that breaks the rules is refused with the rule
    const chosen = await runFloe(['credentials', 'reset'], { FLOE_DATA_DIR: dataDir, FLOE_PASSWORD: 'ChosenPassword77' })
    expect(chosen.stdout).toMatch(/Credentials set: username floe, password from FLOE_PASSWORD\./)
    await eventually(async () => ((await signIn('ChosenPassword77')).status === 200 ? true : undefined), 'the chosen password to be accepted')
    const weak = await runFloe(['credentials', 'reset'], { FLOE_DATA_DIR: dataDir, FLOE_PASSWORD: 'short' })
    expect(weak.code).toBe(2)
    expect(weak.stderr).toMatch(/FLOE_PASSWORD: weak password/)
    const onArgv = await runFloe(['credentials', 'reset', 'ChosenPassword88'], { FLOE_DATA_DIR: dataDir })
    expect(onArgv.code).toBe(2)
    expect(onArgv.stderr).toMatch(/never from the command line/)

    const logs = logText(s.logsDir)
    expect(logs).not.toContain(password!)
    expect(logs).not.toContain(key!)
    expect(logs).not.toContain('ChosenPassword77')
  })
})
