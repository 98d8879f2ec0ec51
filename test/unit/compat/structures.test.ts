import { describe, expect, it } from 'vitest'
import { expectBoth, expectNotCompatible, expectVerdict } from './helpers'

describe('compat: objects', () => {
  const open = { type: 'object', properties: { a: { type: 'string' } } }
  it('open vs closed content (H02, H06, H07)', () => {
    expectVerdict(open, { ...open, additionalProperties: false }, 'SchemaIncompatible')
    // a typed optional property added to an open schema breaks old data
    const r = expectVerdict(open, { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } }, 'SchemaIncompatible')
    expect(Object.keys((r as { witness: object }).witness)).toContain('b')
    expectVerdict({ ...open, additionalProperties: false }, { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } }, 'Compatible')
    expectVerdict({ ...open, additionalProperties: false }, { ...open, additionalProperties: false }, 'Compatible')
  })
  it('required in both directions, including required keys that A cannot have', () => {
    expectBoth({ ...open, required: ['a'] }, open, 'Compatible', 'SchemaIncompatible')
    expectVerdict({ type: 'object', required: ['x'], additionalProperties: false }, { type: 'string' }, 'Compatible')
    expectVerdict({ type: 'object' }, { type: 'object', required: ['x'] }, 'SchemaIncompatible')
  })
  it('additionalProperties schema of A against a property declared in B (H43)', () => {
    const r = expectVerdict({ type: 'object', additionalProperties: { type: 'string' } }, { type: 'object', properties: { p: { type: 'integer' } } }, 'SchemaIncompatible')
    expect(r).toMatchObject({ witness: { p: expect.any(String) } })
    expectVerdict({ type: 'object', additionalProperties: { type: 'string' } }, { type: 'object', additionalProperties: { type: ['string', 'null'] } }, 'Compatible')
  })
  it('patternProperties interact with additionalProperties', () => {
    const a = { type: 'object', patternProperties: { '^x_': { type: 'string' } }, additionalProperties: false }
    expectVerdict(a, { type: 'object', additionalProperties: { type: 'string' } }, 'Compatible')
    expectVerdict(a, { type: 'object', patternProperties: { '^x': { type: 'string' } }, additionalProperties: false }, 'Compatible')
    expectVerdict(a, { type: 'object', patternProperties: { '^x_a': { type: 'string' } }, additionalProperties: false }, 'SchemaIncompatible')
    const r = expectVerdict(a, { type: 'object', properties: { x_1: { type: 'integer' } } }, 'SchemaIncompatible')
    expect(r).toMatchObject({ witness: { x_1: expect.any(String) } })
    // a key matching both a pattern and a property must satisfy both schemas
    expectVerdict(
      { type: 'object', properties: { x_1: { type: 'string' } }, patternProperties: { '^x_': { maxLength: 2 } }, additionalProperties: false },
      { type: 'object', properties: { x_1: { type: 'string', maxLength: 2 } } },
      'Compatible',
    )
    // B additionalProperties applies to keys that match none of B's patterns
    expectVerdict(
      { type: 'object', patternProperties: { '^[a-z]+$': { type: 'integer' } }, additionalProperties: false },
      { type: 'object', patternProperties: { '^[a-m]': { type: 'integer' } }, additionalProperties: { type: 'number' } },
      'Compatible',
    )
    expectVerdict(
      { type: 'object', patternProperties: { '^[a-z]+$': { type: 'integer' } }, additionalProperties: false },
      { type: 'object', patternProperties: { '^[a-m]': { type: 'integer' } }, additionalProperties: false },
      'SchemaIncompatible',
    )
  })
  it('dependencies (H46)', () => {
    expectVerdict({ type: 'object' }, { type: 'object', dependencies: { a: ['b'] } }, 'SchemaIncompatible')
    expectVerdict({ type: 'object', dependencies: { a: ['b', 'c'] } }, { type: 'object', dependencies: { a: ['b'] } }, 'Compatible')
    expectVerdict({ type: 'object', required: ['b'] }, { type: 'object', dependencies: { a: ['b'] } }, 'Compatible')
    expectVerdict({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, { type: 'object', dependencies: { b: ['c'] } }, 'Compatible')
    expectVerdict({ type: 'object' }, { type: 'object', dependencies: { a: { required: ['z'] } } }, 'SchemaIncompatible')
    expectVerdict({ type: 'object', required: ['z'] }, { type: 'object', dependencies: { a: { required: ['z'] } } }, 'Compatible')
  })
  it('min/maxProperties', () => {
    expectBoth({ type: 'object', minProperties: 2 }, { type: 'object', minProperties: 1 }, 'Compatible', 'SchemaIncompatible')
    expectBoth({ type: 'object', maxProperties: 1 }, { type: 'object', maxProperties: 2 }, 'Compatible', 'SchemaIncompatible')
    expectVerdict({ type: 'object', properties: { a: {}, b: {} }, additionalProperties: false }, { type: 'object', maxProperties: 2 }, 'Compatible')
    expectVerdict({ type: 'object', required: ['a', 'b'] }, { type: 'object', minProperties: 2 }, 'Compatible')
  })
  it('nested properties carry the path in undecidable reasons', () => {
    const r = expectVerdict({ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { a: { type: 'string', format: 'strict-uri' } } }, 'SchemaUndecidable')
    expect(r).toMatchObject({ reasons: [{ keyword: 'format', path: '#/properties/a' }] })
  })
})

