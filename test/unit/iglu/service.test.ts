import { describe, expect, it } from 'vitest'
import { MESSAGES } from '../../../lib/core/iglu/service'
import { CONFLICT } from '../../../lib/core/iglu/versioning'
import { makeRegistry, META, request, schema, SUPER_KEY } from './helpers'

const OTHER_UUID = '11111111-2222-4333-8444-555555555555'

async function withKeys(opts: Parameters<typeof makeRegistry>[0] = {}) {
  const r = makeRegistry(opts)
  const acme = (await r.call('POST', '/auth/keygen', { apikey: SUPER_KEY, body: { vendorPrefix: 'com.acme' } })).body
  return { ...r, read: acme.read as string, write: acme.write as string }
}

describe('registry service: global behaviour', () => {
  it('answers that the registry root is not an endpoint', async () => {
    const r = makeRegistry()
    for (const path of ['/registry-server', '/registry-server/', '/registry-server/nope', '/registry-server/api']) {
      const res = await r.handler(request('GET', path))
      expect(res.statusCode, path).toBe(404)
      expect(JSON.parse(res.body as string)).toEqual({ message: 'The endpoint does not exist' })
    }
    expect((await r.call('GET', '/unknown')).body).toEqual({ message: 'The endpoint does not exist' })
  })
  it('refuses an apikey that is not a UUID on every endpoint, and treats unknown keys as anonymous', async () => {
    const r = makeRegistry()
    for (const path of ['/meta/health', '/schemas', '/auth/keygen']) {
      expect(await r.call('GET', path, { apikey: 'not-a-uuid' })).toMatchObject({ status: 400, body: { message: 'Invalid UUID for ApiKey' } })
    }
    expect((await r.call('GET', '/meta/server', { apikey: OTHER_UUID })).body.authInfo).toEqual({ vendor: '', schema: null, key: [] })
  })
  it('reports malformed, invalid and oversized bodies', async () => {
    const r = makeRegistry({ maxPayloadSize: 2000 })
    expect(await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: '{nope' })).toMatchObject({ status: 400, body: { message: MESSAGES.malformed } })
    expect(await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: '[1,2]' })).toMatchObject({ status: 422, body: { message: MESSAGES.invalid } })
    expect(await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: { pad: 'x'.repeat(3000) } })).toMatchObject({ status: 413, body: { message: 'The payload is too large' } })
    let deep: unknown = 1
    for (let i = 0; i < 45; i++) deep = [deep]
    expect(await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: { deep } })).toMatchObject({ status: 422, body: { message: MESSAGES.invalid } })
  })
  it('answers health, db health and server info', async () => {
    const r = makeRegistry()
    expect(await r.call('GET', '/meta/health')).toMatchObject({ status: 200, body: 'OK' })
    expect(await r.call('GET', '/meta/health/db')).toMatchObject({ status: 200, body: 'OK' })
    const info = await r.call('GET', '/meta/server', { apikey: SUPER_KEY })
    expect(info.body).toEqual({
      version: '0.14.0', authInfo: { vendor: '', schema: 'CREATE_VENDOR', key: ['CREATE', 'DELETE'] }, database: 'inmemory',
      schemaCount: 0, debug: false, patchesAllowed: false,
    })
    expect((await r.call('GET', '/meta/server')).body.authInfo).toEqual({ vendor: '', schema: null, key: [] })
  })
  it('tolerates a trailing slash and reflects CORS origins', async () => {
    const r = makeRegistry()
    const res = await r.call('GET', '/schemas/', { headers: { origin: 'https://app.example' } })
    expect(res).toMatchObject({ status: 200, body: [] })
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example')
    expect((await r.call('OPTIONS', '/schemas')).headers['access-control-allow-headers']).toBe('content-type, apikey')
  })
})

