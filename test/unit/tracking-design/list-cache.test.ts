import { describe, expect, it } from 'vitest'
import { cachedLists, listCacheSeconds } from '../../../lib/core/tracking-design/list-cache'
import type { HistoryEntry, StoredSpec } from '../../../lib/core/tracking-design/types'
import { MemorySpecStore } from './fakes'

const ORG = 'aaaaaaaa-0000-4000-8000-000000000001'
const OTHER = 'bbbbbbbb-0000-4000-8000-000000000002'

function spec(org: string, id: string, name: string): { spec: StoredSpec; entry: HistoryEntry } {
  const doc = { id, name, status: 'draft', version: 0 }
  return {
    spec: { orgId: org, id, rev: 1, doc, latest: { version: 0, status: 'draft', date: '2026-01-01T00:00:00Z', author: 'k', message: '' } } as unknown as StoredSpec,
    entry: { eventSpecId: id, version: 0, status: 'draft', date: '2026-01-01T00:00:00Z', author: 'k', message: '', snapshot: doc } as unknown as HistoryEntry,
  }
}

/** A memory store counting its list reads. */
function counting() {
  const inner = new MemorySpecStore()
  let reads = 0
  const list = inner.list.bind(inner)
  inner.list = async (o: string) => (reads++, list(o))
  return { inner, reads: () => reads }
}

describe('cached whole lists of specifications', () => {
  it('reuses an organization’s whole list for the time given, and shares concurrent reads', async () => {
    let clock = 1000
    const { inner, reads } = counting()
    const a = spec(ORG, '00000000-0000-4000-8000-000000000001', 'a')
    await inner.create(a.spec, a.entry)
    const store = cachedLists(inner, { ttlMs: 1000, now: () => clock })
    const [x, y] = await Promise.all([store.list(ORG), store.list(ORG)])
    expect(reads()).toBe(1)
    expect(x.map((s) => s.id)).toEqual([a.spec.id])
    x.pop() // a caller's copy: the cached list is untouched
    expect(y).toHaveLength(1)
    clock += 999
    expect(await store.list(ORG)).toHaveLength(1)
    expect(reads()).toBe(1)
    clock += 1
    await store.list(ORG)
    expect(reads()).toBe(2)
  })

  it('shows this store’s own writes at once; another writer’s after the time given', async () => {
    let clock = 0
    const { inner, reads } = counting()
    const store = cachedLists(inner, { ttlMs: 1000, now: () => clock })
    expect(await store.list(ORG)).toEqual([])
    const a = spec(ORG, '00000000-0000-4000-8000-000000000001', 'a')
    expect(await store.create(a.spec, a.entry)).toBe('ok')
    expect((await store.list(ORG)).map((s) => s.id)).toEqual([a.spec.id])
    // written around the cache (another function instance)
    const b = spec(ORG, '00000000-0000-4000-8000-000000000002', 'b')
    await inner.create(b.spec, b.entry)
    expect(await store.list(ORG)).toHaveLength(1)
    clock += 1000
    expect(await store.list(ORG)).toHaveLength(2)
    // delete, and a failed create, drop the entry too
    await store.delete(ORG, a.spec.id)
    expect((await store.list(ORG)).map((s) => s.id)).toEqual([b.spec.id])
    const before = reads()
    expect(await store.create(b.spec, b.entry)).toBe('exists')
    await store.list(ORG)
    expect(reads()).toBe(before + 1)
  })

  it('never caches filtered lists, and keeps organizations apart', async () => {
    const { inner, reads } = counting()
    const store = cachedLists(inner, { ttlMs: 60_000 })
    await store.list(ORG, { status: 'published' })
    await store.list(ORG, { status: 'published' })
    expect(reads()).toBe(2)
    await store.list(ORG)
    await store.list(OTHER)
    expect(reads()).toBe(4)
  })

  it('forgets a failed read', async () => {
    const inner = new MemorySpecStore()
    let fail = true
    const list = inner.list.bind(inner)
    inner.list = async (o: string) => {
      if (fail) throw new Error('unavailable')
      return list(o)
    }
    const store = cachedLists(inner, { ttlMs: 60_000 })
    await expect(store.list(ORG)).rejects.toThrow('unavailable')
    fail = false
    expect(await store.list(ORG)).toEqual([])
  })

  it('reads FLOE_SPEC_LIST_CACHE_SECONDS: whole seconds from 0 to 60, default 1; 0 is no cache', async () => {
    expect(listCacheSeconds({})).toBe(1)
    expect(listCacheSeconds({ FLOE_SPEC_LIST_CACHE_SECONDS: ' 0 ' })).toBe(0)
    expect(listCacheSeconds({ FLOE_SPEC_LIST_CACHE_SECONDS: '60' })).toBe(60)
    for (const bad of ['61', '-1', '1.5', 'soon']) expect(() => listCacheSeconds({ FLOE_SPEC_LIST_CACHE_SECONDS: bad })).toThrow(/FLOE_SPEC_LIST_CACHE_SECONDS must be a whole number of seconds from 0 to 60/)
    const inner = new MemorySpecStore()
    expect(cachedLists(inner, { ttlMs: 0 })).toBe(inner)
  })
})
