import { describe, expect, it } from 'vitest'
import { cleanupEvent, lookupSchema, sqlDateTimeToJson, unstructParams } from '../../../../lib/core/enrich/adapters/common'
import { camelCase, jsonText, parseTree, wholeNumber, JNum, type J } from '../../../../lib/core/enrich/adapters/jtree'

const SCHEMAS = { adapterTest: 'iglu:com.adaptertest/test/jsonschema/1-0-0' }
const tree = (s: string): J => {
  const r = parseTree(s, 40)
  if (!r.ok) throw new Error(r.error)
  return r.value
}

describe('what the webhook adapters share', () => {
  it('builds the parameters of an empty self-describing event', () => {
    expect(Object.fromEntries(unstructParams('tv', 'app', new Map(), 'iglu:com.acme/foo/jsonschema/1-0-1', new Map()))).toEqual({
      tv: 'tv',
      e: 'ue',
      p: 'app',
      ue_pr: '{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"schema":"iglu:com.acme/foo/jsonschema/1-0-1","data":{}}}',
    })
  })

  it('keeps nuid, aid, cv, url, eid, ttm and p outside the event', () => {
    const shared = { nuid: '123', aid: '42', cv: 'clj-tomcat', p: 'srv', eid: '321', ttm: '2015-11-13T16:31:52.393Z', url: 'http://localhost' }
    const params = unstructParams('tv', 'app', new Map([...Object.entries(shared), ['other', 'x']]), 'iglu:com.acme/foo/jsonschema/1-0-1', new Map())
    expect(Object.fromEntries(params)).toEqual({
      ...shared,
      tv: 'tv',
      e: 'ue',
      ue_pr: '{"schema":"iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0","data":{"schema":"iglu:com.acme/foo/jsonschema/1-0-1","data":{}}}',
    })
  })

  it('looks up the schema of an event type, naming what is wrong', () => {
    expect(lookupSchema('adapterTest', SCHEMAS)).toEqual({ ok: true, schema: SCHEMAS.adapterTest })
    expect(lookupSchema(undefined, SCHEMAS)).toEqual({ ok: false, failure: { actual: null, expectedMapping: SCHEMAS, expectation: 'cannot determine event type: type parameter not provided' } })
    expect(lookupSchema('', SCHEMAS)).toEqual({ ok: false, failure: { actual: '', expectedMapping: SCHEMAS, expectation: 'cannot determine event type: type parameter empty' } })
    expect(lookupSchema('bad', SCHEMAS)).toEqual({ ok: false, failure: { actual: 'bad', expectedMapping: SCHEMAS, expectation: 'no schema associated with the provided type parameter' } })
    expect(lookupSchema(undefined, SCHEMAS, 2)).toEqual({ ok: false, failure: { actual: null, expectedMapping: SCHEMAS, expectation: 'cannot determine event type: type parameter not provided at index 2' } })
    // not a property of every object
    expect(lookupSchema('toString', SCHEMAS)).toMatchObject({ ok: false })
  })

  it('turns seconds into date-times at any depth', () => {
    const cases: [string, unknown][] = [
      ['{"ts":1415709559}', { ts: '2014-11-11T12:39:19.000Z' }],
      ['{"ts":1415709559,"nested":{"ts":1415700000}}', { ts: '2014-11-11T12:39:19.000Z', nested: { ts: '2014-11-11T10:00:00.000Z' } }],
      ['{"ts":1415709559,"nested":{"ts":"1415700000"}}', { ts: '2014-11-11T12:39:19.000Z', nested: { ts: '2014-11-11T10:00:00.000Z' } }],
      ['{"ts":"1415709559"}', { ts: '2014-11-11T12:39:19.000Z' }],
      ['{"ts":[{"ts":1415709559}]}', { ts: [{ ts: '2014-11-11T12:39:19.000Z' }] }],
      ['{"ts":1415709559.5,"nested":{"ts":"soon"}}', { ts: 1415709559.5, nested: { ts: 'soon' } }],
    ]
    for (const [input, expected] of cases) expect(JSON.parse(jsonText(cleanupEvent(tree(input), undefined, ['ts'])))).toEqual(expected)
  })

  it('drops the member naming the event type, at any depth', () => {
    const cases: [string, unknown][] = [
      ['{"an_event":"type"}', {}],
      ['{"abc":1415709559, "an_event":"type", "cba":"type"}', { abc: 1415709559, cba: 'type' }],
      ['{"ts":1415709559, "an_event":"type", "abc":"type"}', { ts: '2014-11-11T12:39:19.000Z', abc: 'type' }],
      ['{"abc":"abc","nested":{"an_event":"type"}}', { abc: 'abc', nested: {} }],
    ]
    for (const [input, expected] of cases) expect(JSON.parse(jsonText(cleanupEvent(tree(input), ['an_event', 'type'], ['ts'])))).toEqual(expected)
  })

  it('camelCases names as Snowplow does', () => {
    expect(camelCase('X-Mailgun-Sid')).toBe('xMailgunSid')
    expect(camelCase('x_mailgun_sid')).toBe('xMailgunSid')
    expect(camelCase('data.json')).toBe('data.json')
    expect(camelCase('a__b')).toBe('a_b')
  })

  it('keeps numbers and member order as written', () => {
    const text = '{"b":1.10,"1":2,"a":12345678901234567890123,"c":[1e3,-0.0]}'
    expect(jsonText(tree(text))).toBe(text)
  })

  it('reads whole numbers as circe does', () => {
    expect(wholeNumber(new JNum('12'))).toBe(12n)
    expect(wholeNumber(new JNum('12.0'))).toBe(12n)
    expect(wholeNumber(new JNum('1.2e1'))).toBe(12n)
    expect(wholeNumber(new JNum('12.5'))).toBeUndefined()
    expect(wholeNumber(new JNum('1e30'))).toBeUndefined()
  })

  it('reads vendor date-times (yyyy-MM-dd HH:mm:ss, UTC)', () => {
    expect(sqlDateTimeToJson('2014-10-09 16:23:45')).toBe('2014-10-09T16:23:45.000Z')
    expect(sqlDateTimeToJson('2014-02-30 16:23:45')).toBe('2014-02-30 16:23:45')
    expect(sqlDateTimeToJson('')).toBe('')
  })
})
