import { describe, expect, it } from 'vitest'
import { parseIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import type { StoredSchema } from '../../../lib/core/iglu/store'
import type { RegistryReader } from '../../../lib/core/tracking-design/ports'
import { cachedRegistry, schemaCacheSeconds } from '../../../lib/core/tracking-design/schema-cache'

const key = (uri: string): SchemaKey => {
  const k = parseIgluUri(uri)
  if (!k.ok) throw new Error(k.message)
  return k.value
}
const stored = (uri: string, body: Record<string, unknown> = {}): StoredSchema => ({ key: key(uri), body, isPublic: true, createdAt: '', updatedAt: '', supersedes: [] })

/** A registry counting its reads. */
function counting(initial: StoredSchema[]) {
  const schemas = new Map(initial.map((s) => [`${s.key.vendor}/${s.key.name}/${s.key.format}/${s.key.version.model}-${s.key.version.revision}-${s.key.version.addition}`, s]))
  const reads = { get: 0, group: 0, many: 0 }
  const id = (k: SchemaKey) => `${k.vendor}/${k.name}/${k.format}/${k.version.model}-${k.version.revision}-${k.version.addition}`
  const reader: RegistryReader = {
    async get(k) {
      reads.get++
      return schemas.get(id(k))
    },
    async getMany(keys) {
      reads.many++
      return new Map(keys.flatMap((k) => (schemas.has(id(k)) ? [[`iglu:${id(k)}`, schemas.get(id(k))!] as const] : [])))
    },
    async listGroup(vendor, name) {
      reads.group++
      return [...schemas.values()].filter((s) => s.key.vendor === vendor && s.key.name === name)
    },
    listAll: async () => [...schemas.values()],
  }
  return { reader, reads, put: (s: StoredSchema) => schemas.set(id(s.key), s) }
}

describe('cachedRegistry', () => {
  const A = 'iglu:com.acme/a/jsonschema/1-0-0'
  const B = 'iglu:com.acme/b/jsonschema/1-0-0'

  it("forgets what it keeps when the deployment's registry tells of a change", async () => {
    const r = counting([stored(A, { v: 1 })])
    const c = cachedRegistry(r.reader, { ttlMs: 60_000, now: () => 0 })
    expect((await c.get(key(A)))?.body).toEqual({ v: 1 })
    r.put(stored(A, { v: 2 })) // patched
    expect((await c.get(key(A)))?.body).toEqual({ v: 1 })
    c.repositoryChanged?.('Floe registry')
    expect((await c.get(key(A)))?.body).toEqual({ v: 2 })
  })

  it('reuses schemas and version lists found, for ttlMs only', async () => {
    let clock = 0
    const r = counting([stored(A, { v: 1 })])
    const c = cachedRegistry(r.reader, { ttlMs: 1000, now: () => clock })
    expect((await c.get(key(A)))?.body).toEqual({ v: 1 })
    expect((await c.listGroup('com.acme', 'a')).length).toBe(1)
    r.put(stored(A, { v: 2 })) // patched
    clock = 999
    expect((await c.get(key(A)))?.body).toEqual({ v: 1 })
    expect((await c.listGroup('com.acme', 'a'))[0]?.body).toEqual({ v: 1 })
    expect(r.reads).toMatchObject({ get: 1, group: 1 })
    clock = 1000
    expect((await c.get(key(A)))?.body).toEqual({ v: 2 })
    expect((await c.listGroup('com.acme', 'a'))[0]?.body).toEqual({ v: 2 })
    expect(r.reads).toMatchObject({ get: 2, group: 2 })
  })

  it('never keeps a miss: a schema uploaded after a failed lookup is seen at once', async () => {
    const r = counting([])
    const c = cachedRegistry(r.reader, { ttlMs: 60_000, now: () => 0 })
    expect(await c.get(key(B))).toBeUndefined()
    expect(await c.listGroup('com.acme', 'b')).toEqual([])
    r.put(stored(B))
    expect(await c.get(key(B))).toBeDefined()
    expect((await c.listGroup('com.acme', 'b')).length).toBe(1)
  })

  it('reads only the keys it does not hold, in one batch, and keeps what the batch found', async () => {
    const r = counting([stored(A), stored(B)])
    const c = cachedRegistry(r.reader, { ttlMs: 60_000, now: () => 0 })
    await c.get(key(A))
    const many = await c.getMany!([key(A), key(B), key('iglu:com.acme/missing/jsonschema/1-0-0')])
    expect([...many.keys()].sort()).toEqual([A, B])
    expect(r.reads).toMatchObject({ get: 1, many: 1 })
    await c.get(key(B))
    expect(r.reads.get).toBe(1)
  })

  it('holds at most maxEntries, dropping the oldest', async () => {
    const r = counting([stored(A), stored(B)])
    const c = cachedRegistry(r.reader, { ttlMs: 60_000, maxEntries: 1, now: () => 0 })
    await c.get(key(A))
    await c.get(key(B))
    await c.get(key(B))
    expect(r.reads.get).toBe(2)
    await c.get(key(A))
    expect(r.reads.get).toBe(3)
  })

  it('is the reader itself when ttlMs is 0', () => {
    const r = counting([])
    expect(cachedRegistry(r.reader, { ttlMs: 0 })).toBe(r.reader)
  })
})

describe('schemaCacheSeconds', () => {
  it('reads FLOE_SCHEMA_CACHE_SECONDS, 5 by default, and names the variable when it is wrong', () => {
    expect(schemaCacheSeconds({})).toBe(5)
    expect(schemaCacheSeconds({ FLOE_SCHEMA_CACHE_SECONDS: ' 0 ' })).toBe(0)
    expect(schemaCacheSeconds({ FLOE_SCHEMA_CACHE_SECONDS: '60' })).toBe(60)
    for (const bad of ['-1', '1.5', 'ten', '3601']) expect(() => schemaCacheSeconds({ FLOE_SCHEMA_CACHE_SECONDS: bad })).toThrow(/FLOE_SCHEMA_CACHE_SECONDS must be a whole number of seconds from 0 to 3600/)
  })
})
