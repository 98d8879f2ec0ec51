/**
 * A schema written to this deployment's registry is seen from the next
 * lookup, whatever the cache TTL: the registry's change counter (followed at
 * most every `everyMs`, by a clock passed in) makes each resolver forget what
 * the registry answered; what other repositories answered keeps its TTL.
 */
import { describe, expect, it } from 'vitest'
import { ChangeWatch } from '../../../lib/core/iglu/changes'
import { parseIgluUri, toIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import { CLASS_PRIORITY, NOT_FOUND, RANK, StoreRepository, type Lookup, type Repository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import { OWN_REGISTRY } from '../../../lib/core/iglu/resolver-config'
import type { JsonObject } from '../../../lib/core/iglu/selfdesc'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { followRegistry, registryChanged, resetRegistryChanges } from '../../../lib/runtime/registry-changes'
import { makeRegistry, schema, SUPER_KEY } from './helpers'

const key = (uri: string): SchemaKey => (parseIgluUri(uri) as { ok: true; value: SchemaKey }).value
const X = 'iglu:com.acme/x/jsonschema/1-0-1'
const Y = 'iglu:org.external/y/jsonschema/1-0-0'

/** A repository whose schemas are set by the test and whose lookups are counted. */
class CountingRepo implements Repository {
  readonly classPriority = CLASS_PRIORITY.http
  readonly vendorPrefixes: string[] = []
  readonly priority = 0
  readonly docs = new Map<string, JsonObject>()
  calls: string[] = []
  constructor(readonly name: string, readonly rank: number) {}
  async lookup(k: SchemaKey): Promise<Lookup<JsonObject>> {
    this.calls.push(toIgluUri(k))
    const d = this.docs.get(toIgluUri(k))
    return d ? { ok: true, value: d } : NOT_FOUND
  }
  async list(): Promise<Lookup<SchemaKey[]>> {
    return NOT_FOUND
  }
}

const stored = (uri: string, description: string) => {
  const k = key(uri)
  const { $schema: _, self: __, ...body } = schema(k.vendor, k.name, '1-0-0', { description })
  return { key: k, body: body as JsonObject, isPublic: false, createdAt: 't', updatedAt: 't', supersedes: [] }
}

/** The deployment's registry (a store) and an external registry, with the default TTL (600 s) and a clock the test moves. */
function setup() {
  let now = 1_000_000
  const store = new MemorySchemaStore()
  const own = new StoreRepository(store, { name: OWN_REGISTRY })
  const external = new CountingRepo('External', RANK.external)
  const resolver = new Resolver({ repositories: [own, external], now: () => now })
  return { store, external, resolver, advance: (ms: number) => (now += ms) }
}

describe('the change counter', () => {
  it('is read at most every everyMs by the clock passed in, and a move is a change', async () => {
    let count = 0
    let reads = 0
    let changes = 0
    const w = new ChangeWatch({ read: async () => (reads++, count), everyMs: 1000, onChange: () => changes++ })
    await w.check(0)
    // The first read is a change: what was cached before it may predate a change.
    expect([reads, changes]).toEqual([1, 1])
    count = 1
    await w.check(999)
    expect([reads, changes]).toEqual([1, 1])
    await w.check(1000)
    expect([reads, changes]).toEqual([2, 2])
    await w.check(2000)
    expect([reads, changes]).toEqual([3, 2])
  })

  it('a failed read changes nothing and the next check reads again; a change applied here is not one again', async () => {
    let count = 4
    let fail = false
    let changes = 0
    const w = new ChangeWatch({ read: async () => { if (fail) throw new Error('unreachable'); return count }, everyMs: 1000, onChange: () => changes++ })
    await w.check(0)
    fail = true
    count = 5
    await w.check(1000)
    expect(changes).toBe(1)
    fail = false
    await w.check(2000)
    expect(changes).toBe(2)
    // This process made change 6 and applied it: reading 6 is no change, 7 is; an older value read late is none.
    w.applied(6)
    count = 6
    await w.check(3000)
    expect(changes).toBe(2)
    w.seen(5)
    expect(changes).toBe(2)
    count = 7
    await w.check(4000)
    expect(changes).toBe(3)
  })

  it('checks while a read is under way wait for that read', async () => {
    let release!: (n: number) => void
    let reads = 0
    let changes = 0
    const w = new ChangeWatch({ read: () => (reads++, new Promise<number>((r) => (release = r))), everyMs: 1000, onChange: () => changes++ })
    const first = w.check(0)
    const second = w.check(10)
    release(3)
    await Promise.all([first, second])
    expect([reads, changes]).toEqual([1, 1])
  })
})

describe("a change of the deployment's registry", () => {
  it('makes a cached "not found" of the registry go, with the default TTL', async () => {
    const { store, external, resolver } = setup()
    expect((await resolver.lookupSchema(X)).ok).toBe(false)
    await store.put(stored(X, 'pushed'), { create: true })
    // Without news of the change the miss is served from the cache (600 s).
    expect((await resolver.lookupSchema(X)).ok).toBe(false)
    resolver.repositoryChanged(OWN_REGISTRY)
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true, repository: OWN_REGISTRY, value: { description: 'pushed' } })
    // The external registry's "not found" kept its TTL: it was asked once.
    expect(external.calls).toEqual([X])
  })

  it("makes the registry's cached schemas go (an update is seen)", async () => {
    const { store, resolver } = setup()
    await store.put(stored(X, 'first'), { create: true })
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true, value: { description: 'first' } })
    await store.put(stored(X, 'patched'), { create: false })
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true, value: { description: 'first' } })
    resolver.repositoryChanged(OWN_REGISTRY)
    expect(resolver.cachedSchema(X)).toBeUndefined()
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true, value: { description: 'patched' } })
  })

  it('leaves what an external registry answered to its TTL', async () => {
    const { external, resolver, advance } = setup()
    external.docs.set(Y, schema('org.external', 'y', '1-0-0', { description: 'v1' }) as JsonObject)
    expect(await resolver.lookupSchema(Y)).toMatchObject({ ok: true, repository: 'External' })
    external.docs.set(Y, schema('org.external', 'y', '1-0-0', { description: 'v2' }) as JsonObject)
    resolver.repositoryChanged(OWN_REGISTRY)
    expect(await resolver.lookupSchema(Y)).toMatchObject({ ok: true, repository: 'External', value: { description: 'v1' } })
    expect(external.calls).toEqual([Y])
    advance(599_000)
    expect(await resolver.lookupSchema(Y)).toMatchObject({ value: { description: 'v1' } })
    advance(1_000)
    expect(await resolver.lookupSchema(Y)).toMatchObject({ value: { description: 'v2' } })
    expect(external.calls).toEqual([Y, Y])
  })

  it('an answer found while the registry changed is not cached', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const store = new MemorySchemaStore()
    const get = store.get.bind(store)
    store.get = async (k) => {
      const found = await get(k)
      await gate
      return found
    }
    const resolver = new Resolver({ repositories: [new StoreRepository(store, { name: OWN_REGISTRY })] })
    const early = resolver.lookupSchema(X)
    await new Promise((r) => setImmediate(r))
    await store.put(stored(X, 'pushed'), { create: true })
    resolver.repositoryChanged(OWN_REGISTRY)
    release()
    expect((await early).ok).toBe(false)
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true })
  })

  it('a write through the registry API reaches the resolvers of this process before it answers', async () => {
    resetRegistryChanges()
    const store = new MemorySchemaStore()
    const resolver = followRegistry(new Resolver({ repositories: [new StoreRepository(store, { name: OWN_REGISTRY })] }))
    const { call } = makeRegistry({ schemas: store, schemasChanged: () => registryChanged(() => { throw new Error('no table: nothing to write') }, {}) })
    const first = 'iglu:com.acme/x/jsonschema/1-0-0'
    expect((await resolver.lookupSchema(first)).ok).toBe(false)
    const put = await call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY, body: schema('com.acme', 'x', '1-0-0') })
    expect(put.status).toBe(201)
    expect(await resolver.lookupSchema(first)).toMatchObject({ ok: true, repository: OWN_REGISTRY })
    resetRegistryChanges()
  })

  it('the registry API tells of a write only when it wrote, and once before its first answer', async () => {
    let told = 0
    const { call } = makeRegistry({ patchesAllowed: true, schemasChanged: async () => void told++ })
    expect((await call('GET', '/meta/health')).status).toBe(200)
    expect(told).toBe(1)
    const body = schema('com.acme', 'x', '1-0-0')
    expect((await call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY, body })).status).toBe(201)
    expect(told).toBe(2)
    expect((await call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY, body: 'not json' })).status).toBe(400)
    expect((await call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { body })).status).not.toBe(201)
    expect(told).toBe(2)
    expect((await call('DELETE', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY })).status).toBe(200)
    expect(told).toBe(3)
  })

  it('a registry that died between a write and telling of it: the next one tells before it answers', async () => {
    const store = new MemorySchemaStore()
    const resolver = new Resolver({ repositories: [new StoreRepository(store, { name: OWN_REGISTRY })] })
    const first = 'iglu:com.acme/x/jsonschema/1-0-0'
    expect((await resolver.lookupSchema(first)).ok).toBe(false)
    // The first process wrote, then died before telling: the resolver still has the miss.
    const dying = makeRegistry({ schemas: store, schemasChanged: async () => { if ((await store.listAll()).length > 0) throw new Error('killed') } })
    await expect(dying.call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY, body: schema('com.acme', 'x', '1-0-0') })).rejects.toThrow('killed')
    expect((await store.listAll()).length).toBe(1)
    expect((await resolver.lookupSchema(first)).ok).toBe(false)
    // The client tries again on the next process: its first answer comes after telling the resolvers.
    const next = makeRegistry({ schemas: store, schemasChanged: async () => resolver.repositoryChanged(OWN_REGISTRY) })
    expect((await next.call('PUT', '/schemas/com.acme/x/jsonschema/1-0-0', { apikey: SUPER_KEY, body: schema('com.acme', 'x', '1-0-0') })).status).toBe(409)
    expect(await resolver.lookupSchema(first)).toMatchObject({ ok: true, repository: OWN_REGISTRY })
  })
})
