/**
 * The query string and the query DSL parse into the query tree, refusals name
 * the construct, and dates parse as Elasticsearch reads them (date math and
 * rounding included).
 */
import { describe, expect, it } from 'vitest'
import { parseDsl } from '../../../lib/core/search/dsl'
import { parseQueryString } from '../../../lib/core/search/lucene'
import { likePattern, parseDate } from '../../../lib/core/search/query'
import { Refusal, type Query } from '../../../lib/core/search/query-tree'

const eq = (field: string, ...values: (string | number | boolean)[]): Query => ({ kind: 'eq', field, values })
const bool = (b: Partial<Extract<Query, { kind: 'bool' }>>): Query => ({ kind: 'bool', must: [], should: [], mustNot: [], filter: [], minimumShouldMatch: 0, ...b })
const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    if (err instanceof Refusal) return err.error
    throw err
  }
  throw new Error('no refusal')
}

describe('query string', () => {
  it('reads fields, phrases, escapes and the default field', () => {
    expect(parseQueryString('app_id:shop')).toEqual(eq('app_id', 'shop'))
    expect(parseQueryString('shop')).toEqual(eq('*', 'shop'))
    expect(parseQueryString('shop', { defaultField: 'app_id' })).toEqual(eq('app_id', 'shop'))
    expect(parseQueryString('page_title:"O\'Brien\'s \\"quoted\\" title"')).toEqual(eq('page_title', 'O\'Brien\'s "quoted" title'))
    expect(parseQueryString('contexts_a_b_1.id:x\\:y')).toEqual(eq('contexts_a_b_1.id', 'x:y'))
    expect(parseQueryString('')).toEqual({ kind: 'all' })
    expect(parseQueryString('*:*')).toEqual({ kind: 'all' })
    expect(parseQueryString('app_id:*')).toEqual({ kind: 'exists', field: 'app_id' })
    expect(parseQueryString('_exists_:user_id')).toEqual({ kind: 'exists', field: 'user_id' })
    expect(parseQueryString('app_id:shop^2')).toEqual(eq('app_id', 'shop'))
  })

  it('combines with AND, OR, NOT, +, - and groups; AND binds tighter; the default operator joins neighbours', () => {
    expect(parseQueryString('a:1 AND b:2')).toEqual(bool({ must: [eq('a', '1'), eq('b', '2')] }))
    expect(parseQueryString('a:1 OR b:2 AND c:3')).toEqual(bool({ should: [eq('a', '1'), bool({ must: [eq('b', '2'), eq('c', '3')] })], minimumShouldMatch: 1 }))
    expect(parseQueryString('a:1 b:2')).toEqual(bool({ should: [eq('a', '1'), eq('b', '2')], minimumShouldMatch: 1 }))
    expect(parseQueryString('a:1 b:2', { defaultOperator: 'AND' })).toEqual(bool({ must: [eq('a', '1'), eq('b', '2')] }))
    expect(parseQueryString('NOT a:1')).toEqual(bool({ mustNot: [eq('a', '1')] }))
    expect(parseQueryString('a:1 && !b:2')).toEqual(bool({ must: [eq('a', '1')], mustNot: [eq('b', '2')] }))
    expect(parseQueryString('a:1 -b:2')).toEqual(bool({ should: [eq('a', '1'), bool({ mustNot: [eq('b', '2')] })], minimumShouldMatch: 1 }))
    expect(parseQueryString('se_category:(video OR checkout)')).toEqual(bool({ should: [eq('se_category', 'video'), eq('se_category', 'checkout')], minimumShouldMatch: 1 }))
    expect(parseQueryString('(a:1 OR a:2) AND b:3')).toEqual(bool({ must: [bool({ should: [eq('a', '1'), eq('a', '2')], minimumShouldMatch: 1 }), eq('b', '3')] }))
  })

  it('reads wildcards, ranges and comparisons', () => {
    expect(parseQueryString('page_url:*blog?')).toEqual({ kind: 'wildcard', field: 'page_url', pattern: '*blog?', wild: [true, false, false, false, false, true] })
    expect(parseQueryString('page_url:a\\*b*')).toMatchObject({ kind: 'wildcard', pattern: 'a*b*', wild: [false, false, false, true] })
    expect(parseQueryString('se_value:[1 TO 5]')).toEqual({ kind: 'range', field: 'se_value', gte: '1', lte: '5' })
    expect(parseQueryString('se_value:{1 TO *]')).toEqual({ kind: 'range', field: 'se_value', gt: '1' })
    expect(parseQueryString('collector_tstamp:["2025-01-01" TO now]')).toEqual({ kind: 'range', field: 'collector_tstamp', gte: '2025-01-01', lte: 'now' })
    expect(parseQueryString('se_value:>=2')).toEqual({ kind: 'range', field: 'se_value', gte: '2' })
    expect(parseQueryString('se_value:<2')).toEqual({ kind: 'range', field: 'se_value', lt: '2' })
  })

  it('refuses regular expressions, fuzzy searches, wildcard field names and syntax errors, naming them', () => {
    expect(refusal(() => parseQueryString('app_id:/sh.p/')).reason).toMatch(/regular expressions/)
    expect(refusal(() => parseQueryString('app_id:shop~2')).reason).toMatch(/fuzzy/)
    expect(refusal(() => parseQueryString('"a b"~3')).reason).toMatch(/proximity/)
    expect(refusal(() => parseQueryString('contexts_*:x')).reason).toMatch(/wildcards/)
    for (const bad of ['"unterminated', '((((', 'x:[1 TO', 'a:1 AND', ')', 'a:', 'x:[1 2]']) {
      expect(refusal(() => parseQueryString(bad))).toMatchObject({ status: 400, type: 'query_shard_exception', reason: expect.stringContaining('Failed to parse query') })
    }
  })
})

