import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  collectorPayloadToString,
  decodeCollectorPayload,
  encodeCollectorPayload,
  END_OF_BYTES,
} from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA, type CollectorPayload } from '../../../lib/core/thrift/types'
import { referenceDecode, referenceEncode } from './thrift-reference'

// Snowplow enrich's ThriftLoaderSpec vector "tolerate fake tracker protocol GET parameters".
const V1 =
  'CwBkAAAACTEyNy4wLjAuMQoAyAAAAUOYhqgGCwDSAAAABVVURi04CwDcAAAAEHNzYy0wLjAuMS1TdGRvdXQLASwAAABoTW96aWxsYS81LjAgKFgxMTsgTGludXggeDg2XzY0KSBBcHBsZVdlYktpdC81MzcuMzYgKEtIVE1MLCBsaWtlIEdlY2tvKSBDaHJvbWUvMzEuMC4xNjUwLjYzIFNhZmFyaS81MzcuMzYLAUAAAAACL2kLAUoAAAAYdGVzdFBhcmFtPTMmdGVzdFBhcmFtMj00DwFeCwAAAAgAAAAvQ29va2llOiBzcD1jNWYzYTA5Zi03NWY4LTQzMDktYmVjNS1mZWE1NjBmNzg0NTUAAAAaQWNjZXB0LUxhbmd1YWdlOiBlbi1VUywgZW4AAAAkQWNjZXB0LUVuY29kaW5nOiBnemlwLCBkZWZsYXRlLCBzZGNoAAAAdFVzZXItQWdlbnQ6IE1vemlsbGEvNS4wIChYMTE7IExpbnV4IHg4Nl82NCkgQXBwbGVXZWJLaXQvNTM3LjM2IChLSFRNTCwgbGlrZSBHZWNrbykgQ2hyb21lLzMxLjAuMTY1MC42MyBTYWZhcmkvNTM3LjM2AAAAVkFjY2VwdDogdGV4dC9odG1sLCBhcHBsaWNhdGlvbi94aHRtbCt4bWwsIGFwcGxpY2F0aW9uL3htbDtxPTAuOSwgaW1hZ2Uvd2VicCwgKi8qO3E9MC44AAAAGENhY2hlLUNvbnRyb2w6IG1heC1hZ2U9MAAAABZDb25uZWN0aW9uOiBrZWVwLWFsaXZlAAAAFEhvc3Q6IDEyNy4wLjAuMTo4MDgwCwGQAAAACTEyNy4wLjAuMQsBmgAAACRjNWYzYTA5Zi03NWY4LTQzMDktYmVjNS1mZWE1NjBmNzg0NTULemkAAABBaWdsdTpjb20uc25vd3Bsb3dhbmFseXRpY3Muc25vd3Bsb3cvQ29sbGVjdG9yUGF5bG9hZC90aHJpZnQvMS0wLTAA'

const V1_PAYLOAD: CollectorPayload = {
  schema: COLLECTOR_PAYLOAD_SCHEMA,
  ipAddress: '127.0.0.1',
  timestamp: 1389833398278,
  encoding: 'UTF-8',
  collector: 'ssc-0.0.1-Stdout',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/31.0.1650.63 Safari/537.36',
  path: '/i',
  querystring: 'testParam=3&testParam2=4',
  headers: [
    'Cookie: sp=c5f3a09f-75f8-4309-bec5-fea560f78455',
    'Accept-Language: en-US, en',
    'Accept-Encoding: gzip, deflate, sdch',
    'User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/31.0.1650.63 Safari/537.36',
    'Accept: text/html, application/xhtml+xml, application/xml;q=0.9, image/webp, */*;q=0.8',
    'Cache-Control: max-age=0',
    'Connection: keep-alive',
    'Host: 127.0.0.1:8080',
  ],
  hostname: '127.0.0.1',
  networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
}

const FULL: CollectorPayload = {
  schema: COLLECTOR_PAYLOAD_SCHEMA,
  ipAddress: '203.0.113.7',
  timestamp: 1745998200123,
  encoding: 'UTF-8',
  collector: 'floe-0.1.0-kinesis',
  userAgent: 'node',
  refererUri: 'https://example.com/ä?x=1',
  path: '/com.snowplowanalytics.snowplow/tp2',
  querystring: 'a=1&b=%20',
  body: '{"schema":"iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4","data":[{"e":"pv","page":"héllo ✓"}]}',
  headers: ['Host: collector.example.com', 'Content-Type: application/json; charset=UTF-8', 'application/json; charset=utf-8'],
  contentType: 'application/json; charset=utf-8',
  hostname: 'collector.example.com',
  networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
}

