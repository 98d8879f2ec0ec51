import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { randomUUID } from 'node:crypto'
import { SignJWT, decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { revokeApiKey } from '../../../lib/core/tracking-design/accounts'
import { testClients, useLocalStack } from '../../support/stack'
import { accountStore, call, newTenant } from './helpers'

// No FLOE_JWT_SECRET: the signing secret is generated on first use and kept in the settings table.
const stack = useLocalStack({ triggers: false })
let a: Awaited<ReturnType<typeof newTenant>>
let b: Awaited<ReturnType<typeof newTenant>>
let specA = ''

beforeAll(async () => {
  a = await newTenant(stack.current, 'a')
  b = await newTenant(stack.current, 'b')
  specA = (await a.api('POST', '/event-specs/v1', { spec: { name: 'secret plan' } })).body.data[0].id
})

async function storedSecret(): Promise<string> {
  const res = await testClients().ddb.send(new GetItemCommand({ TableName: stack.current.names.tables.settings, Key: { pk: { S: 'tracking-design' }, sk: { S: 'jwtSecret' } } }))
  return res.Item!.secret!.S!
}

describe('tokens', () => {
  it('v3 answers exactly {accessToken}: an HS256 JWT for the organization, valid 24 hours', async () => {
    const r = await call(`${a.base}/credentials/v3/token`, 'GET', { headers: { 'x-api-key-id': a.keyId, 'X-API-KEY': a.secret, 'X-Snowtype': '0.12.4' } })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body)).toEqual(['accessToken'])
    const claims = decodeJwt(r.body.accessToken)
    expect(claims).toMatchObject({ org: a.orgId, sub: a.keyId })
    expect(claims.exp! - claims.iat!).toBe(24 * 3600)
    expect(JSON.parse(Buffer.from(r.body.accessToken.split('.')[0], 'base64url').toString())).toMatchObject({ alg: 'HS256' })
  })

  it('v2 takes the key alone; header names are case-insensitive', async () => {
    for (const h of ['X-API-Key', 'x-api-key', 'X-API-KEY']) {
      const r = await call(`${a.base}/credentials/v2/token`, 'GET', { headers: { [h]: a.secret } })
      expect(r.status).toBe(200)
      expect(decodeJwt(r.body.accessToken).org).toBe(a.orgId)
    }
    const v3 = await call(`${a.base}/credentials/v3/token`, 'GET', { headers: { 'X-Api-Key-Id': a.keyId, 'X-Api-Key': a.secret } })
    expect(v3.status).toBe(200)
  })

  it('refuses wrong, missing or other-organization credentials with 401', async () => {
    const cases: [string, Record<string, string>][] = [
      [`${a.base}/credentials/v3/token`, { 'X-API-Key-ID': a.keyId, 'X-API-Key': 'wrong' }],
      [`${a.base}/credentials/v3/token`, { 'X-API-Key-ID': b.keyId, 'X-API-Key': a.secret }],
      [`${a.base}/credentials/v3/token`, { 'X-API-Key': a.secret }],
      [`${a.base}/credentials/v3/token`, { 'X-API-Key-ID': a.keyId }],
      [`${a.base}/credentials/v3/token`, {}],
      [`${a.base}/credentials/v2/token`, { 'X-API-Key': 'wrong' }],
      [`${b.base}/credentials/v2/token`, { 'X-API-Key': a.secret }],
      [`${b.base}/credentials/v3/token`, { 'X-API-Key-ID': a.keyId, 'X-API-Key': a.secret }],
      [`${stack.current.url}/api/msc/v1/organizations/not-a-uuid/credentials/v2/token`, { 'X-API-Key': a.secret }],
    ]
    for (const [url, headers] of cases) {
      const r = await call(url, 'GET', { headers })
      expect(r.status, `${url} ${JSON.stringify(headers)}`).toBe(401)
      expect(r.body.accessToken).toBeUndefined()
      expect(typeof r.body.message).toBe('string')
    }
  })

  it('keeps one signing secret in the settings table', async () => {
    expect((await storedSecret()).length).toBeGreaterThan(40)
  })
})

