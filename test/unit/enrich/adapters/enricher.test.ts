import { describe, expect, it } from 'vitest'
import { badRows, goodColumns, only, payload, run } from '../helpers'
import mandrillFx from './fixtures/mandrill.json'
import cloudfrontFx from './fixtures/cloudfront.json'

const FORM = 'application/x-www-form-urlencoded'

describe('webhook events through the enricher', () => {
  it('validates a Mailchimp subscribe against its schema and fills the atomic fields', async () => {
    const body = 'type=subscribe&fired_at=2014-11-04+09%3A42%3A31&data%5Bid%5D=e7c77d3852&data%5Bemail%5D=agent%40snowplowanalytics.com&data%5Bemail_type%5D=html&data%5Bip_opt%5D=82.225.169.220&data%5Bweb_id%5D=210833825&data%5Bmerges%5D%5BEMAIL%5D=agent%40snowplowanalytics.com&data%5Bmerges%5D%5BFNAME%5D=Agent&data%5Bmerges%5D%5BLNAME%5D=Smith&data%5Blist_id%5D=f1243a3b12'
    const c = goodColumns(await run(payload({ path: '/com.mailchimp/v1', querystring: 'aid=shop', contentType: FORM, body })))
    expect(c).toMatchObject({ app_id: 'shop', platform: 'srv', event: 'unstruct', v_tracker: 'com.mailchimp-v1', event_vendor: 'com.mailchimp', event_name: 'subscribe', event_format: 'jsonschema', event_version: '1-0-0' })
    expect(JSON.parse(c.unstruct_event!).data).toEqual({
      schema: 'iglu:com.mailchimp/subscribe/jsonschema/1-0-0',
      data: {
        type: 'subscribe',
        fired_at: '2014-11-04T09:42:31.000Z',
        data: { id: 'e7c77d3852', email: 'agent@snowplowanalytics.com', email_type: 'html', ip_opt: '82.225.169.220', web_id: '210833825', merges: { EMAIL: 'agent@snowplowanalytics.com', FNAME: 'Agent', LNAME: 'Smith' }, list_id: 'f1243a3b12' },
      },
    })
  })

  it('makes one good event per Mandrill event, each valid against its schema', async () => {
    const o = await run(payload({ path: '/com.mandrill/v1', contentType: FORM, body: mandrillFx.nine.body }))
    expect(badRows(o)).toEqual([])
    expect(only(o, 'incomplete')).toEqual([])
    expect(only(o, 'good')).toHaveLength(10)
  })

  it('takes a CloudFront line’s time, IP and user agent as the collector’s', async () => {
    const line = cloudfrontFx.e7.line.split('\t').map((f, i) => (i === 16 ? 'https' : f)).join('\t')
    const c = goodColumns(await run(payload({ path: '/com.amazon.aws.cloudfront/wd_access_log', body: line })))
    expect(c).toMatchObject({ collector_tstamp: '2013-10-07 23:35:30.000', user_ipaddress: '255.255.255.255', event_name: 'wd_access_log', page_url: 'http://snowplowanalytics.com/analytics/index.html' })
    expect(c.useragent).toBe('Mozilla/5.0%20(Macintosh;%20Intel%20Mac%20OS%20X%2010_9_2)%20AppleWebKit/537.36%20(KHTML,%20like%20Gecko)%20Chrome/34.0.1847.131%20Safari/537.36')
  })

  it('writes an adapter_failures bad row naming the vendor and version', async () => {
    const [row] = badRows(await run(payload({ path: '/com.statusgator/v1', contentType: 'application/json', body: 'x=1' })))
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0')
    expect(row.data.failure).toMatchObject({ vendor: 'com.statusgator', version: 'v1', messages: [{ field: 'contentType', value: 'application/json', expectation: 'expected application/x-www-form-urlencoded' }] })
    expect(row.data.payload).toMatchObject({ vendor: 'com.statusgator', version: 'v1', body: 'x=1' })
  })

  it('writes the schema mapping failure of an unknown event type as Snowplow does', async () => {
    const [row] = badRows(await run(payload({ path: '/com.pingdom/v1', querystring: 'message=%7B%22action%22%3A%22wake%22%7D' })))
    expect(row.data.failure.messages).toEqual([
      {
        actual: 'wake',
        expectedMapping: {
          assign: 'iglu:com.pingdom/incident_assign/jsonschema/1-0-0',
          notify_user: 'iglu:com.pingdom/incident_notify_user/jsonschema/1-0-0',
          notify_of_close: 'iglu:com.pingdom/incident_notify_of_close/jsonschema/1-0-0',
        },
        expectation: 'no schema associated with the provided type parameter',
      },
    ])
  })
})