function decodeOk(bytes: Uint8Array) {
  const r = decodeCollectorPayload(bytes)
  if (!r.ok) throw new Error(r.error)
  return r.payload
}

describe('CollectorPayload Thrift codec', () => {
  it('decodes the spec vector field by field', () => {
    expect(decodeOk(Buffer.from(V1, 'base64'))).toEqual(V1_PAYLOAD)
  })

  it('re-encodes the spec vector to the same bytes (ascending field ids, like generated Java code)', () => {
    expect(encodeCollectorPayload(V1_PAYLOAD).toString('base64')).toBe(V1)
  })

  it('starts with string field 100 (base64 CwBk) and ends with the schema field then the stop byte', () => {
    const bytes = encodeCollectorPayload(FULL)
    expect(bytes.toString('base64').startsWith('CwBk')).toBe(true)
    expect([...bytes.subarray(0, 3)]).toEqual([0x0b, 0x00, 0x64])
    const tail = Buffer.concat([Buffer.from([0x0b, 0x7a, 0x69]), Buffer.alloc(4), Buffer.from(COLLECTOR_PAYLOAD_SCHEMA), Buffer.from([0])])
    tail.writeInt32BE(COLLECTOR_PAYLOAD_SCHEMA.length, 3)
    expect(bytes.subarray(bytes.length - tail.length).equals(tail)).toBe(true)
  })

  it('round-trips every field, including UTF-8 text and a 64-bit timestamp', () => {
    const decoded = decodeOk(encodeCollectorPayload(FULL))
    for (const key of Object.keys(FULL) as (keyof CollectorPayload)[]) expect(decoded[key], key).toEqual(FULL[key])
    expect(decoded).toEqual(FULL)
  })

  it('omits absent optional fields', () => {
    const minimal: CollectorPayload = { schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: 'unknown', timestamp: 0, encoding: 'UTF-8', collector: 'c' }
    const decoded = decodeOk(encodeCollectorPayload(minimal))
    expect(decoded).toEqual(minimal)
    expect(Object.keys(decoded).sort()).toEqual(Object.keys(minimal).sort())
  })

  it('agrees with a reader built on the thrift package', () => {
    for (const bytes of [Buffer.from(V1, 'base64'), encodeCollectorPayload(FULL)]) {
      expect(referenceDecode(bytes)).toEqual(decodeOk(bytes))
    }
  })

  it('accepts fields in any order and skips unknown ids of every type', () => {
    const w: Buffer[] = []
    const str = (id: number, s: string) => {
      const b = Buffer.alloc(7)
      b.writeInt8(11, 0)
      b.writeInt16BE(id, 1)
      b.writeInt32BE(Buffer.byteLength(s), 3)
      w.push(b, Buffer.from(s))
    }
    str(31337, COLLECTOR_PAYLOAD_SCHEMA)
    str(410, 'nuid')
    // unknown: i32 id 5, struct id 6 holding a double, map<string,i16> id 7, set<bool> id 8, i16 id 9, byte id 10
    w.push(Buffer.from([8, 0, 5, 0, 0, 0, 42]))
    w.push(Buffer.from([12, 0, 6, 4, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0]))
    w.push(Buffer.from([13, 0, 7, 11, 6, 0, 0, 0, 1, 0, 0, 0, 1, 0x61, 0, 9]))
    w.push(Buffer.from([14, 0, 8, 2, 0, 0, 0, 2, 1, 0]))
    w.push(Buffer.from([6, 0, 9, 0, 1, 3, 0, 10, 7]))
    // known id with the wrong type (path as i32) is skipped
    w.push(Buffer.from([8, 0x01, 0x40, 0, 0, 0, 1]))
    str(100, '10.0.0.1')
    const ts = Buffer.alloc(11)
    ts.writeInt8(10, 0)
    ts.writeInt16BE(200, 1)
    ts.writeBigInt64BE(1389833398278n, 3)
    w.push(ts, Buffer.from([0]), Buffer.from('trailing bytes are ignored'))
    expect(decodeOk(Buffer.concat(w))).toEqual({ schema: COLLECTOR_PAYLOAD_SCHEMA, networkUserId: 'nuid', ipAddress: '10.0.0.1', timestamp: 1389833398278 })
  })

  it('reports errors as data with the messages enrich gives', () => {
    expect(decodeCollectorPayload(Buffer.from('nonsense'))).toEqual({ ok: false, error: 'Unrecognized type 110' })
    expect(decodeCollectorPayload(Buffer.alloc(0))).toEqual({ ok: false, error: END_OF_BYTES })
    expect(END_OF_BYTES).toBe('Reached end of bytes when parsing as thrift format')
    const bytes = encodeCollectorPayload(FULL)
    for (const cut of [1, 2, 3, 10, 100, bytes.length - 1]) {
      expect(decodeCollectorPayload(bytes.subarray(0, cut))).toEqual({ ok: false, error: END_OF_BYTES })
    }
    expect(decodeCollectorPayload(Buffer.from([11, 0, 100, 0xff, 0xff, 0xff, 0xff]))).toEqual({ ok: false, error: 'Negative length: -1' })
    expect(decodeCollectorPayload(Buffer.from([0xf0, 0, 1]))).toEqual({ ok: false, error: 'Unrecognized type -16' })
    expect(decodeCollectorPayload(Buffer.alloc(64 * 3 + 10, Buffer.from([12, 0, 1])))).toEqual({ ok: false, error: 'Maximum skip depth exceeded' })
  })

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const r = decodeCollectorPayload(bytes)
        expect(typeof r.ok).toBe('boolean')
        if (!r.ok) expect(r.error.length).toBeGreaterThan(0)
      }),
      { numRuns: 3000 },
    )
  })

  it('never throws on mutated valid payloads', () => {
    const valid = encodeCollectorPayload(FULL)
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
        const bytes = Buffer.from(valid)
        for (const [i, v] of edits) bytes[i] = v
        const r = decodeCollectorPayload(bytes)
        expect(typeof r.ok).toBe('boolean')
      }),
      { numRuns: 3000 },
    )
  })

  it('round-trips arbitrary payloads', () => {
    const opt = fc.option(fc.string({ unit: 'grapheme' }), { nil: undefined })
    const payload = fc.record({
      schema: fc.constant(COLLECTOR_PAYLOAD_SCHEMA),
      ipAddress: fc.string(),
      timestamp: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      encoding: fc.constant('UTF-8'),
      collector: fc.string(),
      userAgent: opt,
      refererUri: opt,
      path: opt,
      querystring: opt,
      body: opt,
      headers: fc.option(fc.array(fc.string({ unit: 'grapheme' })), { nil: undefined }),
      contentType: opt,
      hostname: opt,
      networkUserId: opt,
    })
    fc.assert(
      fc.property(payload, (p) => {
        const clean = Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined))
        expect(decodeOk(encodeCollectorPayload(p as CollectorPayload))).toEqual(clean)
      }),
      { numRuns: 500 },
    )
  })

  it('writes the same bytes as the thrift package, for arbitrary payloads and any UTF-16 text', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }))
    const opt = fc.option(text, { nil: undefined })
    const payload = fc.record({
      schema: fc.constant(COLLECTOR_PAYLOAD_SCHEMA),
      ipAddress: opt,
      timestamp: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { nil: undefined }),
      encoding: opt,
      collector: opt,
      userAgent: opt,
      refererUri: opt,
      path: opt,
      querystring: opt,
      body: opt,
      headers: fc.option(fc.array(text), { nil: undefined }),
      contentType: opt,
      hostname: opt,
      networkUserId: opt,
    })
    fc.assert(
      fc.property(payload, (p) => {
        const c = p as CollectorPayload
        expect(encodeCollectorPayload(c).equals(referenceEncode(c))).toBe(true)
      }),
      { numRuns: 1000 },
    )
    expect(encodeCollectorPayload(FULL).equals(referenceEncode(FULL))).toBe(true)
    expect(encodeCollectorPayload(V1_PAYLOAD).equals(referenceEncode(V1_PAYLOAD))).toBe(true)
  })

  it('renders payloads like Thrift toString', () => {
    expect(collectorPayloadToString({ schema: 's', ipAddress: 'i', timestamp: 1, encoding: 'UTF-8', collector: 'c', path: '/i', headers: ['a: b', 'c: d'] })).toBe(
      'CollectorPayload(schema:s, ipAddress:i, timestamp:1, encoding:UTF-8, collector:c, path:/i, headers:[a: b, c: d])',
    )
  })
})
