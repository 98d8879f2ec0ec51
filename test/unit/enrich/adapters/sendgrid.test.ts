import { describe, expect, it } from 'vitest'
import { SENDGRID_SCHEMAS } from '../../../../lib/core/enrich/adapters/sendgrid'
import { adapt } from '../../../../lib/core/enrich/adapters'
import { schemaOverrides } from '../../../../lib/core/enrich/adapters/schemas'
import { resolver } from '../helpers'
import { eventsOf, failures, oneEvent, run, ue, webhookPayload } from './helpers'
import fx from './fixtures/sendgrid.json'

const JSON_TYPE = 'application/json'
const sendgrid = (contentType: string | null, body: string | null) => webhookPayload('com.sendgrid', 'v3', { contentType, body })

const PROCESSED = {
  email: 'example@test.com',
  timestamp: 1446549615,
  'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
  event: 'processed',
  category: 'cat facts',
  sg_event_id: 'sZROwMGMagFgnOEmSdvhig==',
  sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  marketing_campaign_id: 12345,
  marketing_campaign_name: 'campaign name',
  marketing_campaign_version: 'B',
  marketing_campaign_split_id: 13471,
}

describe('SendGrid webhook (/com.sendgrid/v3)', () => {
  it('turns each event of the sample into an event of its type', async () => {
    const all = eventsOf(await run(sendgrid(JSON_TYPE, fx.sample)))
    expect(all).toHaveLength(11)
    expect(all.map((e) => (e.ue_pr as any).data.schema).sort()).toEqual(Object.values(SENDGRID_SCHEMAS).sort())
    for (const e of all) expect(e).toMatchObject({ tv: 'com.sendgrid-v3', e: 'ue', p: 'srv' })
  })

  it('leaves out the `event` member and converts the timestamp', async () => {
    expect(oneEvent(await run(sendgrid(JSON_TYPE, JSON.stringify([PROCESSED]))))).toEqual({
      tv: 'com.sendgrid-v3',
      e: 'ue',
      p: 'srv',
      ue_pr: ue('iglu:com.sendgrid/processed/jsonschema/3-0-0', { ...Object.fromEntries(Object.entries(PROCESSED).filter(([k]) => k !== 'event')), timestamp: '2015-11-03T11:20:15.000Z' }),
    })
  })

  it('keeps one event per sg_event_id', async () => {
    expect(eventsOf(await run(sendgrid(JSON_TYPE, JSON.stringify([PROCESSED, PROCESSED]))))).toHaveLength(1)
  })

  it('accepts content types with a charset', async () => {
    expect((await run(sendgrid('application/json; charset=utf-8', fx.sample))).ok).toBe(true)
  })

  it('refuses a missing body and a missing or other content type', async () => {
    expect(failures(await run(sendgrid(JSON_TYPE, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    expect(failures(await run(sendgrid(null, fx.sample)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/json' }])
    expect(failures(await run(sendgrid('invalidtype/invalid', fx.sample)))).toEqual([{ field: 'contentType', value: 'invalidtype/invalid', expectation: 'expected application/json' }])
  })

  it('names an unsupported event type', async () => {
    expect(failures(await run(sendgrid(JSON_TYPE, JSON.stringify([{ ...PROCESSED, event: 'moon landing' }]))))).toEqual([
      { actual: 'moon landing', expectedMapping: SENDGRID_SCHEMAS, expectation: 'no schema associated with the provided type parameter at index 0' },
    ])
  })

  it('refuses JSON that does not parse, is not an array, or is an empty array', async () => {
    const [f] = failures(await run(sendgrid(JSON_TYPE, '[ '))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '[ ' })
    expect(f.error).toMatch(/^invalid json: /)
    expect(failures(await run(sendgrid(JSON_TYPE, '{}')))).toEqual([{ field: 'body', value: '{}', expectation: 'body is not a json array' }])
    expect(failures(await run(sendgrid(JSON_TYPE, '[ ]')))).toEqual([{ field: '', value: null, expectation: 'empty list of events' }])
  })

  it('names the event without a type (the later of two with one sg_event_id)', async () => {
    const { event: _, ...noType } = PROCESSED
    expect(failures(await run(sendgrid(JSON_TYPE, JSON.stringify([PROCESSED, noType]))))).toEqual([
      { actual: null, expectedMapping: SENDGRID_SCHEMAS, expectation: 'cannot determine event type: type parameter not provided at index 1' },
    ])
  })

  it('uses a configured schema in place of the default', async () => {
    const o = schemaOverrides({ sendgrid: { processed: 'iglu:com.custom/processed/jsonschema/1-2-3' } })
    if (!o.ok) throw new Error(o.errors.join())
    const deferred = { ...PROCESSED, event: 'deferred', sg_event_id: 'jWmZXTZbtHTV2-S47asrww==', response: '400 try again later', attempt: '5' }
    const all = eventsOf(await adapt(sendgrid(JSON_TYPE, JSON.stringify([PROCESSED, deferred])), { resolver, maxJsonDepth: 40, schemaOverrides: o.overrides }))
    expect(all.map((e) => (e.ue_pr as any).data.schema)).toEqual(['iglu:com.custom/processed/jsonschema/1-2-3', 'iglu:com.sendgrid/deferred/jsonschema/3-0-0'])
    expect((all[1]!.ue_pr as any).data.data).toMatchObject({ timestamp: '2015-11-03T11:20:15.000Z', response: '400 try again later', attempt: '5' })
  })
})
