import { describe, expect, it } from 'vitest'
import { PAGERDUTY_SCHEMAS, reformat } from '../../../../lib/core/enrich/adapters/pagerduty'
import { jsonText, parseTree, type J } from '../../../../lib/core/enrich/adapters/jtree'
import { eventsOf, failures, run, webhookPayload } from './helpers'
import fx from './fixtures/pagerduty.json'

const JSON_TYPE = 'application/json'
const pagerduty = (contentType: string | null, body: string | null) => webhookPayload('com.pagerduty', 'v1', { contentType, body })
const tree = (s: string): J => {
  const r = parseTree(s, 40)
  if (!r.ok) throw new Error(r.error)
  return r.value
}
const reformatted = (s: string) => JSON.parse(jsonText(reformat(tree(s))))

describe('PagerDuty webhook (/com.pagerduty/v1)', () => {
  it('replaces "null" strings by null, in nested objects too', () => {
    expect(reformatted('{"type":"null"}')).toEqual({ type: null })
    expect(reformatted('{"type":"null","some":"null"}')).toEqual({ type: null, some: null })
    expect(reformatted('{"type": {"some":"null"}}')).toEqual({ type: { some: null } })
  })

  it('drops the incident. prefix of the type', () => {
    expect(reformatted('{"type":"incident.trigger"}')).toEqual({ type: 'trigger' })
  })

  it('corrects the offsets of created_on and last_status_change_on', () => {
    expect(reformatted('{"created_on":"2014-11-12T18:53:47 00:00"}')).toEqual({ created_on: '2014-11-12T18:53:47+00:00' })
    expect(reformatted('{"created_on":"2014-11-12T18:53:47 00:00","last_status_change_on":"2014-11-12T18:53:47 00:00"}')).toEqual({
      created_on: '2014-11-12T18:53:47+00:00',
      last_status_change_on: '2014-11-12T18:53:47+00:00',
    })
    expect(reformatted('{"created_on":"2014-12-15T08:19:54Z","nested":{"created_on":"2014-11-12T18:53:47 00:00"}}')).toEqual({
      created_on: '2014-12-15T08:19:54Z',
      nested: { created_on: '2014-11-12T18:53:47+00:00' },
    })
  })

  it('turns each message into an incident event', async () => {
    expect(eventsOf(await run(pagerduty(JSON_TYPE, fx.e6.body)))).toEqual([{ tv: 'com.pagerduty-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(fx.e6.ue_pr) }])
  })

  it('names a message type without a schema', async () => {
    expect(failures(await run(pagerduty(JSON_TYPE, fx.e7)))).toEqual([{ actual: 'trigger', expectedMapping: PAGERDUTY_SCHEMAS, expectation: 'no schema associated with the provided type parameter at index 0' }])
  })

  it('refuses a body that is not JSON or has no messages array', async () => {
    const [f] = failures(await run(pagerduty(JSON_TYPE, '{"something:"some"}'))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '{"something:"some"}' })
    expect(f.error).toMatch(/^invalid json: /)
    expect(failures(await run(pagerduty(JSON_TYPE, '{"somekey":"key"}')))).toEqual([{ field: 'messages', value: '{"somekey":"key"}', expectation: 'field `messages` is not an array' }])
  })

  it('refuses a missing body and a missing or other content type', async () => {
    expect(failures(await run(pagerduty(JSON_TYPE, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    expect(failures(await run(pagerduty(null, fx.e7)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/json' }])
    const ct = 'application/x-www-form-urlencoded'
    expect(failures(await run(pagerduty(ct, fx.e7)))).toEqual([{ field: 'contentType', value: ct, expectation: 'expected application/json' }])
  })
})