describe('registry service: keys', () => {
  it('creates a read/write pair from a JSON body', async () => {
    const r = makeRegistry()
    const res = await r.call('POST', '/auth/keygen', { apikey: SUPER_KEY, body: { vendorPrefix: 'com.acme' } })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['read', 'write'])
    expect(res.body.read).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.keys.size).toBe(2)
  })
  it('stores only hashes of keys', async () => {
    const r = await withKeys()
    const stored = await r.keys.get((await import('../../../lib/core/iglu/apikeys')).hashKey(r.write))
    expect(stored?.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(stored)).not.toContain(r.write)
  })
  it('refuses the query-parameter form with a clear message', async () => {
    const r = makeRegistry()
    const res = await r.call('POST', '/auth/keygen?vendorPrefix=com.acme', { apikey: SUPER_KEY })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(MESSAGES.keygenQuery)
    expect((await r.call('POST', '/auth/keygen?vendor_prefix=com.acme', { apikey: SUPER_KEY, body: { vendorPrefix: 'com.acme' } })).status).toBe(400)
  })
  it('refuses keygen without privileges or outside the caller scope', async () => {
    const r = await withKeys()
    expect(await r.call('POST', '/auth/keygen', { body: { vendorPrefix: 'com.acme' } })).toMatchObject({ status: 403, body: { message: 'Not sufficient privileges to create keys' } })
    expect(await r.call('POST', '/auth/keygen', { apikey: r.write, body: { vendorPrefix: 'com.acme' } })).toMatchObject({ status: 403, body: { message: 'Not sufficient privileges to create keys' } })
    expect(await r.call('POST', '/auth/keygen', { apikey: SUPER_KEY, body: { vendor: 'com.acme' } })).toMatchObject({ status: 422 })
  })
  it('deletes keys with the super key only', async () => {
    const r = await withKeys()
    expect(await r.call('DELETE', `/auth/keygen?key=${r.read}`, { apikey: r.write })).toMatchObject({ status: 403, body: { message: 'Not sufficient privileges to delete key' } })
    expect(await r.call('DELETE', `/auth/keygen?key=${r.read}`, { apikey: SUPER_KEY })).toMatchObject({ status: 200, body: { message: 'Keys have been deleted' } })
    expect(await r.call('DELETE', `/auth/keygen?key=${OTHER_UUID}`, { apikey: SUPER_KEY })).toMatchObject({ status: 200, body: { message: 'Keys have been deleted' } })
    expect((await r.call('GET', '/meta/server', { apikey: r.read })).body.authInfo.schema).toBeNull()
  })
  it('generates a super key once when none is configured, and lets it be changed', async () => {
    const shown: string[] = []
    const r = makeRegistry({ superApiKey: undefined, onSuperKeyGenerated: (k) => shown.push(k) })
    await r.call('GET', '/meta/health')
    await r.call('GET', '/meta/health')
    expect(shown).toHaveLength(1)
    const generated = shown[0]!
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/)
    expect((await r.call('GET', '/meta/server', { apikey: generated })).body.authInfo.key).toEqual(['CREATE', 'DELETE'])
    expect(await r.call('PUT', '/auth/superkey', { apikey: generated, body: { superApiKey: '12345678-1234-1234-1234-123456789012' } })).toMatchObject({ status: 400, body: { message: MESSAGES.superKeyV4 } })
    expect((await r.call('PUT', '/auth/superkey', { apikey: OTHER_UUID, body: { superApiKey: SUPER_KEY } })).status).toBe(403)
    expect(await r.call('PUT', '/auth/superkey', { apikey: generated, body: { superApiKey: SUPER_KEY } })).toMatchObject({ status: 200 })
    expect((await r.call('GET', '/meta/server', { apikey: SUPER_KEY })).body.authInfo.key).toEqual(['CREATE', 'DELETE'])
    expect((await r.call('GET', '/meta/server', { apikey: generated })).body.authInfo.key).toEqual([])
  })
  it('refuses a configured super key that is not a UUID v4', () => {
    expect(() => makeRegistry({ superApiKey: '12345678-1234-1234-1234-123456789012' })).toThrow(/UUID v4/)
    expect(() => makeRegistry({ superApiKey: 'secret' })).toThrow(/UUID v4/)
  })
})

