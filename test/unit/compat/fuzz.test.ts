import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Budget } from '../../../lib/core/compat/budget'
import { evaluate } from '../../../lib/core/compat/evaluate'
import { FORMAT_SUPERSETS } from '../../../lib/core/compat/generate'
import { checkCompatibility } from '../../../lib/core/compat/index'
import { compilePattern } from '../../../lib/core/compat/regex'
import { formatSamples } from '../../../lib/core/compat/samples'
import { makeAjv } from './helpers'

const PATTERNS = [
  '^[a-z]+$',
  'a',
  '^a',
  'a$',
  '^(ab|cd)*$',
  '^[^0-9]{2,4}$',
  '^\\d+\\.\\d+\\.\\d+.*$',
  '-?[0-9]+(?:\\.[0-9+])?,-?[0-9]+(?:\\.[0-9+])?',
  '^iglu:[a-zA-Z0-9-_.]+/[a-zA-Z0-9-_]+/[0-9]+-[0-9]+-[0-9]+$',
  '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$',
  '^.$',
  '^\\$.*$',
  'x|^y$',
  '^(?:a|)b?$',
  '[\\u00e9-\\u00ff]',
  '^😀{2}$',
  '^[\\w.]{0,3}$',
]
const chars = fc.constantFrom(...'aby0123.-_$+/=,xé😀 \n:/ABcdi'.match(/./gsu)!)
const str = fc.array(chars, { maxLength: 12 }).map((a) => a.join(''))

describe('compat: regex automata agree with RegExp (unicode mode)', () => {
  it('on random strings for each supported pattern', () => {
    for (const p of PATTERNS) {
      const m = compilePattern(p)
      expect(m, p).toBeDefined()
      const re = new RegExp(p, 'u')
      fc.assert(fc.property(str, (s) => m!.test(s) === re.test(s)), { numRuns: 150, seed: 7 })
    }
  })
  it('refuses look-arounds, back-references, \\b and \\s', () => {
    for (const p of ['(?=a)', '(a)\\1', '\\bword', 'a\\s', '\\p{L}']) expect(compilePattern(p), p).toBeUndefined()
  })
})

describe('compat: format supersets contain every ajv-valid string', () => {
  it('for samples and random strings', () => {
    const ajv = makeAjv()
    for (const [f, p] of Object.entries(FORMAT_SUPERSETS)) {
      const m = compilePattern(p)!
      const v = ajv.compile({ type: 'string', format: f })
      const samples = [...formatSamples(f, [20, 25, 30]), '2020-02-29T23:59:60Z', '2020-01-01t00:00:00+01:00', '2020-01-01 00:00:00.5-0130', '23:59:60.123z', 'URN:UUID:123e4567-e89b-12d3-a456-426614174000', '255.255.255.255']
      for (const s of samples) if (v(s)) expect(m.test(s), `${f} ${s}`).toBe(true)
      fc.assert(fc.property(str, (s) => !v(s) || m.test(s)), { numRuns: 200, seed: 3 })
    }
  })
})

// A small grammar of draft-04 schemas for differential testing.
const leaf = fc.oneof(
  fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'null') }),
  fc.record({ type: fc.constant('string'), maxLength: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ type: fc.constant('string'), pattern: fc.constantFrom('^a', 'b$', '^[ab]+$', 'a') }),
  fc.record({ type: fc.constant('integer'), minimum: fc.integer({ min: -2, max: 2 }), exclusiveMinimum: fc.boolean() }),
  fc.record({ type: fc.constant('number'), maximum: fc.integer({ min: -2, max: 2 }), exclusiveMaximum: fc.boolean() }),
  fc.record({ type: fc.constant('integer'), multipleOf: fc.constantFrom(1, 2, 3, 4) }),
  fc.record({ enum: fc.array(fc.constantFrom(0, 1, 'a', 'b', null, true), { minLength: 1, maxLength: 3 }) }),
  fc.constant({}),
)
const schema: fc.Arbitrary<object> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(fc.constantFrom('a', 'b'), tie('node'), { maxKeys: 2 }),
        required: fc.subarray(['a', 'b']),
        additionalProperties: fc.oneof(fc.boolean(), tie('node')),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('array'), items: tie('node'), maxItems: fc.integer({ min: 0, max: 3 }), uniqueItems: fc.boolean() }, { requiredKeys: ['type'] }),
    fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ oneOf: fc.array(tie('node'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ not: tie('node') }),
  ),
})).node as fc.Arbitrary<object>

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(0, 1, 2, -1, 0.5, 3, 4, 'a', 'b', 'ab', 'ba', 'aaaaa', '', null, true, false),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }),
  ),
})).v.map((v) => JSON.parse(JSON.stringify(v)) as unknown)

describe('compat: differential soundness on random schema pairs', () => {
  const ajv = makeAjv()
  it('the internal validator agrees with ajv whenever it answers', () => {
    const ctx = { budget: new Budget(1e9), roots: new Map() }
    fc.assert(
      fc.property(schema, value, (s, v) => {
        const mine = evaluate(ctx, { s: s as Record<string, unknown>, root: s as Record<string, unknown> }, v)
        if (mine !== undefined) expect(mine).toBe(ajv.validate(s, v))
      }),
      { numRuns: 300, seed: 11 },
    )
  })
  it('Compatible verdicts survive random instances; Incompatible witnesses re-validate', () => {
    let decided = 0
    fc.assert(
      fc.property(schema, schema, fc.array(value, { minLength: 20, maxLength: 20 }), (a, b, vals) => {
        const r = checkCompatibility(a, b)
        if (r.result === 'Compatible') {
          decided++
          for (const v of vals) if (ajv.validate(a, v)) expect(ajv.validate(b, v), JSON.stringify({ a, b, v })).toBe(true)
        } else if (r.result === 'SchemaIncompatible') {
          decided++
          expect(ajv.validate(a, r.witness)).toBe(true)
          expect(ajv.validate(b, r.witness)).toBe(false)
        }
        // self-inclusion always holds
        expect(checkCompatibility(a, structuredClone(a)).result).toBe('Compatible')
      }),
      { numRuns: 250, seed: 5 },
    )
    expect(decided).toBeGreaterThan(175)
  })
})
