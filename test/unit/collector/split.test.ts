import { describe, expect, it } from 'vitest'
import { compileSelfDescribing, readSchema } from '../../../lib/core/collector/config'
import { handleCollectorRequest } from '../../../lib/core/collector/service'
import { instantString, SIZE_VIOLATION_SCHEMA, splitAndSerialize } from '../../../lib/core/collector/split'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA, type CollectorPayload } from '../../../lib/core/thrift/types'
import { badRows, config, NOW, rawPayloads, request, TP2_SCHEMA, uuids } from './helpers'

const validateSizeViolation = compileSelfDescribing(readSchema('com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0'))
function expectValidBadRow(row: any) {
  expect(row.schema).toBe(SIZE_VIOLATION_SCHEMA)
  const ok = validateSizeViolation(row.data)
  expect(validateSizeViolation.errors ?? []).toEqual([])
  expect(ok).toBe(true)
}

const event = (i: number, pad: number) => ({ e: 'pv', eid: `id-${i}`, page: 'x'.repeat(pad), p: 'web', tv: 'js-4.10.1' })
const postOf = (data: unknown, maxBytes: number) =>
  handleCollectorRequest(
    request({
      method: 'POST',
      path: '/com.snowplowanalytics.snowplow/tp2',
      headers: { host: 'c', 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ schema: TP2_SCHEMA, data })),
    }),
    config({ streams: { maxBytes } }),
    NOW,
    uuids(),
  )

