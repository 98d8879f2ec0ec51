import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { objectSchema, useTenant } from './helpers'

const BUTTON = 'iglu:com.acme/button_click/jsonschema/1-0-0'
const USER = 'iglu:com.acme/user/jsonschema/1-0-0'
const PRODUCT = 'iglu:com.acme/product/jsonschema/1-0-0'

const { t } = useTenant({
  [BUTTON]: objectSchema({ label: { type: 'string', maxLength: 100 }, category: { type: 'string' } }),
  [USER]: objectSchema({ id: { type: 'string' } }),
  [PRODUCT]: objectSchema({ sku: { type: 'string' } }),
})

const create = (spec: Record<string, unknown>, message?: string) => t.api('POST', '/event-specs/v1', { spec, ...(message !== undefined ? { message } : {}) })

describe('create', () => {
  it('defaults status to draft and version to 0, answers 201 with the record and its history', async () => {
    const r = await create({ name: 'Click', description: 'A click', event: { source: BUTTON } }, 'initial draft')
    expect(r.status).toBe(201)
    expect(r.body.errors).toEqual([])
    expect(r.body.data).toHaveLength(1)
    const spec = r.body.data[0]
    expect(spec).toMatchObject({ version: 0, status: 'draft', name: 'Click', description: 'A click', event: { source: BUTTON } })
    expect(spec.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.body.includes).toEqual([
      { type: 'History', eventSpecId: spec.id, version: 0, status: 'draft', author: t.keyId, message: 'initial draft', date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
    ])
    expect(r.body.message).toBeUndefined()
    const got = await t.api('GET', `/event-specs/v1/${spec.id}`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual({ data: [spec], includes: [], errors: [] })
  })

  it('keeps a provided valid status and version', async () => {
    const r = await create({ name: 'Published at birth', status: 'published', version: 3 })
    expect(r.status).toBe(201)
    expect(r.body.data[0]).toMatchObject({ status: 'published', version: 3 })
  })

  it('accepts what snowplow-cli sends: client id, status "", event null, null cardinalities, extra fields, round-tripped JSON-equal', async () => {
    const id = randomUUID()
    const dp = await t.api('POST', '/data-products/v2', { name: 'Shop' })
    expect(dp.status).toBe(201)
    const spec = {
      id,
      sourceApplications: [randomUUID()],
      name: 'Checkout',
      description: '',
      triggers: [{ id: randomUUID(), description: 'on click', appIds: ['web'], url: 'https://shop.example/checkout', variantUrls: { original: 'https://img/x/original' } }],
      status: '',
      version: 0,
      event: null,
      entities: {
        tracked: [{ source: USER, minCardinality: 0, maxCardinality: null, schema: objectSchema({ id: { type: 'string', maxLength: 10 } }) }],
        enriched: [{ source: PRODUCT, minCardinality: null, maxCardinality: null }],
      },
      dataProductId: dp.body.data[0].id,
      lockStatus: 'locked',
      managedFrom: 'git@example/repo',
    }
    const r = await t.api('POST', '/event-specs/v1', { spec, message: '' })
    expect(r.status).toBe(201)
    expect(r.body.data[0]).toEqual({ ...spec, status: 'draft' })
    const got = await t.api('GET', `/event-specs/v1/${id}`)
    expect(got.body.data[0]).toEqual({ ...spec, status: 'draft' })
    // the same id again is a conflict
    const again = await t.api('POST', '/event-specs/v1', { spec, message: '' })
    expect(again.status).toBe(409)
    expect(again.body.errors[0]).toMatchObject({ type: 'Error', code: 'AlreadyExists' })
  })

  it.each([
    [{ name: 'x', version: -1 }, 'spec.version', 'InvalidValue'],
    [{ name: 'x', version: 1.5 }, 'spec.version', 'InvalidValue'],
    [{ name: 'x', version: '2' }, 'spec.version', 'InvalidValue'],
    [{ name: 'x', status: 'live' }, 'spec.status', 'InvalidValue'],
    [{ name: 'x', event: { source: 'not-a-uri' } }, 'spec.event.source', 'InvalidIgluUri'],
    [{ name: 'x', event: { source: 'iglu:com.acme/missing/jsonschema/1-0-0' } }, 'spec.event.source', 'SchemaNotFound'],
    [{ name: 'x', event: { source: 'iglu:com.acme/button_click/jsonschema/1-0-9' } }, 'spec.event.source', 'SchemaNotFound'],
    [{ name: 'x', event: { source: BUTTON, schema: 'nope' } }, 'spec.event.schema', 'InvalidValue'],
    [{ name: 'x', entities: { tracked: [{ source: USER }, { source: USER }] } }, 'spec.entities.tracked[1].source', 'DuplicateEntity'],
    [{ name: 'x', entities: { enriched: [{ source: PRODUCT }, { source: PRODUCT }] } }, 'spec.entities.enriched[1].source', 'DuplicateEntity'],
    [{ name: 'x', entities: { tracked: [{ source: 'iglu:com.acme/ghost/jsonschema/1-0-0' }] } }, 'spec.entities.tracked[0].source', 'SchemaNotFound'],
    [{ name: 'x', entities: { enriched: [{ source: 'iglu:com.acme/ghost/jsonschema/1-0-0' }] } }, 'spec.entities.enriched[0].source', 'SchemaNotFound'],
    [{ name: 'x', entities: { tracked: [{ source: USER, minCardinality: -1 }] } }, 'spec.entities.tracked[0].minCardinality', 'InvalidValue'],
    [{ name: 'x', entities: { tracked: 'all' } }, 'spec.entities.tracked', 'InvalidValue'],
    [{ name: 'x', dataProductId: randomUUID() }, 'spec.dataProductId', 'DataProductNotFound'],
    [{ name: 'x', id: 'not-a-uuid' }, 'spec.id', 'InvalidValue'],
    [{ name: '' }, 'spec.name', 'InvalidValue'],
    [{ name: 42 }, 'spec.name', 'InvalidValue'],
  ])('refuses %j with 422 at %s and stores nothing', async (spec, source, code) => {
    const before = (await t.api('GET', '/event-specs/v1')).body.data.length
    const r = await create(spec as Record<string, unknown>)
    expect(r.status).toBe(422)
    expect(r.body.data).toEqual([])
    expect(r.body.errors).toContainEqual({ type: 'Error', code, source, title: expect.any(String) })
    expect(typeof r.body.message).toBe('string')
    expect((await t.api('GET', '/event-specs/v1')).body.data.length).toBe(before)
  })

  it('reports every problem at once', async () => {
    const r = await create({ name: 'x', version: -2, status: 'nope', event: { source: 'bad' } })
    expect(r.status).toBe(422)
    expect(r.body.errors.map((e: any) => e.source).sort()).toEqual(['spec.event.source', 'spec.status', 'spec.version'])
    expect(r.body.message).toMatch(/^3 errors: /)
  })

  it('requires names unique within the data structure (any version), not across structures', async () => {
    const first = await create({ name: 'Unique', event: { source: BUTTON } })
    expect(first.status).toBe(201)
    const dup = await create({ name: 'Unique', event: { source: BUTTON } })
    expect(dup.status).toBe(422)
    expect(dup.body.errors).toEqual([expect.objectContaining({ type: 'Error', code: 'NameNotUnique', source: 'spec.name' })])
    expect((await create({ name: 'Unique', event: { source: USER } })).status).toBe(201)
    expect((await create({ name: 'Unique' })).status).toBe(201)
  })

  it('keeps names unique under concurrent creates, and frees a name on rename and delete', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => create({ name: 'Race', event: { source: PRODUCT } })))
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422])
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.errors).toEqual([expect.objectContaining({ code: 'NameNotUnique', source: 'spec.name' })])
    const id = results.find((r) => r.status === 201)!.body.data[0].id
    expect((await t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'Race renamed', event: { source: PRODUCT } } })).status).toBe(200)
    const again = await create({ name: 'Race', event: { source: PRODUCT } })
    expect(again.status).toBe(201)
    expect((await create({ name: 'Race renamed', event: { source: PRODUCT } })).status).toBe(422)
    expect((await t.api('DELETE', `/event-specs/v1/${id}`)).status).toBe(204)
    expect((await create({ name: 'Race renamed', event: { source: PRODUCT } })).status).toBe(201)
  })

  it('answers bad JSON and wrong body shapes with a clear 4xx in the envelope', async () => {
    const bad = await t.api('POST', '/event-specs/v1', '{"spec": ', { 'content-type': 'application/json' })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ data: [], includes: [], errors: [{ type: 'Error', code: 'InvalidJson', source: 'body' }], message: expect.stringContaining('not valid JSON') })
    const empty = await t.api('POST', '/event-specs/v1')
    expect(empty.status).toBe(400)
    const noSpec = await t.api('POST', '/event-specs/v1', { name: 'x' })
    expect(noSpec.status).toBe(422)
    expect(noSpec.body.errors[0]).toMatchObject({ code: 'InvalidRequest', source: 'spec' })
    const arr = await t.api('POST', '/event-specs/v1', [1, 2])
    expect(arr.status).toBe(422)
    const specArray = await t.api('POST', '/event-specs/v1', { spec: [] })
    expect(specArray.status).toBe(422)
  })
})

