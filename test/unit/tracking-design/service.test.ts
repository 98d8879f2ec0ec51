import { decodeJwt } from 'jose'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseIgluUri } from '../../../lib/core/iglu/keys'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { createApiKey, createOrganization, seed, seedConfig } from '../../../lib/core/tracking-design/accounts'
import { authorize, issueToken } from '../../../lib/core/tracking-design/auth'
import { createTrackingDesignService } from '../../../lib/core/tracking-design/service'
import type { HttpHandler } from '../../../lib/http/types'
import { MemoryAccountStore, MemoryCatalogStore, MemorySpecStore, request } from './fakes'

let clock = new Date('2026-03-01T10:00:00Z')
let accounts: MemoryAccountStore
let specs: MemorySpecStore
let service: HttpHandler
let org = ''
let token = ''

beforeEach(async () => {
  clock = new Date('2026-03-01T10:00:00Z')
  accounts = new MemoryAccountStore()
  specs = new MemorySpecStore()
  const registry = new MemorySchemaStore()
  const k = parseIgluUri('iglu:com.acme/e/jsonschema/1-0-0')
  if (k.ok) await registry.put({ key: k.value, body: { type: 'object' }, isPublic: true, createdAt: '', updatedAt: '', supersedes: [] }, { create: true })
  service = createTrackingDesignService({ specs, accounts, catalog: new MemoryCatalogStore(), registry, now: () => clock })
  const o = await createOrganization(accounts, 'acme', clock)
  org = o.ok ? o.value.id : ''
  const key = await createApiKey(accounts, org, clock)
  if (!key.ok) throw new Error(key.message)
  const res = await service(request('GET', `/api/msc/v1/organizations/${org}/credentials/v3/token`, { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } }))
  token = JSON.parse(String(res.body)).accessToken
})

const api = (method: string, path: string, body?: unknown, query?: Record<string, string>) =>
  Promise.resolve(service(request(method, `/api/msc/v1/organizations/${org}${path}`, { headers: { authorization: `Bearer ${token}` }, body, query }))).then((r) => ({ status: r.statusCode, body: r.body ? JSON.parse(String(r.body)) : undefined }))

describe('service over in-memory stores', () => {
  it('tokens expire after 24 hours', async () => {
    expect(decodeJwt(token).exp).toBe(clock.getTime() / 1000 + 86_400)
    clock = new Date(clock.getTime() + 86_399_000)
    expect((await api('GET', '/event-specs/v1')).status).toBe(200)
    clock = new Date(clock.getTime() + 2_000)
    const r = await api('GET', '/event-specs/v1')
    expect(r.status).toBe(401)
    expect(r.body.message).toBe('The access token has expired')
  })

  it('generates one signing secret on first use and keeps it', async () => {
    expect(accounts.secret).toMatch(/^[A-Za-z0-9_-]{64}$/)
  })

  it('create, edit with squash, history and delete through the handler', async () => {
    const c = await api('POST', '/event-specs/v1', { spec: { name: 'n', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })
    expect(c.status).toBe(201)
    const id = c.body.data[0].id
    for (const [v, s] of [[1, 'published'], [2, 'draft'], [3, 'draft'], [4, 'draft'], [5, 'published']] as const) {
      expect((await api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'n', version: v, status: s } })).status).toBe(200)
    }
    const h = await api('GET', `/event-specs/v1/${id}`, undefined, { withHistory: 'true' })
    expect(h.body.includes.map((x: any) => x.version)).toEqual([0, 1, 5])
    expect((await api('DELETE', `/event-specs/v1/${id}`)).status).toBe(204)
    expect(specs.hist.size).toBe(0)
  })

  it('a concurrent edit loses with 409 and stores nothing', async () => {
    const id = (await api('POST', '/event-specs/v1', { spec: { name: 'n' } })).body.data[0].id
    const realUpdate = specs.update.bind(specs)
    specs.update = async (...args: Parameters<typeof realUpdate>) => {
      const stored = specs.specs.get(`${org}/${id}`)!
      specs.specs.set(`${org}/${id}`, { ...stored, rev: stored.rev + 1 })
      return realUpdate(...args)
    }
    const r = await api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'n2' } })
    expect(r.status).toBe(409)
    expect(r.body.errors[0].code).toBe('Conflict')
    expect((await specs.history(org, id)).length).toBe(1)
  })
})

