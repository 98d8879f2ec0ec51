import { describe, expect, it } from 'vitest'
import { objectSchema, putSchema, useTenant } from './helpers'

// A patched schema must be seen by the very next request here; the reuse of resolved
// schemas between requests is covered by test/unit/tracking-design/schema-cache.test.ts.
process.env.FLOE_SCHEMA_CACHE_SECONDS = '0'

const V100 = 'iglu:com.acme/checkout/jsonschema/1-0-0'
const V101 = 'iglu:com.acme/checkout/jsonschema/1-0-1'
const REFD = 'iglu:com.acme/with_ref/jsonschema/1-0-0'

// 1-0-0: step is a string of up to 20 characters; 1-0-1 narrows it to 10.
const { stack, t } = useTenant({
  [V100]: objectSchema({ step: { type: 'string', maxLength: 20 }, total: { type: 'number' } }),
  [V101]: objectSchema({ step: { type: 'string', maxLength: 10 }, total: { type: 'number' } }),
  'iglu:com.acme/money/jsonschema/1-0-0': { type: 'number', minimum: 0 },
  [REFD]: objectSchema({ amount: { $ref: 'iglu:com.acme/money/jsonschema/1-0-0' } }),
})

const rules = (step: Record<string, unknown>) => objectSchema({ step, total: { type: 'number' } })
const title = (id: string, verdict: string, version: string) => `Event specification with id: ${id}, event schema is ${verdict} with schema with name: checkout, vendor: com.acme, version: ${version}`

describe('compatibility checks on create, edit and retrieve', () => {
  it('compatible with both versions: no entries', async () => {
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'ok', event: { source: V100, schema: rules({ type: 'string', enum: ['cart', 'pay'] }) } } })
    expect(r.status).toBe(201)
    expect(r.body.errors).toEqual([])
  })

  it('incompatible with the current version on create: 422 Error SchemaIncompatible at event.schema, nothing stored', async () => {
    const before = (await t.api('GET', '/event-specs/v1')).body.data.length
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'too long', event: { source: V100, schema: rules({ type: 'string', maxLength: 50 }) } } })
    expect(r.status).toBe(422)
    expect(r.body.data).toEqual([])
    expect(r.body.errors).toContainEqual({ type: 'Error', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'event.schema', title: expect.stringMatching(/event schema is INCOMPATIBLE with schema with name: checkout, vendor: com\.acme, version: 1-0-0$/) })
    expect(r.body.message).toContain('INCOMPATIBLE')
    expect((await t.api('GET', '/event-specs/v1')).body.data.length).toBe(before)
  })

  it('incompatible only with the latest version: 201 with a Warning naming the latest version', async () => {
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'mid', event: { source: V100, schema: rules({ type: 'string', maxLength: 15 }) } } })
    expect(r.status).toBe(201)
    const id = r.body.data[0].id
    expect(r.body.errors).toEqual([{ type: 'Warning', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'event.schema', title: title(id, 'INCOMPATIBLE', '1-0-1') }])
    // retrieve: the same warning, 200
    const g = await t.api('GET', `/event-specs/v1/${id}`)
    expect(g.status).toBe(200)
    expect(g.body.errors).toEqual([{ type: 'Warning', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'event.schema', title: title(id, 'INCOMPATIBLE', '1-0-1') }])
    // edit: pointing at 1-0-1 makes it incompatible with the current version: 422, the stored record is unchanged
    const e = await t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'mid', event: { source: V101, schema: rules({ type: 'string', maxLength: 15 }) } } })
    expect(e.status).toBe(422)
    expect(e.body.errors).toEqual([{ type: 'Error', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'event.schema', title: title(id, 'INCOMPATIBLE', '1-0-1') }])
    expect((await t.api('GET', `/event-specs/v1/${id}`)).body.data[0]).toMatchObject({ version: 0, event: { source: V100 } })
    // an edit that fits both: 200 without entries
    const ok = await t.api('PUT', `/event-specs/v1/${id}`, { spec: { name: 'mid', event: { source: V101, schema: rules({ type: 'string', maxLength: 5 }) } } })
    expect(ok.status).toBe(200)
    expect(ok.body.errors).toEqual([])
  })

  it('retrieve turns every incompatibility into a Warning with 200', async () => {
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'drifting', event: { source: V101, schema: rules({ type: 'string', maxLength: 8 }) } } })
    const id = r.body.data[0].id
    // the registry's 1-0-1 is replaced by a stricter one after the fact (a patch)
    await putSchema(stack.current, V101, objectSchema({ step: { type: 'string', maxLength: 4 }, total: { type: 'number' } }))
    try {
      const g = await t.api('GET', `/event-specs/v1/${id}`)
      expect(g.status).toBe(200)
      expect(g.body.errors).toEqual([{ type: 'Warning', code: 'SchemaIncompatible', witness: expect.anything(), reason: expect.stringMatching(/^at /), source: 'event.schema', title: title(id, 'INCOMPATIBLE', '1-0-1') }])
    } finally {
      await putSchema(stack.current, V101, objectSchema({ step: { type: 'string', maxLength: 10 }, total: { type: 'number' } }))
    }
  })

  it('undecidable (advanced features): always a Warning, the record is stored', async () => {
    const schema = rules({ type: 'string', pattern: '^(a+)+$', not: { pattern: '(ab|ba)*c' } })
    // \s means different things to ECMAScript and Java regexes: outside the decidable subset
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'regex', event: { source: V100, schema: { ...schema, properties: { ...schema.properties, step: { type: 'string', pattern: '^a\\s$' } } } } } })
    expect(r.status).toBe(201)
    expect(r.body.errors.length).toBeGreaterThan(0)
    for (const e of r.body.errors) expect(e).toMatchObject({ type: 'Warning', code: 'SchemaUndecidable', source: 'event.schema', title: expect.stringContaining('UNDECIDABLE') })
    expect((await t.api('GET', `/event-specs/v1/${r.body.data[0].id}`)).body.errors.every((e: any) => e.type === 'Warning')).toBe(true)
  })

  it('a pattern that needs backtracking (lookaround, backreference) is refused at its field', async () => {
    const schema = rules({ type: 'string', pattern: '^(?=x)y' })
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'lookahead', event: { source: V100, schema } } })
    expect(r.status).toBe(422)
    expect(r.body.errors).toMatchObject([{ type: 'Error', code: 'InvalidValue', title: expect.stringContaining('lookahead and lookbehind assertions need backtracking') }])
  })

  it('no check unless both event.source and event.schema are set', async () => {
    const r = await t.api('POST', '/event-specs/v1', { spec: { name: 'no rules', event: { source: V100 } } })
    expect(r.body.errors).toEqual([])
    const s = await t.api('POST', '/event-specs/v1', { spec: { name: 'no source', event: { schema: rules({ type: 'string', maxLength: 500 }) } } })
    expect(s.status).toBe(201)
    expect(s.body.errors).toEqual([])
  })

  it('resolves iglu $refs through the registry', async () => {
    const ok = await t.api('POST', '/event-specs/v1', { spec: { name: 'refs ok', event: { source: REFD, schema: objectSchema({ amount: { type: 'number', minimum: 10 } }) } } })
    expect(ok.status).toBe(201)
    expect(ok.body.errors).toEqual([])
    const bad = await t.api('POST', '/event-specs/v1', { spec: { name: 'refs bad', event: { source: REFD, schema: objectSchema({ amount: { type: 'number', minimum: -5 } }) } } })
    expect(bad.status).toBe(422)
    expect(bad.body.errors[0]).toMatchObject({ type: 'Error', code: 'SchemaIncompatible' })
  })
})