describe('size limits', () => {
  it('a payload under the limit is one record', () => {
    const out = postOf([event(1, 10)], 5000)
    expect(out.records).toHaveLength(1)
  })

  it('a POST batch over the limit is split into records under the limit, every event kept once, in order', () => {
    const events = Array.from({ length: 40 }, (_, i) => event(i, 100 + i * 7))
    const out = postOf(events, 2000)
    expect(out.response).toMatchObject({ statusCode: 200, body: 'ok' })
    expect(out.records.every((r) => r.stream === 'raw')).toBe(true)
    expect(out.records.length).toBeGreaterThan(3)
    for (const r of out.records) expect(r.data.length).toBeLessThan(2000)
    const payloads = rawPayloads(out)
    const seen = payloads.flatMap((p) => {
      const body = JSON.parse(p.body!)
      expect(body.schema).toBe(TP2_SCHEMA)
      expect(p.path).toBe('/com.snowplowanalytics.snowplow/tp2')
      expect(p.networkUserId).toBe(payloads[0]!.networkUserId)
      return body.data
    })
    expect(seen).toEqual(events)
    // one partition key for the whole request
    expect(new Set(out.records.map((r) => r.partitionKey)).size).toBe(1)
  })

  it('splits use the space well: no two consecutive parts would fit together', () => {
    const events = Array.from({ length: 30 }, (_, i) => event(i, 150))
    const out = postOf(events, 3000)
    const sizes = out.records.map((r) => r.data.length)
    for (let i = 1; i < sizes.length; i++) expect(sizes[i - 1]! + 200).toBeGreaterThan(3000)
  })

  it('a single event too large on its own becomes a size_violation; the rest are kept; still 200', () => {
    const events = [event(1, 50), event(2, 5000), event(3, 50)]
    const out = postOf(events, 2000)
    expect(out.response.statusCode).toBe(200)
    const kept = rawPayloads(out).flatMap((p) => JSON.parse(p.body!).data)
    expect(kept).toEqual([events[0], events[2]])
    const bad = badRows(out)
    expect(bad).toHaveLength(1)
    expectValidBadRow(bad[0])
    expect(bad[0].data.failure).toMatchObject({
      timestamp: '2025-04-30T10:00:00Z',
      maximumAllowedSizeBytes: 2000,
      expectation: 'oversized collector payload: this POST request split is still too large',
    })
    expect(bad[0].data.failure.actualSizeBytes).toBeGreaterThan(5000)
    expect(bad[0].data.processor).toEqual({ artifact: 'floe-collector', version: '0.1.0' })
    expect(bad[0].data.payload.length).toBeLessThanOrEqual(200)
    expect(bad[0].data.payload.startsWith('CollectorPayload(schema:iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-0')).toBe(true)
    const badRecord = out.records.find((r) => r.stream === 'bad')!
    expect(badRecord.partitionKey).toBe(out.records[0]!.partitionKey)
  })

  it('a GET over the limit cannot be split', () => {
    const out = handleCollectorRequest(request({ rawQuery: `e=pv&page=${'x'.repeat(3000)}` }), config({ streams: { maxBytes: 2000 } }), NOW, uuids())
    expect(out.response.statusCode).toBe(200)
    expect(rawPayloads(out)).toEqual([])
    const [bad] = badRows(out)
    expectValidBadRow(bad)
    expect(bad.data.failure.expectation).toBe('oversized collector payload: GET requests cannot be split')
    expect(bad.data.failure.actualSizeBytes).toBeGreaterThan(3000)
  })

  it('POST bodies that are not a self-describing array cannot be split', () => {
    const cases: [string, string][] = [
      ['x'.repeat(3000), 'cannot split POST requests which are not json'],
      [JSON.stringify({ data: ['x'.repeat(3000)] }), 'cannot split POST requests which are not self-describing'],
      [JSON.stringify({ schema: TP2_SCHEMA, data: { big: 'x'.repeat(3000) } }), 'cannot split POST requests whose data is not an array'],
    ]
    for (const [body, reason] of cases) {
      const out = handleCollectorRequest(
        request({ method: 'POST', path: '/com.acme/v1', body: Buffer.from(body) }),
        config({ streams: { maxBytes: 2000 } }),
        NOW,
        uuids(),
      )
      const rows = badRows(out)
      expect(rows).toHaveLength(1)
      expectValidBadRow(rows[0])
      expect(rows[0].data.failure.expectation).toBe(`oversized collector payload: ${reason}`)
    }
  })

  it('the envelope alone too big', () => {
    const p: CollectorPayload = {
      schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: 'i', timestamp: NOW, encoding: 'UTF-8', collector: 'c',
      userAgent: 'u'.repeat(3000), body: JSON.stringify({ schema: TP2_SCHEMA, data: [1, 2] }),
    }
    const r = splitAndSerialize(p, 2000, NOW)
    expect(r.good).toEqual([])
    expect(r.bad[0]!.data.failure.expectation).toBe('oversized collector payload: cannot split this POST request because event without "data" field is still too big')
    expect(r.bad[0]!.data.failure.actualSizeBytes).toBe(encodeCollectorPayload(p).length)
  })

  it('default limit: a ~1.5 MB batch of small events is split under 1,000,000 bytes per record', () => {
    const events = Array.from({ length: 3000 }, (_, i) => event(i, 450))
    const out = postOf(events, 1_000_000)
    expect(out.records.length).toBe(2)
    for (const r of out.records) expect(r.data.length).toBeLessThan(1_000_000)
    expect(rawPayloads(out).flatMap((p) => JSON.parse(p.body!).data)).toHaveLength(3000)
  })

  it('instants render like java.time.Instant', () => {
    expect(instantString(Date.UTC(2025, 3, 30, 10, 5))).toBe('2025-04-30T10:05:00Z')
    expect(instantString(Date.UTC(2025, 3, 30, 10, 5, 0, 120))).toBe('2025-04-30T10:05:00.120Z')
  })

  it('the schema rejects malformed bad rows', () => {
    expect(validateSizeViolation({ processor: { artifact: 'a', version: 'v' }, failure: { timestamp: 'yesterday', maximumAllowedSizeBytes: 1, actualSizeBytes: 2, expectation: 'e' }, payload: 'p' })).toBe(false)
    expect(validateSizeViolation({ processor: { artifact: 'a', version: 'v' }, failure: { timestamp: '2025-04-30T10:05:00Z', maximumAllowedSizeBytes: 1, actualSizeBytes: 2, expectation: 'e' } })).toBe(false)
  })
})
