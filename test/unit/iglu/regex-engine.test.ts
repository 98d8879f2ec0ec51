/**
 * Schema patterns run on a linear-time engine: catastrophic patterns answer
 * at once wherever a schema's regex is matched (enrich's validation, the
 * registry's validation endpoints, the compatibility checker), ECMA semantics
 * are kept, and what needs backtracking is refused with the reason.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { RE2JS } from 're2js'
import { describe, expect, it } from 'vitest'
import { checkCompatibility } from '../../../lib/core/compat/index'
import { Enricher } from '../../../lib/core/enrich/enrich'
import { ENRICH_PROCESSOR } from '../../../lib/core/enrich/version'
import { compileValidator } from '../../../lib/core/iglu/draft04'
import { lint } from '../../../lib/core/iglu/lint'
import { backtrackFree, linearRegExp, schemaPatternProblems, toRe2, UnsupportedPattern } from '../../../lib/core/iglu/regex-engine'
import { MemoryRepository } from '../../../lib/core/iglu/repositories'
import type { Resolver } from '../../../lib/core/iglu/resolver'
import { resolverFromConfig } from '../../../lib/core/iglu/resolver-config'
import { defaultResolverConfig } from '../../../lib/runtime/default-resolver'
import { validateSpec } from '../../../lib/core/tracking-design/validate'
import { badRows, batch, tp2 } from '../enrich/helpers'
import { igluCentral } from '../../support/iglu-central'
import { makeRegistry, schema, SUPER_KEY } from './helpers'

/** Patterns that take exponential time on a backtracking engine, and inputs that trigger it. */
const CATASTROPHIC: [string, string][] = [
  ['^(a+)+$', `${'a'.repeat(5000)}!`],
  ['^(a|a)*$', `${'a'.repeat(5000)}!`],
  ['^(a|aa)+$', `${'a'.repeat(5000)}!`],
  ['(x+x+)+y', 'x'.repeat(5000)],
  ['^(\\w+\\s?)*$', `${'word '.repeat(1000)}!`],
  ['^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$', `${'a'.repeat(5000)}!`],
]