describe('publish through the handler', () => {
  it('publishes every listed draft as a new version, leaves published ones alone, answers 202', async () => {
    const a = (await api('POST', '/event-specs/v1', { spec: { name: 'a' } })).body.data[0].id
    const b = (await api('POST', '/event-specs/v1', { spec: { name: 'b', status: 'published' } })).body.data[0].id
    clock = new Date('2026-03-01T11:00:00Z')
    const r = await api('POST', '/event-specs/v1/publish', { eventSpecIds: [a, b] })
    expect(r.status).toBe(202)
    expect(r.body.data.map((d: any) => [d.id, d.version, d.status])).toEqual([[a, 1, 'published'], [b, 0, 'published']])
    expect(r.body.includes).toEqual([{ type: 'History', eventSpecId: a, version: 1, status: 'published', author: expect.any(String), message: 'Published', date: '2026-03-01T11:00:00.000Z' }])
    expect((await specs.history(org, b)).length).toBe(1)
  })

  it('a write that loses a race publishes nothing and answers 409', async () => {
    const a = (await api('POST', '/event-specs/v1', { spec: { name: 'a' } })).body.data[0].id
    const b = (await api('POST', '/event-specs/v1', { spec: { name: 'b' } })).body.data[0].id
    const realUpdateAll = specs.updateAll.bind(specs)
    specs.updateAll = async (changes) => {
      const stored = specs.specs.get(`${org}/${b}`)!
      specs.specs.set(`${org}/${b}`, { ...stored, rev: stored.rev + 1 })
      return realUpdateAll(changes)
    }
    const r = await api('POST', '/event-specs/v1/publish', { eventSpecIds: [a, b] })
    expect(r.status).toBe(409)
    expect(r.body.errors).toEqual([expect.objectContaining({ type: 'Error', code: 'Conflict', source: 'eventSpecIds[1]' })])
    expect(r.body.message).toContain('nothing was published')
    expect((await specs.get(org, a))!.doc.status).toBe('draft')
  })

  it('names what was written when the store could not write all at once', async () => {
    const a = (await api('POST', '/event-specs/v1', { spec: { name: 'a' } })).body.data[0].id
    const b = (await api('POST', '/event-specs/v1', { spec: { name: 'b' } })).body.data[0].id
    specs.updateAll = async () => ({ status: 'conflict', index: 1, applied: [0] })
    const r = await api('POST', '/event-specs/v1/publish', { eventSpecIds: [a, b] })
    expect(r.status).toBe(409)
    expect(r.body.message).toBe(`Event specification ${b} was changed concurrently; only ${a} was published; retry`)
  })
})

