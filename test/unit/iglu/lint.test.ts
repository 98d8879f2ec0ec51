import { describe, expect, it } from 'vitest'
import { hasErrors, lint } from '../../../lib/core/iglu/lint'
import { schema } from './helpers'

const checks = (doc: unknown, level?: string) => lint(doc).filter((m) => !level || m.level === level).map((m) => m.check)

describe('schema lint', () => {
  it('passes a tidy schema with no errors', () => {
    expect(hasErrors(lint(schema('com.acme', 'e', '1-0-0')))).toBe(false)
  })
  it('reports draft-04 violations as errors with pointers', () => {
    const m = lint(schema('com.acme', 'e', '1-0-0', { properties: { a: { type: 12345 } } }))
    expect(hasErrors(m)).toBe(true)
    expect(m.find((x) => x.check === 'jsonSchema')?.pointer).toBe('/properties/a/type')
  })
  it('reports a missing or wrong $schema and self as errors', () => {
    const { $schema: _, ...doc } = schema('com.acme', 'e', '1-0-0')
    expect(lint(doc).filter((m) => m.level === 'ERROR').map((m) => m.message)).toContain('No $schema field in top-level of schema')
    const { self: __, ...noSelf } = schema('com.acme', 'e', '1-0-0')
    expect(lint(noSelf).filter((m) => m.level === 'ERROR').map((m) => m.message)).toContain('JSON Schema is not self-describing')
  })
  it('reports impossible ranges and keywords that do not fit the type', () => {
    const doc = schema('com.acme', 'e', '1-0-0', {
      properties: {
        n: { type: 'integer', minimum: 10, maximum: 1 },
        s: { type: 'string', minLength: 5, maxLength: 2 },
        a: { type: 'array', minItems: 3, maxItems: 1 },
        x: { type: 'string', minimum: 1, maxLength: 3 },
        o: { type: 'integer', properties: {}, minimum: 0, maximum: 1 },
      },
    })
    expect(checks(doc, 'ERROR').sort()).toEqual(
      ['arrayMinMaxItems', 'numericMinimumMaximum', 'numericProperties', 'objectProperties', 'stringMinMaxLength'].sort(),
    )
  })
  it('requires required properties to exist when additional properties are off', () => {
    const m = lint(schema('com.acme', 'e', '1-0-0', { required: ['a', 'zz'] }))
    expect(m.find((x) => x.check === 'requiredPropertiesExist')).toMatchObject({
      level: 'ERROR', message: "Elements specified as required [zz] don't exist in schema properties",
    })
  })
  it('gives advice as warnings and info without blocking', () => {
    const doc = schema('com.acme', 'e', '1-0-0', {
      properties: { n: { type: 'number' }, s: { type: 'string' }, 'bad-name': { type: ['string', 'null'], maxLength: 1, misplaced: 1 }, f: { type: 'string', format: 'color' } },
    })
    const m = lint(doc)
    expect(hasErrors(m)).toBe(false)
    expect(new Set(checks(doc, 'WARNING'))).toEqual(new Set(['numericMinMax', 'stringLength', 'bqDisallowedCharacters', 'unknownKeywords', 'unknownFormats']))
    expect(checks(doc, 'INFO')).toContain('optionalNull')
    expect(lint(doc, { skip: ['optionalNull', 'numericMinMax'] }).map((x) => x.check)).not.toContain('optionalNull')
  })
  it('refuses JSON nested deeper than the limit', () => {
    let deep: any = { type: 'object' }
    for (let i = 0; i < 45; i++) deep = { type: 'object', properties: { a: deep } }
    expect(checks(schema('com.acme', 'e', '1-0-0', { properties: { a: deep } }), 'ERROR')).toEqual(['maxDepth'])
  })
  it('warns about a root that is not an object with properties', () => {
    expect(checks(schema('com.acme', 'e', '1-0-0', { type: 'array', properties: undefined, additionalProperties: undefined, items: {} }))).toContain('rootObject')
  })
})
