/**
 * The interpreter that confirms witnesses without compiling answers as ajv does, wherever it answers: on
 * every Iglu Central schema against instances sampled from it and mutated, and on the keywords' edge cases;
 * where it cannot be sure, it says so (undefined) and ajv is asked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkCompatibility } from '../../../lib/core/compat/index'
import { interpretedVerdict } from '../../../lib/core/compat/validator'
import { instancesNear, OracleValidator } from '../../bench/compat/oracle'
import { igluCentral } from '../../support/iglu-central'

type Resolve = (uri: string) => object | undefined

/** ajv's verdict (an instance independent of the checker's), or undefined when it cannot compile the schema. */
function ajvVerdict(oracle: OracleValidator, schema: object, x: unknown): boolean | undefined {
  const v = oracle.compile(schema)
  if (!v) return undefined
  try {
    return v(x) === true
  } catch {
    return undefined
  }
}

function corpus(): { schemas: object[]; resolve: Resolve } {
  const dir = join(igluCentral, 'schemas')
  const schemas: object[] = []
  const byUri = new Map<string, object>()
  for (const vendor of readdirSync(dir).sort()) {
    for (const name of readdirSync(join(dir, vendor)).sort()) {
      const d = join(dir, vendor, name, 'jsonschema')
      if (!existsSync(d)) continue
      for (const v of readdirSync(d).sort()) {
        const s = JSON.parse(readFileSync(join(d, v), 'utf8')) as object
        schemas.push(s)
        byUri.set(`iglu:${vendor}/${name}/jsonschema/${v}`, s)
      }
    }
  }
  return { schemas, resolve: (uri) => byUri.get(uri) }
}