describe('registry service: publishing', () => {
  it('creates with PUT (201) and answers the igluctl body', async () => {
    const r = await withKeys()
    const res = await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: r.write, body: schema('com.acme', 'e', '1-0-0') })
    expect(res).toMatchObject({ status: 201, body: { message: 'Schema created', updated: false, location: 'iglu:com.acme/e/jsonschema/1-0-0', status: 201 } })
  })
  it('accepts a bare JSON Schema on PUT, taking self from the URL', async () => {
    const r = await withKeys()
    const res = await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: r.write, body: { type: 'object', properties: {} } })
    expect(res.status).toBe(201)
    expect((await r.call('GET', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: r.read })).body).toEqual({
      $schema: META, self: { vendor: 'com.acme', name: 'e', format: 'jsonschema', version: '1-0-0' }, type: 'object', properties: {},
    })
  })
  it('accepts POST with a bare self-describing schema and with the {"json": …} wrapper', async () => {
    const r = await withKeys()
    expect((await r.call('POST', '/schemas', { apikey: r.write, body: schema('com.acme', 'e', '1-0-0') })).status).toBe(201)
    const res = await r.call('POST', '/schemas', { apikey: r.write, body: { json: schema('com.acme', 'e', '1-0-1') } })
    expect(res).toMatchObject({ status: 201, body: { message: 'Schema created', updated: false, location: 'iglu:com.acme/e/jsonschema/1-0-1', status: 201 } })
  })
  it('refuses a POST body that is not self-describing', async () => {
    const r = await withKeys()
    expect(await r.call('POST', '/schemas', { apikey: r.write, body: { type: 'object' } })).toMatchObject({ status: 400, body: { message: 'Cannot decode JSON schema', reasons: ['No $schema field in top-level of schema', 'JSON Schema is not self-describing'] } })
    const { $schema: _, ...noMeta } = schema('com.acme', 'e', '1-0-0')
    expect(await r.call('POST', '/schemas', { apikey: r.write, body: noMeta })).toMatchObject({ status: 400, body: { message: 'Cannot decode JSON schema', reasons: ['No $schema field in top-level of schema'] } })
  })
  it('says why a vendor or name cannot be used', async () => {
    const r = await withKeys()
    const spaced = await r.call('POST', '/schemas', { apikey: r.write, body: schema('com.acme', 'my event', '1-0-0') })
    expect(spaced).toMatchObject({ status: 400, body: { message: 'Cannot decode JSON schema', reasons: [expect.stringContaining(`the name "my event" may only hold ASCII letters, digits, '-' and '_'`)] } })
    const unicode = await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: schema('com.acmé', 'e', '1-0-0') })
    expect(unicode).toMatchObject({ status: 400, body: { message: 'Cannot decode JSON schema', reasons: [expect.stringContaining(`the vendor "com.acmé" may only hold ASCII letters, digits, '-', '_' and '.'`)] } })
  })
  it('refuses formats other than jsonschema', async () => {
    const r = await withKeys()
    const avro = { ...schema('com.acme', 'e', '1-0-0'), self: { vendor: 'com.acme', name: 'e', format: 'avro', version: '1-0-0' } }
    expect(await r.call('POST', '/schemas', { apikey: r.write, body: avro })).toMatchObject({ status: 400, body: { message: "Only the jsonschema format is supported; 'avro' schemas cannot be stored" } })
    expect(await r.call('PUT', '/schemas/com.acme/e/avro/1-0-0', { apikey: r.write, body: { type: 'object' } })).toMatchObject({ status: 400 })
    expect((await r.call('GET', '/schemas/com.acme/e/avro/1-0-0', { apikey: r.read })).status).toBe(404)
  })
  it('validate/instance follows $refs to schemas in this registry and reports one it cannot resolve', async () => {
    const r = await withKeys()
    const inner = schema('com.acme', 'inner', '1-0-0', { properties: { b: { type: 'integer' } }, required: ['b'] })
    const outer = (ref: string) => schema('com.acme', 'outer', '1-0-0', { properties: { x: { $ref: ref } }, required: ['x'] })
    expect((await r.call('PUT', '/schemas/com.acme/inner/jsonschema/1-0-0', { apikey: r.write, body: inner })).status).toBe(201)
    expect((await r.call('PUT', '/schemas/com.acme/outer/jsonschema/1-0-0', { apikey: r.write, body: outer('iglu:com.acme/inner/jsonschema/1-0-0') })).status).toBe(201)
    const ok = await r.call('POST', '/validation/validate/instance', { apikey: r.read, body: { schema: 'iglu:com.acme/outer/jsonschema/1-0-0', data: { x: { b: 1 } } } })
    expect(ok.status).toBe(200)
    expect(ok.body.message).toMatch(/^Instance is valid/)
    const bad = await r.call('POST', '/validation/validate/instance', { apikey: r.read, body: { schema: 'iglu:com.acme/outer/jsonschema/1-0-0', data: { x: { b: 'no' } } } })
    expect(JSON.stringify(bad.body)).toContain('integer')
    expect((await r.call('PUT', '/schemas/com.acme/dangling/jsonschema/1-0-0', { apikey: r.write, body: { ...outer('http://iglucentral.com/schemas/com.acme/missing/jsonschema/1-0-0#'), self: { vendor: 'com.acme', name: 'dangling', format: 'jsonschema', version: '1-0-0' } } })).status).toBe(201)
    const dangling = await r.call('POST', '/validation/validate/instance', { apikey: r.read, body: { schema: 'iglu:com.acme/dangling/jsonschema/1-0-0', data: { x: 1 } } })
    expect(dangling).toMatchObject({ status: 422, body: { message: 'The schema iglu:com.acme/dangling/jsonschema/1-0-0 references iglu:com.acme/missing/jsonschema/1-0-0, which this registry cannot resolve; the instance was not validated' } })
  })
  it('refuses a PUT whose self differs from the URL', async () => {
    const r = await withKeys()
    const res = await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: r.write, body: schema('com.acme', 'f', '1-0-0') })
    expect(res).toMatchObject({
      status: 400,
      body: { uriSchemaKey: 'iglu:com.acme/e/jsonschema/1-0-0', payloadSchemaKey: 'iglu:com.acme/f/jsonschema/1-0-0', message: MESSAGES.mismatch },
    })
  })
  it('refuses unauthorised publishers with 403', async () => {
    const r = await withKeys()
    const body = schema('com.acme', 'e', '1-0-0')
    for (const apikey of [undefined, r.read, OTHER_UUID]) {
      expect(await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey, body })).toMatchObject({ status: 403, body: { message: 'Authentication error: not authorized' } })
    }
    const other = schema('com.acmecorp', 'e', '1-0-0')
    expect((await r.call('POST', '/schemas', { apikey: r.write, body: other })).status).toBe(403)
    expect((await r.call('POST', '/schemas', { apikey: r.write, body: schema('com.acme.sub', 'e', '1-0-0') })).status).toBe(201)
  })
  it('refuses schemas with lint errors and reports them', async () => {
    const r = await withKeys()
    const res = await r.call('POST', '/schemas', { apikey: r.write, body: schema('com.acme', 'e', '1-0-0', { properties: { a: { type: 12345 } } }) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('The schema does not conform to a JSON Schema v4 specification')
    expect(res.body.report.some((m: any) => m.level === 'ERROR' && m.pointer === '/properties/a/type')).toBe(true)
  })
  it('enforces the SchemaVer sequence with the exact 409 messages', async () => {
    const r = await withKeys()
    const put = (v: string, q = '', extra = {}) => r.call('PUT', `/schemas/com.acme/e/jsonschema/${v}${q}`, { apikey: r.write, body: schema('com.acme', 'e', v, extra) })
    expect((await put('1-0-0')).status).toBe(201)
    expect(await put('1-0-0')).toMatchObject({ status: 409, body: { message: CONFLICT.alreadyExists } })
    expect(await put('1-0-2')).toMatchObject({ status: 409, body: { message: CONFLICT.precedingMissing } })
    expect(await put('2-1-0')).toMatchObject({ status: 409, body: { message: CONFLICT.precedingMissing } })
    expect((await put('1-1-0')).status).toBe(201)
    expect(await put('1-0-1')).toMatchObject({ status: 409, body: { message: CONFLICT.notSequential } })
    expect(await put('1-1-1', '?isPublic=true')).toMatchObject({ status: 409, body: { message: CONFLICT.publicAfterPrivate } })
    expect(await put('1-1-1', '', { $supersedes: ['1-0-7'] })).toMatchObject({ status: 409, body: { message: CONFLICT.supersededMissing } })
    expect(await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-1-x', { apikey: r.write, body: {} })).toMatchObject({
      status: 400, body: { message: "Cannot parse version part '1-1-x' as SchemaVer, INVALID_SCHEMAVER" },
    })
  })
  it('records superseding and shows it in the canonical form', async () => {
    const r = await withKeys()
    await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0?isPublic=true', { apikey: r.write, body: schema('com.acme', 'e', '1-0-0') })
    const res = await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-1?isPublic=true', { apikey: r.write, body: schema('com.acme', 'e', '1-0-1', { $supersedes: ['1-0-0'] }) })
    expect(res.status).toBe(201)
    const old = (await r.call('GET', '/schemas/com.acme/e/jsonschema/1-0-0')).body
    expect(Object.keys(old).slice(0, 3)).toEqual(['$schema', '$supersededBy', 'self'])
    expect(old.$supersededBy).toBe('1-0-1')
    expect((await r.call('GET', '/schemas/com.acme/e/jsonschema/1-0-1')).body.$supersedes).toEqual(['1-0-0'])
    expect(JSON.parse(r.publisher.objects.get('schemas/com.acme/e/jsonschema/1-0-0')!).$supersededBy).toBe('1-0-1')
  })
  it('updates (200) and deletes only when patches are allowed', async () => {
    const prod = await withKeys()
    await prod.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: prod.write, body: schema('com.acme', 'e', '1-0-0') })
    expect(await prod.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: SUPER_KEY })).toMatchObject({ status: 405, body: { message: 'DELETE is forbidden on production registry' } })

    const dev = await withKeys({ patchesAllowed: true })
    await dev.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0?isPublic=true', { apikey: dev.write, body: schema('com.acme', 'e', '1-0-0') })
    const upd = await dev.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0?isPublic=true', { apikey: dev.write, body: schema('com.acme', 'e', '1-0-0', { description: 'changed' }) })
    expect(upd).toMatchObject({ status: 200, body: { message: 'Schema updated', updated: true, location: 'iglu:com.acme/e/jsonschema/1-0-0', status: 200 } })
    expect((await dev.call('GET', '/schemas/com.acme/e/jsonschema/1-0-0')).body.description).toBe('changed')
    expect(await dev.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: dev.write })).toMatchObject({ status: 401, body: { message: 'Not enough permissions' } })
    expect(await dev.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: SUPER_KEY })).toMatchObject({ status: 200, body: { message: 'Schema deleted' } })
    expect(await dev.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: SUPER_KEY })).toMatchObject({ status: 200, body: { message: 'Schema deleted' } })
    expect((await dev.call('GET', '/schemas/com.acme/e/jsonschema/1-0-0')).status).toBe(404)
    expect(dev.publisher.objects.has('schemas/com.acme/e/jsonschema/1-0-0')).toBe(false)
    expect(dev.publisher.objects.has('schemas/com.acme/e/jsonschema/1')).toBe(false)
  })
  it('exports public schemas and model lists to the static layout, never private ones', async () => {
    const r = await withKeys()
    await r.call('PUT', '/schemas/com.acme/pub/jsonschema/1-0-0?isPublic=true', { apikey: r.write, body: schema('com.acme', 'pub', '1-0-0') })
    await r.call('PUT', '/schemas/com.acme/pub/jsonschema/1-0-1?isPublic=true', { apikey: r.write, body: schema('com.acme', 'pub', '1-0-1') })
    await r.call('PUT', '/schemas/com.acme/priv/jsonschema/1-0-0', { apikey: r.write, body: schema('com.acme', 'priv', '1-0-0') })
    expect([...r.publisher.objects.keys()].sort()).toEqual([
      'schemas/com.acme/pub/jsonschema/1', 'schemas/com.acme/pub/jsonschema/1-0-0', 'schemas/com.acme/pub/jsonschema/1-0-1',
    ])
    expect(JSON.parse(r.publisher.objects.get('schemas/com.acme/pub/jsonschema/1')!)).toEqual([
      'iglu:com.acme/pub/jsonschema/1-0-0', 'iglu:com.acme/pub/jsonschema/1-0-1',
    ])
    expect(JSON.parse(r.publisher.objects.get('schemas/com.acme/pub/jsonschema/1-0-0')!)).toEqual(schema('com.acme', 'pub', '1-0-0'))
  })
})

