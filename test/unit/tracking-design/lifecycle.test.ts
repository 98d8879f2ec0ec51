import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { planCreate, planEdit, squash } from '../../../lib/core/tracking-design/lifecycle'
import type { HistoryEntry, SpecStatus } from '../../../lib/core/tracking-design/types'

const ctx = { orgId: 'o', author: 'k', message: 'm', now: new Date('2026-01-01T00:00:00Z') }
const h = (version: number, status: SpecStatus): HistoryEntry => ({ eventSpecId: 's', version, status, author: 'k', message: '', date: `2026-01-01T00:00:0${version % 10}Z`, snapshot: {} })

describe('squash', () => {
  it('published 1, drafts 2–4, published 5: discards 2, 3 and 4', () => {
    const hist = [h(1, 'published'), h(2, 'draft'), h(3, 'draft'), h(4, 'draft')]
    expect(squash(hist, 5).map((x) => x.version)).toEqual([2, 3, 4])
  })
  it('discards nothing without a previously published version', () => {
    expect(squash([h(0, 'draft'), h(1, 'draft')], 2)).toEqual([])
  })
  it('uses the latest previously published version, below the new one', () => {
    const hist = [h(1, 'published'), h(2, 'deprecated'), h(3, 'published'), h(4, 'draft'), h(9, 'draft')]
    expect(squash(hist, 6).map((x) => x.version)).toEqual([4])
  })
  it('property: after a publish, no version lies strictly between two published versions', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom<SpecStatus>('draft', 'published', 'deprecated'), { minLength: 1, maxLength: 30 }), (statuses) => {
      let hist: HistoryEntry[] = []
      statuses.forEach((status, version) => {
        const gone = status === 'published' ? new Set(squash(hist, version)) : new Set()
        hist = [...hist.filter((x) => !gone.has(x)), h(version, status)]
      })
      const published = hist.filter((x) => x.status === 'published').map((x) => x.version)
      for (let i = 1; i < published.length; i++) {
        expect(hist.some((x) => x.version > published[i - 1]! && x.version < published[i]!)).toBe(false)
      }
      // published versions are never discarded
      expect(published).toEqual(statuses.flatMap((s, v) => (s === 'published' ? [v] : [])))
    }))
  })
})

describe('create and edit plans', () => {
  it('create defaults to draft and version 0; keeps client fields and their order', () => {
    const c = planCreate({ name: 'n', extra: { a: 1 } }, { name: 'n' }, 'id1', ctx)
    expect(c.spec.doc).toEqual({ name: 'n', extra: { a: 1 }, id: 'id1', version: 0, status: 'draft' })
    expect(c.entry).toMatchObject({ eventSpecId: 'id1', version: 0, status: 'draft', author: 'k', message: 'm', date: '2026-01-01T00:00:00.000Z' })
    expect(c.spec.rev).toBe(1)
  })
  it('edit without a version takes one above every known version; publishing squashes', () => {
    const c = planCreate({ name: 'n' }, { name: 'n', version: 1, status: 'published' }, 'id1', ctx)
    const hist = [{ ...c.entry }, h(2, 'draft'), h(7, 'draft')]
    const e = planEdit({ ...c.spec, latest: { ...c.spec.latest, version: 7 } }, hist, { name: 'n' }, { name: 'n', status: 'published' }, ctx)
    expect(e.spec.doc).toMatchObject({ version: 8, status: 'published', id: 'id1' })
    expect(e.discard.map((x) => x.version)).toEqual([2, 7])
    expect(e.spec.rev).toBe(2)
    const d = planEdit(c.spec, hist, { name: 'n' }, { name: 'n', version: 3 }, ctx)
    expect(d.spec.doc).toMatchObject({ version: 3, status: 'draft' })
    expect(d.discard).toEqual([])
  })
})