describe('compat: arrays', () => {
  it('list items, counts, both directions', () => {
    expectBoth({ type: 'array', items: { type: 'integer' } }, { type: 'array', items: { type: 'number' } }, 'Compatible', 'SchemaIncompatible')
    expectBoth({ type: 'array', maxItems: 2 }, { type: 'array', maxItems: 3 }, 'Compatible', 'SchemaIncompatible')
    expectBoth({ type: 'array', minItems: 2 }, { type: 'array', minItems: 1 }, 'Compatible', 'SchemaIncompatible')
  })
  it('tuples and additionalItems (H34)', () => {
    const tuple = { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] }
    expectVerdict({ ...tuple, additionalItems: false }, { type: 'array', items: { type: ['string', 'integer'] } }, 'Compatible')
    expectVerdict(tuple, { type: 'array', items: { type: ['string', 'integer'] } }, 'SchemaIncompatible')
    expectVerdict(tuple, { ...tuple, additionalItems: { type: 'string' } }, 'SchemaIncompatible')
    expectVerdict({ ...tuple, additionalItems: { type: 'string' } }, tuple, 'Compatible')
    expectVerdict({ type: 'array', items: { type: 'string' } }, { type: 'array', items: [{ type: 'string' }], additionalItems: false }, 'SchemaIncompatible')
    expectVerdict({ type: 'array', items: { type: 'string' }, maxItems: 1 }, { type: 'array', items: [{ type: 'string' }], additionalItems: false }, 'Compatible')
  })
  it('uniqueItems', () => {
    const r = expectVerdict({ type: 'array', items: { type: 'integer' } }, { type: 'array', uniqueItems: true }, 'SchemaIncompatible')
    expect(r).toMatchObject({ witness: [0, 0] })
    expectVerdict({ type: 'array', uniqueItems: true }, { type: 'array' }, 'Compatible')
    expectVerdict({ type: 'array', maxItems: 1 }, { type: 'array', uniqueItems: true }, 'Compatible')
    expectVerdict({ type: 'array', uniqueItems: true, items: { type: 'boolean' } }, { type: 'array', maxItems: 2 }, 'SchemaUndecidable')
  })
})

