import { describe, expect, it } from 'vitest'
import { MESSAGES } from '../../../lib/core/iglu/service'
import { makeRegistry, META, schema, SUPER_KEY } from './helpers'

/** 20,000 nested arrays: about 40 KB, well under the 100,000-byte payload limit. */
const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
const DEEP_IN_SCHEMA = `{"$schema":"${META}","self":{"vendor":"com.acme","name":"e","format":"jsonschema","version":"1-0-0"},"properties":${'['.repeat(20_000)}${']'.repeat(20_000)}}`
const self = { vendor: 'com.acme', name: 'nonexistent', format: 'jsonschema', version: '1-0-0' }

async function withKeys() {
  const r = makeRegistry()
  const acme = (await r.call('POST', '/auth/keygen', { apikey: SUPER_KEY, body: { vendorPrefix: 'com.acme' } })).body
  return { ...r, read: acme.read as string, write: acme.write as string }
}

describe('registry service: input nested too deep', () => {
  it('answers 422 on every route that reads a body, without overflowing the stack', async () => {
    const r = await withKeys()
    const routes: [string, string][] = [
      ['PUT', '/schemas/com.acme/e/jsonschema/1-0-0'],
      ['POST', '/schemas'],
      ['POST', '/schemas/validate/com.acme/e/jsonschema/1-0-0'],
      ['POST', '/auth/keygen'],
      ['PUT', '/auth/superkey'],
      ['POST', '/validation/validate/schema/jsonschema'],
      ['POST', '/validation/validate/instance'],
    ]
    for (const [method, path] of routes) {
      for (const body of [DEEP, DEEP_IN_SCHEMA]) {
        for (const apikey of [SUPER_KEY, r.read, undefined]) {
          expect(await r.call(method, path, { apikey, body }), `${method} ${path}`).toMatchObject({ status: 422, body: { message: MESSAGES.invalid } })
        }
      }
    }
  })
})

describe('registry service: order of checks', () => {
  it('checks the payload limit and decodes the body before permissions', async () => {
    const r = makeRegistry({ maxPayloadSize: 2000 })
    const big = { vendorPrefix: 'x'.repeat(3000) }
    for (const path of ['/auth/keygen', '/validation/validate/schema/jsonschema', '/schemas']) {
      expect(await r.call('POST', path, { body: big }), path).toMatchObject({ status: 413, body: { message: MESSAGES.tooLarge } })
      expect(await r.call('POST', path, { body: '{nope' }), path).toMatchObject({ status: 400, body: { message: MESSAGES.malformed } })
    }
  })
  it('answers DELETE without a key or with a read key 401 whatever the patches setting', async () => {
    for (const patchesAllowed of [false, true]) {
      const r = makeRegistry({ patchesAllowed })
      const keys = (await r.call('POST', '/auth/keygen', { apikey: SUPER_KEY, body: { vendorPrefix: 'com.acme' } })).body
      for (const apikey of [undefined, keys.read]) {
        expect(await r.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey })).toMatchObject({ status: 401, body: { message: MESSAGES.notEnoughPermissions } })
      }
    }
    const prod = makeRegistry()
    expect((await prod.call('DELETE', '/schemas/com.acme/e/jsonschema/1-0-0', { apikey: SUPER_KEY })).status).toBe(405)
  })
})

describe('registry service: schema validation report as Iglu Server', () => {
  const validate = async (body: unknown) => (await (await withKeys()).call('POST', '/validation/validate/schema/jsonschema', { apikey: SUPER_KEY, body })).body
  it('orders INFO, WARNING, ERROR and says not self-describing when $schema is missing', async () => {
    expect(await validate({ self, type: 'object' })).toEqual({
      message: MESSAGES.notConform,
      report: [
        { message: 'The schema is missing the "description" property', level: 'INFO', pointer: '/' },
        { message: 'At the root level, the schema should have a "type" property set to "object" and have a "properties" property', level: 'WARNING', pointer: '/' },
        { message: 'No $schema field in top-level of schema', level: 'ERROR', pointer: '/' },
        { message: 'JSON Schema is not self-describing', level: 'ERROR', pointer: '/' },
      ],
    })
    expect((await validate({ self, type: 'object', description: 'd', properties: {} })).report).toEqual([
      { message: 'No $schema field in top-level of schema', level: 'ERROR', pointer: '/' },
      { message: 'JSON Schema is not self-describing', level: 'ERROR', pointer: '/' },
    ])
  })
  it('points at the offending place', async () => {
    const base = { $schema: META, self, type: 'object', description: 'd' }
    expect((await validate({ ...base, properties: { inner: { description: 'x', misplacedProperty: { type: 'string' } } } })).report).toEqual([
      { message: '$.properties.inner.misplacedProperty: is not defined in the schema and the schema does not allow additional properties', level: 'WARNING', pointer: '/properties/inner' },
    ])
    expect((await validate({ ...base, self: { ...self, name: 'name with spaces' }, properties: {} })).report).toEqual([
      { message: '$.self.name: does not match the regex pattern ^[a-zA-Z0-9-_]+$', level: 'ERROR', pointer: '/self/name' },
    ])
  })
  it('names an unknown schema format', async () => {
    const r = await withKeys()
    expect(await r.call('POST', '/validation/validate/schema/avro', { apikey: r.read, body: {} })).toMatchObject({ status: 400, body: { message: "Unknown schema format: 'avro'" } })
  })
})

describe('registry service: representations and listings as Iglu Server', () => {
  it('puts the superseding fields before self in ?repr=meta, and lists in publication order', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z')
    const r = makeRegistry({ now: () => new Date((t += 1000)) })
    for (const [v, n] of [['com.zeta', 'a'], ['com.acme', 'b'], ['com.acme', 'a']] as const) {
      expect((await r.call('PUT', `/schemas/${v}/${n}/jsonschema/1-0-0`, { apikey: SUPER_KEY, body: schema(v, n, '1-0-0') })).status).toBe(201)
    }
    expect((await r.call('GET', '/schemas', { apikey: SUPER_KEY })).body).toEqual([
      'iglu:com.zeta/a/jsonschema/1-0-0', 'iglu:com.acme/b/jsonschema/1-0-0', 'iglu:com.acme/a/jsonschema/1-0-0',
    ])
    const next = schema('com.acme', 'a', '1-0-1', { $supersedes: ['1-0-0'] })
    expect((await r.call('PUT', '/schemas/com.acme/a/jsonschema/1-0-1', { apikey: SUPER_KEY, body: next })).status).toBe(201)
    const older = (await r.call('GET', '/schemas/com.acme/a/jsonschema/1-0-0?repr=meta', { apikey: SUPER_KEY })).body
    expect(Object.keys(older).slice(0, 3)).toEqual(['$supersededBy', 'self', 'metadata'])
    const newer = (await r.call('GET', '/schemas/com.acme/a/jsonschema/1-0-1?repr=meta', { apikey: SUPER_KEY })).body
    expect(Object.keys(newer).slice(0, 3)).toEqual(['$supersedes', 'self', 'metadata'])
  })
  it('answers an undecodable schema with Iglu\'s message and the reasons apart', async () => {
    const r = makeRegistry()
    expect(await r.call('POST', '/schemas', { apikey: SUPER_KEY, body: { type: 'object' } })).toMatchObject({
      status: 400, body: { message: 'Cannot decode JSON schema', reasons: ['No $schema field in top-level of schema', 'JSON Schema is not self-describing'] },
    })
  })
})