describe('POST /event-specs/v1/compatibility', () => {
  it('reports each source with lower-case statuses, not in the envelope', async () => {
    const body = {
      spec: {
        id: '312d3987-4874-498d-af6c-162ce0da39d7', name: 'cli-compat-check', status: 'draft', version: '0',
        event: { source: V100, schema: rules({ type: 'string', maxLength: 50 }) },
        entities: { tracked: [{ source: REFD, schema: objectSchema({ amount: { type: 'number', minimum: 1 } }) }] },
      },
    }
    const r = await t.api('POST', '/event-specs/v1/compatibility', body)
    expect(r.status).toBe(200)
    expect(r.body.status).toBe('incompatible')
    expect(r.body.sources).toEqual([
      { source: V100, status: 'incompatible', properties: { step: 'incompatible', total: 'compatible' }, message: expect.any(String), witness: { step: expect.any(String) }, reason: expect.stringMatching(/^at \/step: /) },
      { source: REFD, status: 'compatible', properties: {} },
    ])
    const fine = await t.api('POST', '/event-specs/v1/compatibility', { spec: { event: { source: V100, schema: rules({ type: 'string' , maxLength: 3 }) } } })
    expect(fine.body).toEqual({ status: 'compatible', sources: [{ source: V100, status: 'compatible', properties: {} }], message: '' })
    const missing = await t.api('POST', '/event-specs/v1/compatibility', { spec: { event: { source: 'iglu:com.acme/nope/jsonschema/1-0-0', schema: {} } } })
    expect(missing.body.status).toBe('incompatible')
    expect((await t.api('POST', '/event-specs/v1/compatibility', 'nope')).status).toBe(400)
  })
})
