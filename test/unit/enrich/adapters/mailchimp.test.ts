import { describe, expect, it } from 'vitest'
import { formKeys, MAILCHIMP_SCHEMAS } from '../../../../lib/core/enrich/adapters/mailchimp'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'
import fx from './fixtures/mailchimp.json'

const FORM = 'application/x-www-form-urlencoded'
const mailchimp = (contentType: string | null, body: string | null, qs: [string, string][] = []) => webhookPayload('com.mailchimp', 'v1', { contentType, body, qs })

describe('Mailchimp webhook (/com.mailchimp/v1)', () => {
  it('splits bracketed names into keys', () => {
    expect(formKeys('data[merges][LNAME]')).toEqual(['data', 'merges', 'LNAME'])
    expect(formKeys('type')).toEqual(['type'])
  })

  it('nests bracketed fields and merges them', async () => {
    expect(oneEvent(await run(mailchimp(FORM, 'type=subscribe&data%5Bmerges%5D%5BLNAME%5D=Beemster')))).toEqual({
      tv: 'com.mailchimp-v1',
      e: 'ue',
      p: 'srv',
      ue_pr: ue('iglu:com.mailchimp/subscribe/jsonschema/1-0-0', { data: { merges: { LNAME: 'Beemster' } }, type: 'subscribe' }),
    })
    const e = oneEvent(await run(mailchimp(FORM, 'type=subscribe&data%5Bmerges%5D%5BFNAME%5D=Agent&data%5Bmerges%5D%5BLNAME%5D=Smith')))
    expect((e.ue_pr as any).data.data).toEqual({ data: { merges: { LNAME: 'Smith', FNAME: 'Agent' } }, type: 'subscribe' })
  })

  it('maps each type to its schema', async () => {
    for (const [type, schema] of Object.entries(MAILCHIMP_SCHEMAS)) {
      expect(oneEvent(await run(mailchimp(FORM, `type=${type}`))).ue_pr).toEqual(ue(schema, { type }))
    }
  })

  it('names an unknown or empty type', async () => {
    expect(failures(await run(mailchimp(FORM, 'type=bad')))).toEqual([{ actual: 'bad', expectedMapping: MAILCHIMP_SCHEMAS, expectation: 'no schema associated with the provided type parameter' }])
    expect(failures(await run(mailchimp(FORM, 'type=')))).toEqual([{ actual: '', expectedMapping: MAILCHIMP_SCHEMAS, expectation: 'cannot determine event type: type parameter empty' }])
  })

  it('converts fired_at and passes nuid through', async () => {
    expect(oneEvent(await run(mailchimp(FORM, fx.unsubscribe.body, [['nuid', '123']])))).toEqual({ tv: 'com.mailchimp-v1', e: 'ue', p: 'srv', nuid: '123', ue_pr: JSON.parse(fx.unsubscribe.ue_pr) })
  })

  it('keeps a fired_at in another form as it is', async () => {
    expect((oneEvent(await run(mailchimp(FORM, 'type=subscribe&fired_at=yesterday'))).ue_pr as any).data.data.fired_at).toBe('yesterday')
  })

  it('refuses a missing body and a missing or other content type', async () => {
    expect(failures(await run(mailchimp(FORM, null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    expect(failures(await run(mailchimp(null, 'type=subscribe')))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/x-www-form-urlencoded' }])
    expect(failures(await run(mailchimp('application/json', 'type=subscribe')))).toEqual([{ field: 'contentType', value: 'application/json', expectation: 'expected application/x-www-form-urlencoded' }])
  })

  it('refuses field names nested deeper than the maximum JSON depth', async () => {
    const name = 'data' + '%5Ba%5D'.repeat(40)
    const [f] = failures(await run(mailchimp(FORM, `type=subscribe&${name}=x`))) as any[]
    expect(f).toEqual({ field: 'body', value: 'data' + '[a]'.repeat(40), expectation: 'field name nests deeper than the maximum JSON depth (40)' })
    expect((await run(mailchimp(FORM, `type=subscribe&data${'%5Ba%5D'.repeat(38)}=x`))).ok).toBe(true)
  })

  it('refuses a form without a type', async () => {
    const body = 'fired_at=2014-10-22+13%3A10%3A40'
    expect(failures(await run(mailchimp(FORM, body)))).toEqual([{ field: 'body', value: body, expectation: 'no `type` parameter provided: cannot determine event type' }])
  })
})