describe('edit, publish, deprecate, squash', () => {
  it('moves between every state, each edit being a new version with a history record', async () => {
    const c = await create({ name: 'Lifecycle', event: { source: BUTTON } })
    const id = c.body.data[0].id
    const edit = (spec: Record<string, unknown>, message = '') => t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'Lifecycle', event: { source: BUTTON }, ...spec }, message })
    const p = await edit({ status: 'published' }, 'ship it')
    expect(p.status).toBe(200)
    expect(p.body.data[0]).toMatchObject({ id, version: 1, status: 'published' })
    expect(p.body.includes).toEqual([expect.objectContaining({ type: 'History', eventSpecId: id, version: 1, status: 'published', message: 'ship it', author: t.keyId })])
    expect((await edit({ status: 'deprecated' })).body.data[0]).toMatchObject({ version: 2, status: 'deprecated' })
    expect((await edit({ status: 'draft' })).body.data[0]).toMatchObject({ version: 3, status: 'draft' })
    expect((await edit({})).body.data[0]).toMatchObject({ version: 4, status: 'draft' })
    expect((await edit({ status: '' })).body.data[0]).toMatchObject({ version: 5, status: 'draft' })
    expect((await edit({ version: 9, status: 'published' })).body.data[0]).toMatchObject({ version: 9, status: 'published' })
  })

  it('squashes: published 1, drafts 2–4, published 5 leaves versions 1 and 5', async () => {
    const c = await create({ name: 'Squash', version: 0 })
    const id = c.body.data[0].id
    const put = (version: number, status: string) => t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'Squash', version, status }, message: `v${version}` })
    expect((await put(1, 'published')).status).toBe(200)
    for (const v of [2, 3, 4]) expect((await put(v, 'draft')).status).toBe(200)
    const before = await t.api('GET', `/event-specs/v1/${id}?withHistory=true`)
    expect(before.body.includes.map((h: any) => h.version)).toEqual([0, 1, 2, 3, 4])
    const pub = await put(5, 'published')
    expect(pub.status).toBe(200)
    const after = await t.api('GET', `/event-specs/v1/${id}?withHistory=true`)
    expect(after.body.data[0]).toMatchObject({ version: 5, status: 'published' })
    expect(after.body.includes.map((h: any) => [h.version, h.status])).toEqual([[0, 'draft'], [1, 'published'], [5, 'published']])
    for (const h of after.body.includes) expect(h).toMatchObject({ type: 'History', eventSpecId: id, author: t.keyId, message: `v${h.version}` === 'v0' ? '' : `v${h.version}` })
    // a discarded version is gone from the history; 1 and 5 still exist
    expect((await put(5, 'draft')).body.errors).toContainEqual(expect.objectContaining({ code: 'VersionExists' }))
  })

  it('enforces the version rules of edit: >= 0, new, above the last published version', async () => {
    const c = await create({ name: 'Versions', version: 2 })
    const id = c.body.data[0].id
    const put = (spec: Record<string, unknown>) => t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'Versions', ...spec } })
    const exists = await put({ version: 2 })
    expect(exists.status).toBe(422)
    expect(exists.body.errors).toEqual([expect.objectContaining({ type: 'Error', code: 'VersionExists', source: 'spec.version' })])
    expect((await put({ version: -1 })).body.errors[0]).toMatchObject({ code: 'InvalidValue', source: 'spec.version' })
    expect((await put({ version: 4, status: 'published' })).status).toBe(200)
    const below = await put({ version: 3 })
    expect(below.status).toBe(422)
    expect(below.body.errors).toEqual([expect.objectContaining({ code: 'VersionNotAfterPublished', source: 'spec.version' })])
    // nothing was stored by the refused edits
    const got = await t.api('GET', `/event-specs/v1/${id}?withHistory=true`)
    expect(got.body.data[0]).toMatchObject({ version: 4, status: 'published' })
    expect(got.body.includes.map((h: any) => h.version)).toEqual([2, 4])
    // snowplow-cli style: remote version + 1 with status draft
    const next = await put({ version: 5, status: 'draft' })
    expect(next.status).toBe(200)
  })

  it('validates edits like creates (status, source, entities, data product, name, id)', async () => {
    const a = await create({ name: 'EditA', event: { source: BUTTON } })
    const b = await create({ name: 'EditB', event: { source: BUTTON } })
    const id = b.body.data[0].id
    const put = (spec: Record<string, unknown>) => t.api('PUT', `/event-specs/v1/${id}`, { spec })
    expect((await put({ name: 'EditB', status: 'gone' })).body.errors[0]).toMatchObject({ code: 'InvalidValue', source: 'spec.status' })
    expect((await put({ name: 'EditB', event: { source: 'iglu:com.acme/none/jsonschema/1-0-0' } })).body.errors[0]).toMatchObject({ code: 'SchemaNotFound' })
    expect((await put({ name: 'EditA', event: { source: BUTTON } })).body.errors[0]).toMatchObject({ code: 'NameNotUnique' })
    expect((await put({ name: 'EditB', dataProductId: randomUUID() })).body.errors[0]).toMatchObject({ code: 'DataProductNotFound' })
    expect((await put({ name: 'EditB', entities: { tracked: [{ source: USER }, { source: USER }] } })).body.errors[0]).toMatchObject({ code: 'DuplicateEntity' })
    expect((await put({ id: a.body.data[0].id, name: 'EditB' })).body.errors[0]).toMatchObject({ code: 'InvalidValue', source: 'spec.id' })
    // keeping its own name is fine
    expect((await put({ id, name: 'EditB', event: { source: BUTTON } })).status).toBe(200)
  })

  it('answers 404 for unknown ids on retrieve, edit and delete', async () => {
    const id = randomUUID()
    for (const [m, body] of [['GET', undefined], ['PUT', { spec: { name: 'x' } }], ['DELETE', undefined]] as const) {
      const r = await t.api(m, `/event-specs/v1/${id}`, body)
      expect(r.status).toBe(404)
      expect(r.body).toMatchObject({ data: [], errors: [{ type: 'Error', code: 'NotFound' }], message: expect.any(String) })
    }
    expect((await t.api('GET', '/event-specs/v1/not-a-uuid')).status).toBe(404)
  })
})

