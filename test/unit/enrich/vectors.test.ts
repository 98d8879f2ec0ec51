/** Test vectors from Snowplow enrich's own test suites, field by field. */
import { describe, expect, it } from 'vitest'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { derivedTimestamp, EVENT_TYPE_EXPECTATION } from '../../../lib/core/enrich/steps'
import { extractIpAddress } from '../../../lib/core/enrich/payload'
import { toDecimal, toEventType, toTimestamp } from '../../../lib/core/enrich/convert'
import { adapt } from '../../../lib/core/enrich/adapters'
import { fromDecoded } from '../../../lib/core/enrich/payload'
import { badRows, batch, columns, enricher, goodColumns, only, payload, resolver, run, tp2 } from './helpers'

const V1 =
  'CwBkAAAACTEyNy4wLjAuMQoAyAAAAUOYhqgGCwDSAAAABVVURi04CwDcAAAAEHNzYy0wLjAuMS1TdGRvdXQLASwAAABoTW96aWxsYS81LjAgKFgxMTsgTGludXggeDg2XzY0KSBBcHBsZVdlYktpdC81MzcuMzYgKEtIVE1MLCBsaWtlIEdlY2tvKSBDaHJvbWUvMzEuMC4xNjUwLjYzIFNhZmFyaS81MzcuMzYLAUAAAAACL2kLAUoAAAAYdGVzdFBhcmFtPTMmdGVzdFBhcmFtMj00DwFeCwAAAAgAAAAvQ29va2llOiBzcD1jNWYzYTA5Zi03NWY4LTQzMDktYmVjNS1mZWE1NjBmNzg0NTUAAAAaQWNjZXB0LUxhbmd1YWdlOiBlbi1VUywgZW4AAAAkQWNjZXB0LUVuY29kaW5nOiBnemlwLCBkZWZsYXRlLCBzZGNoAAAAdFVzZXItQWdlbnQ6IE1vemlsbGEvNS4wIChYMTE7IExpbnV4IHg4Nl82NCkgQXBwbGVXZWJLaXQvNTM3LjM2IChLSFRNTCwgbGlrZSBHZWNrbykgQ2hyb21lLzMxLjAuMTY1MC42MyBTYWZhcmkvNTM3LjM2AAAAVkFjY2VwdDogdGV4dC9odG1sLCBhcHBsaWNhdGlvbi94aHRtbCt4bWwsIGFwcGxpY2F0aW9uL3htbDtxPTAuOSwgaW1hZ2Uvd2VicCwgKi8qO3E9MC44AAAAGENhY2hlLUNvbnRyb2w6IG1heC1hZ2U9MAAAABZDb25uZWN0aW9uOiBrZWVwLWFsaXZlAAAAFEhvc3Q6IDEyNy4wLjAuMTo4MDgwCwGQAAAACTEyNy4wLjAuMQsBmgAAACRjNWYzYTA5Zi03NWY4LTQzMDktYmVjNS1mZWE1NjBmNzg0NTULemkAAABBaWdsdTpjb20uc25vd3Bsb3dhbmFseXRpY3Muc25vd3Bsb3cvQ29sbGVjdG9yUGF5bG9hZC90aHJpZnQvMS0wLTAA'

describe('V1: GET /i with non-protocol parameters', () => {
  it('is an enrichment_failures bad row (no event type), and a failed event', async () => {
    const o = await run(Buffer.from(V1, 'base64'))
    const [row] = badRows(o)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/enrichment_failures/jsonschema/2-0-1')
    expect(row.data.processor).toEqual({ artifact: 'floe-enrich', version: '0.1.0' })
    expect(row.data.failure).toEqual({
      timestamp: '2025-04-30T10:05:00Z',
      messages: [{ enrichment: null, message: { field: 'event', value: null, expectation: EVENT_TYPE_EXPECTATION(null) } }],
    })
    expect(EVENT_TYPE_EXPECTATION(null)).toBe("trying to extract the schema of the enriched event but event type [null] doesn't match\n          any of page_view, page_ping, struct, transaction, transaction_item and unstruct\n          ")
    expect(row.data.payload.raw).toMatchObject({
      vendor: 'com.snowplowanalytics.snowplow',
      version: 'tp1',
      parameters: [{ name: 'testParam', value: '3' }, { name: 'testParam2', value: '4' }],
      loaderName: 'ssc-0.0.1-Stdout',
      encoding: 'UTF-8',
      hostname: '127.0.0.1',
      timestamp: '2014-01-16T00:49:58.278Z',
      ipAddress: '127.0.0.1',
      userId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
    })
    expect(row.data.payload.enriched).toMatchObject({ collector_tstamp: '2014-01-16 00:49:58.278', network_userid: 'c5f3a09f-75f8-4309-bec5-fea560f78455', user_ipaddress: '127.0.0.1', event: null })
    expect(Object.keys(row.data.payload.enriched)).toHaveLength(131)
    const [failed] = only(o, 'incomplete')
    const c = columns((failed as { tsv: string }).tsv)
    const failure = JSON.parse(c.derived_contexts!).data[0]
    expect(failure.schema).toBe('iglu:com.snowplowanalytics.snowplow/failure/jsonschema/1-0-0')
    expect(failure.data).toMatchObject({ failureType: 'EnrichmentError: ', errors: [{ message: `event - ${EVENT_TYPE_EXPECTATION(null)}`, source: 'event' }], schema: null, data: { event: null } })
  })

  it('wrong schema → collector_payload_format_violation', async () => {
    const d = decodeCollectorPayload(Buffer.from(V1, 'base64'))
    if (!d.ok) throw new Error(d.error)
    const r = fromDecoded({ ...d.payload, schema: 'iglu:com.snowplowanalytics.snowplow/wrong-schema/thrift/1-0-0' })
    expect(r).toEqual({
      ok: false,
      loader: 'thrift',
      messages: [{ error: 'verifying record as iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-* failed: found iglu:com.snowplowanalytics.snowplow/wrong-schema/thrift/1-0-0' }],
    })
  })
})