describe('registry service: reading', () => {
  async function seeded() {
    const r = await withKeys()
    const put = (v: string, n: string, ver: string, pub: boolean) =>
      r.call('PUT', `/schemas/${v}/${n}/jsonschema/${ver}?isPublic=${pub}`, { apikey: SUPER_KEY, body: schema(v, n, ver) })
    await put('com.acme', 'pub', '1-0-0', true)
    await put('com.acme', 'pub', '1-0-1', true)
    await put('com.acme', 'pub', '2-0-0', true)
    await put('com.acme', 'priv', '1-0-0', false)
    await put('com.other', 'priv', '1-0-0', false)
    return r
  }
  it('lists readable schemas in every representation', async () => {
    const r = await seeded()
    expect((await r.call('GET', '/schemas')).body).toEqual([
      'iglu:com.acme/pub/jsonschema/1-0-0', 'iglu:com.acme/pub/jsonschema/1-0-1', 'iglu:com.acme/pub/jsonschema/2-0-0',
    ])
    expect((await r.call('GET', '/schemas', { apikey: r.read })).body).toHaveLength(4)
    expect((await r.call('GET', '/schemas', { apikey: SUPER_KEY })).body).toHaveLength(5)
    const canon = (await r.call('GET', '/schemas?repr=CANONICAL')).body
    expect(canon[0]).toEqual(schema('com.acme', 'pub', '1-0-0'))
    const meta = (await r.call('GET', '/schemas?repr=meta')).body[0]
    expect(meta).not.toHaveProperty('$schema')
    expect(meta.metadata).toMatchObject({ isPublic: true })
    expect(meta.metadata.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(await r.call('GET', '/schemas?repr=yaml')).toMatchObject({ status: 400, body: { message: "Unknown schema representation format: 'yaml'" } })
  })
  it('lists per vendor, name and model, 404 when nothing is readable', async () => {
    const r = await seeded()
    expect((await r.call('GET', '/schemas/com.acme')).body).toHaveLength(3)
    expect((await r.call('GET', '/schemas/com.acme', { apikey: r.read })).body).toHaveLength(4)
    expect((await r.call('GET', '/schemas/com.acme/pub')).body).toHaveLength(3)
    expect((await r.call('GET', '/schemas/com.acme/pub/jsonschema/1')).body).toEqual(['iglu:com.acme/pub/jsonschema/1-0-0', 'iglu:com.acme/pub/jsonschema/1-0-1'])
    expect((await r.call('GET', '/schemas/com.acme/pub/jsonschema/2?repr=canonical')).body).toEqual([schema('com.acme', 'pub', '2-0-0')])
    for (const path of ['/schemas/com.other', '/schemas/com.acme/priv', '/schemas/com.acme/pub/jsonschema/3', '/schemas/com.none']) {
      expect(await r.call('GET', path), path).toMatchObject({ status: 404, body: { message: 'No schemas available' } })
    }
  })
  it('hides private schemas behind the same 404 as missing ones', async () => {
    const r = await seeded()
    expect((await r.call('GET', '/schemas/com.acme/pub/jsonschema/1-0-0')).body).toEqual(schema('com.acme', 'pub', '1-0-0'))
    expect(await r.call('GET', '/schemas/com.acme/priv/jsonschema/1-0-0')).toMatchObject({ status: 404, body: { message: 'The schema is not found' } })
    expect(await r.call('GET', '/schemas/com.acme/priv/jsonschema/1-0-0', { apikey: OTHER_UUID })).toMatchObject({ status: 404, body: { message: 'The schema is not found' } })
    expect((await r.call('GET', '/schemas/com.acme/priv/jsonschema/1-0-0', { apikey: r.read })).status).toBe(200)
    expect((await r.call('GET', '/schemas/com.other/priv/jsonschema/1-0-0', { apikey: r.read })).status).toBe(404)
    expect(await r.call('GET', '/schemas/com.acme/nope/jsonschema/1-0-0')).toMatchObject({ status: 404, body: { message: 'The schema is not found' } })
    expect((await r.call('GET', '/schemas/com.acme/pub/jsonschema/1-0-0?repr=uri')).body).toBe('iglu:com.acme/pub/jsonschema/1-0-0')
  })
  it('counts only schemas the key can read in meta/server', async () => {
    const r = await seeded()
    expect((await r.call('GET', '/meta/server')).body.schemaCount).toBe(0)
    expect((await r.call('GET', '/meta/server', { apikey: r.read })).body.schemaCount).toBe(4)
    expect((await r.call('GET', '/meta/server', { apikey: SUPER_KEY })).body.schemaCount).toBe(5)
  })
})

describe('registry service: validation', () => {
  it('validates schemas for key holders only', async () => {
    const r = await withKeys()
    const path = '/validation/validate/schema/jsonschema'
    expect(await r.call('POST', path, { body: schema('com.acme', 'e', '1-0-0') })).toMatchObject({ status: 403, body: { message: '' } })
    expect(await r.call('POST', '/validation/validate/schema/avro', { apikey: r.read, body: {} })).toMatchObject({ status: 400, body: { message: "Unknown schema format: 'avro'" } })
    const clean = schema('com.acme', 'e', '1-0-0', { properties: { a: { type: ['string', 'null'], maxLength: 10 } } })
    expect(await r.call('POST', path, { apikey: r.read, body: clean })).toMatchObject({
      status: 200, body: { message: 'The schema provided is a valid self-describing iglu:com.acme/e/jsonschema/1-0-0 schema' },
    })
    const bad = await r.call('POST', path, { apikey: r.read, body: { type: 'object' } })
    expect(bad.status).toBe(200)
    expect(bad.body.message).toBe('The schema does not conform to a JSON Schema v4 specification')
    expect(bad.body.report.map((m: any) => m.message)).toEqual(expect.arrayContaining(['No $schema field in top-level of schema', 'JSON Schema is not self-describing']))
    expect((await r.call('POST', '/schemas/validate/com.acme/e/jsonschema/1-0-0', { apikey: r.read, body: clean })).body.message).toMatch(/valid self-describing/)
  })
  it('validates instances against stored schemas', async () => {
    const r = await withKeys()
    await r.call('PUT', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: r.write, body: schema('com.acme', 'e', '1-0-0') })
    const path = '/validation/validate/instance'
    const uri = 'iglu:com.acme/e/jsonschema/1-0-0'
    expect(await r.call('POST', path, { apikey: r.read, body: { schema: uri, data: { a: 'x' } } })).toMatchObject({ status: 200, body: { message: `Instance is valid ${uri}` } })
    const invalid = await r.call('POST', path, { apikey: r.read, body: { schema: uri, data: [] } })
    expect(invalid.status).toBe(200)
    expect(invalid.body.message).toBe('The data for a field instance is invalid against its schema')
    expect(invalid.body.report[0]).toEqual({ message: '$: array found, object expected', path: '$', keyword: 'type', targets: ['array', 'object'] })
    expect(await r.call('POST', path, { apikey: r.read, body: { data: {} } })).toMatchObject({ status: 400, body: { message: 'JSON payload is not self-describing, INVALID_DATA_PAYLOAD' } })
    expect(await r.call('POST', path, { body: { schema: uri, data: {} } })).toMatchObject({ status: 404, body: { message: 'The schema is not found' } })
    expect(await r.call('POST', path, { apikey: r.read, body: { schema: 'iglu:com.acme/zzz/jsonschema/1-0-0', data: {} } })).toMatchObject({ status: 404 })
  })
})

