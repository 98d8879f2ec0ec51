import { describe, expect, it } from 'vitest'
import { testClients, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stack = useLocalStack({
  environment: {
    ACCEPT_LIMITED_USE_LICENSE: 'yes',
    FLOE_IGLU_CENTRAL_URL: '',
  },
})
const kinesis = () => testClients().kinesis

const SENDGRID_EVENT = (id: string, event: string) => ({
  email: 'example@test.com',
  timestamp: 1446549615,
  'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
  event,
  category: 'cat facts',
  sg_event_id: id,
  sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
})

describe('webhooks end to end: vendor requests → collector → raw → enrich → good/bad', () => {
  it('turns Mailchimp, Pingdom and SendGrid webhooks into events of their schemas', async () => {
    const url = stack.current.url
    const requests = [
      // Mailchimp: a form POST
      fetch(`${url}/com.mailchimp/v1?aid=e2e-webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'type=subscribe&fired_at=2014-11-04+09%3A42%3A31&data%5Bid%5D=e7c77d3852&data%5Bemail%5D=agent%40snowplowanalytics.com&data%5Bemail_type%5D=html&data%5Bmerges%5D%5BFNAME%5D=Agent&data%5Blist_id%5D=f1243a3b12',
      }),
      // Pingdom: a GET with the alert in `message`
      fetch(`${url}/com.pingdom/v1?aid=e2e-webhooks&message=${encodeURIComponent('{"check":"1421338","checkname":"Webhooks_Test","host":"7eef51c2.ngrok.com","action":"notify_of_close","incidentid":3,"description":"up"}')}`),
      // SendGrid: a JSON array of two events
      fetch(`${url}/com.sendgrid/v3?aid=e2e-webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([SENDGRID_EVENT('sZROwMGMagFgnOEmSdvhig==', 'processed'), SENDGRID_EVENT('jWmZXTZbtHTV2-S47asrww==', 'delivered')]),
      }),
      // Mailgun with a form body: an adapter failure
      fetch(`${url}/com.mailgun/v1`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'event=delivered' }),
    ]
    for (const r of await Promise.all(requests)) expect(r.status).toBe(200)

    await stack.current.drain()
    const names = stack.current.names.streams
    const [good, bad] = await Promise.all([readTexts(kinesis(), names.good), readTexts(kinesis(), names.bad)])
    const events = good.map((l) => l.split('\t')).filter((c) => c[0] === 'e2e-webhooks')
    // v_tracker, event_vendor, event_name
    expect(events.map((c) => [c[9], c[125], c[126]]).sort()).toEqual([
      ['com.mailchimp-v1', 'com.mailchimp', 'subscribe'],
      ['com.pingdom-v1', 'com.pingdom', 'incident_notify_of_close'],
      ['com.sendgrid-v3', 'com.sendgrid', 'delivered'],
      ['com.sendgrid-v3', 'com.sendgrid', 'processed'],
    ])
    for (const c of events) expect(c[1]).toBe('srv')
    const mailchimp = events.find((c) => c[9] === 'com.mailchimp-v1')!
    expect(JSON.parse(mailchimp[58]!).data.data).toEqual({
      type: 'subscribe',
      fired_at: '2014-11-04T09:42:31.000Z',
      data: { id: 'e7c77d3852', email: 'agent@snowplowanalytics.com', email_type: 'html', merges: { FNAME: 'Agent' }, list_id: 'f1243a3b12' },
    })
    const processed = events.find((c) => c[126] === 'processed')!
    expect(JSON.parse(processed[58]!).data.data.timestamp).toBe('2015-11-03T11:20:15.000Z')

    const failure = bad.map((b) => JSON.parse(b)).find((r) => r.data.failure?.vendor === 'com.mailgun')
    expect(failure.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0')
    expect(failure.data.failure.messages).toEqual([{ field: 'contentType', value: 'application/x-www-form-urlencoded', expectation: 'expected application/json' }])
  })
})