describe('V2: page ping GET with a non self-describing co', () => {
  const qs = [
    'e=pp', 'page=Asynchronous+website%2Fwebapp+examples+for+snowplow.js', 'pp_mix=0', 'pp_max=0', 'pp_miy=0', 'pp_may=0',
    `co=${encodeURIComponent('{"page":{"page_type":"test","last_updated$tms":1393372800000},"user":{"user_type":"tester"}}')}`,
    'dtm=1390936938855', 'tid=797743', 'vp=2560x961', 'ds=2560x961', 'vid=7', 'duid=3c1757544e39bca4', 'p=mob', 'tv=js-0.13.1', 'fp=2695930803',
    'aid=CFe23a', 'lang=en-US', 'cs=UTF-8', 'tz=Europe%2FLondon', 'uid=alex+123', 'f_pdf=0', 'f_qt=1', 'f_realp=0', 'f_wma=0', 'f_dir=0', 'f_fla=1',
    'f_java=0', 'f_gears=0', 'f_ag=0', 'res=2560x1440', 'cd=24', 'cookie=1',
    'url=file%3A%2F%2Ffile%3A%2F%2F%2FUsers%2Falex%2FDevelopment%2Fdev-environment%2Fdemo%2F1-tracker%2Fevents.html%2Foverridden-url%2F',
  ].join('&')
  const record = payload({
    ipAddress: '10.0.2.2', timestamp: Date.parse('2014-01-28T19:22:20.040Z'), collector: 'ssc-0.0.1-Stdout', path: '/i', hostname: 'localhost',
    networkUserId: '75a13583-5c99-40e3-81fc-541084dfc784', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.9; rv:26.0) Gecko/20100101 Firefox/26.0', querystring: qs,
  })

  it('schema_violations NotIglu; the failed event carries every field', async () => {
    const o = await run(record)
    const [row] = badRows(o)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    expect(row.data.failure.messages).toEqual([{ json: { page: { page_type: 'test', last_updated$tms: 1393372800000 }, user: { user_type: 'tester' } }, error: 'INVALID_DATA_PAYLOAD' }])
    const c = columns((only(o, 'incomplete')[0] as { tsv: string }).tsv)
    expect(c).toMatchObject({
      app_id: 'CFe23a', platform: 'mob', event: 'page_ping', txn_id: '797743', v_tracker: 'js-0.13.1', v_collector: 'ssc-0.0.1-Stdout', user_id: 'alex 123',
      user_ipaddress: '10.0.2.2', user_fingerprint: '2695930803', domain_userid: '3c1757544e39bca4', domain_sessionidx: '7',
      network_userid: '75a13583-5c99-40e3-81fc-541084dfc784', dvce_created_tstamp: '2014-01-28 19:22:18.855', collector_tstamp: '2014-01-28 19:22:20.040',
      derived_tstamp: '2014-01-28 19:22:20.040', page_title: 'Asynchronous website/webapp examples for snowplow.js', br_lang: 'en-US', doc_charset: 'UTF-8',
      os_timezone: 'Europe/London', br_features_pdf: '0', br_features_quicktime: '1', br_features_realplayer: '0', br_features_windowsmedia: '0',
      br_features_director: '0', br_features_flash: '1', br_features_java: '0', br_features_gears: '0', br_features_silverlight: '0', br_cookies: '1',
      br_colordepth: '24', dvce_screenwidth: '2560', dvce_screenheight: '1440', br_viewwidth: '2560', br_viewheight: '961', doc_width: '2560', doc_height: '961',
      pp_xoffset_min: '0', pp_xoffset_max: '0', pp_yoffset_min: '0', pp_yoffset_max: '0',
      event_vendor: 'com.snowplowanalytics.snowplow', event_name: 'page_ping', event_format: 'jsonschema', event_version: '1-0-0', contexts: '',
    })
    const failure = JSON.parse(c.derived_contexts!).data[0].data
    expect(failure).toMatchObject({ failureType: 'NotIglu', errors: [{ message: 'Invalid data payload', source: 'contexts' }], schema: null })
  })
})

