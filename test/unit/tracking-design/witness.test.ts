import { beforeEach, describe, expect, it } from 'vitest'
import { parseIgluUri } from '../../../lib/core/iglu/keys'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { createApiKey, createOrganization } from '../../../lib/core/tracking-design/accounts'
import { createTrackingDesignService } from '../../../lib/core/tracking-design/service'
import type { HttpHandler } from '../../../lib/http/types'
import { MemoryAccountStore, MemoryCatalogStore, MemorySpecStore, request } from './fakes'

const SOURCE = 'iglu:com.acme/checkout_started/jsonschema/1-0-0'
// cartId is required and a string or null; items is optional and a number.
const STRUCTURE = {
  $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
  self: { vendor: 'com.acme', name: 'checkout_started', format: 'jsonschema', version: '1-0-0' },
  type: 'object',
  properties: { cartId: { type: ['string', 'null'] }, items: { type: 'number' } },
  required: ['cartId'],
  additionalProperties: false,
}

let service: HttpHandler
let org = ''
let token = ''

beforeEach(async () => {
  const clock = new Date('2026-03-01T10:00:00Z')
  const accounts = new MemoryAccountStore()
  const registry = new MemorySchemaStore()
  const k = parseIgluUri(SOURCE)
  if (k.ok) await registry.put({ key: k.value, body: STRUCTURE, isPublic: true, createdAt: '', updatedAt: '', supersedes: [] }, { create: true })
  service = createTrackingDesignService({ specs: new MemorySpecStore(), accounts, catalog: new MemoryCatalogStore(), registry, now: () => clock })
  const o = await createOrganization(accounts, 'acme', clock)
  org = o.ok ? o.value.id : ''
  const key = await createApiKey(accounts, org, clock)
  if (!key.ok) throw new Error(key.message)
  const res = await service(request('GET', `/api/msc/v1/organizations/${org}/credentials/v3/token`, { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } }))
  token = JSON.parse(String(res.body)).accessToken
})

const api = (method: string, path: string, body?: unknown) =>
  Promise.resolve(service(request(method, `/api/msc/v1/organizations/${org}${path}`, { headers: { authorization: `Bearer ${token}` }, body }))).then((r) => ({
    status: r.statusCode,
    body: r.body ? JSON.parse(String(r.body)) : undefined,
  }))

/** Rules that constrain only `items`, as an array (and require it). */
const ITEMS_ONLY = { type: 'object', properties: { items: { type: 'array' } }, required: ['items'] }

describe('an incompatible event schema says why', () => {
  it('the 422 entry carries the witness and the reason beside its four fields', async () => {
    const r = await api('POST', '/event-specs/v1', { spec: { name: 'Checkout', event: { source: SOURCE, schema: ITEMS_ONLY } } })
    expect(r.status).toBe(422)
    const [e] = r.body.errors
    expect(Object.keys(e).sort()).toEqual(['code', 'reason', 'source', 'title', 'type', 'witness'])
    expect(e).toMatchObject({ type: 'Error', code: 'SchemaIncompatible', source: 'event.schema' })
    expect(e.title).toBe(`Event specification with id: ${r.body.errors[0].title.match(/id: (\S+),/)[1]}, event schema is INCOMPATIBLE with schema with name: checkout_started, vendor: com.acme, version: 1-0-0`)
    expect(e.witness).toEqual({ items: [] })
    // The rules leave out cartId, which the structure requires, and make items an array.
    expect(e.reason).toBe(
      'at the top level: the event specification allows leaving out "cartId", which the data structure requires (required); ' +
        'at /items: the event specification allows an array where the data structure requires a number (type)',
    )
    expect(r.body.message).toBe(`${e.title}: ${e.reason}`)
  })

  it('the compatibility report names the property the witness breaks on, with the same reason', async () => {
    const r = await api('POST', '/event-specs/v1/compatibility', { spec: { event: { source: SOURCE, schema: ITEMS_ONLY } } })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('incompatible')
    const [s] = r.body.sources
    expect(s.properties).toEqual({ items: 'incompatible' })
    expect(s.witness).toEqual({ items: [] })
    expect(s.reason).toContain('at /items: the event specification allows an array where the data structure requires a number (type)')
    expect(s.message).toContain(s.reason)
  })

  it('a property the rules leave open is reported incompatible when the witness breaks on it', async () => {
    // Without `required`, the rules let cartId be anything: the witness breaks on cartId, not items.
    const rules = { type: 'object', properties: { items: { type: 'array' } } }
    const r = await api('POST', '/event-specs/v1/compatibility', { spec: { event: { source: SOURCE, schema: rules } } })
    const [s] = r.body.sources
    expect(r.body.status).toBe('incompatible')
    expect(s.properties.cartId).toBe('incompatible')
    expect(s.reason).toMatch(/^at \/cartId: the event specification allows a\S* \w+ where the data structure requires a string or null \(type\)$/)
  })

  it('a cause at the top level is said as such', async () => {
    const rules = { type: 'object', properties: { cartId: { type: 'string' }, items: { type: 'number' }, extra: { type: 'string' } }, required: ['cartId', 'extra'] }
    const r = await api('POST', '/event-specs/v1/compatibility', { spec: { event: { source: SOURCE, schema: rules } } })
    const [s] = r.body.sources
    expect(s.status).toBe('incompatible')
    expect(s.reason).toBe('at the top level: the event specification allows the property "extra", which the data structure does not allow (additionalProperties)')
    expect(s.properties).toEqual({ cartId: 'compatible', items: 'compatible' })
  })
})
