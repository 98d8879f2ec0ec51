import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { DynamoSpecStore } from '../../../lib/aws/tracking-design-store'
import { planCreate, planEdit } from '../../../lib/core/tracking-design/lifecycle'
import type { HistoryEntry } from '../../../lib/core/tracking-design/types'
import { testClients } from '../../support/stack'
import { call, newTenant, objectSchema, putSchema, useTenant } from './helpers'

// Schemas patched or added mid-test must be seen by the very next request here; the reuse of
// resolved schemas between requests is covered by test/unit/tracking-design/schema-cache.test.ts.
process.env.FLOE_SCHEMA_CACHE_SECONDS = '0'

const BUTTON = 'iglu:com.acme/button_click/jsonschema/1-0-0'
const CHECKOUT = 'iglu:com.acme/checkout/jsonschema/1-0-0'
const CHECKOUT_101 = 'iglu:com.acme/checkout/jsonschema/1-0-1'
const step = (maxLength: number) => objectSchema({ step: { type: 'string', maxLength } })

const { stack, t } = useTenant({
  [BUTTON]: objectSchema({ label: { type: 'string' } }),
  [CHECKOUT]: step(20),
  [CHECKOUT_101]: step(20),
})

const create = async (spec: Record<string, unknown>, message = 'created') => {
  const r = await t.api('POST', '/event-specs/v1', { spec, message })
  expect(r.status, r.text).toBe(201)
  return r.body.data[0].id as string
}
const publish = (body: unknown, path = 'event-specs/v1') => t.api('POST', `/${path}/publish`, body)
const get = async (id: string) => (await t.api('GET', `/event-specs/v1/${id}?withHistory=true`)).body
const versions = async (id: string) => (await get(id)).includes.map((h: any) => [h.version, h.status])