describe('registry service: hostile bodies', () => {
  it('property: any JSON value or text as the body of every endpoint that takes one is answered with a status below 500 and a JSON message', async () => {
    const { default: fc } = await import('fast-check')
    const r = await withKeys()
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({ $schema: fc.constantFrom(META, 'x'), self: fc.record({ vendor: fc.string({ unit: 'binary', maxLength: 12 }), name: fc.string({ unit: 'binary', maxLength: 12 }), format: fc.constantFrom('jsonschema', 'avro', ''), version: fc.constantFrom('1-0-0', '1-0', 'x') }), type: fc.constantFrom('object', 'nope'), properties: fc.jsonValue({ maxDepth: 2 }) }),
      fc.record({ schema: fc.string({ maxLength: 40 }), data: fc.jsonValue({ maxDepth: 2 }) }),
    )
    const body = fc.oneof(json.map((v) => JSON.stringify(v)), fc.string({ unit: 'binary', maxLength: 80 }))
    const endpoint = fc.constantFrom(
      ['POST', '/schemas'], ['PUT', '/schemas/com.acme/e/jsonschema/1-0-0'], ['POST', '/auth/keygen'],
      ['POST', '/validation/validate/schema/jsonschema'], ['POST', '/validation/validate/instance'],
    )
    const key = fc.constantFrom(SUPER_KEY, r.write, r.read, undefined)
    await fc.assert(fc.asyncProperty(endpoint, body, key, async ([method, path], b, apikey) => {
      const res = await r.call(method!, path!, { apikey, body: b })
      expect(res.status, `${method} ${path} ${b.slice(0, 80)}`).toBeLessThan(500)
      expect(typeof res.body === 'object' && res.body !== null, JSON.stringify(res.body)).toBe(true)
    }), { numRuns: 400 })
  })
})