describe('query string limits, the same as the DSL’s', () => {
  it('refuses nesting deeper than 32 groups (5,000 parentheses: a 400, not a stack overflow)', () => {
    expect(refusal(() => parseQueryString(`${'('.repeat(5000)}a${')'.repeat(5000)}`))).toMatchObject({ status: 400, type: 'parsing_exception', reason: expect.stringMatching(/nested deeper than 32/) })
    expect(refusal(() => parseQueryString(`f:${'('.repeat(40)}a${')'.repeat(40)}`))).toMatchObject({ status: 400, reason: expect.stringMatching(/nested deeper than 32/) })
    expect(refusal(() => parseDsl({ query_string: { query: `${'('.repeat(33)}a${')'.repeat(33)}` } }))).toMatchObject({ status: 400 })
    expect(parseQueryString(`${'('.repeat(32)}a:1${')'.repeat(32)}`)).toEqual(eq('a', '1'))
  })

  it('refuses more than 1,024 clauses', () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `f:v${i}`).join(' OR ')
    expect(refusal(() => parseQueryString(terms(1025)))).toMatchObject({ status: 400, type: 'too_many_clauses', reason: expect.stringMatching(/more than 1024 clauses/) })
    expect(refusal(() => parseQueryString(`(${terms(600)}) AND (${terms(600)})`))).toMatchObject({ status: 400, type: 'too_many_clauses' })
    expect(parseQueryString(terms(1000))).toMatchObject({ kind: 'bool' })
  })
})

