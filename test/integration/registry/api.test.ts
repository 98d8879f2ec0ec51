import { GetObjectCommand } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { HttpRepository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import { call as request } from '../../support/http'
import { testClients, useLocalStack } from '../../support/stack'
import { schema } from '../../unit/iglu/helpers'

const SUPER = 'b5f0c7de-6a3e-4d2b-9c41-2f8e7a1d0c33'
const stack = useLocalStack({ triggers: false, environment: { FLOE_SUPER_API_KEY: SUPER, FLOE_REGISTRY_PATCHES_ALLOWED: 'true' } })

async function call(method: string, path: string, init: { apikey?: string; body?: unknown } = {}) {
  // The registry reads any body as JSON, whatever its content type: keep sending one.
  return request(`${stack.current.url}${path}`, method, { headers: { ...(init.apikey ? { apikey: init.apikey } : {}), 'content-type': 'application/json' }, body: init.body })
}
const api = (p: string) => `/registry-server/api${p}`

describe('registry through the local gateway', () => {
  let read = ''
  let write = ''

  it('answers that the registry root is not an endpoint, and reports health', async () => {
    expect(await call('GET', '/registry-server')).toMatchObject({ status: 404, body: { message: 'The endpoint does not exist' } })
    expect(await call('GET', '/registry-server/')).toMatchObject({ status: 404, body: { message: 'The endpoint does not exist' } })
    expect(await call('GET', api('/meta/health'))).toMatchObject({ status: 200, body: 'OK' })
    expect(await call('GET', api('/meta/health/db'))).toMatchObject({ status: 200, body: 'OK' })
    expect(await call('GET', api('/meta/health'), { apikey: 'nope' })).toMatchObject({ status: 400, body: { message: 'Invalid UUID for ApiKey' } })
    expect((await call('GET', api('/meta/server'), { apikey: SUPER })).body).toMatchObject({ database: 'dynamodb', patchesAllowed: true, authInfo: { schema: 'CREATE_VENDOR' } })
  })

  it('creates keys from a JSON body only', async () => {
    expect((await call('POST', api('/auth/keygen?vendorPrefix=com.acme'), { apikey: SUPER })).status).toBe(400)
    expect(await call('POST', api('/auth/keygen'), { body: { vendorPrefix: 'com.acme' } })).toMatchObject({ status: 403, body: { message: 'Not sufficient privileges to create keys' } })
    const res = await call('POST', api('/auth/keygen'), { apikey: SUPER, body: { vendorPrefix: 'com.acme' } })
    expect(res.status).toBe(200)
    read = res.body.read
    write = res.body.write
    expect((await call('GET', api('/meta/server'), { apikey: write })).body.authInfo).toEqual({ vendor: 'com.acme', schema: 'CREATE_VENDOR', key: [] })
  })

  it('publishes with PUT and POST (bare and {"json": …}), enforcing permissions, lint and versions', async () => {
    expect(await call('PUT', api('/schemas/com.acme/ev/jsonschema/1-0-0?isPublic=true'), { apikey: read, body: schema('com.acme', 'ev', '1-0-0') }))
      .toMatchObject({ status: 403, body: { message: 'Authentication error: not authorized' } })
    expect(await call('PUT', api('/schemas/com.acme/ev/jsonschema/1-0-0?isPublic=true'), { apikey: write, body: schema('com.acme', 'ev', '1-0-0') }))
      .toMatchObject({ status: 201, body: { message: 'Schema created', updated: false, location: 'iglu:com.acme/ev/jsonschema/1-0-0', status: 201 } })
    expect(await call('POST', api('/schemas?isPublic=true'), { apikey: write, body: { json: schema('com.acme', 'ev', '1-0-1') } }))
      .toMatchObject({ status: 201, body: { location: 'iglu:com.acme/ev/jsonschema/1-0-1' } })
    expect(await call('POST', api('/schemas?isPublic=true'), { apikey: write, body: schema('com.acme', 'ev', '1-1-0') })).toMatchObject({ status: 201 })
    expect(await call('POST', api('/schemas?isPublic=true'), { apikey: write, body: schema('com.acme', 'ev', '1-0-2') }))
      .toMatchObject({ status: 409, body: { message: 'The schema version is not sequential' } })
    expect(await call('POST', api('/schemas?isPublic=true'), { apikey: write, body: schema('com.acme', 'ev', '3-0-0') }))
      .toMatchObject({ status: 409, body: { message: 'Preceding SchemaVer in the group is missing, check that schemas published in proper order' } })
    expect(await call('POST', api('/schemas'), { apikey: write, body: schema('com.acme', 'ev', '1-1-1') }))
      .toMatchObject({ status: 409, body: { message: 'Inconsistent schema availability. Cannot add private schema, previous versions are public' } })
    const bad = await call('POST', api('/schemas'), { apikey: write, body: schema('com.acme', 'broken', '1-0-0', { type: 12345 }) })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe('The schema does not conform to a JSON Schema v4 specification')
    expect(await call('POST', api('/schemas'), { apikey: write, body: { type: 'object' } })).toMatchObject({ status: 400, body: { message: 'Cannot decode JSON schema', reasons: expect.any(Array) } })
    expect(await call('POST', api('/schemas'), { apikey: write, body: schema('com.acme', 'secret', '1-0-0') })).toMatchObject({ status: 201 })
    expect(await call('PUT', api('/schemas/com.acme/ev/jsonschema/1-1-0?isPublic=true'), { apikey: write, body: schema('com.acme', 'ev', '1-1-0', { description: 'patched' }) }))
      .toMatchObject({ status: 200, body: { message: 'Schema updated', updated: true, status: 200 } })
  })

  it('reads single schemas, lists and representations, hiding private schemas', async () => {
    expect((await call('GET', api('/schemas/com.acme/ev/jsonschema/1-0-0'))).body).toEqual(schema('com.acme', 'ev', '1-0-0'))
    expect((await call('GET', api('/schemas/com.acme/ev/jsonschema/1-1-0'))).body.description).toBe('patched')
    expect(await call('GET', api('/schemas/com.acme/secret/jsonschema/1-0-0'))).toMatchObject({ status: 404, body: { message: 'The schema is not found' } })
    expect((await call('GET', api('/schemas/com.acme/secret/jsonschema/1-0-0'), { apikey: read })).status).toBe(200)
    expect((await call('GET', api('/schemas'))).body).toEqual([
      'iglu:com.acme/ev/jsonschema/1-0-0', 'iglu:com.acme/ev/jsonschema/1-0-1', 'iglu:com.acme/ev/jsonschema/1-1-0',
    ])
    expect((await call('GET', api('/schemas'), { apikey: read })).body).toHaveLength(4)
    // Publication order, as Iglu Server: patching 1-1-0 published it again after the private schema.
    expect((await call('GET', api('/schemas/com.acme?repr=meta'), { apikey: read })).body.map((s: any) => s.metadata.isPublic)).toEqual([true, true, false, true])
    expect((await call('GET', api('/schemas/com.acme/ev'))).body).toHaveLength(3)
    expect((await call('GET', api('/schemas/com.acme/ev/jsonschema/1?repr=canonical'))).body[0]).toEqual(schema('com.acme', 'ev', '1-0-0'))
    expect(await call('GET', api('/schemas/com.nobody'))).toMatchObject({ status: 404, body: { message: 'No schemas available' } })
    expect(await call('GET', api('/schemas?repr=xml'))).toMatchObject({ status: 400, body: { message: "Unknown schema representation format: 'xml'" } })
    expect(await call('GET', api('/schemas/com.acme/ev/jsonschema/1-0'))).toMatchObject({ status: 400, body: { message: "Cannot parse version part '1-0' as SchemaVer, INVALID_SCHEMAVER" } })
  })

  it('validates schemas and instances', async () => {
    expect(await call('POST', api('/validation/validate/schema/jsonschema'), { body: schema('com.acme', 'x', '1-0-0') })).toMatchObject({ status: 403 })
    const ok = await call('POST', api('/validation/validate/schema/jsonschema'), { apikey: read, body: schema('com.acme', 'x', '1-0-0', { properties: { a: { type: ['string', 'null'], maxLength: 3 } } }) })
    expect(ok).toMatchObject({ status: 200, body: { message: 'The schema provided is a valid self-describing iglu:com.acme/x/jsonschema/1-0-0 schema' } })
    expect(await call('POST', api('/validation/validate/instance'), { apikey: read, body: { schema: 'iglu:com.acme/ev/jsonschema/1-0-0', data: { a: 'ok' } } }))
      .toMatchObject({ status: 200, body: { message: 'Instance is valid iglu:com.acme/ev/jsonschema/1-0-0' } })
    const invalid = await call('POST', api('/validation/validate/instance'), { apikey: read, body: { schema: 'iglu:com.acme/ev/jsonschema/1-0-0', data: [] } })
    expect(invalid.body.report[0]).toEqual({ message: '$: array found, object expected', path: '$', keyword: 'type', targets: ['array', 'object'] })
    expect(await call('POST', api('/validation/validate/instance'), { apikey: read, body: { data: 1 } })).toMatchObject({ status: 400 })
  })

  it('exports public schemas to the assets bucket, readable as a static registry without a key', async () => {
    const { s3 } = testClients()
    const bucket = stack.current.names.buckets.assets
    const obj = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'schemas/com.acme/ev/jsonschema/1-1-0' }))
    expect(JSON.parse(await obj.Body!.transformToString()).description).toBe('patched')
    await expect(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'schemas/com.acme/secret/jsonschema/1-0-0' }))).rejects.toThrow()
    const staticRegistry = new HttpRepository(`${stack.current.endpoints.s3}/${bucket}`, { name: 'static' })
    const r = new Resolver({ repositories: [staticRegistry] })
    expect(await r.lookupSchema('iglu:com.acme/ev/jsonschema/1-0-1')).toMatchObject({ ok: true, value: schema('com.acme', 'ev', '1-0-1') })
    const list = await r.listSchemas('com.acme', 'ev', 1)
    expect(list.ok && list.value.length).toBe(3)
  })

  it('deletes schemas and keys with the super key', async () => {
    expect(await call('DELETE', api('/schemas/com.acme/ev/jsonschema/1-1-0'), { apikey: write })).toMatchObject({ status: 401, body: { message: 'Not enough permissions' } })
    expect(await call('DELETE', api('/schemas/com.acme/ev/jsonschema/1-1-0'), { apikey: SUPER })).toMatchObject({ status: 200, body: { message: 'Schema deleted' } })
    expect((await call('GET', api('/schemas/com.acme/ev/jsonschema/1-1-0'))).status).toBe(404)
    expect(await call('DELETE', api(`/auth/keygen?key=${read}`), { apikey: write })).toMatchObject({ status: 403 })
    expect(await call('DELETE', api(`/auth/keygen?key=${read}`), { apikey: SUPER })).toMatchObject({ status: 200, body: { message: 'Keys have been deleted' } })
    expect(await call('GET', api('/schemas/com.acme/secret/jsonschema/1-0-0'), { apikey: read })).toMatchObject({ status: 404 })
  })

  it('changes the super key through the API', async () => {
    const next = '0d6c2f5e-8a1b-4c3d-9e7f-112233445566'
    expect((await call('PUT', api('/auth/superkey'), { apikey: SUPER, body: { superApiKey: 'x' } })).status).toBe(400)
    expect(await call('PUT', api('/auth/superkey'), { apikey: SUPER, body: { superApiKey: next } })).toMatchObject({ status: 200 })
    expect((await call('GET', api('/meta/server'), { apikey: next })).body.authInfo.key).toEqual(['CREATE', 'DELETE'])
  })
})