describe('compat: allOf / anyOf / oneOf / not', () => {
  it('allOf on both sides', () => {
    expectVerdict({ allOf: [{ type: 'string' }, { maxLength: 3 }] }, { type: 'string', maxLength: 5 }, 'Compatible')
    expectVerdict({ type: 'string', maxLength: 3 }, { allOf: [{ type: 'string' }, { maxLength: 2 }] }, 'SchemaIncompatible')
  })
  it('anyOf: every A branch included; B needs a covering branch, split by type', () => {
    expectVerdict({ anyOf: [{ type: 'string' }, { type: 'null' }] }, { type: ['string', 'null'] }, 'Compatible')
    expectVerdict({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: ['string', 'null'] }, 'SchemaIncompatible')
    expectVerdict({ type: ['string', 'integer'] }, { anyOf: [{ type: 'string' }, { type: 'number' }] }, 'Compatible')
    expectVerdict({ type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] }, { type: 'object', minProperties: 1 }, 'Compatible')
  })
  it('oneOf in B needs exclusivity (H38, H39)', () => {
    const r = expectVerdict({ type: 'string' }, { oneOf: [{ type: 'string' }, { maxLength: 5 }] }, 'SchemaIncompatible')
    expect(r).toMatchObject({ result: 'SchemaIncompatible' })
    expectVerdict({ type: 'string' }, { oneOf: [{ type: 'string' }, { type: 'integer' }] }, 'Compatible')
    expectVerdict(
      { type: 'object', properties: { kind: { enum: ['a'] } }, required: ['kind'] },
      { oneOf: [{ properties: { kind: { enum: ['a'] } }, required: ['kind'] }, { properties: { kind: { enum: ['b'] } }, required: ['kind'] }] },
      'Compatible',
    )
    expectNotCompatible({ type: 'object' }, { oneOf: [{ type: 'object' }, { type: 'object', required: ['a'] }] })
  })
  it('oneOf on both sides: branches of A exclude each other, extra B branches can overlap (snowflake_config)', () => {
    const stat = { type: 'object', properties: { id: { type: 'string' }, secret: { type: 'string' } }, required: ['id', 'secret'] }
    const temp = { type: 'object', properties: { role: { type: 'string' } }, required: ['role'] }
    expectVerdict({ oneOf: [stat, temp, { type: 'null' }] }, { oneOf: [stat, temp, { type: 'null' }] }, 'Compatible')
    expectVerdict({ oneOf: [stat, temp] }, { oneOf: [temp, { type: 'null' }, stat] }, 'Compatible')
    const integration = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
    const r = expectVerdict({ oneOf: [stat, temp, { type: 'null' }] }, { oneOf: [stat, temp, { type: 'null' }, integration] }, 'SchemaIncompatible')
    expect(Object.keys((r as { witness: object }).witness)).toContain('name')
  })
  it('maxProperties 0 and maxItems 0 leave a single candidate', () => {
    expectVerdict({ type: 'object', maxProperties: 0 }, { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, 'Compatible')
    expectVerdict({ type: 'object', maxProperties: 0 }, { type: 'object', required: ['a'] }, 'SchemaIncompatible')
    expectVerdict({ type: 'array', maxItems: 0 }, { type: 'array', items: { type: 'string' }, uniqueItems: true }, 'Compatible')
  })
  it('oneOf in A behaves like anyOf for inclusion', () => {
    expectVerdict({ oneOf: [{ type: 'string' }, { type: 'integer' }] }, { type: ['string', 'integer'] }, 'Compatible')
    expectVerdict({ oneOf: [{ type: 'string' }, { maxLength: 2 }] }, { type: 'string' }, 'SchemaIncompatible')
  })
  it('not', () => {
    expectVerdict({ type: 'string' }, { not: { type: 'integer' } }, 'Compatible')
    expectVerdict({ type: 'integer' }, { not: { type: 'number' } }, 'SchemaIncompatible')
    expectVerdict({ type: 'integer', minimum: 5 }, { not: { type: 'integer', maximum: 4 } }, 'Compatible')
    expectVerdict({ type: 'integer', minimum: 4 }, { not: { type: 'integer', maximum: 4 } }, 'SchemaIncompatible')
    expectVerdict({ type: 'string', not: { maxLength: 3 } }, { type: 'string' }, 'Compatible')
  })
})