describe('an Iglu URI with a vendor or name over 128 characters', () => {
  for (const [what, uri] of [['vendor', `iglu:${'a'.repeat(129)}/email_sent/jsonschema/1-0-0`], ['name', `iglu:com.acme/${'a'.repeat(129)}/jsonschema/1-0-0`]]) {
    it(`is not an Iglu URI (${what}): schema_violations NotIglu INVALID_IGLUURI on contexts`, async () => {
      const cx = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: uri, data: { emailAddress: 'hello@world.com' } }] })).toString('base64url')
      const o = await run(tp2(`e=pv&p=web&tv=js-3&cx=${cx}`))
      const [row] = badRows(o)
      expect(row.schema).toMatch(/schema_violations/)
      expect(row.data.failure.messages).toHaveLength(1)
      expect(row.data.failure.messages[0]).toMatchObject({ json: expect.objectContaining({ schema: uri }), error: 'INVALID_IGLUURI' })
      const failure = JSON.parse(columns((only(o, 'incomplete')[0] as { tsv: string }).tsv).derived_contexts!).data[0].data
      expect(failure).toMatchObject({ failureType: 'NotIglu', errors: [expect.objectContaining({ source: 'contexts' })] })
    })
  }
})

describe('V3: good page view', () => {
  it('every column as expected, the whole TSV line', async () => {
    const eid = '7b0c1f5e-3f5c-4c1e-9a56-0b1a2c3d4e5f'
    const o = await run(tp2(`eid=${eid}&e=pv&aid=test_app`))
    const line = (only(o, 'good')[0] as { tsv: string }).tsv
    const expected = Array<string>(131).fill('')
    const set = (i: number, v: string) => (expected[i] = v)
    set(0, 'test_app'); set(2, '2025-04-30 10:05:00.000'); set(3, '2025-04-30 10:00:00.000'); set(5, 'page_view'); set(6, eid)
    set(10, 'test-collector'); set(11, 'floe-enrich-0.1.0'); set(13, '175.16.199.0'); set(124, '2025-04-30 10:00:00.000')
    set(125, 'com.snowplowanalytics.snowplow'); set(126, 'page_view'); set(127, 'jsonschema'); set(128, '1-0-0')
    expect(line).toBe(expected.join('\t'))
    expect(o.outputs).toHaveLength(1)
  })
})