describe('the linear-time engine', () => {
  it('keeps each compiled pattern apart in a shared validator', () => {
    // ajv reuses a compiled pattern by its text form: two patterns must never share one.
    expect(compileValidator({ type: 'string', pattern: '^a$' })('a')).toBe(true)
    expect(compileValidator({ type: 'string', pattern: '^b$' })('b')).toBe(true)
  })

  it('answers every catastrophic pattern on hostile input', () => {
    for (const [p, input] of CATASTROPHIC) {
      expect(linearRegExp(p).test(input), p).toBe(false)
      expect(compileValidator({ type: 'string', pattern: p })(input), p).toBe(false)
      expect(compileValidator({ type: 'object', patternProperties: { [p]: { type: 'string' } }, additionalProperties: false })({ [input]: 'x' }), p).toBe(false)
    }
  })

  it('keeps ECMA meaning for escapes RE2 spells differently', () => {
    const cases: [string, string, boolean][] = [
      ['^\\u0041$', 'A', true], ['^[^]$', '\n', true], ['^\\cJ$', '\n', true], ['^\\s$', '\u00a0', true], ['^\\S+$', 'a\u2028', false],
      ['^a.b$', 'a\nb', false], ['^a.b$', 'a\rb', false], ['^a.b$', 'a-b', true], ['^\\/x$', '/x', true], ['^[\\s,]+$', ' ,\u3000', true],
      ['^[a-zA-Z0-9-_.]+$', 'a-b_c.d', true], ['^[a-zA-Z0-9-_.]+$', 'a,b', false], ['\\d{4}', 'x2024', true], ['^\\w+$', 'é', false],
    ]
    for (const [p, s, want] of cases) {
      expect(new RegExp(p).test(s), `native ${p}`).toBe(want)
      expect(linearRegExp(p).test(s), `linear ${p} → ${toRe2(p)}`).toBe(want)
    }
  })

  it('agrees with JavaScript on every pattern of Iglu Central, for random and crafted strings', () => {
    const patterns = new Set<string>()
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk)
      if (v === null || typeof v !== 'object') return
      for (const [k, x] of Object.entries(v)) {
        if (k === 'pattern' && typeof x === 'string') patterns.add(x)
        if (k === 'patternProperties' && x && typeof x === 'object') Object.keys(x).forEach((p) => patterns.add(p))
        walk(x)
      }
    }
    const files = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : [join(d, e.name)]))
    for (const f of files(join(igluCentral, 'schemas')).filter((f) => f.includes('/jsonschema/'))) walk(JSON.parse(readFileSync(f, 'utf8')))
    expect(patterns.size).toBeGreaterThan(20)
    const samples = ['', 'iglu:com.acme/e/jsonschema/1-0-0', 'iglu:com.a-b_c/x/jsonschema/*-*-*', '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11', '2024-01-01', 'abc', '1.5,-2.25', 'USD', 'a@b.co', '#fff', 'x'.repeat(300)]
    for (const p of patterns) {
      const native = new RegExp(p)
      const linear = linearRegExp(p)
      for (const s of samples) expect(linear.test(s), `${p} on ${s}`).toBe(native.test(s))
      fc.assert(fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), (s) => linear.test(s) === native.test(s)), { numRuns: 100 })
    }
  })

  it('remembers answers for short recurring inputs without changing them (fast path against the plain engine)', () => {
    const p = '^iglu:[a-zA-Z0-9-_.]+/[a-zA-Z0-9-_]+/[a-zA-Z0-9-_]+/[0-9]+-[0-9]+-[0-9]+$'
    const plain = RE2JS.compile(toRe2(p))
    const memo = linearRegExp(p)
    fc.assert(fc.property(fc.array(fc.oneof(fc.constantFrom('iglu:com.acme/e/jsonschema/1-0-0', 'iglu:a/b/c/1-0', ''), fc.string({ maxLength: 300 })), { maxLength: 40 }), (inputs) => {
      // each input twice: the second answer comes from the memo (or not, past 256 characters)
      for (const s of [...inputs, ...inputs]) expect(memo.test(s)).toBe(plain.test(s))
    }), { numRuns: 200 })
  })

  it('runs fixed sequences of characters (a UUID, a date) natively, with the same answers as the plain engine', () => {
    const fixed = ['^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$', '^\\d{4}-\\d{2}-\\d{2}$', '^[A-Z]{3}$', 'ab.\\.', '^[^\\s,]{2}\\$$', '[\\]\\-]{3}']
    for (const p of fixed) expect(backtrackFree(p), p).toBe(true)
    // anything with a choice to try again stays on the linear-time engine
    for (const p of [...CATASTROPHIC.map(([p]) => p), '^[a-z]+$', '^a*$', '^a?b$', '^a{2,3}$', '^a{2,}$', '^(ab){2}$', '^a|b$', '^\\u0041$', '^\\bA$', '^[^]$', '[]', '^a{1}?$', 'a$b', '^[[a]]$', '[a-z]{17}', 'a{9999}b'])
      expect(backtrackFree(p), p).toBe(false)
    const unit = fc.constantFrom('a', 'Z', '0', '-', '.', '\\d', '\\w', '\\s', '\\.', '\\$', '[a-f0-9]', '[^a-z]', '[\\s,]', '[\\]x]')
    const patterns = fc.tuple(fc.boolean(), fc.array(fc.tuple(unit, fc.option(fc.integer({ min: 0, max: 4 }))), { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([start, atoms, end]) => `${start ? '^' : ''}${atoms.map(([u, n]) => (n === null ? u : `${u}{${n}}`)).join('')}${end ? '$' : ''}`)
    fc.assert(fc.property(patterns, fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 12 }), { maxLength: 10 }), (p, inputs) => {
      expect(backtrackFree(p)).toBe(true)
      const plain = RE2JS.compile(toRe2(p))
      const fast = linearRegExp(p)
      for (const s of inputs) expect(fast.test(s), `${p} on ${s}`).toBe(plain.test(s))
    }), { numRuns: 300 })
  })

  it('refuses what needs backtracking, and what is not a regular expression, with the reason', () => {
    expect(() => linearRegExp('^(a)\\1$')).toThrow(new UnsupportedPattern('backreferences (\\1) need backtracking and are not supported'))
    expect(() => linearRegExp('^(?=a)')).toThrow(/lookahead and lookbehind assertions need backtracking/)
    expect(() => linearRegExp('(?<=a)b')).toThrow(/lookahead and lookbehind/)
    expect(() => linearRegExp('(?<n>a)\\k<n>')).toThrow(/named backreferences/)
    expect(() => linearRegExp('(')).toThrow(/^not a valid regular expression: /)
    expect(() => linearRegExp('(?i)a')).toThrow(/^not a valid regular expression: /)
    expect(schemaPatternProblems({ properties: { a: { pattern: '(a)\\1' }, b: { patternProperties: { '^(?!x)': {} } } } }).map((p) => p.pointer)).toEqual([
      '/properties/a/pattern', '/properties/b/patternProperties/^(?!x)',
    ])
  })
})