describe('POST /event-specs/v1/publish', () => {
  it('publishes the latest version of every listed specification: 202, a new published version each, a "Published" history record', async () => {
    const a = await create({ name: 'Pub A', description: 'a', event: { source: BUTTON }, triggers: [{ id: randomUUID(), url: 'https://x' }] })
    const b = await create({ name: 'Pub B', event: { source: BUTTON } })
    const before = (await get(a)).data[0]
    const r = await publish({ eventSpecIds: [a, b] })
    expect(r.status, r.text).toBe(202)
    expect(r.body.errors).toEqual([])
    expect(r.body.message).toBeUndefined()
    expect(r.body.data).toEqual([{ ...before, version: 1, status: 'published' }, expect.objectContaining({ id: b, version: 1, status: 'published' })])
    expect(r.body.includes).toEqual([a, b].map((id) => ({ type: 'History', eventSpecId: id, version: 1, status: 'published', author: t.keyId, message: 'Published', date: expect.any(String) })))
    for (const id of [a, b]) {
      const got = await get(id)
      expect(got.data[0]).toMatchObject({ id, version: 1, status: 'published' })
      // with no earlier published version, nothing is discarded
      expect(got.includes.map((h: any) => [h.version, h.status, h.message])).toEqual([[0, 'draft', 'created'], [1, 'published', 'Published']])
    }
    // every field survives JSON-equal
    expect((await get(a)).data[0]).toEqual({ ...before, version: 1, status: 'published' })
    const published = (await t.api('GET', '/event-specs/v1?status=published')).body.data.map((s: any) => s.id)
    expect(published).toEqual(expect.arrayContaining([a, b]))
    // the published version is the one the published status filter finds
    expect((await t.api('GET', `/event-specs/v1/${a}?status=published`)).body.data[0]).toMatchObject({ version: 1 })
  })

  it('squashes like a publishing edit: published 1, drafts 2–4, publish leaves 0, 1 and 5 (the content of 4)', async () => {
    const id = await create({ name: 'Pub squash', event: { source: BUTTON } })
    const put = (version: number, status: string, description: string) => t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'Pub squash', event: { source: BUTTON }, version, status, description } })
    expect((await put(1, 'published', 'one')).status).toBe(200)
    for (const v of [2, 3, 4]) expect((await put(v, 'draft', `draft ${v}`)).status).toBe(200)
    expect(await versions(id)).toEqual([[0, 'draft'], [1, 'published'], [2, 'draft'], [3, 'draft'], [4, 'draft']])
    const r = await publish({ eventSpecIds: [id], message: 'release 5' })
    expect(r.status, r.text).toBe(202)
    expect(r.body.data[0]).toMatchObject({ id, version: 5, status: 'published', description: 'draft 4' })
    const after = await get(id)
    expect(after.includes.map((h: any) => [h.version, h.status])).toEqual([[0, 'draft'], [1, 'published'], [5, 'published']])
    expect(after.includes[2]).toMatchObject({ message: 'release 5', author: t.keyId })
    expect(after.data[0]).toMatchObject({ version: 5, status: 'published', description: 'draft 4' })
  })

  it('publishes a deprecated latest version too (any status may follow any other)', async () => {
    const id = await create({ name: 'Pub deprecated', status: 'deprecated' })
    const r = await publish({ eventSpecIds: [id] })
    expect(r.status).toBe(202)
    expect(await versions(id)).toEqual([[0, 'deprecated'], [1, 'published']])
  })

  it('is idempotent: an already published latest version is left as it is', async () => {
    const a = await create({ name: 'Pub twice' })
    expect((await publish({ eventSpecIds: [a] })).status).toBe(202)
    const once = await get(a)
    const again = await publish({ eventSpecIds: [a] })
    expect(again.status).toBe(202)
    expect(again.body).toEqual({ data: [once.data[0]], includes: [], errors: [] })
    expect(await get(a)).toEqual(once)
    // mixed with a draft: only the draft gets a new version
    const b = await create({ name: 'Pub twice B' })
    const mixed = await publish({ eventSpecIds: [a.toUpperCase(), b] })
    expect(mixed.status).toBe(202)
    expect(mixed.body.data.map((d: any) => [d.id, d.version])).toEqual([[a, 1], [b, 1]])
    expect(mixed.body.includes.map((h: any) => h.eventSpecId)).toEqual([b])
    expect(await get(a)).toEqual(once)
    // born published: nothing to do either
    const c = await create({ name: 'Pub born', status: 'published' })
    expect((await publish({ eventSpecIds: [c] })).body.includes).toEqual([])
    expect(await versions(c)).toEqual([[0, 'published']])
  })

  it('all or nothing: one unknown id answers 404 naming it, and nothing is published', async () => {
    const a = await create({ name: 'Pub unknown A' })
    const b = await create({ name: 'Pub unknown B' })
    const unknown = randomUUID()
    const r = await publish({ eventSpecIds: [a, unknown, b] })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({
      data: [],
      includes: [],
      errors: [{ type: 'Error', code: 'NotFound', source: 'eventSpecIds[1]', title: `Event specification ${unknown} not found` }],
      message: `Event specification ${unknown} not found`,
    })
    for (const id of [a, b]) expect(await versions(id)).toEqual([[0, 'draft']])
  })

  it('all or nothing: a specification that no longer validates answers 422 and nothing is published', async () => {
    const dp = (await t.api('POST', '/data-products/v2', { name: 'Gone soon' })).body.data[0].id
    const a = await create({ name: 'Pub valid' })
    const b = await create({ name: 'Pub orphan', dataProductId: dp })
    expect((await t.api('DELETE', `/data-products/v2/${dp}`)).status).toBe(204)
    const r = await publish({ eventSpecIds: [a, b] })
    expect(r.status).toBe(422)
    expect(r.body.data).toEqual([])
    expect(r.body.errors).toEqual([{ type: 'Error', code: 'DataProductNotFound', source: 'eventSpecIds[1].spec.dataProductId', title: `Event specification ${b}: Data product ${dp} does not exist` }])
    expect(r.body.message).toBe(r.body.errors[0].title)
    for (const id of [a, b]) expect(await versions(id)).toEqual([[0, 'draft']])
  })

  it('runs the compatibility checks of an edit: an Error blocks every publish, a Warning goes with 202', async () => {
    // Compatible with 1-0-0 and 1-0-1 when created.
    const ok = await create({ name: 'Pub compat ok', event: { source: CHECKOUT, schema: step(15) } })
    const a = await create({ name: 'Pub compat', event: { source: CHECKOUT, schema: step(15) } })
    expect((await get(a)).errors).toEqual([])
    // 1-0-1 narrows step: incompatible with the latest version only, a Warning.
    await putSchema(stack.current, CHECKOUT_101, step(10))
    const warned = await publish({ eventSpecIds: [ok] })
    expect(warned.status, warned.text).toBe(202)
    expect(warned.body.errors).toEqual([{ type: 'Warning', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'eventSpecIds[0].event.schema', title: expect.stringMatching(new RegExp(`^Event specification with id: ${ok}, .*INCOMPATIBLE.*version: 1-0-1$`)) }])
    // 1-0-0 patched in place to narrow it too: incompatible with the current version, an Error.
    await putSchema(stack.current, CHECKOUT, step(10))
    const b = await create({ name: 'Pub compat other' })
    const r = await publish({ eventSpecIds: [b, a] })
    expect(r.status).toBe(422)
    expect(r.body.errors).toContainEqual({ type: 'Error', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'eventSpecIds[1].event.schema', title: expect.stringMatching(/INCOMPATIBLE with schema with name: checkout, vendor: com\.acme, version: 1-0-0$/) })
    expect(r.body.message).toContain('INCOMPATIBLE')
    expect(await versions(a)).toEqual([[0, 'draft']])
    expect(await versions(b)).toEqual([[0, 'draft']])
    await putSchema(stack.current, CHECKOUT, step(20))
    await putSchema(stack.current, CHECKOUT_101, step(20))
  })

  it('publishes more specifications than one transaction holds', async () => {
    const ids: string[] = []
    for (let i = 0; i < 55; i++) ids.push(await create({ name: `Pub many ${i}` }))
    const r = await publish({ eventSpecIds: ids })
    expect(r.status, r.text).toBe(202)
    expect(r.body.includes).toHaveLength(55)
    const listed = (await t.api('GET', '/event-specs/v1?status=published')).body.data.map((s: any) => s.id)
    expect(listed).toEqual(expect.arrayContaining(ids))
  })

  it('answers malformed bodies with 400 or 422 in the envelope with a message, publishing nothing', async () => {
    const a = await create({ name: 'Pub bodies' })
    const cases: [unknown, number, string, string][] = [
      ['{"eventSpecIds": [', 400, 'InvalidJson', 'body'],
      ['', 400, 'InvalidJson', 'body'],
      [[a], 422, 'InvalidRequest', 'body'],
      [{}, 422, 'InvalidRequest', 'eventSpecIds'],
      [{ eventSpecIds: a }, 422, 'InvalidRequest', 'eventSpecIds'],
      [{ eventSpecIds: [] }, 422, 'InvalidValue', 'eventSpecIds'],
      [{ eventSpecIds: [a, 42] }, 422, 'InvalidValue', 'eventSpecIds[1]'],
      [{ eventSpecIds: [a, 'not-a-uuid'] }, 422, 'InvalidValue', 'eventSpecIds[1]'],
      [{ eventSpecIds: [a, a.toUpperCase()] }, 422, 'InvalidValue', 'eventSpecIds[1]'],
      [{ eventSpecIds: [a], message: 1 }, 422, 'InvalidValue', 'message'],
    ]
    for (const [body, status, code, source] of cases) {
      const r = await t.api('POST', '/event-specs/v1/publish', body, { 'content-type': 'application/json' })
      expect(r.status, JSON.stringify(body)).toBe(status)
      expect(r.body, JSON.stringify(body)).toEqual({ data: [], includes: [], errors: [{ type: 'Error', code, source, title: expect.any(String) }], message: expect.any(String) })
    }
    expect(await versions(a)).toEqual([[0, 'draft']])
  })

  it('needs a bearer token of the organization: none gets 401, another organization\'s gets 403, and nothing is published', async () => {
    const a = await create({ name: 'Pub isolated' })
    const other = await newTenant(stack.current, 'other')
    const url = `${t.base}/event-specs/v1/publish`
    const none = await call(url, 'POST', { body: { eventSpecIds: [a] } })
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ data: [], errors: [{ type: 'Error', code: 'Unauthorized' }], message: expect.any(String) })
    const cross = await call(url, 'POST', { headers: { authorization: `Bearer ${other.token}` }, body: { eventSpecIds: [a] } })
    expect(cross.status).toBe(403)
    expect(cross.body).toEqual({ data: [], includes: [], errors: [{ type: 'Error', code: 'Forbidden', source: 'authorization', title: expect.any(String) }], message: expect.any(String) })
    // through its own path the other organization does not see the specification at all
    const own = await other.api('POST', '/event-specs/v1/publish', { eventSpecIds: [a] })
    expect(own.status).toBe(404)
    expect(await versions(a)).toEqual([[0, 'draft']])
  })

  it.each(['tracking-scenarios/v1', 'tracking-scenarios/v2'])('is also served under %s, with scenarioId in the history', async (path) => {
    const a = await create({ name: `Pub ${path}` })
    const r = await publish({ eventSpecIds: [a] }, path)
    expect(r.status, r.text).toBe(202)
    expect(r.body.includes).toEqual([expect.objectContaining({ type: 'History', scenarioId: a, version: 1, status: 'published' })])
    expect(await versions(a)).toEqual([[0, 'draft'], [1, 'published']])
  })
})

