import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileSelfDescribing, readSchema } from '../../../lib/core/collector/config'
import { handleCollectorRequest } from '../../../lib/core/collector/service'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import type { HttpRequest } from '../../../lib/http/types'
import { config, NOW, TP2_SCHEMA, uuids } from './helpers'

const validateBadRow = compileSelfDescribing(readSchema('com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0'))

const segment = fc.oneof(fc.constantFrom('i', 'ice.png', 'r', 'tp2', 'com.snowplowanalytics.snowplow', 'health', 'sink-health', 'robots.txt', 'crossdomain.xml', ''), fc.string({ maxLength: 12 }))
const path = fc.array(segment, { maxLength: 4 }).map((s) => `/${s.join('/')}`)
const headerName = fc.constantFrom('origin', 'cookie', 'sp-anonymous', 'x-forwarded-for', 'content-type', 'host', 'user-agent', 'referer', 'x-forwarded-proto', 'x-custom')
const body = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.array(fc.dictionary(fc.constantFrom('e', 'eid', 'page', 'p'), fc.string({ maxLength: 400 })), { maxLength: 12 }).map((data) => JSON.stringify({ schema: TP2_SCHEMA, data })),
)
const requestArb: fc.Arbitrary<HttpRequest> = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE'),
  path,
  headers: fc.dictionary(headerName, fc.string({ maxLength: 40 })),
  query: fc.dictionary(fc.constantFrom('nuid', 'u', 'n3pc', 'e', 'x'), fc.string({ maxLength: 40 })),
  rawQuery: fc.string({ maxLength: 60 }),
  cookies: fc.array(fc.string({ maxLength: 40 }), { maxLength: 3 }),
  body: body.map((b) => Buffer.from(b)),
  sourceIp: fc.constantFrom('127.0.0.1', '', '::1'),
  params: fc.constant({}),
  timeEpochMs: fc.constant(NOW),
})
const configs = [
  config(),
  config({ enableDefaultRedirect: true, redirectDomains: ['a.com'], cookieBounce: { enabled: true }, doNotTrackCookie: { enabled: true, name: 'dnt', value: '.*' }, streams: { maxBytes: 1500 } }),
  config({ paths: { '/com.acme/t': '/r/tp2' }, rootResponse: { enabled: true }, crossDomain: { enabled: true }, cookie: { domains: ['a.com'], clientCookieName: 'c' }, streams: { maxBytes: 1000, useIpAddressAsPartitionKey: true } }),
]

describe('collector on arbitrary requests', () => {
  it('never throws; answers a sane status; every record decodes, fits, and bad rows validate', () => {
    fc.assert(
      fc.property(requestArb, fc.constantFrom(0, 1, 2), (req, c) => {
        const cfg = configs[c]!
        const out = handleCollectorRequest(req, cfg, NOW, uuids())
        expect([200, 302, 400, 404, 413]).toContain(out.response.statusCode)
        if (out.response.statusCode !== 200 && out.response.statusCode !== 302 && out.response.statusCode !== 400) expect(out.records).toEqual([])
        for (const r of out.records) {
          expect(r.partitionKey.length).toBeGreaterThan(0)
          if (r.stream === 'raw') {
            expect(r.data.length).toBeLessThan(cfg.streams.maxBytes)
            const d = decodeCollectorPayload(r.data)
            expect(d.ok).toBe(true)
          } else {
            const row = JSON.parse(r.data.toString('utf8'))
            expect(validateBadRow(row.data)).toBe(true)
          }
        }
      }),
      { numRuns: 2000 },
    )
  })
})