describe('V4: schema violation and failed event', () => {
  it('bad row and failed event as specified', async () => {
    const eid = '7b0c1f5e-3f5c-4c1e-9a56-0b1a2c3d4e5f'
    const ue = Buffer.from(JSON.stringify({
      schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0',
      data: { schema: 'iglu:com.snowplowanalytics.snowplow/add_to_cart/jsonschema/1-0-0', data: { skuu: 'pedals', quantity: 2 } },
    })).toString('base64')
    const o = await run(tp2(`eid=${eid}&e=ue&ue_px=${encodeURIComponent(ue)}`))
    const [row] = badRows(o)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    // the reports are those of the spec; their order is the validator's
    const reports = [
      { message: '$.skuu: is not defined in the schema and the schema does not allow additional properties', path: '$', keyword: 'additionalProperties', targets: ['skuu'] },
      { message: '$.sku: is missing but it is required', path: '$', keyword: 'required', targets: ['sku'] },
    ]
    expect(row.data.failure.timestamp).toBe('2025-04-30T10:05:00Z')
    expect(row.data.failure.messages).toHaveLength(1)
    expect(row.data.failure.messages[0].schemaKey).toBe('iglu:com.snowplowanalytics.snowplow/add_to_cart/jsonschema/1-0-0')
    expect(Object.keys(row.data.failure.messages[0].error)).toEqual(['error', 'dataReports'])
    expect(row.data.failure.messages[0].error.error).toBe('ValidationError')
    expect(row.data.failure.messages[0].error.dataReports).toHaveLength(2)
    expect(row.data.failure.messages[0].error.dataReports).toEqual(expect.arrayContaining(reports))
    const enriched = row.data.payload.enriched
    expect(enriched).toMatchObject({
      etl_tstamp: '2025-04-30 10:05:00.000', collector_tstamp: '2025-04-30 10:00:00.000', event: 'unstruct', event_id: eid, v_collector: 'test-collector',
      v_etl: 'floe-enrich-0.1.0', user_ipaddress: '175.16.199.0', derived_tstamp: '2025-04-30 10:00:00.000', event_vendor: null, unstruct_event: null,
    })
    const failure = JSON.parse(enriched.derived_contexts).data[0].data
    expect(failure).toMatchObject({
      failureType: 'ValidationError', schema: 'iglu:com.snowplowanalytics.snowplow/add_to_cart/jsonschema/1-0-0', data: { skuu: 'pedals', quantity: 2 },
      timestamp: '2025-04-30T10:05:00Z', componentName: 'floe-enrich', componentVersion: '0.1.0',
    })
    expect(failure.errors).toContainEqual({ message: '$.sku: is missing but it is required', source: 'unstruct', path: '$', keyword: 'required', targets: ['sku'] })
    expect(row.data.payload.raw).toMatchObject({ parameters: [{ name: 'eid', value: eid }, { name: 'e', value: 'ue' }, { name: 'ue_px', value: ue }], loaderName: 'test-collector', encoding: 'UTF-8', hostname: 'collector.snplow.net', headers: [], userId: null })
    // the failed event carries the same atomic values
    const c = columns((only(o, 'incomplete')[0] as { tsv: string }).tsv)
    expect(c.derived_contexts).toBe(enriched.derived_contexts)
    expect(c.event_id).toBe(eid)
  })
})

describe('V5: garbage', () => {
  it('nonsense → CPFormat bad row with the base64 record', async () => {
    for (const [text, b64] of [['nonsense', 'bm9uc2Vuc2U='], ['nonsense2', 'bm9uc2Vuc2Uy']]) {
      const o = await run(Buffer.from(text!))
      expect(badRows(o)).toEqual([{
        schema: 'iglu:com.snowplowanalytics.snowplow.badrows/collector_payload_format_violation/jsonschema/1-0-0',
        data: { processor: { artifact: 'floe-enrich', version: '0.1.0' }, failure: { timestamp: '2025-04-30T10:05:00Z', loader: 'thrift', message: { error: 'error deserializing raw event: Unrecognized type 110' } }, payload: b64 },
      }])
      expect(o.payloads).toBe(1)
    }
  })
})

describe('V6: tp2 adapter', () => {
  const post = (body: string, contentType = 'application/json; charset=UTF-8', querystring = '') =>
    fromDecoded({ ...decodeOk(payload({ path: '/com.snowplowanalytics.snowplow/tp2', body, contentType, querystring })) })
  const decodeOk = (b: Buffer) => {
    const d = decodeCollectorPayload(b)
    if (!d.ok) throw new Error(d.error)
    return d.payload
  }
  const adapted = async (body: string, contentType?: string, qs?: string) => {
    const l = post(body, contentType, qs)
    if (!l.ok) throw new Error('not loaded')
    return adapt(l.payload, { resolver, maxJsonDepth: 50 })
  }
  const PD = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-0'

  it('query string merged into every event and wins', async () => {
    const r = await adapted(JSON.stringify({ schema: PD, data: [{ tv: '1', p: '1', e: '1' }, { tv: '2', p: '2', e: '2' }, { tv: '3', p: '3', e: '3' }] }), undefined, 'tv=0&nuid=123')
    if (!r.ok) throw new Error(JSON.stringify(r))
    expect(r.events.map((e) => Object.fromEntries(e.parameters))).toEqual([
      { tv: '0', p: '1', e: '1', nuid: '123' }, { tv: '0', p: '2', e: '2', nuid: '123' }, { tv: '0', p: '3', e: '3', nuid: '123' },
    ])
  })
  it('violations', async () => {
    expect(await adapted(JSON.stringify({ schema: PD, data: {} }))).toMatchObject({
      ok: false, badRow: 'tracker_protocol_violations',
      messages: [{ schemaKey: PD, error: { error: 'ValidationError', dataReports: [{ message: '$: object found, array expected', path: '$', keyword: 'type', targets: ['object', 'array'] }] } }],
    })
    const missing = await adapted(JSON.stringify({ schema: PD, data: [{ tv: 'ios-0.1.0' }] }))
    expect((missing as any).messages[0].error.dataReports.map((d: any) => d.message)).toEqual(['$[0].p: is missing but it is required', '$[0].e: is missing but it is required'])
    expect(await adapted('body', 'application/json')).toMatchObject({ ok: false, messages: [{ field: 'body', value: 'body' }] })
    expect(await adapted('{"not":"self-desc"}')).toMatchObject({ ok: false, messages: [{ json: { json: '{"not":"self-desc"}' }, error: 'INVALID_DATA_PAYLOAD' }] })
    expect(await adapted('x', 'text/plain')).toEqual({
      ok: false, badRow: 'tracker_protocol_violations',
      messages: [{ field: 'contentType', value: 'text/plain', expectation: 'expected one of application/json, application/json; charset=utf-8, application/json; charset=UTF-8' }],
    })
  })
})