describe('DynamoSpecStore.updateAll', () => {
  const store = () => new DynamoSpecStore(testClients().ddb, stack.current.names.tables.eventSpecs, stack.current.names.tables.specHistory)
  const ctx = (message: string) => ({ orgId: t.orgId, author: t.keyId, message, now: new Date() })

  /** A stored draft and the change that publishes it as version 1. */
  async function draftAndPublish(name: string, discard: HistoryEntry[] = []) {
    const s = store()
    const c = planCreate({ name }, { name }, randomUUID(), ctx('created'))
    expect(await s.create(c.spec, c.entry)).toBe('ok')
    const e = planEdit(c.spec, [c.entry], { name }, { name, version: 1, status: 'published' }, ctx('Published'))
    return { previous: c.spec, spec: e.spec, entry: e.entry, discard }
  }
  const ghost = (id: string, version: number): HistoryEntry => ({ eventSpecId: id, version, status: 'draft', author: '', message: '', date: new Date(0).toISOString(), snapshot: {} })

  it('writes every change in one transaction when they fit: a stale one leaves all unwritten', async () => {
    const a = await draftAndPublish('tx a')
    const b = await draftAndPublish('tx b')
    const stale = { ...b, previous: { ...b.previous, rev: b.previous.rev + 7 } }
    expect(await store().updateAll([a, stale])).toEqual({ status: 'conflict', index: 1, applied: [] })
    expect((await store().get(t.orgId, a.spec.id))!.latest.status).toBe('draft')
    expect(await store().history(t.orgId, a.spec.id)).toHaveLength(1)
    expect(await store().updateAll([a, b])).toEqual({ status: 'ok' })
    for (const c of [a, b]) expect((await store().get(t.orgId, c.spec.id))!.latest).toMatchObject({ version: 1, status: 'published' })
  })

  it('beyond one transaction, writes change by change and reports what was written before a failure', async () => {
    // 120 discarded entries make the changes too large for one transaction.
    const a0 = await draftAndPublish('big a')
    const a = { ...a0, discard: Array.from({ length: 120 }, (_, i) => ghost(a0.spec.id, 1000 + i)) }
    const b = await draftAndPublish('big b')
    const stale = { ...b, previous: { ...b.previous, rev: 99 } }
    expect(await store().updateAll([a, stale])).toEqual({ status: 'conflict', index: 1, applied: [0] })
    expect((await store().get(t.orgId, a.spec.id))!.latest.status).toBe('published')
    expect((await store().get(t.orgId, b.spec.id))!.latest.status).toBe('draft')
    expect(await store().updateAll([])).toEqual({ status: 'ok' })
  })
})
