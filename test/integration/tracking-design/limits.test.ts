/**
 * Hostile bodies against the tracking-design API on DynamoDB Local: every
 * answer is a 4xx in the API's envelope, and nothing is stored half-way.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_BODY_BYTES, MAX_BODY_DEPTH, jsonTextDepth } from '../../../lib/core/tracking-design/service'
import { MAX_NAME_LENGTH } from '../../../lib/core/tracking-design/validate'
import { useTenant } from './helpers'

const { t } = useTenant({})

const envelopeOk = (body: any) => Array.isArray(body?.data) && Array.isArray(body?.includes) && Array.isArray(body?.errors)

async function nothingStored() {
  const list = await t.api('GET', '/event-specs/v1')
  expect(list.status).toBe(200)
  return list.body.data.length as number
}

describe('tracking-design API: limits', () => {
  it('a body over the limit is a 413, a too deep one a 422, a too long name a 422 at spec.name; nothing is stored', async () => {
    const before = await nothingStored()
    const big = await t.api('POST', '/event-specs/v1', { spec: { name: 'big', description: 'x'.repeat(5 * 1024 * 1024) } })
    expect(big.status).toBe(413)
    expect(big.body.errors[0]).toMatchObject({ type: 'Error', code: 'PayloadTooLarge', source: 'body' })
    expect(big.body.errors[0].title).toContain(`at most ${MAX_BODY_BYTES}`)

    const deep = `{"spec":{"name":"deep","description":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
    const nested = await t.api('POST', '/event-specs/v1', deep)
    expect(nested.status).toBe(422)
    expect(nested.body.errors[0]).toMatchObject({ type: 'Error', code: 'InvalidValue', source: 'body' })
    expect(nested.body.errors[0].title).toContain(`at most ${MAX_BODY_DEPTH}`)

    const long = await t.api('POST', '/event-specs/v1', { spec: { name: 'n'.repeat(3000) } })
    expect(long.status).toBe(422)
    expect(long.body.errors[0]).toMatchObject({ code: 'InvalidValue', source: 'spec.name' })
    expect(long.body.errors[0].title).toContain(`at most ${MAX_NAME_LENGTH}`)
    expect(await nothingStored()).toBe(before)
  })

  it('the largest accepted body is stored and read back', async () => {
    const description = 'd'.repeat(MAX_BODY_BYTES - 200)
    const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'large but fine', description } })
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(201)
    const read = await t.api('GET', `/event-specs/v1/${created.body.data[0].id}`)
    expect(read.body.data[0].description).toBe(description)
  })

  it('property: any JSON value or text as the body of every endpoint that takes one is a 2xx or 4xx in the envelope, never a 5xx', async () => {
    const json = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.record({ spec: fc.jsonValue({ maxDepth: 3 }), message: fc.jsonValue({ maxDepth: 1 }) }), fc.record({ spec: fc.record({ name: fc.string({ unit: 'binary', maxLength: 30 }), version: fc.jsonValue({ maxDepth: 1 }), status: fc.string(), event: fc.jsonValue({ maxDepth: 3 }), entities: fc.jsonValue({ maxDepth: 3 }) }) }))
    const body = fc.oneof(json.map((v) => JSON.stringify(v)), fc.string({ unit: 'binary', maxLength: 80 }))
    const endpoint = fc.constantFrom(['POST', '/event-specs/v1'], ['POST', '/event-specs/v1/compatibility'], ['POST', '/event-specs/v1/publish'], ['POST', '/data-products/v2'], ['POST', '/source-apps/v1'], ['PUT', '/event-specs/v1/00000000-0000-4000-8000-000000000000'])
    await fc.assert(fc.asyncProperty(endpoint, body, async ([method, path], b) => {
      const res = await t.api(method!, path!, b)
      expect(res.status, `${method} ${path} ${b.slice(0, 100)} → ${res.text?.slice(0, 200)}`).toBeLessThan(500)
      if (res.status >= 400) expect(envelopeOk(res.body), res.text).toBe(true)
    }), { numRuns: 60 })
  })
})

describe('jsonTextDepth', () => {
  it('counts nesting outside strings only', () => {
    expect(jsonTextDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3)
    expect(jsonTextDepth('"\\"[["')).toBe(0)
    expect(jsonTextDepth('[]')).toBe(1)
  })
})
