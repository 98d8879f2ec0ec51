import { describe, expect, it } from 'vitest'
import { HUBSPOT_SCHEMAS } from '../../../../lib/core/enrich/adapters/hubspot'
import { eventsOf, failures, run, ue, webhookPayload } from './helpers'
import fx from './fixtures/hubspot.json'

const JSON_TYPE = 'application/json'
const hubspot = (contentType: string | null, body: string | null) => webhookPayload('com.hubspot', 'v1', { contentType, body })

describe('HubSpot webhook (/com.hubspot/v1)', () => {
  it('turns each subscription event into its event (occurredAt converted, subscriptionType left out)', async () => {
    expect(eventsOf(await run(hubspot(JSON_TYPE, fx.creation.body)))).toEqual([{ tv: 'com.hubspot-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(fx.creation.ue_pr) }])
  })

  it('reads every event of the array', async () => {
    const all = eventsOf(await run(hubspot(JSON_TYPE, '[{"subscriptionType":"deal.deletion","eventId":16},{"subscriptionType":"company.propertyChange","eventId":17}]')))
    expect(all.map((e) => e.ue_pr)).toEqual([ue(HUBSPOT_SCHEMAS['deal.deletion']!, { eventId: 16 }), ue(HUBSPOT_SCHEMAS['company.propertyChange']!, { eventId: 17 })])
  })

  it('names an unknown subscription type by index', async () => {
    expect(failures(await run(hubspot(JSON_TYPE, fx.unknown)))).toEqual([{ actual: 'contact', expectedMapping: HUBSPOT_SCHEMAS, expectation: 'no schema associated with the provided type parameter at index 0' }])
  })

  it('refuses JSON that does not parse or is not an array', async () => {
    const [f] = failures(await run(hubspot(JSON_TYPE, '{"something:"some"}'))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '{"something:"some"}' })
    expect(f.error).toMatch(/^invalid json: /)
    expect(failures(await run(hubspot(JSON_TYPE, '{}')))).toEqual([{ field: 'body', value: '{}', expectation: 'not a json array' }])
  })

  it('refuses a missing body and a missing or other content type', async () => {
    expect(failures(await run(hubspot(JSON_TYPE, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: not events to process' }])
    expect(failures(await run(hubspot(null, fx.unknown)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/json' }])
    const ct = 'application/x-www-form-urlencoded'
    expect(failures(await run(hubspot(ct, fx.unknown)))).toEqual([{ field: 'contentType', value: ct, expectation: 'expected application/json' }])
  })
})