describe('query DSL', () => {
  it('parses the supported queries', () => {
    expect(parseDsl({ match_all: {} })).toEqual({ kind: 'all' })
    expect(parseDsl({ term: { app_id: 'shop' } })).toEqual(eq('app_id', 'shop'))
    expect(parseDsl({ term: { app_id: { value: 'shop', boost: 2 } } })).toEqual(eq('app_id', 'shop'))
    expect(parseDsl({ terms: { app_id: ['a', 2, true] } })).toEqual(eq('app_id', 'a', 2, true))
    expect(parseDsl({ terms: { app_id: [] } })).toEqual({ kind: 'none' })
    expect(parseDsl({ match: { page_title: { query: 'Home' } } })).toEqual(eq('page_title', 'Home'))
    expect(parseDsl({ match_phrase: { page_title: 'Home page' } })).toEqual(eq('page_title', 'Home page'))
    expect(parseDsl({ range: { se_value: { gte: 1, lt: '5' } } })).toEqual({ kind: 'range', field: 'se_value', gte: 1, lt: '5' })
    expect(parseDsl({ exists: { field: 'user_id' } })).toEqual({ kind: 'exists', field: 'user_id' })
    expect(parseDsl({ prefix: { page_url: 'https://' } })).toMatchObject({ kind: 'prefix', field: 'page_url', value: 'https://' })
    expect(parseDsl({ wildcard: { page_url: { value: '*shop*', case_insensitive: true } } })).toMatchObject({ kind: 'wildcard', pattern: '*shop*', caseInsensitive: true })
    expect(parseDsl({ ids: { values: ['a'] } })).toEqual({ kind: 'ids', values: ['a'] })
    expect(parseDsl({ query_string: { query: 'shop', default_field: 'app_id' } })).toEqual(eq('app_id', 'shop'))
    expect(parseDsl({ bool: { must: { term: { a: 1 } }, should: [{ term: { b: 2 } }, { term: { c: 3 } }], minimum_should_match: '50%' } })).toEqual(
      bool({ must: [eq('a', 1)], should: [eq('b', 2), eq('c', 3)], minimumShouldMatch: 1 }),
    )
    expect(parseDsl({ bool: { should: [{ term: { b: 2 } }] } })).toMatchObject({ minimumShouldMatch: 1 })
    expect(parseDsl({ bool: { filter: [{ term: { a: 1 } }], should: [{ term: { b: 2 } }] } })).toMatchObject({ minimumShouldMatch: 0 })
  })

  it('refuses what it does not support, by name', () => {
    expect(refusal(() => parseDsl({ fuzzy: { app_id: 'shop' } })).reason).toMatch(/\[fuzzy\] queries are not supported/)
    expect(refusal(() => parseDsl({ frobnicate: {} })).reason).toBe('unknown query [frobnicate]')
    expect(refusal(() => parseDsl({ term: { a: 1 }, match: { b: 2 } })).reason).toMatch(/malformed/)
    expect(refusal(() => parseDsl({ term: { a: 1, b: 2 } })).reason).toMatch(/multiple fields/)
    expect(refusal(() => parseDsl({ term: { a: null } })).reason).toMatch(/must be a string/)
    expect(refusal(() => parseDsl({ match: { a: { query: 'x', fuzziness: 2 } } })).reason).toMatch(/fuzziness/)
    expect(refusal(() => parseDsl({ range: { a: { from: 1 } } })).reason).toMatch(/from/)
    expect(refusal(() => parseDsl({ bool: { must: [], frob: 1 } })).reason).toMatch(/frob/)
    let deep: unknown = { match_all: {} }
    for (let i = 0; i < 40; i++) deep = { bool: { must: [deep] } }
    expect(refusal(() => parseDsl(deep)).reason).toMatch(/nested deeper/)
  })
})

describe('dates', () => {
  const now = Date.UTC(2025, 4, 15, 13, 45, 30, 500)
  it('reads ISO 8601, epoch milliseconds and date math, rounding as Elasticsearch does', () => {
    expect(parseDate('2025-04-30T10:05:00Z', now, false)).toBe(Date.UTC(2025, 3, 30, 10, 5))
    expect(parseDate('2025-04-30T10:05:00.123+02:00', now, false)).toBe(Date.UTC(2025, 3, 30, 8, 5, 0, 123))
    expect(parseDate(1700000000000, now, false)).toBe(1700000000000)
    expect(parseDate('1700000000000', now, false)).toBe(1700000000000)
    expect(parseDate('now', now, false)).toBe(now)
    expect(parseDate('now-1h', now, false)).toBe(now - 3_600_000)
    expect(parseDate('now/d', now, false)).toBe(Date.UTC(2025, 4, 15))
    expect(parseDate('now/d', now, true)).toBe(Date.UTC(2025, 4, 16) - 1)
    expect(parseDate('now-1M/M', now, false)).toBe(Date.UTC(2025, 3, 1))
    expect(parseDate('now/w', now, false)).toBe(Date.UTC(2025, 4, 12)) // a Monday
    expect(parseDate('2025-01-31||+1M', now, false)).toBe(Date.UTC(2025, 2, 3)) // as JavaScript months overflow
    expect(parseDate('2025-01-01', now, true)).toBe(Date.UTC(2025, 0, 2) - 1) // lte a day: to its end
    expect(parseDate('2025', now, false)).toBe(Date.UTC(2025, 0, 1))
    for (const bad of ['yesterday', 'now+1x', '2025-13-01', '2025-04-30T10:05:00 PST', 'now-']) expect(() => parseDate(bad, now, false), bad).toThrow(Refusal)
  })
})

describe('wildcards', () => {
  it('become LIKE patterns with LIKE’s own characters escaped', () => {
    expect(likePattern('*a_b%c\\?', [true, false, false, false, false, false, false, true])).toBe('%a\\_b\\%c\\\\_')
  })
})