describe('V7: redirect adapter', () => {
  const redirect = async (qs: string) => {
    const l = fromDecoded(decodeCollectorPayload(payload({ path: '/r/tp2', querystring: qs })).ok ? (decodeCollectorPayload(payload({ path: '/r/tp2', querystring: qs })) as any).payload : {})
    if (!l.ok) throw new Error('not loaded')
    const r = await adapt(l.payload, { resolver, maxJsonDepth: 50 })
    if (!r.ok) throw new Error(JSON.stringify(r))
    return Object.fromEntries(r.events[0]!.parameters)
  }
  it('without e: an unstruct uri_redirect event', async () => {
    expect(await redirect('u=https://github.com/snowplow/snowplow&cx=dGVzdHRlc3R0ZXN0')).toEqual({
      e: 'ue', tv: 'r-tp2', p: 'web', cx: 'dGVzdHRlc3R0ZXN0',
      ue_pr: '{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0","data":{"uri":"https://github.com/snowplow/snowplow"}}}',
    })
  })
  it('with e: a uri_redirect context', async () => {
    expect(await redirect('u=https://github.com/snowplow/snowplow&e=se&aid=ads')).toEqual({
      e: 'se', aid: 'ads', tv: 'r-tp2', p: 'web',
      co: '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[{"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0","data":{"uri":"https://github.com/snowplow/snowplow"}}]}',
    })
  })
})

describe('V8: parameter mapping', () => {
  const base = 'e=pp&tv=js-0.13.1&p=web'
  it('timestamps, dimensions, integers, booleans, names, ids', async () => {
    const eid = 'f6e5d4c3-b2a1-4098-8765-43210fedcba9'
    const c = goodColumns(await run(tp2(`${base}&dtm=1735693323000&ttm=1735693323000&stm=1735693323000&res=42x420&ds=42x420&vp=42x420&tid=42&vid=42&ti_qu=42&pp_mix=42&pp_max=42&pp_miy=42&pp_may=42&f_pdf=1&cookie=1&ti_na=nm&tnuid=tn&nuid=nu&eid=${eid}`)))
    expect(c).toMatchObject({
      dvce_created_tstamp: '2025-01-01 01:02:03.000', true_tstamp: '2025-01-01 01:02:03.000', dvce_sent_tstamp: '2025-01-01 01:02:03.000', derived_tstamp: '2025-01-01 01:02:03.000',
      dvce_screenwidth: '42', dvce_screenheight: '420', doc_width: '42', doc_height: '420', br_viewwidth: '42', br_viewheight: '420',
      txn_id: '42', domain_sessionidx: '42', ti_quantity: '42', pp_xoffset_min: '42', pp_xoffset_max: '42', pp_yoffset_min: '42', pp_yoffset_max: '42',
      br_features_pdf: '1', br_cookies: '1', ti_name: 'nm', network_userid: 'tn', event_id: eid,
    })
  })
  it.each([
    ['42', '42'], ['42.5', '42.5'], ['137777104559', '137777104559'], ['-137777104559', '-137777104559'], ['1E7', '10000000'], ['1.2E9', '1200000000'],
    ['0.000001', '0.000001'], ['0.0000001', '1E-7'], ['null', ''],
  ])('ev_va=%s → se_value %s', async (v, expected) => {
    const c = goodColumns(await run(tp2(`${base}&ev_va=${encodeURIComponent(v)}`)))
    expect(c.se_value).toBe(expected)
    expect(toDecimal(v)).toEqual({ ok: true, value: expected === '' ? null : expected })
  })
  it('integers 42, -42, null are valid', async () => {
    for (const v of ['42', '-42', 'null']) expect(goodColumns(await run(tp2(`${base}&tid=${v}`))).txn_id).toBe(v === 'null' ? '' : v)
  })
  it('tr_tt=not number → atomic schema violation', async () => {
    const o = await run(tp2(`${base}&tr_tt=not%20number`))
    const [row] = badRows(o)
    const msg = row.data.failure.messages[0]
    expect(msg.schemaKey).toBe('iglu:com.snowplowanalytics.snowplow/atomic/jsonschema/1-0-0')
    expect(msg.error.dataReports[0].path).toBe('tr_tt')
    expect(msg.error.dataReports[0].message).toContain('Cannot be converted to java.math.BigDecimal')
    expect(msg.error.dataReports[0]).toMatchObject({ keyword: 'atomic_field_parse_error', targets: [] })
  })
})

