/**
 * Behaviour that must agree with Snowplow enrich 6.10 case for case, each
 * block from the corresponding Snowplow spec's cases.
 */
import { describe, expect, it } from 'vitest'
import { adapt, type AdapterResult } from '../../../lib/core/enrich/adapters'
import { parseErrorMessage, parseJson } from '../../../lib/core/enrich/json'
import { extractIpAddress, fromDecoded } from '../../../lib/core/enrich/payload'
import { parseUri } from '../../../lib/core/enrich/uri'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { badRows, payload, resolver, run } from './helpers'

describe('forwarded headers (IpAddressExtractorSpec)', () => {
  const fb = '255.255.255.255'
  const cases: [string, string[], string][] = [
    ['no headers', [], fb],
    ['no X-Forwarded-For header', ['Accept-Charset: utf-8', 'Connection: keep-alive'], fb],
    ['unparseable X-Forwarded-For', ['X-Forwarded-For: localhost'], fb],
    ['good X-Forwarded-For', ['Accept-Charset: utf-8', 'X-Forwarded-For: 129.78.138.66, 129.78.64.103', 'Connection: keep-alive'], '129.78.138.66'],
    ['oddly capitalized name', ['Accept-Charset: utf-8', 'x-FoRwaRdeD-FOr: 129.78.138.66, 129.78.64.103', 'Connection: keep-alive'], '129.78.138.66'],
    ['all colons: fifteen tokens at most', ['X-Forwarded-For: ' + ':'.repeat(30)], ':'.repeat(15)],
    ['extra characters after an IPv4 address', ['X-Forwarded-For: 129.78.138.66abcdefg'], '129.78.138.66'],
    ['extra characters after an IPv6 address', ['X-Forwarded-For: 2001:0db8:85a3:0000:0000:8a2e:0370:7334abcdefg'], '2001:0db8:85a3:0000:0000:8a2e:0370:'],
    ['IPv6', ['X-Forwarded-For: 2001:0db8:85a3:0000:0000:8a2e:0370:7334'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['quoted IPv6', ['X-Forwarded-For: "[2001:0db8:85a3:0000:0000:8a2e:0370:7334]"'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['IPv4 in Forwarded', ['Forwarded: for=129.78.138.66, 129.78.64.103'], '129.78.138.66'],
    ['unquoted IPv6 in Forwarded', ['Forwarded: for=2001:0db8:85a3:0000:0000:8a2e:0370:7334, for=129.78.138.56'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['quoted IPv6 in Forwarded', ['Forwarded: for="[2001:0db8:85a3:0000:0000:8a2e:0370:7334]", "129.78.128.66"'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['X-Forwarded-For before Forwarded', ['Forwarded: for=2.2.2.2', 'X-Forwarded-For: 1.1.1.1'], '1.1.1.1'],
    ['port removed (IPv4)', ['X-Forwarded-For: 1.1.1.1:8080'], '1.1.1.1'],
    ['port removed (IPv6)', ['X-Forwarded-For: [1fff:0:a88:85a3::ac1f]:8001'], '1fff:0:a88:85a3::ac1f'],
    ['oversized invalid value', ['X-Forwarded-For: ' + 'a'.repeat(1_000_000)], fb],
  ]
  it.each(cases)('%s', (_, headers, expected) => {
    expect(extractIpAddress(headers, fb)).toBe(expected)
  })

  it('on malformed values, gives what the rule gives', () => {
    // a hex group longer than four digits is not a token; a dotted quad needs four numbers
    expect(extractIpAddress(['X-Forwarded-For: 12345'], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For: 1.2.3'], fb)).toBe('1.2.3')
    expect(extractIpAddress(['X-Forwarded-For: 999.1.1.1'], fb)).toBe('999.1.1.1')
    expect(extractIpAddress(['X-Forwarded-For: ::ffff:1.2.3.4'], fb)).toBe('::ffff:1.2.3.4')
    expect(extractIpAddress(['X-Forwarded-For: beef_1'], fb)).toBe(fb)
    // exactly one space after the colon
    expect(extractIpAddress(['X-Forwarded-For:  1.2.3.4'], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For:1.2.3.4'], fb)).toBe(fb)
    expect(extractIpAddress(['Forwarded: for= 1.2.3.4'], fb)).toBe(fb)
    // a line break anywhere means no match
    expect(extractIpAddress(['X-Forwarded-For: 1.2.3.4\r\nX: y'], fb)).toBe(fb)
    // a Forwarded address is forgotten when a later header does not match
    expect(extractIpAddress(['Forwarded: for=2.2.2.2', 'Host: a'], fb)).toBe(fb)
    expect(extractIpAddress(['Host: a', 'Forwarded: for=2.2.2.2'], fb)).toBe('2.2.2.2')
    expect(extractIpAddress(['Forwarded: for=2.2.2.2', 'X-Forwarded-For: unknown'], fb)).toBe(fb)
  })
})

describe('redirects (SnowplowAdapterSpec, Redirect cases)', () => {
  const redirect = async (qs: string): Promise<AdapterResult> => {
    const d = decodeCollectorPayload(payload({ path: '/r/tp2', querystring: qs }))
    if (!d.ok) throw new Error('not decoded')
    const l = fromDecoded((d as { payload: Parameters<typeof fromDecoded>[0] }).payload)
    if (!l.ok) throw new Error('not loaded')
    return adapt(l.payload, { resolver, maxJsonDepth: 50 })
  }
  const params = (r: AdapterResult) => {
    if (!r.ok) throw new Error(JSON.stringify(r))
    return Object.fromEntries(r.events[0]!.parameters)
  }
  const U = 'u=https%3A%2F%2Fgithub.com%2Fsnowplow%2Fsnowplow'
  const ENTITY = '{"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0","data":{"uri":"https://github.com/snowplow/snowplow"}}'
  const CONTEXTS = '{"data":[{"data":{"osType":"OSX","deviceModel":"large"},"schema":"iglu:com.snowplowanalytics.snowplow/mobile_context/jsonschema/1-0-0"},{"data":{"longitude":10,"altitudeAccuracy":0.3,"latitude":7},"schema":"iglu:com.snowplowanalytics.snowplow/geolocation_context/jsonschema/1-0-0"}],"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0"}'
  const MERGED = CONTEXTS.replace('"data":[', `"data":[${ENTITY},`)

  it('an empty co gets a new contexts array (e13)', async () => {
    expect(params(await redirect(`${U}&e=se&aid=ads&co=`)).co).toBe(`{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[${ENTITY}]}`)
  })
  it('unencoded contexts get the entity first, numbers as written (e14)', async () => {
    expect(params(await redirect(`${U}&e=se&co=${encodeURIComponent(CONTEXTS)}`))).toEqual({ e: 'se', tv: 'r-tp2', p: 'web', co: MERGED })
  })
  it('Base64 contexts get the entity first, re-encoded (e15)', async () => {
    const cx = Buffer.from(CONTEXTS).toString('base64url')
    expect(params(await redirect(`${U}&e=se&cx=${cx}&p=web`))).toEqual({ e: 'se', tv: 'r-tp2', p: 'web', cx: Buffer.from(MERGED).toString('base64url') })
  })
  it('cx wins over co when both are there', async () => {
    const cx = Buffer.from(CONTEXTS).toString('base64url')
    const out = params(await redirect(`${U}&e=se&co=${encodeURIComponent('{"data":[]}')}&cx=${cx}`))
    expect(out.cx).toBe(Buffer.from(MERGED).toString('base64url'))
    expect(out.co).toBe('{"data":[]}')
  })
  it('empty query string (e16) and no u (e17)', async () => {
    expect(await redirect('')).toEqual({ ok: false, badRow: 'tracker_protocol_violations', messages: [{ field: 'querystring', value: null, expectation: 'empty querystring: not a valid URI redirect' }] })
    expect(await redirect('aid=test')).toEqual({ ok: false, badRow: 'tracker_protocol_violations', messages: [{ field: 'querystring', value: 'aid=test', expectation: 'missing `u` parameter: not a valid URI redirect' }] })
  })
  it('corrupt co is refused by the adapter, naming co|cx (e18)', async () => {
    expect(await redirect(`${U}&e=se&co=${encodeURIComponent('{[-')}`)).toEqual({
      ok: false, badRow: 'tracker_protocol_violations', messages: [{ field: 'co|cx', value: '{[-', error: `invalid json: expected " got '[-' (line 1, column 2)` }],
    })
  })
  it('corrupt cx is refused with the decoded text (e19)', async () => {
    expect(await redirect(`${U}&e=se&cx=${encodeURIComponent('¢¢¢')}`)).toEqual({
      ok: false, badRow: 'tracker_protocol_violations', messages: [{ field: 'co|cx', value: '', error: 'invalid json: exhausted input' }],
    })
  })
  it('u without a value is reported as u=null (e20)', async () => {
    expect(await redirect('u&cx=dGVzdHRlc3R0ZXN0')).toEqual({
      ok: false, badRow: 'tracker_protocol_violations', messages: [{ field: 'querystring', value: 'u=null&cx=dGVzdHRlc3R0ZXN0', expectation: 'missing `u` parameter: not a valid URI redirect' }],
    })
  })
  it('through enrich: a tracker_protocol_violations bad row for /r/tp2', async () => {
    const [row] = badRows(await run(payload({ path: '/r/tp2', querystring: `${U}&e=pv&co=%7Bnot-json` })))
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/tracker_protocol_violations/jsonschema/1-0-1')
    expect(row.data.failure.messages).toEqual([{ field: 'co|cx', value: '{not-json', error: `invalid json: expected " got 'not-js...' (line 1, column 2)` }])
  })
})

describe('JSON parse errors in the parser\'s words (JsonUtilsSpec, adapter specs)', () => {
  const message = (text: string) => {
    const r = parseJson(text)
    if (r.ok) throw new Error('parsed')
    return r.error
  }
  it.each([
    ['{test:', `invalid json: expected " got 'test:' (line 1, column 2)`],
    ['{[-', `invalid json: expected " got '[-' (line 1, column 2)`],
    ['{"email": some"}', `invalid json: expected json value got 'some"}' (line 1, column 11)`],
    ['{"a" some"}', `invalid json: expected : got 'some"}' (line 1, column 6)`],
    ['body', 'invalid json: expected json value got \'body\' (line 1, column 1)'],
    ['kind":"x"}', `invalid json: expected json value got 'kind":...' (line 1, column 1)`],
    ['', 'invalid json: exhausted input'],
    ['{"a":', 'invalid json: exhausted input'],
    ['[1,2', 'invalid json: exhausted input'],
    ['"\u0000"'.replace('\\u0000', '\u0000'), `invalid json: control char (0) in string got '\u0000...' (line 1, column 2)`],
    ['[1 2]', `invalid json: expected ] or , got '2]' (line 1, column 4)`],
    ['{"a":1 "b"}', `invalid json: expected } or , got '"b"}' (line 1, column 8)`],
    ['[1,]', `invalid json: expected json value got ']' (line 1, column 4)`],
    ['{"a":1,}', `invalid json: expected " got '}' (line 1, column 8)`],
    ['[-]', `invalid json: expected digit got '-]' (line 1, column 2)`],
    ['1.', 'invalid json: exhausted input'],
    ['[1.e5]', `invalid json: expected digit got '1.e5]' (line 1, column 2)`],
    ['tru', 'invalid json: exhausted input'],
    ['[trux]', `invalid json: expected true got 'trux]' (line 1, column 2)`],
    ['{}x', `invalid json: expected whitespace or eof got 'x' (line 1, column 3)`],
    ['{\n  "a": x\n}', `invalid json: expected json value got 'x\n}' (line 2, column 8)`],
    ['["\\q"]', `invalid json: illegal escape sequence (\\q) got '\\...' (line 1, column 3)`],
    ['["\\u12g4"]', `invalid json: expected valid unicode escape got '12g4"]' (line 1, column 5)`],
    ['["\\u12é4"]', 'invalid json: exhausted input'],
  ])('%j', (text, expected) => {
    expect(message(text)).toBe(expected)
  })
  it('falls back to the other message for text only one parser refuses', () => {
    expect(parseErrorMessage('{}', 'fallback')).toBe('fallback')
  })
})

describe('URLs a strict parser refuses (StringToUriSpec)', () => {
  const text = (url: string) => {
    const r = parseUri(url)
    if (!r.ok) throw new Error(r.error)
    return r.uri.text
  }
  /** URLs with `chars` at different places in the path and the query string, doubled, tripled. */
  const withChars = (c: string) => [
    `http://www.example.com/a/b/${c}`,
    `http://www.example.com/a${c}`,
    `http://www.example.com/a${c}${c}`,
    `http://www.example.com/a${c}${c}${c}b/c`,
    `http://www.example.com/a${c}/c${c}${c}d`,
    `http://www.example.com/a${c}b/456?d=e${c}${c}f&g=h${c}i&j=k`,
    `http://www.example.com/a${c}b/c?d=e&f=g${c}${c}${c}h`,
  ]
  /** What the lenient parser makes of these URLs. */
  const encode = (url: string) => {
    const e = url.replace(/%/g, '%25').replace(/ /g, '%20').replace(/\|/g, '%7C').replace(/\$/g, '%24').replace(/\{/g, '%7B').replace(/\}/g, '%7D')
      .replace(/\[/g, '%5B').replace(/\]/g, '%5D').replace(/#/g, '%23').replace('%23', '#')
    const i = e.indexOf('#')
    return i < 0 ? e : e.slice(0, i) + e.slice(i).replace(/\?/g, '%3F').replace(/\//g, '%2F').replace(/=/g, '%3D').replace(/&/g, '%26')
  }

  it('keeps URLs a strict parser reads', () => {
    for (const url of ['http://www.ex_ample.com', 'http://www.example.com', 'http://www.example.com/', 'http://www.example.com/a', 'http://www.google.com/se+arch?q=gateway+oracle+cards+denise+linn&hl=en&client=safari', 'www.example.com/a%23b/?c=d%24e', ...withChars('')]) {
      expect(text(url)).toBe(url)
    }
    expect(text('http://www.example.com/sp a ce')).toBe('http://www.example.com/sp%20a%20ce')
  })
  const macros = ['|', '${a}', '${a b}', '$[a]', '$[a b]', '#{a}', '#{a b}', '#{{a}}', '#{{a b}}', '#a#', '#a b#', '##a##', '##a b##', '%a%', '%a b%', '%%a%%', '%%a b%%', '%%%a%%%', '%%%a b%%%']
  it.each(macros)('encodes the rest of a URL holding %j as the lenient parser does', (chars) => {
    for (const url of withChars(chars)) expect(text(url), url).toBe(encode(url))
  })
  it('fills page_url and its parts with the encoded text', async () => {
    const { goodColumns, tp2 } = await import('./helpers')
    const c = goodColumns(await run(tp2('e=pv&p=web&tv=t&url=' + encodeURIComponent('http://www.example.com/a${x}/b?q=$1|2&r=é#f$g'))))
    expect([c.page_url, c.page_urlpath, c.page_urlquery, c.page_urlfragment]).toEqual([
      'http://www.example.com/a%24%7Bx%7D/b?q=%241%7C2&r=%C3%A9#f%24g', '/a%24%7Bx%7D/b', 'q=%241%7C2&r=%C3%A9', 'f%24g',
    ])
  })
})

describe('timestamps outside four-digit years (EventEnrichmentsSpec)', () => {
  it('tracker timestamps: any long is formatted, with zero-padded and signed years', async () => {
    const { toTimestamp } = await import('../../../lib/core/enrich/convert')
    const bc = String(Date.UTC(-30, 0, 1))
    expect(toTimestamp('1')).toEqual({ ok: true, value: '1970-01-01 00:00:00.001' })
    expect(toTimestamp('-1')).toEqual({ ok: true, value: '1969-12-31 23:59:59.999' })
    expect(toTimestamp('1111111111111111')).toEqual({ ok: false, error: 'Formatting as 37179-09-17 07:18:31.111 is not Redshift-compatible' })
    expect(toTimestamp(bc)).toEqual({ ok: false, error: 'Formatting as -0030-01-01 00:00:00.000 is not Redshift-compatible' })
    expect(toTimestamp(String(Date.UTC(-1, 11, 31, 23, 59, 59, 999)))).toEqual({ ok: false, error: 'Formatting as -0001-12-31 23:59:59.999 is not Redshift-compatible' })
    expect(toTimestamp('-62167219200000')).toEqual({ ok: true, value: '0000-01-01 00:00:00.000' })
    expect(toTimestamp('9223372036854775807')).toEqual({ ok: false, error: 'Formatting as 292278994-08-17 07:12:55.807 is not Redshift-compatible' })
    expect(toTimestamp('-9223372036854775808')).toEqual({ ok: false, error: 'Formatting as -292275055-05-16 16:47:04.192 is not Redshift-compatible' })
    expect(toTimestamp('9223372036854775808')).toEqual({ ok: false, error: 'Not in the expected format: ms since epoch' })
  })
  it('a collector timestamp before year 0 or after 9999', async () => {
    const at = async (timestamp: number) => {
      const [row] = badRows(await run(payload({ path: '/i', querystring: 'e=pv&p=web&tv=t', timestamp })))
      return row.data.failure.messages[0].error.dataReports[0]
    }
    expect(await at(Date.UTC(-30, 0, 1))).toMatchObject({ path: 'collector_tstamp', message: 'Formatted as -0030-01-01 00:00:00.000 is not Redshift-compatible' })
    expect(await at(Date.UTC(11970, 0, 1))).toMatchObject({ path: 'collector_tstamp', message: 'Formatted as 11970-01-01 00:00:00.000 is not Redshift-compatible' })
  })
})

describe('a schema whose self block does not match its path', () => {
  it('is the schema of the key it was served for: the event is validated against it, not held back', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { defaultResolver } = await import('../../../lib/runtime/default-resolver')
    const { Enricher } = await import('../../../lib/core/enrich/enrich')
    const { ENRICH_PROCESSOR } = await import('../../../lib/core/enrich/version')
    const { batch, goodColumns, tp2 } = await import('./helpers')
    const dir = mkdtempSync(join(tmpdir(), 'floe-self-'))
    mkdirSync(join(dir, 'schemas/com.acme/thing/jsonschema'), { recursive: true })
    writeFileSync(join(dir, 'schemas/com.acme/thing/jsonschema/1-0-0'), JSON.stringify({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      self: { vendor: 'com.acme', name: 'other_thing', format: 'jsonschema', version: '1-0-3' },
      type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false,
    }))
    const enricher = new Enricher({ resolver: defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '', FLOE_IGLU_DIRS: dir } }), processor: ENRICH_PROCESSOR, emitFailed: true })
    const ue = (data: object) => 'e=ue&p=web&tv=t&ue_pr=' + encodeURIComponent(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/thing/jsonschema/1-0-0', data } }))
    expect(goodColumns(await enricher.enrichRecord(tp2(ue({ n: 1 })), batch())).event_name).toBe('thing')
    const [row] = badRows(await enricher.enrichRecord(tp2(ue({ n: 'x' })), batch()))
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    expect(row.data.failure.messages[0].error.error).toBe('ValidationError')
  })
})

describe('Iglu URIs with long vendors or names', () => {
  const ue = (uri: string) => 'e=ue&p=web&tv=t&ue_pr=' + encodeURIComponent(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: uri, data: {} } }))
  const failure = async (uri: string) => badRows(await run(payload({ path: '/com.snowplowanalytics.snowplow/tp2', querystring: ue(uri) })))[0].data.failure.messages[0]
  it('a vendor or name over 128 characters is not an Iglu URI (INVALID_IGLUURI)', async () => {
    for (const uri of [`iglu:${'a'.repeat(129)}/x/jsonschema/1-0-0`, `iglu:com.acme/${'b'.repeat(129)}/jsonschema/1-0-0`]) {
      expect(await failure(uri)).toEqual({ json: { schema: uri, data: {} }, error: 'INVALID_IGLUURI' })
    }
  })
  it('at 128 characters it is one, looked up (and not found)', async () => {
    const m = await failure(`iglu:${'a'.repeat(128)}/x/jsonschema/1-0-0`)
    expect(m.schemaKey).toBe(`iglu:${'a'.repeat(128)}/x/jsonschema/1-0-0`)
    expect(m.error.error).toBe('ResolutionError')
  })
})

describe("validation reports in the order of Snowplow's validator", () => {
  it('properties first (in the schema\'s order), then the other keywords by name; missing required ones where properties meets the first absent one', async () => {
    const { compileWithRefs, instanceErrors } = await import('../../../lib/core/iglu/draft04')
    const schema = {
      type: 'object',
      required: ['c', 'a'],
      additionalProperties: false,
      properties: { a: { type: 'string', maxLength: 2 }, b: { type: 'integer' }, c: { type: 'array', items: { type: 'integer', minimum: 1 } } },
    }
    const fn = compileWithRefs(schema, new Map())
    const messages = (data: unknown) => {
      expect(fn(data)).toBe(false)
      return instanceErrors(fn.errors, data, fn.schema).map((e) => e.message)
    }
    expect(messages({ z: 1, b: 'x', a: 'long' })).toEqual([
      '$.a: may only be 2 characters long',
      '$.b: string found, integer expected',
      '$.z: is not defined in the schema and the schema does not allow additional properties',
      '$.c: is missing but it is required',
    ])
    expect(messages({ a: 'ok', b: 1, c: [0, 'x', 2, -1], y: 1, x: 2 })).toEqual([
      '$.c[0]: must have a minimum value of 1',
      '$.c[1]: string found, integer expected',
      '$.c[3]: must have a minimum value of 1',
      '$.y: is not defined in the schema and the schema does not allow additional properties',
      '$.x: is not defined in the schema and the schema does not allow additional properties',
    ])
    expect(messages([])).toEqual(['$: array found, object expected'])
  })

  it('an object with some declared properties: the extra property, then the missing required one (add_to_cart in enrich)', async () => {
    const { compileWithRefs, instanceErrors } = await import('../../../lib/core/iglu/draft04')
    const schema = { type: 'object', properties: { sku: { type: 'string' }, name: { type: 'string' }, quantity: { type: 'integer' } }, required: ['sku', 'quantity'], additionalProperties: false }
    const fn = compileWithRefs(schema, new Map())
    const data = { skuu: 'pedals', quantity: 2 }
    expect(fn(data)).toBe(false)
    expect(instanceErrors(fn.errors, data, fn.schema).map((e) => [e.keyword, e.message])).toEqual([
      ['additionalProperties', '$.skuu: is not defined in the schema and the schema does not allow additional properties'],
      ['required', '$.sku: is missing but it is required'],
    ])
  })

  it('payload_data items: the missing fields, then the unknown one (SnowplowAdapterSpec)', async () => {
    const PD = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-0'
    const body = JSON.stringify({ schema: PD, data: [{ tv: 'ios-0.1.0', p: 'mob', e: 'se' }, { new: 'foo' }] })
    const [row] = badRows(await run(payload({ path: '/com.snowplowanalytics.snowplow/tp2', body, contentType: 'application/json' })))
    expect(row.data.failure.messages[0].error.dataReports.map((r: { message: string }) => r.message)).toEqual([
      '$[1].tv: is missing but it is required',
      '$[1].p: is missing but it is required',
      '$[1].e: is missing but it is required',
      '$[1].new: is not defined in the schema and the schema does not allow additional properties',
    ])
  })
})
