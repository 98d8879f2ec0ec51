import { describe, expect, it } from 'vitest'
import { announcingSpecChanges } from '../../../lib/core/tracking-design/spec-changes'
import type { HistoryEntry, SpecStatus, StoredSpec } from '../../../lib/core/tracking-design/types'
import { MemorySpecStore } from './fakes'

const ORG = 'aaaaaaaa-0000-4000-8000-000000000001'
const ID = '00000000-0000-4000-8000-000000000001'

function version(v: number, status: SpecStatus, rev = v + 1): { spec: StoredSpec; entry: HistoryEntry } {
  const doc = { id: ID, name: 'a', status, version: v }
  const latest = { eventSpecId: ID, version: v, status, date: '2026-01-01T00:00:00Z', author: 'k', message: '' }
  return { spec: { orgId: ORG, id: ID, rev, doc, latest } as unknown as StoredSpec, entry: { ...latest, snapshot: doc } as unknown as HistoryEntry }
}

describe('a specification store that says when the published specifications changed', () => {
  it('counts publishing, deprecating, deleting and editing after a publish; not drafts that follow drafts, nor failed writes', async () => {
    let changes = 0
    const store = announcingSpecChanges(new MemorySpecStore(), async () => void changes++)
    const v0 = version(0, 'draft')
    expect(await store.create(v0.spec, v0.entry)).toBe('ok')
    const v1 = version(1, 'draft')
    expect(await store.update(v0.spec, v1.spec, v1.entry, [])).toBe('ok')
    expect(changes).toBe(0)
    expect(await store.create(v0.spec, v0.entry)).toBe('exists')
    expect(changes).toBe(0)

    const v2 = version(2, 'published')
    expect(await store.updateAll([{ previous: v1.spec, spec: v2.spec, entry: v2.entry, discard: [] }])).toEqual({ status: 'ok' })
    expect(changes).toBe(1)
    const v3 = version(3, 'draft')
    expect(await store.update(v2.spec, v3.spec, v3.entry, [])).toBe('ok')
    expect(changes).toBe(2)
    const v4 = version(4, 'deprecated')
    expect(await store.update(v1.spec, v4.spec, v4.entry, [])).toBe('conflict')
    expect(changes).toBe(2)
    expect(await store.update(v3.spec, v4.spec, v4.entry, [])).toBe('ok')
    expect(changes).toBe(3)
    expect(await store.delete(ORG, ID)).toBe(true)
    expect(changes).toBe(4)
    expect(await store.delete(ORG, ID)).toBe(false)
    expect(changes).toBe(4)
  })
})