describe('retrieve and list', () => {
  let dpId = ''
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    const dp = await t.api('POST', '/data-products/v2', { name: 'Filters' })
    dpId = dp.body.data[0].id
    ids.a = (await create({ name: 'FA', event: { source: BUTTON }, dataProductId: dpId }, 'a')).body.data[0].id
    ids.b = (await create({ name: 'FB', event: { source: USER }, status: 'published' })).body.data[0].id
    ids.c = (await create({ name: 'FC', event: { source: BUTTON }, dataProductId: dpId, status: 'deprecated' })).body.data[0].id
    await t.api('PUT', `/event-specs/v1/${ids.a}`, { spec: { name: 'FA', event: { source: BUTTON }, dataProductId: dpId, status: 'published' }, message: 'published a' })
    await t.api('PUT', `/event-specs/v1/${ids.a}`, { spec: { name: 'FA', description: 'new draft', event: { source: BUTTON }, dataProductId: dpId }, message: 'draft a' })
  })
  const listIds = async (q: string) => {
    const r = await t.api('GET', `/event-specs/v1${q}`)
    expect(r.status).toBe(200)
    return r.body.data.map((s: any) => s.id).filter((i: string) => Object.values(ids).includes(i)).sort()
  }

  it('lists everything with no parameters, and filters by each parameter', async () => {
    expect(await listIds('')).toEqual(Object.values(ids).sort())
    expect(await listIds(`?dataProductId=${dpId}`)).toEqual([ids.a, ids.c].sort())
    expect(await listIds('?status=published')).toEqual([ids.b])
    expect(await listIds('?status=deprecated')).toEqual([ids.c])
    expect(await listIds('?sourceId=com.acme/button_click/jsonschema')).toEqual([ids.a, ids.c].sort())
    const { dataStructureHash } = await import('../../../lib/core/tracking-design/datastructures')
    expect(await listIds(`?sourceId=${dataStructureHash(t.orgId, 'com.acme', 'user', 'jsonschema')}`)).toEqual([ids.b])
    expect(await listIds(`?dataStructureId=${dataStructureHash(t.orgId, 'com.acme', 'user', 'jsonschema')}&sourceVersion=1-0-0`)).toEqual([ids.b])
    expect(await listIds('?sourceId=com.acme/user/jsonschema&sourceVersion=2-0-0')).toEqual([])
    expect((await t.api('GET', '/event-specs/v1?status=bogus')).status).toBe(422)
  })

  it('withLatestHistory puts the latest change of each specification in includes', async () => {
    const r = await t.api('GET', `/event-specs/v1?dataProductId=${dpId}&withLatestHistory=true`)
    expect(r.body.includes).toHaveLength(2)
    const a = r.body.includes.find((h: any) => h.eventSpecId === ids.a)
    expect(a).toMatchObject({ type: 'History', version: 2, status: 'draft', message: 'draft a' })
    expect((await t.api('GET', `/event-specs/v1?dataProductId=${dpId}`)).body.includes).toEqual([])
  })

  it('retrieve: withHistory gives the whole history; status gives the latest version in that status', async () => {
    const h = await t.api('GET', `/event-specs/v1/${ids.a}?withHistory=true`)
    expect(h.body.includes.map((x: any) => [x.version, x.status, x.message])).toEqual([[0, 'draft', 'a'], [1, 'published', 'published a'], [2, 'draft', 'draft a']])
    const pub = await t.api('GET', `/event-specs/v1/${ids.a}?status=published`)
    expect(pub.status).toBe(200)
    expect(pub.body.data[0]).toMatchObject({ id: ids.a, version: 1, status: 'published' })
    expect(pub.body.data[0].description).toBeUndefined()
    expect((await t.api('GET', `/event-specs/v1/${ids.a}?status=draft`)).body.data[0]).toMatchObject({ version: 2, description: 'new draft' })
    expect((await t.api('GET', `/event-specs/v1/${ids.a}?status=deprecated`)).status).toBe(404)
  })

  it('delete is permanent: 204 with no body, then 404, and the history is gone', async () => {
    const d = await t.api('DELETE', `/event-specs/v1/${ids.c}`)
    expect(d.status).toBe(204)
    expect(d.text).toBe('')
    expect((await t.api('GET', `/event-specs/v1/${ids.c}`)).status).toBe(404)
    expect((await t.api('DELETE', `/event-specs/v1/${ids.c}`)).status).toBe(404)
    expect(await listIds('')).not.toContain(ids.c)
  })
})

describe('tracking-scenarios paths of the earlier generation', () => {
  it.each(['tracking-scenarios/v1', 'tracking-scenarios/v2'])('%s: scenario wrapper and scenarioId in history', async (path) => {
    const c = await t.api('POST', `/${path}`, { scenario: { name: `Scenario ${path}` }, message: 'old client' })
    expect(c.status).toBe(201)
    const id = c.body.data[0].id
    expect(c.body.includes[0]).toMatchObject({ type: 'History', scenarioId: id, message: 'old client' })
    const g = await t.api('GET', `/${path}/${id}?withHistory=true`)
    expect(g.body.includes[0].scenarioId).toBe(id)
    expect((await t.api('GET', `/event-specs/v1/${id}`)).status).toBe(200)
    expect((await t.api('PUT', `/${path}/${id}`, { scenario: { name: `Scenario ${path}`, status: 'published' } })).status).toBe(200)
    expect((await t.api('GET', `/${path}`)).body.data.map((s: any) => s.id)).toContain(id)
    expect((await t.api('DELETE', `/${path}/${id}`)).status).toBe(204)
  })
})
