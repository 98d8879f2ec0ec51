import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  compareSchemaVer, formatSchemaVer, criterionMatches, formatCriterion, parseCriterion, parseIgluUri, parseSchemaPath, parseSchemaVer, toIgluUri,
} from '../../../lib/core/iglu/keys'
import { selfDescribingMetaSchema } from '../../../lib/core/iglu/metaschema'
import { canonicalSchema, decodeSelfDescribingData, decodeSelfDescribingSchema, metaSchemaErrors } from '../../../lib/core/iglu/selfdesc'
import { META, schema } from './helpers'

describe('SchemaVer and Iglu URIs', () => {
  it('parses and formats full SchemaVers', () => {
    expect(parseSchemaVer('1-0-2')).toEqual({ ok: true, value: { model: 1, revision: 0, addition: 2 } })
    for (const bad of ['0-0-0', '01-0-0', '1-00-0', '1-0', '1-0-0-0', 'a-b-c', '1-?-?', '']) {
      const r = parseSchemaVer(bad)
      expect(r.ok, bad).toBe(false)
      if (!r.ok) expect(r.message).toBe(`Cannot parse version part '${bad}' as SchemaVer, INVALID_SCHEMAVER`)
    }
  })
  it('formats and parses SchemaVers and URIs as inverses, ordering like tuples', () => {
    const ver = fc.record({ model: fc.integer({ min: 1, max: 10_000 }), revision: fc.nat(10_000), addition: fc.nat(10_000) })
    const part = fc.stringMatching(/^[a-zA-Z0-9_-]{1,12}$/)
    fc.assert(fc.property(ver, ver, part, part, (a, b, vendor, name) => {
      expect(parseSchemaVer(formatSchemaVer(a))).toEqual({ ok: true, value: a })
      const uri = `iglu:${vendor}.x/${name}/jsonschema/${formatSchemaVer(a)}`
      const k = parseIgluUri(uri)
      expect(k.ok && toIgluUri(k.value)).toBe(uri)
      const tuple = a.model - b.model || a.revision - b.revision || a.addition - b.addition
      expect(Math.sign(compareSchemaVer(a, b))).toBe(Math.sign(tuple))
    }))
  })
  it('orders versions numerically', () => {
    const vs = ['1-0-10', '1-0-2', '2-0-0', '1-1-0'].map((v) => (parseSchemaVer(v) as any).value)
    expect(vs.sort(compareSchemaVer).map((v: any) => `${v.model}-${v.revision}-${v.addition}`)).toEqual(['1-0-2', '1-0-10', '1-1-0', '2-0-0'])
  })
  it('parses Iglu URIs with the two error kinds', () => {
    const k = parseIgluUri('iglu:com.acme.x/my_event-1/jsonschema/1-2-3')
    expect(k.ok && toIgluUri(k.value)).toBe('iglu:com.acme.x/my_event-1/jsonschema/1-2-3')
    expect(parseIgluUri('iglu:com.acme/e/jsonschema/1-0').ok).toBe(false)
    expect((parseIgluUri('iglu:com.acme/e/jsonschema') as any).code).toBe('INVALID_IGLUURI')
    expect((parseIgluUri('iglu:com.acme/e/jsonschema/01-0-0') as any).code).toBe('INVALID_SCHEMAVER')
    expect((parseIgluUri('http:com.acme/e/jsonschema/1-0-0') as any).code).toBe('INVALID_IGLUURI')
    expect(parseSchemaPath('com.acme/e/jsonschema/1-0-0').ok).toBe(true)
    // vendors and names of more than 128 characters are not Iglu URIs
    expect(parseIgluUri(`iglu:${'a'.repeat(128)}/${'b'.repeat(128)}/jsonschema/1-0-0`).ok).toBe(true)
    expect((parseIgluUri(`iglu:${'a'.repeat(129)}/e/jsonschema/1-0-0`) as any).code).toBe('INVALID_IGLUURI')
    expect((parseIgluUri(`iglu:com.acme/${'b'.repeat(129)}/jsonschema/1-0-0`) as any).code).toBe('INVALID_IGLUURI')
    expect((parseSchemaPath(`${'a'.repeat(129)}/e/jsonschema/1-0-0`) as any).code).toBe('INVALID_SCHEMA_PATH')
  })
  it('matches criteria', () => {
    const c = (parseCriterion('iglu:com.acme/e/jsonschema/1-*-*') as any).value
    expect(formatCriterion(c)).toBe('iglu:com.acme/e/jsonschema/1-*-*')
    expect(criterionMatches(c, (parseIgluUri('iglu:com.acme/e/jsonschema/1-3-0') as any).value)).toBe(true)
    expect(criterionMatches(c, (parseIgluUri('iglu:com.acme/e/jsonschema/2-0-0') as any).value)).toBe(false)
    expect(criterionMatches(c, (parseIgluUri('iglu:com.acme/f/jsonschema/1-0-0') as any).value)).toBe(false)
  })
})

describe('self-describing schemas', () => {
  it('the published meta-schema file is the one the code checks against', () => {
    const file = JSON.parse(readFileSync('schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0', 'utf8'))
    expect(file).toEqual(JSON.parse(JSON.stringify(selfDescribingMetaSchema)))
    expect(metaSchemaErrors(file)).toEqual([])
  })
  it('decodes a schema into key and body, and rebuilds the canonical form', () => {
    const doc = schema('com.acme', 'e', '1-0-0')
    const d = decodeSelfDescribingSchema(doc)
    expect(d.ok).toBe(true)
    if (!d.ok) return
    expect(toIgluUri(d.value.key)).toBe('iglu:com.acme/e/jsonschema/1-0-0')
    expect(d.value.body).not.toHaveProperty('self')
    expect(d.value.body).not.toHaveProperty('$schema')
    const canon = canonicalSchema(d.value.key, d.value.body)
    expect(Object.keys(canon).slice(0, 2)).toEqual(['$schema', 'self'])
    expect(canon).toEqual(doc)
  })
  it('refuses documents that are not self-describing', () => {
    const { $schema: _, ...noSchema } = schema('com.acme', 'e', '1-0-0')
    expect(decodeSelfDescribingSchema(noSchema)).toEqual({ ok: false, errors: ['No $schema field in top-level of schema'] })
    expect(decodeSelfDescribingSchema({ ...schema('com.acme', 'e', '1-0-0'), $schema: META.replace('http:', 'https:') }).ok).toBe(false)
    expect(decodeSelfDescribingSchema({ $schema: META, type: 'object' })).toEqual({ ok: false, errors: ['JSON Schema is not self-describing'] })
    expect(decodeSelfDescribingSchema(schema('com acme', 'e', '1-0-0')).ok).toBe(false)
    expect(decodeSelfDescribingSchema(schema('com.acme', 'e', '0-0-1')).ok).toBe(false)
    expect(metaSchemaErrors({ ...schema('com.acme', 'e', '1-0-0'), type: 12345 }).length).toBeGreaterThan(0)
  })
  it('decodes self-describing data', () => {
    expect(decodeSelfDescribingData({ schema: 'iglu:com.acme/e/jsonschema/1-0-0', data: {} }).ok).toBe(true)
    expect(decodeSelfDescribingData({ data: {} })).toMatchObject({ ok: false, message: 'JSON payload is not self-describing, INVALID_DATA_PAYLOAD' })
    expect(decodeSelfDescribingData({ schema: 'iglu:com.acme/e/jsonschema/1-0', data: 1 }).ok).toBe(false)
  })
})
