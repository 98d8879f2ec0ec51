import { describe, expect, it } from 'vitest'
import { MANDRILL_SCHEMAS } from '../../../../lib/core/enrich/adapters/mandrill'
import { eventsOf, failures, run, webhookPayload } from './helpers'
import fx from './fixtures/mandrill.json'

const FORM = 'application/x-www-form-urlencoded'
const mandrill = (contentType: string | null, body: string | null) => webhookPayload('com.mandrill', 'v1', { contentType, body })

describe('Mandrill webhook (/com.mandrill/v1)', () => {
  it('turns each event of the batch into its event (`ts` converted at any depth, `event` left out)', async () => {
    const all = eventsOf(await run(mandrill(FORM, fx.nine.body)))
    expect(all).toEqual(fx.nine.ue_pr.map((u) => ({ tv: 'com.mandrill-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(u) })))
  })

  it('reads the one-event batch', async () => {
    const [e] = eventsOf(await run(mandrill(FORM, 'mandrill_events=%5B%7B%22event%22%3A%20%22send%22%7D%5D')))
    expect((e!.ue_pr as any).data).toEqual({ schema: 'iglu:com.mandrill/message_sent/jsonschema/1-0-1', data: {} })
  })

  it('refuses a form that is not exactly one non-empty mandrill_events field', async () => {
    const cases: [string, string][] = [
      ['mandrill_events=', '`mandrill_events` field is empty'],
      ['mandrill_events=some&mandrill_extra=some', 'body should have size 1: actual size 2'],
      ['events_mandrill=something', 'no `mandrill_events` parameter provided'],
      ['', 'body should have size 1: actual size 0'],
    ]
    for (const [body, expectation] of cases) expect(failures(await run(mandrill(FORM, body)))).toEqual([{ field: 'body', value: body, expectation }])
  })

  it('refuses events that are not JSON, or not an array', async () => {
    const [f] = failures(await run(mandrill(FORM, 'mandrill_events=%5B%7B%22event%22%3A%22click%7D%5D'))) as any[]
    expect(f).toMatchObject({ field: 'mandril_events', value: '[{"event":"click}]' })
    expect(f.error).toMatch(/^invalid json: /)
    expect(failures(await run(mandrill(FORM, 'mandrill_events=%7B%7D')))).toEqual([{ field: 'mandrill_events', value: '{}', expectation: 'not a json array' }])
  })

  it('names every event whose type has no schema, by index', async () => {
    expect(failures(await run(mandrill(FORM, fx.threeBad)))).toEqual([
      { actual: 'sending', expectedMapping: MANDRILL_SCHEMAS, expectation: 'no schema associated with the provided type parameter at index 0' },
      { actual: 'deferred', expectedMapping: MANDRILL_SCHEMAS, expectation: 'no schema associated with the provided type parameter at index 1' },
      { actual: null, expectedMapping: MANDRILL_SCHEMAS, expectation: 'cannot determine event type: type parameter not provided at index 2' },
    ])
  })

  it('refuses an empty batch', async () => {
    expect(failures(await run(mandrill(FORM, 'mandrill_events=%5B%5D')))).toEqual([{ field: '', value: null, expectation: 'empty list of events' }])
  })

  it('refuses a missing body and a missing or other content type', async () => {
    const body = 'mandrill_events=%5B%7B%22event%22%3A%20%22subscribe%22%7D%5D'
    expect(failures(await run(mandrill(FORM, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    expect(failures(await run(mandrill(null, body)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/x-www-form-urlencoded' }])
    const ct = 'application/x-www-form-urlencoded; charset=utf-8'
    expect(failures(await run(mandrill(ct, body)))).toEqual([{ field: 'contentType', value: ct, expectation: 'expected application/x-www-form-urlencoded' }])
  })
})
