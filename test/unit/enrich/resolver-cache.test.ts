/**
 * The resolver cache as enrich's hot path uses it: least-recently-used
 * eviction, and `cachedSchema` answering only fresh hits without a lookup.
 */
import { describe, expect, it } from 'vitest'
import { parseIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import type { Lookup, Repository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import type { JsonObject } from '../../../lib/core/iglu/selfdesc'

const uri = (name: string) => `iglu:com.acme/${name}/jsonschema/1-0-0`
const key = (name: string): SchemaKey => {
  const k = parseIgluUri(uri(name))
  if (!k.ok) throw new Error(k.message)
  return k.value
}

function counting(): { repo: Repository; calls: string[] } {
  const calls: string[] = []
  const repo: Repository = {
    name: 'counting',
    priority: 0,
    vendorPrefixes: [],
    classPriority: 0,
    async lookup(k: SchemaKey): Promise<Lookup<JsonObject>> {
      calls.push(k.name)
      return { ok: true, value: { self: { vendor: k.vendor, name: k.name, format: k.format, version: '1-0-0' }, type: 'object' } }
    },
    async list(): Promise<Lookup<SchemaKey[]>> {
      return { ok: true, value: [] }
    },
  }
  return { repo, calls }
}

describe('resolver cache', () => {
  it('evicts the least recently used schema, a hit counting as a use', async () => {
    const { repo, calls } = counting()
    const r = new Resolver({ repositories: [repo], cacheSize: 2, cacheTtl: null })
    await r.lookupSchema(key('a'))
    await r.lookupSchema(key('b'))
    await r.lookupSchema(key('a')) // hit: a is now the most recent
    expect(r.cachedSchema(uri('b'))).toBeDefined() // also a use: b is now the most recent
    await r.lookupSchema(key('c')) // evicts a
    expect(calls).toEqual(['a', 'b', 'c'])
    expect(r.cachedSchema(uri('a'))).toBeUndefined()
    await r.lookupSchema(key('b'))
    await r.lookupSchema(key('a'))
    expect(calls).toEqual(['a', 'b', 'c', 'a'])
  })

  it('answers only fresh hits, and nothing when caching is off', async () => {
    let now = 1_000_000
    const { repo } = counting()
    const r = new Resolver({ repositories: [repo], cacheTtl: 10, now: () => now })
    expect(r.cachedSchema(uri('a'))).toBeUndefined()
    const found = await r.lookupSchema(key('a'))
    expect(found.ok && r.cachedSchema(uri('a')) === found.value).toBe(true)
    now += 9_999
    expect(r.cachedSchema(uri('a'))).toBeDefined()
    now += 1
    expect(r.cachedSchema(uri('a'))).toBeUndefined()
    const off = new Resolver({ repositories: [repo], cacheTtl: 0 })
    await off.lookupSchema(key('a'))
    expect(off.cachedSchema(uri('a'))).toBeUndefined()
  })
})
