import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { dataStructureHash } from '../../../lib/core/tracking-design/datastructures'
import { META, objectSchema, useTenant } from './helpers'

const EV = 'iglu:com.acme/signup/jsonschema/1-0-0'

const { t } = useTenant({
  [EV]: objectSchema({ plan: { type: 'string' } }),
  'iglu:com.acme/signup/jsonschema/1-1-0': objectSchema({ plan: { type: 'string' }, coupon: { type: 'string' } }),
  'iglu:com.acme/user/jsonschema/1-0-0': objectSchema({ id: { type: 'string' } }),
})

describe('source applications /source-apps/v1', () => {
  it('create 201, list, retrieve, edit 200, delete 204', async () => {
    const sa = { name: 'Web shop', description: 'site', appIds: ['web'], entities: { tracked: [{ source: 'iglu:com.acme/user/jsonschema/1-0-0' }], enriched: [] } }
    const c = await t.api('POST', '/source-apps/v1', sa)
    expect(c.status).toBe(201)
    const id = c.body.data[0].id
    expect(c.body.data[0]).toEqual({ ...sa, id })
    expect((await t.api('GET', '/source-apps/v1')).body).toMatchObject({ data: [{ ...sa, id }] })
    expect((await t.api('GET', `/source-apps/v1/${id}`)).body.data).toEqual([{ ...sa, id }])
    const u = await t.api('PUT', `/source-apps/v1/${id}`, { ...sa, name: 'Shop' })
    expect(u.status).toBe(200)
    expect(u.body.data[0].name).toBe('Shop')
    expect((await t.api('POST', '/source-apps/v1', { ...sa, id })).status).toBe(409)
    expect((await t.api('POST', '/source-apps/v1', { description: 'no name' })).status).toBe(422)
    expect((await t.api('DELETE', `/source-apps/v1/${id}`)).status).toBe(204)
    expect((await t.api('GET', `/source-apps/v1/${id}`)).status).toBe(404)
    expect((await t.api('DELETE', `/source-apps/v1/${id}`)).status).toBe(404)
  })
})

describe('data products /data-products/v2', () => {
  it('lists and retrieves with eventSpecs [{id,url}] and includes as an object of eventSpecs and sourceApplications', async () => {
    const sa = (await t.api('POST', '/source-apps/v1', { name: 'App', entities: { tracked: [], enriched: [] } })).body.data[0]
    const dpId = randomUUID()
    const c = await t.api('POST', '/data-products/v2', { id: dpId, name: 'Growth', domain: 'Marketing', sourceApplications: [sa.id] })
    expect(c.status).toBe(201)
    expect(c.body.data[0]).toMatchObject({ id: dpId, name: 'Growth', domain: 'Marketing', eventSpecs: [] })
    const spec = (await t.api('POST', '/event-specs/v1', { spec: { name: 'Signup', dataProductId: dpId, event: { source: EV }, sourceApplications: [sa.id] }, message: 'first' })).body.data[0]
    const other = await t.api('POST', '/event-specs/v1', { spec: { name: 'Unrelated' } })
    expect(other.status).toBe(201)

    const one = await t.api('GET', `/data-products/v2/${dpId}`)
    expect(one.status).toBe(200)
    expect(one.body.data).toEqual([{ id: dpId, name: 'Growth', domain: 'Marketing', sourceApplications: [sa.id], eventSpecs: [{ id: spec.id, url: `/api/msc/v1/organizations/${t.orgId}/event-specs/v1/${spec.id}` }] }])
    expect(one.body.includes.owners).toEqual([])
    expect(one.body.includes.sourceApplications).toEqual([sa])
    expect(one.body.includes.eventSpecs).toEqual([{ ...spec, author: t.keyId, message: 'first', date: expect.any(String) }])
    expect(one.body).toMatchObject({ errors: [], metadata: null })

    const all = await t.api('GET', '/data-products/v2')
    expect(all.status).toBe(200)
    expect(all.body.data.map((d: any) => d.id)).toEqual([dpId])
    expect(all.body.includes.eventSpecs.map((s: any) => s.id)).toEqual([spec.id])

    const u = await t.api('PUT', `/data-products/v2/${dpId}`, { name: 'Growth 2', status: 'draft' })
    expect(u.status).toBe(200)
    expect(u.body.data[0]).toMatchObject({ id: dpId, name: 'Growth 2', eventSpecs: [{ id: spec.id }] })
    expect((await t.api('PUT', `/data-products/v2/${randomUUID()}`, { name: 'x' })).status).toBe(404)
    expect((await t.api('GET', `/data-products/v2/${randomUUID()}`)).status).toBe(404)
    expect((await t.api('POST', '/data-products/v2', '{')).status).toBe(400)
    const d = await t.api('DELETE', `/data-products/v2/${dpId}`)
    expect(d.status).toBe(204)
  })
})

