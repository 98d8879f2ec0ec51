/**
 * Secrets at rest in the local stack: whoever reads DynamoDB Local on
 * loopback finds the token signing secret, the pages' password hash and the
 * registry's super key hash sealed with the data directory's key file
 * (`secrets.key`, 0600): a token signed with what is there is refused, and
 * the password hash there verifies no password. A data directory whose
 * secrets an older version wrote in clear is sealed at start and keeps
 * working (same password, same super key, same tokens). The key is in no log.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { afterAll, describe, expect, it } from 'vitest'
import { credentialStoreOf, sealStoredSecrets } from '../../../lib/aws/secrets'
import { DynamoAccountStore } from '../../../lib/aws/tracking-design-store'
import { verifyCredentials } from '../../../lib/core/auth/basic'
import { hashKey } from '../../../lib/core/iglu/apikeys'
import { SEALED_PREFIX, SECRET_PURPOSES } from '../../../lib/core/secrets-at-rest'
import { localNames } from '../../../lib/infra/resources'
import { firstStartSecrets } from '../../../lib/local/first-start'
import { ensureSecretsKey } from '../../../lib/local/secrets-key'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { runtimeSeal, sealWithKey } from '../../../lib/runtime/secrets-at-rest'
import { eventually, runFloe } from '../../support/process'
import { basicAuth, sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'
import { call, newTenant } from '../tracking-design/helpers'

const PASSWORD = 'RightPassword2024'
const UUID_V4 = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/i
const prefix = uniquePrefix('sealed')
const dataDir = mkdtempSync(join(tmpdir(), 'floe-sealed-'))
const stacks: LocalStack[] = []
for (const v of ['FLOE_USERNAME', 'FLOE_PASSWORD', 'FLOE_SUPER_API_KEY', 'FLOE_JWT_SECRET']) delete process.env[v]

afterAll(async () => {
  for (const s of stacks) await s.stop().catch(() => {})
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(opts: { dataDir?: string; log?: (line: string) => void } = {}): Promise<LocalStack> {
  const s = await startLocalStack({ endpoints: sharedEndpoints(), namePrefix: prefix, triggers: false, ...opts })
  stacks.push(s)
  return s
}

async function stop(s: LocalStack): Promise<void> {
  await s.stop()
  stacks.splice(stacks.indexOf(s), 1)
}

/** The items as a reader of DynamoDB Local sees them. */
async function rawItems(s: LocalStack) {
  const get = async (pk: string, sk: string) =>
    (await testClients().ddb.send(new GetItemCommand({ TableName: s.names.tables.settings, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }))).Item!
  const credentials = await get('dashboard', 'credentials')
  return {
    credentials: {
      username: credentials.username!.S!, hash: credentials.hash!.S!, salt: credentials.salt!.S!,
      N: Number(credentials.N!.N), r: Number(credentials.r!.N), p: Number(credentials.p!.N), version: Number(credentials.version!.N), updatedAt: '',
    },
    superKeyHash: (await get('registry', 'superApiKey')).hash!.S!,
    signingSecret: (await get('tracking-design', 'jwtSecret')).secret!.S!,
  }
}

const signIn = (s: LocalStack, password: string) => fetch(`${s.url}/micro/all`, { headers: { authorization: basicAuth('floe', password) } })
const keygen = (s: LocalStack, key: string) =>
  fetch(`${s.url}/registry-server/api/auth/keygen`, { method: 'POST', headers: { apikey: key, 'content-type': 'application/json' }, body: JSON.stringify({ vendorPrefix: 'com.acme' }) })
const forge = (secret: string, orgId: string, keyId: string) =>
  new SignJWT({ org: orgId }).setProtectedHeader({ alg: 'HS256' }).setIssuer('floe').setAudience('floe-tracking-design').setSubject(keyId).setExpirationTime('1h').sign(new TextEncoder().encode(secret))

/** GET of the organization's event specifications on `s` with `token`: its status. */
const specsWith = async (s: LocalStack, orgId: string, token: string) =>
  (await call(`${s.url}/api/msc/v1/organizations/${orgId}/event-specs/v1`, 'GET', { headers: { authorization: `Bearer ${token}` } })).status

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

