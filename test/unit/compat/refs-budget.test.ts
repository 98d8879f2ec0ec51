import { describe, expect, it } from 'vitest'
import { checkCompatibility } from '../../../lib/core/compat/index'
import { expectVerdict } from './helpers'

const tree = (leaf: object): object => ({
  type: 'object',
  properties: { value: leaf, children: { type: 'array', items: { $ref: '#' } } },
  additionalProperties: false,
})

describe('compat: $ref', () => {
  it('follows #/definitions and # references', () => {
    const a = { definitions: { s: { type: 'string', maxLength: 3 } }, type: 'object', properties: { x: { $ref: '#/definitions/s' } } }
    const b = { definitions: { s: { type: 'string', maxLength: 5 } }, type: 'object', properties: { x: { $ref: '#/definitions/s' } } }
    expectVerdict(a, b, 'Compatible')
    expectVerdict(b, a, 'SchemaIncompatible')
  })
  it('applies keywords next to $ref as well (like ajv)', () => {
    const a = { definitions: { s: { type: 'string' } }, properties: { x: { $ref: '#/definitions/s', maxLength: 2 } } }
    expectVerdict(a, { properties: { x: { type: 'string', maxLength: 2 } } }, 'Compatible')
    expectVerdict({ properties: { x: { type: 'string' } } }, a, 'SchemaIncompatible')
  })
  it('handles recursive schemas that descend into the instance', () => {
    expectVerdict(tree({ type: 'string', maxLength: 3 }), tree({ type: 'string' }), 'Compatible')
    const r = expectVerdict(tree({ type: 'string' }), tree({ type: 'string', maxLength: 3 }), 'SchemaIncompatible')
    expect(r.result).toBe('SchemaIncompatible')
  })
  it('declares recursion that does not descend undecidable instead of looping', () => {
    const a = { anyOf: [{ $ref: '#' }, { type: 'string' }] }
    const r = checkCompatibility(a, { type: 'integer' })
    expect(r.result).not.toBe('Compatible')
  })
  it('resolves iglu: references through options.resolve', () => {
    const registry: Record<string, object> = {
      'iglu:com.acme/name/jsonschema/1-0-0': { self: {}, $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#', type: 'string', maxLength: 10 },
      'iglu:com.acme/name/jsonschema/1-0-1': { type: 'string', maxLength: 20, definitions: { short: { maxLength: 5 } } },
    }
    const resolve = (uri: string): object | undefined => registry[uri]
    const a = { type: 'object', properties: { n: { $ref: 'iglu:com.acme/name/jsonschema/1-0-0' } } }
    const b = { type: 'object', properties: { n: { $ref: 'iglu:com.acme/name/jsonschema/1-0-1' } } }
    expect(checkCompatibility(a, b, { resolve })).toEqual({ result: 'Compatible' })
    const back = checkCompatibility(b, a, { resolve })
    expect(back).toMatchObject({ result: 'SchemaIncompatible' })
    const frag = { type: 'object', properties: { n: { $ref: 'iglu:com.acme/name/jsonschema/1-0-1#/definitions/short' } } }
    expect(checkCompatibility(frag, { type: 'object', properties: { n: { maxLength: 5 } } }, { resolve }).result).toBe('Compatible')
  })
  it('an unresolvable reference is undecidable', () => {
    const a = { properties: { n: { $ref: 'iglu:com.acme/missing/jsonschema/1-0-0' } } }
    const r = checkCompatibility(a, { properties: { n: { type: 'string' } } }, { resolve: () => undefined })
    expect(r).toMatchObject({ result: 'SchemaUndecidable', reasons: [{ keyword: '$ref' }] })
    const h = checkCompatibility({ properties: { n: { $ref: 'http://example.com/s.json' } } }, { properties: { n: { type: 'string' } } })
    expect(h.result).toBe('SchemaUndecidable')
  })
})

describe('compat: budget', () => {
  it('running out of budget is undecidable, never a guess', () => {
    const wide = (n: number, t: string): object => ({
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: t, pattern: `^[a-z]{${i % 7}}x$` }])),
    })
    const a = wide(60, 'string')
    const b = wide(60, 'string')
    ;(b as { properties: Record<string, object> }).properties.p59 = { type: 'string', pattern: '^[a-y]*x$' }
    const r = checkCompatibility(a, b, { budget: 50 })
    expect(r).toMatchObject({ result: 'SchemaUndecidable', reasons: [{ keyword: 'budget' }] })
    expect(checkCompatibility(a, b).result).toBe('SchemaIncompatible')
  })
  it('later-draft keywords in B (enforced by ajv, ignored by draft-04 validators) are undecidable', () => {
    expect(checkCompatibility({ type: 'integer' }, { const: 1 })).toMatchObject({ result: 'SchemaUndecidable', reasons: [{ keyword: 'const' }] })
    expect(checkCompatibility({ enum: [2] }, { const: 1 }).result).toBe('SchemaUndecidable')
    expect(checkCompatibility({ type: 'array' }, { type: 'array', contains: { type: 'string' } }).result).toBe('SchemaUndecidable')
    expect(checkCompatibility({ type: 'number' }, { type: 'number', exclusiveMinimum: 0 }).result).toBe('SchemaUndecidable')
    expect(checkCompatibility({ type: 'integer', const: 1 }, { type: 'integer' }).result).toBe('Compatible')
  })
  it('rejects non-object schemas', () => {
    expect(checkCompatibility(true, {})).toMatchObject({ result: 'SchemaUndecidable', reasons: [{ keyword: 'schema' }] })
  })
})