describe('data structures /data-structures/v1 (read view of the registry)', () => {
  const hash = () => dataStructureHash(t.orgId, 'com.acme', 'signup', 'jsonschema')

  it('uses the documented hash rule', () => {
    // sha256 of "{org}-{vendor}-{name}-{format}"
    expect(dataStructureHash('38e97db9-f3cb-404d-8250-cd227506e544', 'com.acme.event', 'search', 'jsonschema')).toMatch(/^[0-9a-f]{64}$/)
    expect(hash()).not.toBe(dataStructureHash(randomUUID(), 'com.acme', 'signup', 'jsonschema'))
  })

  it('lists structures with deployments of every version in DEV and PROD', async () => {
    const r = await t.api('GET', '/data-structures/v1')
    expect(r.status).toBe(200)
    const ds = r.body.find((d: any) => d.name === 'signup')
    expect(ds).toMatchObject({ hash: hash(), vendor: 'com.acme', name: 'signup', format: 'jsonschema', meta: { hidden: false } })
    expect(ds.deployments.map((d: any) => `${d.version}/${d.env}`)).toEqual(['1-1-0/DEV', '1-1-0/PROD', '1-0-0/DEV', '1-0-0/PROD'])
    expect(ds.deployments[0]).toMatchObject({ patchLevel: 0, contentHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect((await t.api('GET', '/data-structures/v1?vendor=com.acme&name=user')).body.map((d: any) => d.name)).toEqual(['user'])
    expect((await t.api('GET', '/data-structures/v1?from=0&size=1')).body).toHaveLength(1)
    expect((await t.api('GET', `/data-structures/v1/${hash()}`)).body).toEqual(ds)
    expect((await t.api('GET', `/data-structures/v1/${'0'.repeat(64)}`)).status).toBe(404)
  })

  it('serves a version as the raw self-describing schema, 404 when absent, for env DEV and PROD', async () => {
    for (const env of ['DEV', 'PROD', 'dev']) {
      const r = await t.api('GET', `/data-structures/v1/${hash()}/versions/1-0-0?env=${env}`)
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ $schema: META, self: { vendor: 'com.acme', name: 'signup', format: 'jsonschema', version: '1-0-0' }, ...objectSchema({ plan: { type: 'string' } }) })
    }
    expect((await t.api('GET', `/data-structures/v1/${hash()}/versions/1-0-0`)).status).toBe(200)
    expect((await t.api('GET', `/data-structures/v1/${hash()}/versions/9-0-0?env=DEV`)).status).toBe(404)
    expect((await t.api('GET', `/data-structures/v1/${hash()}/versions/bad?env=DEV`)).status).toBe(404)
    expect((await t.api('GET', `/data-structures/v1/${hash()}/versions/1-0-0?env=STAGING`)).status).toBe(400)
  })

  it('pages deployments with from and size, optionally by env; an empty page ends the list', async () => {
    const page = async (q: string) => (await t.api('GET', `/data-structures/v1/${hash()}/deployments?${q}`)).body
    expect((await page('size=25&from=0')).map((d: any) => d.version)).toEqual(['1-1-0', '1-1-0', '1-0-0', '1-0-0'])
    expect(await page('size=25&from=25')).toEqual([])
    expect((await page('size=25&from=0&env=PROD')).map((d: any) => `${d.version}/${d.env}`)).toEqual(['1-1-0/PROD', '1-0-0/PROD'])
    expect((await page('size=1&from=1')).map((d: any) => d.env)).toEqual(['PROD'])
  })
})