describe('bearer tokens on every other endpoint', () => {
  const paths = (id: string) => [
    ['GET', '/event-specs/v1'],
    ['GET', `/event-specs/v1/${id}`],
    ['PUT', `/event-specs/v1/${id}`],
    ['DELETE', `/event-specs/v1/${id}`],
    ['POST', '/event-specs/v1'],
    ['POST', '/event-specs/v1/compatibility'],
    ['GET', '/tracking-scenarios/v1'],
    ['GET', '/data-products/v2'],
    ['GET', '/source-apps/v1'],
    ['GET', '/data-structures/v1'],
  ] as const

  it('refuses missing, malformed, forged and expired tokens with 401', async () => {
    const forged = await new SignJWT({ org: a.orgId }).setProtectedHeader({ alg: 'HS256' }).setIssuer('floe').setAudience('floe-tracking-design').setSubject(a.keyId).setExpirationTime('1h').sign(new TextEncoder().encode('not the secret'))
    const secret = new TextEncoder().encode(await storedSecret())
    const expired = await new SignJWT({ org: a.orgId }).setProtectedHeader({ alg: 'HS256' }).setIssuer('floe').setAudience('floe-tracking-design').setSubject(a.keyId).setIssuedAt(Math.floor(Date.now() / 1000) - 90_000).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(secret)
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ org: a.orgId, sub: a.keyId, exp: 9e9, iss: 'floe', aud: 'floe-tracking-design' })).toString('base64url')}.`
    const headers: Record<string, string>[] = [{}, { authorization: 'Bearer' }, { authorization: 'Basic abc' }, { authorization: 'Bearer garbage' }, { authorization: `Bearer ${forged}` }, { authorization: `Bearer ${expired}` }, { authorization: `Bearer ${none}` }]
    for (const h of headers) {
      for (const [m, p] of paths(specA)) {
        const r = await call(`${a.base}${p}`, m, { headers: h, body: m === 'POST' || m === 'PUT' ? { spec: { name: 'x' } } : undefined })
        expect(r.status, `${m} ${p} ${JSON.stringify(h)}`).toBe(401)
        expect(r.body.data ?? []).toEqual([])
        expect(r.text).not.toContain('secret plan')
      }
    }
    const exp = await call(`${a.base}/event-specs/v1`, 'GET', { headers: { authorization: `Bearer ${expired}` } })
    expect(exp.body).toMatchObject({ errors: [{ type: 'Error', code: 'Unauthorized', source: 'authorization' }], message: 'The access token has expired' })
  })

  it('isolates organizations: another organization\'s token gets 403 and learns nothing, whether the id exists or not', async () => {
    const missing = randomUUID()
    for (const id of [specA, missing]) {
      for (const [m, p] of paths(id)) {
        const cross = await call(`${a.base}${p}`, m, { headers: { authorization: `Bearer ${b.token}` }, body: m === 'POST' || m === 'PUT' ? { spec: { name: 'x' } } : undefined })
        expect(cross.status, `${m} ${p}`).toBe(403)
        expect(cross.body).toEqual({ data: [], includes: [], errors: [{ type: 'Error', code: 'Forbidden', source: 'authorization', title: expect.any(String) }], message: expect.any(String) })
      }
    }
    // the same answer for an existing and a missing id
    const x = await call(`${a.base}/event-specs/v1/${specA}`, 'GET', { headers: { authorization: `Bearer ${b.token}` } })
    const y = await call(`${a.base}/event-specs/v1/${missing}`, 'GET', { headers: { authorization: `Bearer ${b.token}` } })
    expect(x.text).toBe(y.text)
    // b sees none of a's specifications, and cannot read a's by id through its own path
    expect((await b.api('GET', '/event-specs/v1')).body.data.map((s: any) => s.id)).not.toContain(specA)
    expect((await b.api('GET', `/event-specs/v1/${specA}`)).status).toBe(404)
    expect((await b.api('DELETE', `/event-specs/v1/${specA}`)).status).toBe(404)
    expect((await a.api('GET', `/event-specs/v1/${specA}`)).status).toBe(200)
  })

  it('a revoked key gets no new token and its tokens stop working', async () => {
    const c = await newTenant(stack.current, 'c')
    expect((await c.api('GET', '/event-specs/v1')).status).toBe(200)
    expect((await revokeApiKey(accountStore(stack.current), c.keyId)).ok).toBe(true)
    expect((await c.api('GET', '/event-specs/v1')).status).toBe(401)
    expect((await call(`${c.base}/credentials/v3/token`, 'GET', { headers: { 'X-API-Key-ID': c.keyId, 'X-API-Key': c.secret } })).status).toBe(401)
    expect((await call(`${c.base}/credentials/v2/token`, 'GET', { headers: { 'X-API-Key': c.secret } })).status).toBe(401)
  })
})