describe('names on create', () => {
  it('a valid specification is written without a name lookup; the store refuses a taken name', async () => {
    expect((await api('POST', '/event-specs/v1', { spec: { name: 'n', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })).status).toBe(201)
    let lookups = 0
    const original = specs.nameOwner.bind(specs)
    specs.nameOwner = async (o, c) => (lookups++, original(o, c))
    const fresh = await api('POST', '/event-specs/v1', { spec: { name: 'other', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })
    expect(fresh.status).toBe(201)
    expect(lookups).toBe(0)
    const taken = await api('POST', '/event-specs/v1', { spec: { name: 'n', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })
    expect(taken.status).toBe(422)
    expect(taken.body.errors.map((e: any) => e.source)).toEqual(['spec.name'])
    expect(lookups).toBe(0)
  })

  it('an invalid specification whose name is taken gets every error in one answer', async () => {
    expect((await api('POST', '/event-specs/v1', { spec: { name: 'n', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })).status).toBe(201)
    const r = await api('POST', '/event-specs/v1', { spec: { name: 'n', status: 'nonsense', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })
    expect(r.status).toBe(422)
    expect(r.body.errors.map((e: any) => e.source)).toEqual(['spec.name', 'spec.status'])
  })
})

describe('auth decisions', () => {
  it('refuses other organizations with 403 and unknown keys with 401', async () => {
    const secret = 's'.repeat(40)
    const t = await issueToken(secret, { orgId: 'aaaaaaaa-0000-4000-8000-000000000001', keyId: 'k1' }, new Date())
    const ok = { now: new Date(), keyExists: async () => true }
    expect(await authorize(`Bearer ${t}`, 'aaaaaaaa-0000-4000-8000-000000000001', secret, ok)).toMatchObject({ ok: true, keyId: 'k1' })
    expect(await authorize(`bearer ${t}`, 'AAAAAAAA-0000-4000-8000-000000000001', secret, ok)).toMatchObject({ ok: true })
    expect(await authorize(`Bearer ${t}`, 'bbbbbbbb-0000-4000-8000-000000000001', secret, ok)).toMatchObject({ ok: false, status: 403 })
    expect(await authorize(`Bearer ${t}`, 'aaaaaaaa-0000-4000-8000-000000000001', 'x'.repeat(40), ok)).toMatchObject({ ok: false, status: 401 })
    expect(await authorize(`Bearer ${t}`, 'aaaaaaaa-0000-4000-8000-000000000001', secret, { ...ok, keyExists: async () => false })).toMatchObject({ ok: false, status: 401 })
    expect(await authorize(undefined, 'aaaaaaaa-0000-4000-8000-000000000001', secret, ok)).toMatchObject({ ok: false, status: 401 })
  })

  it('seeding is idempotent and replaces a changed secret', async () => {
    const store = new MemoryAccountStore()
    const cfg = seedConfig({ FLOE_ORG_ID: 'AAAAAAAA-0000-4000-8000-000000000001', FLOE_API_KEY_ID: 'bbbbbbbb-0000-4000-8000-000000000002', FLOE_API_KEY: 'k' })
    expect(cfg.ok && cfg.value).toMatchObject({ orgId: 'aaaaaaaa-0000-4000-8000-000000000001' })
    if (!cfg.ok || !cfg.value) throw new Error('config')
    expect(await seed(store, cfg.value, new Date())).toBe('created')
    expect(await seed(store, cfg.value, new Date())).toBe('unchanged')
    expect(await seed(store, { ...cfg.value, secret: 'other' }, new Date())).toBe('created')
    expect(store.keys.size).toBe(1)
    expect(seedConfig({})).toEqual({ ok: true, value: undefined })
    expect(seedConfig({ FLOE_ORG_ID: 'x' })).toMatchObject({ ok: false })
    expect(seedConfig({ FLOE_ORG_ID: 'x', FLOE_API_KEY_ID: 'bbbbbbbb-0000-4000-8000-000000000002', FLOE_API_KEY: 'k' })).toMatchObject({ ok: false })
  })
})

describe('a revoked key', () => {
  it('writes nothing and reads nothing out, though its lookup runs alongside the handler', async () => {
    const made = await api('POST', '/event-specs/v1', { spec: { name: 'kept', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } } })
    expect(made.status).toBe(201)
    const id = made.body.data[0].id
    const dp = await api('POST', '/data-products/v2', { name: 'dp' })
    expect(dp.status).toBe(201)
    const keyId = String(decodeJwt(token).sub)
    // the lookup answers only once every request has started
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const original = accounts.getKeyById.bind(accounts)
    accounts.getKeyById = async (k) => {
      await gate
      return original(k)
    }
    expect(await accounts.deleteKey(keyId)).toBe(true)
    const calls = [
      api('POST', '/event-specs/v1', { spec: { name: 'new' } }),
      api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'renamed' } }),
      api('POST', '/event-specs/v1/publish', { eventSpecIds: [id] }),
      api('DELETE', `/event-specs/v1/${id}`),
      api('POST', '/data-products/v2', { name: 'other' }),
      api('PUT', `/data-products/v2/${dp.body.data[0].id}`, { name: 'renamed' }),
      api('DELETE', `/data-products/v2/${dp.body.data[0].id}`),
      api('GET', `/event-specs/v1/${id}`),
      api('GET', '/event-specs/v1'),
    ]
    release()
    for (const r of await Promise.all(calls)) {
      expect(r.status).toBe(401)
      expect(r.body.errors[0].title ?? r.body.message).toMatch(/revoked/)
    }
    const all = await specs.list(org)
    expect(all.map((s) => s.doc.name)).toEqual(['kept'])
    expect(all[0]!.doc.status).not.toBe('published')
  })
})
