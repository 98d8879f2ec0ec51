import { describe, expect, it } from 'vitest'
import { URBANAIRSHIP_SCHEMAS } from '../../../../lib/core/enrich/adapters/urbanairship'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const urbanairship = (contentType: string | null, body: string | null) => webhookPayload('com.urbanairship.connect', 'v1', { contentType, body })

const EVENT = {
  id: 'e3314efb-9058-dbaf-c4bb-b754fca73613',
  offset: '1',
  occurred: '2015-11-13T16:31:52.393Z',
  processed: '2015-11-13T16:31:52.393Z',
  device: { amazon_channel: 'cd97c95c-ed77-f15a-3a67-5c2e26799d35' },
  body: { session_id: '27c75cab-a0b8-9da2-bc07-6d7253e0e13f' },
  type: 'CLOSE',
}

describe('Urban Airship Connect webhook (/com.urbanairship.connect/v1)', () => {
  it('turns the event into an event of its type, with its id and occurrence time', async () => {
    expect(oneEvent(await run(urbanairship(null, JSON.stringify(EVENT))))).toEqual({
      tv: 'com.urbanairship.connect-v1',
      e: 'ue',
      p: 'srv',
      ttm: String(Date.parse('2015-11-13T16:31:52.393Z')),
      eid: 'e3314efb-9058-dbaf-c4bb-b754fca73613',
      ue_pr: ue('iglu:com.urbanairship.connect/CLOSE/jsonschema/1-0-0', EVENT),
    })
  })

  it('reads occurrence times with offsets', async () => {
    expect(oneEvent(await run(urbanairship(null, JSON.stringify({ ...EVENT, occurred: '2015-11-13T17:31:52.393+01:00' })))).ttm).toBe(String(Date.parse('2015-11-13T16:31:52.393Z')))
  })

  it('names an unknown event type', async () => {
    expect(failures(await run(urbanairship(null, JSON.stringify({ ...EVENT, type: 'NOT_AN_EVENT_TYPE' }))))).toEqual([
      { actual: 'NOT_AN_EVENT_TYPE', expectedMapping: URBANAIRSHIP_SCHEMAS, expectation: 'no schema associated with the provided type parameter' },
    ])
  })

  it('refuses JSON that does not parse, and names every missing member', async () => {
    const [f] = failures(await run(urbanairship(null, '{ '))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '{ ' })
    expect(failures(await run(urbanairship(null, '{ "value": "str" }')))).toEqual([
      { field: 'occurred', value: null, expectation: "could not extract 'occurred': DecodingFailure at .occurred: Missing required field" },
      { field: 'id', value: null, expectation: "could not extract 'id': DecodingFailure at .id: Missing required field" },
      { field: 'processed', value: null, expectation: "could not extract 'processed': DecodingFailure at .processed: Missing required field" },
      { actual: null, expectedMapping: URBANAIRSHIP_SCHEMAS, expectation: 'cannot determine event type: type parameter not provided' },
    ])
  })

  it('refuses an occurrence time that is not a date-time', async () => {
    expect(failures(await run(urbanairship(null, JSON.stringify({ ...EVENT, occurred: 'yesterday' }))))).toEqual([{ field: 'occurred', value: 'yesterday', expectation: 'not an ISO-8601 date-time' }])
  })

  it('refuses a content type and a missing body', async () => {
    expect(failures(await run(urbanairship('a/type', JSON.stringify(EVENT))))).toEqual([{ field: 'contentType', value: 'a/type', expectation: 'expected no content type' }])
    expect(failures(await run(urbanairship(null, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
  })
})
