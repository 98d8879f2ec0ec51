/**
 * Pattern checks have a bounded cost. The linear-time engine is linear in the
 * input, but with the size of the pattern's program as its factor: a pattern
 * such as `(?:a|b|ab|ba|aa){0,500}[^ab][^ab]` (5,504 instructions) took 5 s
 * on one 20,000-character string, and one 800 kB event holding 40 of them
 * stalled a local stack (collector and /health) for 100 s. A check that would
 * cost too much (`PATTERN_CHECK_UNITS`), and the checks of a stream record
 * beyond its time budget (`PATTERN_BUDGET_MS`), are validation errors instead.
 */
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../lib/core/enrich/enrich'
import { ENRICH_PROCESSOR } from '../../../lib/core/enrich/version'
import { compileValidator } from '../../../lib/core/iglu/draft04'
import { PATTERN_CHECK_UNITS } from '../../../lib/core/iglu/regex-engine'
import { MemoryRepository } from '../../../lib/core/iglu/repositories'
import type { Resolver } from '../../../lib/core/iglu/resolver'
import { resolverFromConfig } from '../../../lib/core/iglu/resolver-config'
import { defaultResolverConfig } from '../../../lib/runtime/default-resolver'
import { badRows, batch, only, payload } from '../enrich/helpers'
import { schema } from './helpers'

/** 5,504 instructions, every one of them live at each character of a string of a and b. */
const HEAVY = '(?:a|b|ab|ba|aa){0,500}[^ab][^ab]'
/** 1,434 instructions: a string of 690 characters costs 990,000 units, under the limit of one check. */
const MEDIUM = '(?:a|b|ab|ba|aa){0,130}[^ab][^ab]'
const hostile = (n: number) => `${'ab'.repeat(n / 2)}!`

function withSchema(doc: Record<string, unknown>): Resolver {
  const { config, extra } = defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
  return resolverFromConfig(config, { extra: [new MemoryRepository([doc]), ...extra] })
}

/** A tp2 POST of `events` self-describing events of com.acme/p, each `{a: value}`. */
function post(values: string[]): Buffer {
  const data = values.map((a, i) => ({
    e: 'ue', p: 'web', tv: 'js-3', eid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ue_pr: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/p/jsonschema/1-0-0', data: { a } } }),
  }))
  return payload({
    path: '/com.snowplowanalytics.snowplow/tp2', contentType: 'application/json',
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
  })
}

describe('the cost of pattern checks', () => {
  it('a check that would cost more than the limit is not run: the value is invalid, saying why', () => {
    const fn = compileValidator({ type: 'object', properties: { a: { type: 'string', pattern: HEAVY } } })
    expect(fn({ a: hostile(20_000) })).toBe(false)
    expect(fn.errors).toMatchObject([{ keyword: 'patternBudget', message: expect.stringContaining(`more than the limit of ${PATTERN_CHECK_UNITS}`) }])
    // the same validator still checks what it can afford, and keeps its ordinary errors
    expect(fn({ a: 'ab!!' })).toBe(true)
    expect(fn({ a: 'abab' })).toBe(false)
    expect(fn.errors).toMatchObject([{ keyword: 'pattern' }])
  })

  it('enrich: the checks of one stream record share a time budget; events past it are bad rows that say so', async () => {
    const resolver = withSchema(schema('com.acme', 'p', '1-0-0', { properties: { a: { type: 'string', pattern: MEDIUM } } }))
    // a check of a warm engine takes from 0.03 ms to tens of ms, depending on the machine: the test's clock says 10 ms each
    let t = 0
    const patternClock = () => (t += 5)
    const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, patternBudgetMs: 50, patternClock })
    const values = Array.from({ length: 300 }, (_, i) => `${'ab'.repeat(340)}${i}!`)
    const o = await enricher.enrichRecord(post(values), batch())
    const refused = badRows(o).filter((r) => JSON.stringify(r).includes('already took their limit of 50 ms'))
    // each check costs 990,000 units, under the limit of one check; five checks (some of them of the
    // tracker payload's own short values) spend the budget, and the events past it are refused
    expect(refused.length).toBeGreaterThan(290)
    expect(refused.length + only(o, 'good').length).toBe(300)
    expect(refused[0].data.failure.messages[0]).toMatchObject({ schemaKey: 'iglu:com.acme/p/jsonschema/1-0-0', error: { error: 'ValidationError' } })
  })

  it('enrich: ordinary patterns on long values in a large request are not refused', async () => {
    const resolver = withSchema(schema('com.acme', 'p', '1-0-0', { properties: { a: { type: 'string', pattern: '^https?://[^ ]+$', maxLength: 20_000 } } }))
    const enricher = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
    const values = Array.from({ length: 50 }, (_, i) => `https://example.com/${i}/${'x'.repeat(4_000)}`)
    const o = await enricher.enrichRecord(post(values), batch())
    expect(badRows(o)).toEqual([])
    expect(only(o, 'good')).toHaveLength(50)
  })
})