describe('V9: derived_tstamp', () => {
  it.each([
    ['2014-04-29 12:00:54.555', null, '2014-04-29 09:00:54.000', null, '2014-04-29 09:00:54.000'],
    ['2014-04-29 09:00:54.001', '2014-04-29 09:00:54.000', '2014-04-29 09:00:54.000', null, '2014-04-29 09:00:54.000'],
    ['2014-04-29 09:00:54.000', '2014-04-29 09:00:54.001', '2014-04-29 09:00:54.000', null, '2014-04-29 09:00:53.999'],
    ['2024-06-30 09:00:00.000', '2024-08-09 09:00:00.000', '2024-08-09 09:00:00.000', null, '2024-06-30 09:00:00.000'],
    ['2024-02-29 09:00:00.000', '2024-04-01 09:00:00.000', '2024-04-01 09:00:00.000', null, '2024-02-29 09:00:00.000'],
    ['2024-06-30 09:00:00.000', '2024-08-09 09:00:00.000', '2024-08-09 11:30:00.000', null, '2024-06-30 11:30:00.000'],
    ['2024-06-15 09:00:00.000', '2024-06-15 09:00:00.010', '2024-06-15 09:00:00.005', null, '2024-06-15 08:59:59.995'],
    ['2024-06-15 09:00:00.000', '2024-06-15 09:00:00.010', '2024-06-15 09:00:00.005', '2000-01-01 00:00:00.000', '2000-01-01 00:00:00.000'],
    ['2024-06-15 09:00:00.000', '2024-06-15 09:00:00.010', null, null, null],
  ])('created %s sent %s collector %s true %s → %s', (created, sent, collector, trueTs, expected) => {
    expect(derivedTimestamp(created, sent, collector, trueTs)).toBe(expected)
  })
})