describe('secrets at rest', () => {
  let superKey = ''
  let tenant: Awaited<ReturnType<typeof newTenant>>

  it('an older version stored them in clear: readable, and usable, by whoever reads DynamoDB Local', async () => {
    const old = await start() // no data directory: no key, secrets as they are (what every version did before)
    const { lines, warnings } = await firstStartSecrets(testClients().ddb, old.names, { FLOE_PASSWORD: PASSWORD })
    expect(warnings).toEqual([])
    superKey = UUID_V4.exec(lines.join('\n'))![0]
    tenant = await newTenant(old)
    const raw = await rawItems(old)
    expect(await verifyCredentials(raw.credentials, 'floe', PASSWORD)).toBe(true)
    expect(raw.superKeyHash).toBe(hashKey(superKey))
    expect(await specsWith(old, tenant.orgId, await forge(raw.signingSecret, tenant.orgId, tenant.keyId))).toBe(200)
    await stop(old)
  })

  it('a start with the data directory seals them with its key file; they keep working, and what a reader sees is unusable', async () => {
    // a first start with the key was killed after sealing the password hash (each value is sealed in one conditional write)
    const made = ensureSecretsKey(dataDir)
    expect(await credentialStoreOf(testClients().ddb, localNames(prefix), sealWithKey(readFileSync(made))).sealStored()).toBe('sealed')
    const lines: string[] = []
    const s = await start({ dataDir, log: (l) => lines.push(l) })
    // the next seals the rest
    expect(lines).toContain("secrets at rest: sealed the registry's super key hash, the token signing secret (stored in clear by an older version)")

    // the key file: 32 bytes, this user's only
    const keyFile = join(dataDir, 'secrets.key')
    const key = readFileSync(keyFile)
    expect(key.length).toBe(32)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)

    // what a reader of DynamoDB Local gets
    const raw = await rawItems(s)
    for (const v of [raw.credentials.hash, raw.superKeyHash, raw.signingSecret]) expect(v.startsWith(SEALED_PREFIX), v).toBe(true)
    expect(await verifyCredentials(raw.credentials, 'floe', PASSWORD)).toBe(false)
    expect(raw.superKeyHash).not.toContain(hashKey(superKey))
    for (const secret of [raw.signingSecret, raw.signingSecret.slice(raw.signingSecret.lastIndexOf('.') + 1)]) {
      expect(await specsWith(s, tenant.orgId, await forge(secret, tenant.orgId, tenant.keyId))).toBe(401)
    }

    // the same password, super key and token as before the upgrade
    expect((await signIn(s, PASSWORD)).status).toBe(200)
    expect((await signIn(s, 'NotThePassword1')).status).toBe(401)
    expect((await keygen(s, superKey)).status).toBe(200)
    expect(await specsWith(s, tenant.orgId, tenant.token)).toBe(200)
    // sealed once: a second pass finds nothing to do
    expect(await sealStoredSecrets(testClients().ddb, s.names, runtimeSeal())).toEqual([])

    // secrets written from now on are sealed too: the command line's, with the data directory's key
    const ep = s.endpoints
    writeFileSync(join(dataDir, 'endpoints.json'), JSON.stringify({ http: s.url, dynamodb: ep.dynamodb, kinesis: ep.kinesis, s3: ep.s3, namePrefix: prefix }))
    const reset = await runFloe(['credentials', 'reset'], { FLOE_DATA_DIR: dataDir, FLOE_PASSWORD: 'ResetPassword2024' })
    expect(reset.code).toBe(0)
    const superReset = await runFloe(['registry', 'superkey', '--reset'], { FLOE_DATA_DIR: dataDir })
    expect(superReset.code).toBe(0)
    const newSuperKey = UUID_V4.exec(superReset.stdout)![0]
    const after = await rawItems(s)
    expect(after.credentials.hash.startsWith(SEALED_PREFIX)).toBe(true)
    expect(after.credentials.version).toBe(raw.credentials.version + 1)
    expect(after.superKeyHash.startsWith(SEALED_PREFIX)).toBe(true)
    expect(await verifyCredentials(after.credentials, 'floe', 'ResetPassword2024')).toBe(false)
    // the stack opens what the command line sealed
    await eventually(async () => ((await signIn(s, 'ResetPassword2024')).status === 200 ? true : undefined), 'the reset password to be accepted')
    expect(sealWithKey(key).open(after.superKeyHash, SECRET_PURPOSES.superKeyHash)).toBe(hashKey(newSuperKey))

    // the key is in no log, in no form
    const forms = [key.toString('hex'), key.toString('base64'), key.toString('base64url')]
    const logs = filesUnder(join(dataDir, 'logs')).map((f) => readFileSync(f, 'latin1')).join('\n') + lines.join('\n') + reset.stdout + reset.stderr + superReset.stdout + superReset.stderr
    for (const form of forms) expect(logs).not.toContain(form)
    expect(logs).not.toContain(key.toString('latin1'))
    await stop(s)
  })

  it('a key file that no longer opens them (replaced): the start says which secret and how to set a new one', async () => {
    const other = mkdtempSync(join(tmpdir(), 'floe-sealed-other-'))
    try {
      const lines: string[] = []
      const s = await start({ dataDir: other, log: (l) => lines.push(l) })
      expect(lines).toEqual(expect.arrayContaining([
        "secrets at rest: the sign-in password hash was sealed with another key than this data directory's secrets.key and cannot be opened: no password signs in until 'npx floe credentials reset' sets a new one",
      ]))
      // no password matches a hash that cannot be opened, until a reset
      const stored = await credentialStoreOf(testClients().ddb, s.names).get()
      expect(stored?.version).toBeGreaterThan(0)
      expect(await verifyCredentials(stored!, 'floe', 'ResetPassword2024')).toBe(false)
      // a new signing secret replaces the one that cannot be opened (tokens signed before stop working)
      const accounts = new DynamoAccountStore(testClients().ddb, s.names.tables.apiKeys, s.names.tables.settings)
      expect(await accounts.signingSecret('a new signing secret')).toBe('a new signing secret')
      expect(await accounts.signingSecret('another one')).toBe('a new signing secret')
      expect((await rawItems(s)).signingSecret.startsWith(SEALED_PREFIX)).toBe(true)
      await stop(s)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })
})