describe('witness interpreter against ajv', () => {
  it('gives ajv’s verdict on every Iglu Central schema, for instances sampled from it and mutated', () => {
    const { schemas, resolve } = corpus()
    const oracle = new OracleValidator(resolve)
    let compared = 0
    let valid = 0
    let unanswered = 0
    for (const [i, s] of schemas.entries()) {
      for (const x0 of instancesNear(s, resolve, 4, i + 1)) {
        const x = JSON.parse(JSON.stringify(x0 ?? null)) as unknown
        const want = ajvVerdict(oracle, s, x)
        const got = interpretedVerdict(s, x, resolve)
        if (got === undefined) {
          unanswered++
          continue
        }
        expect(got, `${JSON.stringify(x).slice(0, 300)} on ${JSON.stringify(s).slice(0, 300)}`).toBe(want)
        compared++
        if (got) valid++
      }
    }
    // the comparison is meaningful: most instances are judged, and both verdicts occur often
    expect(schemas.length).toBeGreaterThan(600)
    expect(compared).toBeGreaterThan(20 * schemas.length)
    expect(unanswered).toBeLessThan(compared / 20)
    expect(valid).toBeGreaterThan(compared / 10)
    expect(compared - valid).toBeGreaterThan(compared / 10)
  })

  const acme = { self: { vendor: 'com.acme', name: 'x', format: 'jsonschema', version: '1-0-0' }, type: 'object', properties: { n: { type: 'integer', maximum: 9 } }, required: ['n'] }
  const resolve: Resolve = (uri) => (uri === 'iglu:com.acme/x/jsonschema/1-0-0' ? acme : undefined)

  /** [schema, instances, whether the interpreter answers] */
  const cases: [object, unknown[], boolean][] = [
    [{ $ref: '#/definitions/a', type: 'string', definitions: { a: { maxLength: 2 } } }, ['abc', 'ab', 5], true],
    [{ maximum: 3, exclusiveMaximum: true, minimum: 1, exclusiveMinimum: false }, [3, 2.9, 1, 0.5, 'x'], true],
    [{ type: 'integer' }, [1, 1.5, '1', 1e300, -0], true],
    [{ type: ['string', 'null'] }, ['a', null, 0, false], true],
    [{ multipleOf: 0.01 }, [0.07, 0.075, 1e-10, 3], true],
    [{ multipleOf: 0 }, [0, 1], true],
    [{ maxLength: 1, minLength: 1 }, ['😀', 'ab', '', '\ud800'], true],
    [{ pattern: '^a+$' }, ['aaa', 'b', 5], true],
    [{ format: 'email' }, ['a@b.co', 'x', 3], true],
    [{ format: 'date-time' }, ['2020-01-01T00:00:00Z', '2020-13-01T00:00:00Z'], true],
    [{ type: 'number', format: 'int32' }, [2 ** 31, 5, 1.5], true],
    [{ format: 'no-such-format' }, ['x'], true],
    [{ required: ['a'] }, [{ a: null }, {}, [], 'a'], true],
    [{ uniqueItems: true }, [[1, 1], [1, '1'], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [[1], [1]], [null, false, 0, '']], true],
    [{ items: { type: 'string' }, uniqueItems: true }, [['a', 'a'], ['a', 'b'], ['a', 1]], true],
    [{ items: [{ type: 'string' }], additionalItems: false }, [['a'], ['a', 1], [1], []], true],
    [{ items: [{ type: 'string' }], additionalItems: { type: 'number' } }, [['a', 1, 2], ['a', 'b']], true],
    [{ items: { type: 'string' }, additionalItems: false }, [['a', 'b'], [1]], true],
    [{ properties: { a: {} }, patternProperties: { '^x': { type: 'number' } }, additionalProperties: false }, [{ a: 1, x1: 2 }, { x: 'no' }, { b: 1 }, {}], true],
    [{ properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }, [{ a: 'x', b: 'y' }, { b: 1 }, { a: 1 }], true],
    [{ dependencies: { a: ['b'], c: { required: ['d'] } } }, [{ a: 1 }, { a: 1, b: 1 }, { c: 1 }, { c: 1, d: 1 }, {}], true],
    [{ enum: [{ a: 1 }, [1, 2], 'x', null] }, [{ a: 1 }, [1, 2], [2, 1], 'x', 'y', null], true],
    [{ const: { a: [1] } }, [{ a: [1] }, { a: [2] }, 'a'], true],
    [{ anyOf: [] }, [1], true],
    [{ oneOf: [{ type: 'number' }, { type: 'integer' }] }, [1, 1.5, 'a'], true],
    [{ not: { type: 'string' } }, ['a', 1], true],
    [{ allOf: [{ minimum: 1 }, { maximum: 3 }] }, [0, 2, 4], true],
    [{ minProperties: 1, maxProperties: 2 }, [{}, { a: 1 }, { a: 1, b: 2, c: 3 }], true],
    [{ type: 'object', properties: { child: { $ref: '#' }, v: { type: 'integer' } } }, [{ child: { child: { v: 1 } } }, { child: { child: { v: 'x' } } }], true],
    [{ properties: { a: false, b: true } }, [{ a: 1 }, { b: 1 }, {}], true],
    [{ $ref: 'iglu:com.acme/x/jsonschema/1-0-0' }, [{ n: 3 }, { n: 10 }, {}], true],
    [{ $ref: 'http://iglucentral.com/schemas/com.acme/x/jsonschema/1-0-0#/properties/n' }, [3, 10], true],
    [{ 'x-vendor': { type: 'string' }, title: 't', description: 'd', default: 3, $comment: 'c', type: 'string' }, ['a', 1], true],
    [{ maximum: 5, maxLength: 1, maxItems: 0, maxProperties: 0 }, ['ab', 6, [1], { a: 1 }, null], true],
    // ajv refuses these schemas, or reads them in a way the interpreter does not reproduce
    [{ exclusiveMaximum: true }, [3], false],
    [{ minLength: '2' }, ['a'], false],
    [{ type: [] }, [1], false],
    [{ type: 'any' }, [1], false],
    [{ nullable: true, type: 'string' }, [null], false],
    [{ if: { type: 'string' }, then: { minLength: 2 } }, ['a'], false],
    [{ contains: { type: 'string' } }, [[1]], false],
    [{ pattern: '(?=a)a' }, ['a'], false],
    [{ required: ['constructor'] }, [{}], false],
    [{ properties: { toString: { type: 'string' } } }, [{}], false],
    [{ uniqueItems: true }, [['__proto__', '__proto__']], false],
    [{ id: 'x', type: 'string' }, ['a'], false],
    [{ properties: { a: { id: 'y' } } }, [{}], false],
    [{ type: 'string', definitions: { unused: { $ref: 'iglu:com.acme/missing/jsonschema/1-0-0' } } }, ['a'], false],
    [{ $ref: 'other.json' }, [1], false],
    [{ $ref: '#/definitions/a%20b', definitions: { 'a b': {} } }, [1], false],
    [{ properties: { a: { $schema: 'http://json-schema.org/draft-04/schema#' } } }, [{}], false],
  ]

  it('answers as ajv does on the keywords’ edge cases, and leaves the rest to ajv', () => {
    const oracle = new OracleValidator(resolve)
    for (const [schema, xs, answers] of cases) {
      for (const x of xs) {
        const got = interpretedVerdict(schema, x, resolve)
        const label = `${JSON.stringify(x)} on ${JSON.stringify(schema)}`
        if (answers) {
          expect(got, label).toBeTypeOf('boolean')
          expect(got, label).toBe(ajvVerdict(oracle, schema, x))
        }
        else expect(got, label).toBeUndefined()
      }
    }
  })

  it('confirms witnesses through the interpreter, and through ajv where it does not answer', () => {
    expect(checkCompatibility({ type: 'string' }, { type: 'string', maxLength: 3 })).toMatchObject({ result: 'SchemaIncompatible' })
    // `nullable` is left to ajv, which still confirms the witness
    const r = checkCompatibility({ type: 'object', properties: { a: { type: 'string', nullable: true } } }, { type: 'object', properties: { a: { type: 'string', nullable: true } }, required: ['a'] })
    expect(r).toMatchObject({ result: 'SchemaIncompatible', witness: {} })
  })
})
