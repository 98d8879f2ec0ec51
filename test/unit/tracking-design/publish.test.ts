import { describe, expect, it } from 'vitest'
import { nextVersion } from '../../../lib/core/tracking-design/lifecycle'
import { aboutListed, alreadyPublished, PUBLISH_MESSAGE, publishSpec, readPublishBody } from '../../../lib/core/tracking-design/publish'
import type { HistoryEntry, SpecStatus, StoredSpec } from '../../../lib/core/tracking-design/types'

const A = 'aaaaaaaa-0000-4000-8000-000000000001'
const B = 'bbbbbbbb-0000-4000-8000-000000000002'

const h = (version: number, status: SpecStatus): HistoryEntry => ({ eventSpecId: A, version, status, author: 'k', message: '', date: '2026-01-01T00:00:00.000Z', snapshot: {} })
const stored = (doc: Record<string, unknown>, version: number, status: SpecStatus): StoredSpec => ({
  orgId: 'o',
  id: A,
  doc: { ...doc, id: A, version, status },
  rev: 3,
  latest: { eventSpecId: A, version, status, author: 'k', message: '', date: '2026-01-01T00:00:00.000Z' },
})

describe('readPublishBody', () => {
  it('takes distinct UUIDs, lower-cased, in the order given, with the default message', () => {
    expect(readPublishBody({ eventSpecIds: [B, A.toUpperCase()] })).toEqual({ ok: true, ids: [B, A], message: PUBLISH_MESSAGE })
    expect(readPublishBody({ eventSpecIds: [A], message: 'release 7' })).toEqual({ ok: true, ids: [A], message: 'release 7' })
    expect(readPublishBody({ eventSpecIds: [A], message: '' })).toMatchObject({ ok: true, message: 'Published' })
  })

  it.each([
    [null, 'body', 'InvalidRequest'],
    [[A], 'body', 'InvalidRequest'],
    ['x', 'body', 'InvalidRequest'],
    [{}, 'eventSpecIds', 'InvalidRequest'],
    [{ eventSpecIds: null }, 'eventSpecIds', 'InvalidRequest'],
    [{ eventSpecIds: A }, 'eventSpecIds', 'InvalidRequest'],
    [{ eventSpecIds: [] }, 'eventSpecIds', 'InvalidValue'],
    [{ eventSpecIds: [A, 7] }, 'eventSpecIds[1]', 'InvalidValue'],
    [{ eventSpecIds: [null] }, 'eventSpecIds[0]', 'InvalidValue'],
    [{ eventSpecIds: ['not-a-uuid'] }, 'eventSpecIds[0]', 'InvalidValue'],
    [{ eventSpecIds: [A, B, A.toUpperCase()] }, 'eventSpecIds[2]', 'InvalidValue'],
    [{ eventSpecIds: [A], message: 3 }, 'message', 'InvalidValue'],
  ])('refuses %j at %s (%s)', (body, source, code) => {
    const r = readPublishBody(body)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.errors).toEqual([{ type: 'Error', code, source, title: expect.any(String) }])
  })

  it('reports every bad entry at once and names the repeated one', () => {
    const r = readPublishBody({ eventSpecIds: [A, 1, A, 'x'], message: false })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.errors.map((e) => e.source)).toEqual(['eventSpecIds[1]', 'eventSpecIds[2]', 'eventSpecIds[3]', 'message'])
    expect(r.errors[1]!.title).toContain('eventSpecIds[0]')
  })
})

describe('the edit a publish amounts to', () => {
  it('is the latest version as stored, with status published and the next version, fields kept in place', () => {
    const current = stored({ name: 'n', extra: { a: 1 } }, 4, 'draft')
    const spec = publishSpec(current, [h(0, 'draft'), h(1, 'published'), h(4, 'draft')])
    expect(spec).toEqual({ name: 'n', extra: { a: 1 }, id: A, version: 5, status: 'published' })
    expect(Object.keys(spec)).toEqual(['name', 'extra', 'id', 'version', 'status'])
    // the stored document is not changed
    expect(current.doc).toMatchObject({ version: 4, status: 'draft' })
  })

  it('takes the next version above every known one, the latest record included', () => {
    expect(nextVersion(stored({}, 9, 'draft'), [h(2, 'draft')])).toBe(10)
    expect(nextVersion(stored({}, 1, 'draft'), [h(1, 'draft'), h(6, 'deprecated')])).toBe(7)
  })

  it('is a no-op only when the latest version is published', () => {
    expect(alreadyPublished(stored({}, 2, 'published'))).toBe(true)
    expect(alreadyPublished(stored({}, 2, 'draft'))).toBe(false)
    expect(alreadyPublished(stored({}, 2, 'deprecated'))).toBe(false)
  })
})

describe('aboutListed', () => {
  it('prefixes the source with the list position and names the specification once', () => {
    expect(aboutListed({ type: 'Error', code: 'DataProductNotFound', source: 'spec.dataProductId', title: 'Data product x does not exist' }, 2, A)).toEqual({
      type: 'Error',
      code: 'DataProductNotFound',
      source: 'eventSpecIds[2].spec.dataProductId',
      title: `Event specification ${A}: Data product x does not exist`,
    })
    const compat = { type: 'Warning' as const, code: 'SchemaIncompatible', source: 'event.schema', title: `Event specification with id: ${A}, event schema is INCOMPATIBLE …` }
    expect(aboutListed(compat, 0, A)).toEqual({ ...compat, source: 'eventSpecIds[0].event.schema' })
  })
})