describe('V11: documentation page view POST', () => {
  it('derived output', async () => {
    const event = {
      e: 'pv', url: 'https://snowplow.io/', page: 'Snowplow: behavioral data creation leader', eid: '2ec13853-ef9e-414a-8976-e64a4693b134', tv: 'js-3.5.0', tna: 'biz1',
      aid: 'website', p: 'web', cookie: '1', cs: 'UTF-8', lang: 'en-GB', res: '3440x1440', cd: '30', tz: 'Europe/London', dtm: '1665398554084', vp: '693x1302',
      ds: '678x8188', vid: '29', sid: 'be9520e7-16a5-4d4e-afa1-8e269f99a1cf', duid: '85094061-f702-4b62-a46d-20f7226b4741', stm: '1665398554084',
    }
    const body = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [event] })
    const c = goodColumns(await run(payload({ path: '/com.snowplowanalytics.snowplow/tp2', body, contentType: 'application/json', userAgent: 'UA', networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455' })))
    expect(c).toMatchObject({
      app_id: 'website', platform: 'web', event: 'page_view', event_id: '2ec13853-ef9e-414a-8976-e64a4693b134', name_tracker: 'biz1', v_tracker: 'js-3.5.0',
      dvce_created_tstamp: '2022-10-10 10:42:34.084', dvce_sent_tstamp: '2022-10-10 10:42:34.084', derived_tstamp: '2025-04-30 10:00:00.000',
      page_url: 'https://snowplow.io/', page_urlscheme: 'https', page_urlhost: 'snowplow.io', page_urlport: '443', page_urlpath: '/', page_urlquery: '', page_urlfragment: '',
      page_title: 'Snowplow: behavioral data creation leader', br_cookies: '1', doc_charset: 'UTF-8', br_lang: 'en-GB', dvce_screenwidth: '3440', dvce_screenheight: '1440',
      br_colordepth: '30', os_timezone: 'Europe/London', br_viewwidth: '693', br_viewheight: '1302', doc_width: '678', doc_height: '8188', domain_sessionidx: '29',
      domain_sessionid: 'be9520e7-16a5-4d4e-afa1-8e269f99a1cf', domain_userid: '85094061-f702-4b62-a46d-20f7226b4741',
      event_vendor: 'com.snowplowanalytics.snowplow', event_name: 'page_view', event_format: 'jsonschema', event_version: '1-0-0',
      user_ipaddress: '175.16.199.0', useragent: 'UA', network_userid: 'c5f3a09f-75f8-4309-bec5-fea560f78455', v_collector: 'test-collector', collector_tstamp: '2025-04-30 10:00:00.000',
    })
  })
})

describe('V10 (6.x form, no enrichments): GET page ping with cx, XFF and referrer', () => {
  it('fields, and the contexts column re-serialised as 1-0-1', async () => {
    const cx = Buffer.from('{"data":[{"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0","data":{"uri":"http://snowplowanalytics.com/"}}],"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0"}').toString('base64')
    const qs = `e=pp&page=Loading%20JSON&pp_mix=0&pp_max=1&pp_miy=64&pp_may=935&cx=${encodeURIComponent(cx)}&dtm=1398762054889&tid=612876&vp=1279x610&ds=1279x5614&vid=2&duid=44082d3af0e30126&p=web&tv=js-2.0.0&fp=2071613637&aid=snowplowweb&lang=fr&cs=UTF-8&tz=Europe%2FBerlin&tna=cloudfront&evn=com.snowplowanalytics&refr=http%3A%2F%2Fsnowplowanalytics.com%2Fservices%2Fpipelines.html&f_pdf=1&f_qt=1&res=1280x800&cd=24&cookie=1&url=http%3A%2F%2Fsnowplowanalytics.com%2Fblog%2F2013%2F11%2F20%2Floading-json-data-into-redshift%2F%23weaknesses`
    const c = goodColumns(await run(payload({ ipAddress: '255.255.255.255', timestamp: 1381175274000, collector: 'collector', path: '/i', hostname: 'localhost', headers: ['X-Forwarded-For: 123.123.123.123, 345.345.345.345'], networkUserId: '8712a379-4bcb-46ee-815d-85f26540577f', querystring: qs })))
    expect(c).toMatchObject({
      app_id: 'snowplowweb', platform: 'web', collector_tstamp: '2013-10-07 19:47:54.000', dvce_created_tstamp: '2014-04-29 09:00:54.889', event: 'page_ping', txn_id: '612876',
      name_tracker: 'cloudfront', v_tracker: 'js-2.0.0', v_collector: 'collector', user_ipaddress: '123.123.123.123', user_fingerprint: '2071613637', domain_userid: '44082d3af0e30126',
      domain_sessionidx: '2', network_userid: '8712a379-4bcb-46ee-815d-85f26540577f',
      page_url: 'http://snowplowanalytics.com/blog/2013/11/20/loading-json-data-into-redshift/#weaknesses', page_referrer: 'http://snowplowanalytics.com/services/pipelines.html',
      page_urlscheme: 'http', page_urlhost: 'snowplowanalytics.com', page_urlport: '80', page_urlpath: '/blog/2013/11/20/loading-json-data-into-redshift/', page_urlquery: '', page_urlfragment: 'weaknesses',
      refr_urlscheme: 'http', refr_urlhost: 'snowplowanalytics.com', refr_urlport: '80', refr_urlpath: '/services/pipelines.html', refr_urlquery: '', refr_urlfragment: '',
      pp_xoffset_min: '0', pp_xoffset_max: '1', pp_yoffset_min: '64', pp_yoffset_max: '935', br_lang: 'fr', br_features_pdf: '1', br_features_quicktime: '1', br_cookies: '1',
      br_colordepth: '24', br_viewwidth: '1279', br_viewheight: '610', os_timezone: 'Europe/Berlin', dvce_screenwidth: '1280', dvce_screenheight: '800', doc_charset: 'UTF-8',
      doc_width: '1279', doc_height: '5614', derived_tstamp: '2013-10-07 19:47:54.000', event_vendor: 'com.snowplowanalytics.snowplow', event_name: 'page_ping',
      contexts: '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[{"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0","data":{"uri":"http://snowplowanalytics.com/"}}]}',
    })
  })
})

describe('V12: small tables', () => {
  it('IP extraction', () => {
    const fb = '255.255.255.255'
    expect(extractIpAddress([], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For: localhost'], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For: 129.78.138.66, 129.78.64.103'], fb)).toBe('129.78.138.66')
    expect(extractIpAddress(['x-forwarded-for: 129.78.138.66, 129.78.64.103'], fb)).toBe('129.78.138.66')
    expect(extractIpAddress(['X-Forwarded-For: 129.78.138.66abcdefg'], fb)).toBe('129.78.138.66')
    for (const v of ['2001:0db8:85a3:0000:0000:8a2e:0370:7334', '"2001:0db8:85a3:0000:0000:8a2e:0370:7334"', '[2001:0db8:85a3:0000:0000:8a2e:0370:7334]']) {
      expect(extractIpAddress([`X-Forwarded-For: ${v}`], fb)).toBe('2001:0db8:85a3:0000:0000:8a2e:0370:7334')
    }
    expect(extractIpAddress(['Forwarded: for=129.78.138.66, for=1.1.1.1'], fb)).toBe('129.78.138.66')
    expect(extractIpAddress(['Forwarded: for=1.2.3.4', 'X-Forwarded-For: 129.78.138.66'], fb)).toBe('129.78.138.66')
    expect(extractIpAddress(['X-Forwarded-For: 1.1.1.1:8080'], fb)).toBe('1.1.1.1')
    expect(extractIpAddress(['X-Forwarded-For: [1fff:0:a88:85a3::ac1f]:8001'], fb)).toBe('1fff:0:a88:85a3::ac1f')
  })
  it('_sp cross-domain parameter', async () => {
    const at = (sp: string) => run(tp2(`e=pv&p=web&tv=t&url=${encodeURIComponent(`http://a.example/?_sp=${sp}`)}`))
    expect(goodColumns(await at('abc'))).toMatchObject({ refr_domain_userid: 'abc', refr_dvce_tstamp: '' })
    expect(goodColumns(await at('abc.1426245561368'))).toMatchObject({ refr_domain_userid: 'abc', refr_dvce_tstamp: '2015-03-13 11:19:21.368' })
    const [row] = badRows(await at('abc.not-a-timestamp'))
    expect(row.data.failure.messages).toEqual([{ enrichment: null, message: { field: 'sp_dtm', value: 'not-a-timestamp', expectation: 'Not in the expected format: ms since epoch' } }])
  })
  it('event codes and timestamps', () => {
    const codes = { tr: 'transaction', ti: 'transaction_item', pv: 'page_view', pp: 'page_ping', ue: 'unstruct', se: 'struct', ev: 'struct', ad: 'ad_impression' }
    for (const [k, v] of Object.entries(codes)) expect(toEventType(k)).toEqual({ ok: true, value: v })
    for (const k of ['e', 'evnt', '']) expect(toEventType(k)).toEqual({ ok: false, error: 'Not a valid event type' })
    expect(toTimestamp('1')).toEqual({ ok: true, value: '1970-01-01 00:00:00.001' })
    expect(toTimestamp('v')).toEqual({ ok: false, error: 'Not in the expected format: ms since epoch' })
    expect(toTimestamp('1111111111111111')).toEqual({ ok: false, error: 'Formatting as 37179-09-17 07:18:31.111 is not Redshift-compatible' })
  })
  it('ad_impression → enrichment failure; ue without payload is good', async () => {
    const [row] = badRows(await run(tp2('e=ad&p=web&tv=t')))
    expect(row.data.failure.messages[0].message).toEqual({ field: 'event', value: 'ad_impression', expectation: EVENT_TYPE_EXPECTATION('ad_impression') })
    expect(goodColumns(await run(tp2('e=ue&p=web&tv=t')))).toMatchObject({ event: 'unstruct', event_vendor: '' })
  })
})

describe('TSV serialisation', () => {
  it('embedded JSON keeps numbers and key order as written; empty entities list → empty column', async () => {
    const ctx = '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[ {"schema":"iglu:com.snowplowanalytics.snowplow/uri_redirect/jsonschema/1-0-0", "data": {"uri":"http://a.example/?x=1.0", "2":1.0e2} } ]}'
    const o = await run(tp2(`e=pv&p=web&tv=t&co=${encodeURIComponent(ctx)}`))
    // uri_redirect forbids the extra key: the entity is dropped and the event fails
    expect(badRows(o)[0].data.failure.messages[0].error.dataReports[0].keyword).toBe('additionalProperties')
    const ok = '{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"data":{"targetUrl":"http://x.example/","elementClasses":["a","b"]},"schema":"iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1"}}'
    const c = goodColumns(await run(tp2(`e=ue&p=web&tv=t&ue_pr=${encodeURIComponent(ok)}&co=${encodeURIComponent('{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[]}')}`)))
    expect(c.unstruct_event).toBe('{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"schema":"iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1","data":{"targetUrl":"http://x.example/","elementClasses":["a","b"]}}}')
    expect(c.contexts).toBe('')
  })
  it('an empty event is 130 tabs', async () => {
    const { toTsv } = await import('../../../lib/core/enrich/event')
    expect(toTsv(Array(131).fill(null))).toBe('\t'.repeat(130))
  })
})
