import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../../lib/local/cli-start'
import { floe, type Running } from '../../support/process'
import { useLocalStack } from '../../support/stack'
import { call } from './helpers'

const stack = useLocalStack({ triggers: false })
const dir = mkdtempSync(join(tmpdir(), 'floe-td-cli-'))
const startDir = mkdtempSync(join(tmpdir(), 'floe-td-start-'))
const spawned: Running[] = []

beforeAll(() => {
  // What `npm start` writes, pointing at this file's stack.
  const s = stack.current
  const prefix = s.names.tables.settings.replace(/-settings$/, '')
  writeFileSync(join(dir, 'endpoints.json'), JSON.stringify({ http: s.url, ...s.endpoints, namePrefix: prefix, pid: process.pid }))
})

afterAll(async () => {
  for (const p of spawned) if (p.child.exitCode === null) {
    p.child.kill('SIGTERM')
    await p.exited
  }
  rmSync(dir, { recursive: true, force: true })
  rmSync(startDir, { recursive: true, force: true })
})

async function run(args: string[], env: Record<string, string> = { FLOE_DATA_DIR: dir }) {
  const p = floe(args, env)
  spawned.push(p)
  const code = await p.exited
  return { code, out: p.output() }
}

async function token(base: string, keyId: string, key: string) {
  return call(`${base}/credentials/v3/token`, 'GET', { headers: { 'X-API-Key-ID': keyId, 'X-API-Key': key } })
}

describe('floe org and apikey commands', () => {
  it('creates an organization and a key that obtains tokens, and revokes it', async () => {
    const org = await run(['org', 'create', '--name', 'Acme'])
    expect(org.code).toBe(0)
    const orgId = org.out.trim()
    expect(orgId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

    const key = await run(['apikey', 'create', '--org', orgId])
    expect(key.code).toBe(0)
    const keyId = /API key id: (\S+)/.exec(key.out)![1]!
    const secret = /API key: +(\S+)/.exec(key.out)![1]!
    const base = `${stack.current.url}/api/msc/v1/organizations/${orgId}`
    const t = await token(base, keyId, secret)
    expect(t.status).toBe(200)
    expect((await call(`${base}/event-specs/v1`, 'GET', { headers: { authorization: `Bearer ${t.body.accessToken}` } })).status).toBe(200)

    const json = await run(['apikey', 'create', '--json', '--org', orgId])
    expect(JSON.parse(json.out)).toEqual({ organizationId: orgId, apiKeyId: expect.any(String), apiKey: expect.any(String) })

    const revoke = await run(['apikey', 'revoke', keyId])
    expect(revoke.code).toBe(0)
    expect((await token(base, keyId, secret)).status).toBe(401)
    expect((await call(`${base}/event-specs/v1`, 'GET', { headers: { authorization: `Bearer ${t.body.accessToken}` } })).status).toBe(401)
    expect((await run(['apikey', 'revoke', keyId])).code).toBe(1)
  })

  it('reports usage errors and unknown organizations', async () => {
    expect((await run(['org', 'create'])).code).toBe(2)
    expect((await run(['apikey', 'create', '--org', 'nope'])).code).toBe(1)
    const unknown = await run(['apikey', 'create', '--org', '00000000-0000-4000-8000-000000000000'])
    expect(unknown.code).toBe(1)
    expect(unknown.out).toContain('does not exist')
    const nostack = await run(['org', 'create', '--name', 'x'], { FLOE_DATA_DIR: join(dir, 'missing') })
    expect(nostack.code).toBe(2)
    expect(nostack.out).toContain('no local stack found')
  })
})

describe('npm start seeding', () => {
  it('seeds FLOE_ORG_ID, FLOE_API_KEY_ID and FLOE_API_KEY so they obtain tokens at once', async () => {
    const env = {
      FLOE_DATA_DIR: startDir,
      PORT: '0',
      FLOE_ORG_ID: 'aaaaaaaa-0000-4000-8000-000000000001',
      FLOE_API_KEY_ID: 'bbbbbbbb-0000-4000-8000-000000000002',
      FLOE_API_KEY: 'ci-secret-key',
    }
    const p = floe(['start'], env)
    spawned.push(p)
    await p.waitFor('Floe is up')
    expect(p.output()).toContain('organization aaaaaaaa-0000-4000-8000-000000000001 with API key bbbbbbbb-0000-4000-8000-000000000002 seeded')
    const ep = JSON.parse(readFileSync(join(startDir, 'endpoints.json'), 'utf8')) as EndpointsFile
    const base = `${ep.http}/api/msc/v1/organizations/${env.FLOE_ORG_ID}`
    const t = await token(base, env.FLOE_API_KEY_ID, env.FLOE_API_KEY)
    expect(t.status).toBe(200)
    const v2 = await call(`${base}/credentials/v2/token`, 'GET', { headers: { 'X-API-Key': env.FLOE_API_KEY } })
    expect(v2.status).toBe(200)
    p.child.kill('SIGTERM')
    expect(await p.exited).toBe(0)
  }, 120_000)
})