/** The default repositories (no network) and one more schema. */
function withSchema(doc: Record<string, unknown>): Resolver {
  const { config, extra } = defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
  return resolverFromConfig(config, { extra: [new MemoryRepository([doc]), ...extra] })
}

describe('where schema patterns are used', () => {
  const slow = (pattern: string) => schema('com.acme', 'slow', '1-0-0', { properties: { a: { type: 'string', pattern } }, required: ['a'] })

  it('enrich: an event whose schema has a catastrophic pattern gets its bad row at once', async () => {
    const resolver = withSchema(slow('^(a+)+$'))
    const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
    const ue = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/slow/jsonschema/1-0-0', data: { a: `${'a'.repeat(5000)}!` } } })).toString('base64url')
    const o = await enricher.enrichRecord(tp2(`e=ue&p=web&tv=js-3&ue_px=${ue}`), batch())
    expect(badRows(o)[0].data.failure.messages[0]).toMatchObject({ schemaKey: 'iglu:com.acme/slow/jsonschema/1-0-0', error: { error: 'ValidationError' } })
  })

  it('enrich: a schema whose pattern needs backtracking is a schema error, not a crash', async () => {
    const resolver = withSchema(slow('^(a)\\1$'))
    const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
    const ue = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/slow/jsonschema/1-0-0', data: { a: 'aa' } } })).toString('base64url')
    const [row] = badRows(await enricher.enrichRecord(tp2(`e=ue&p=web&tv=js-3&ue_px=${ue}`), batch()))
    expect(row.data.failure.messages[0].error).toMatchObject({ error: 'ValidationError', schemaIssues: [{ message: expect.stringContaining('backreferences') }] })
  })

  it('the registry: validation endpoints answer at once, and uploads of unusable patterns are refused with the reason', async () => {
    const r = makeRegistry()
    expect((await r.call('PUT', '/schemas/com.acme/slow/jsonschema/1-0-0', { apikey: SUPER_KEY, body: slow('^(a+)+$') })).status).toBe(201)
    const v = await r.call('POST', '/validation/validate/instance', { apikey: SUPER_KEY, body: { schema: 'iglu:com.acme/slow/jsonschema/1-0-0', data: { a: `${'a'.repeat(5000)}!` } } })
    expect(v.status).toBe(200)
    expect(v.body.message).toMatch(/not valid|invalid/i)
    const refused = await r.call('PUT', '/schemas/com.acme/back/jsonschema/1-0-0', { apikey: SUPER_KEY, body: schema('com.acme', 'back', '1-0-0', { properties: { a: { type: 'string', pattern: '^(a)\\1$' } } }) })
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(JSON.stringify(refused.body)).toContain('backreferences')
    const checked = await r.call('POST', '/validation/validate/schema/jsonschema', { apikey: SUPER_KEY, body: schema('com.acme', 'look', '1-0-0', { properties: { a: { type: 'string', pattern: '^(?=a)' } } }) })
    expect(JSON.stringify(checked.body)).toContain('lookahead')
    expect(lint(schema('com.acme', 'look', '1-0-0', { properties: { a: { type: 'string', pattern: '^(?=a)' } } })).filter((m) => m.check === 'patterns')).toEqual([
      { check: 'patterns', level: 'ERROR', pointer: '/properties/a/pattern', message: 'The pattern "^(?=a)" cannot be used: lookahead and lookbehind assertions need backtracking and are not supported' },
    ])
  })

  it('the tracking-design API: an event schema with an unusable pattern is a 422 at its field', async () => {
    const { errors } = await validateSpec({ name: 'x', event: { schema: { type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' } } } } }, {
      mode: 'create', nameOwner: async () => undefined, schemaExists: async () => true, dataProductExists: async () => true,
    })
    expect(errors).toMatchObject([{ type: 'Error', source: 'spec.event.schema.properties.a.pattern', title: expect.stringContaining('backreferences') }])
  })

  it('the compatibility checker answers for catastrophic patterns', () => {
    for (const [p] of CATASTROPHIC) {
      const r = checkCompatibility({ type: 'string', pattern: p }, { type: 'string', pattern: p, maxLength: 3 })
      expect(['Compatible', 'SchemaIncompatible', 'SchemaUndecidable'], p).toContain(r.result)
    }
  })
})
