import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const FORM = 'application/x-www-form-urlencoded'
const BODY =
  'service_name=CloudFlare&favicon_url=https%3A%2F%2Fdwxjd9cd6rwno.cloudfront.net%2Ffavicons%2Fcloudflare.ico&status_page_url=https%3A%2F%2Fwww.cloudflarestatus.com%2F&home_page_url=http%3A%2F%2Fwww.cloudflare.com&current_status=up&last_status=warn&occurred_at=2016-05-19T09%3A26%3A31%2B00%3A00'
const statusgator = (contentType: string | null, body: string | null) => webhookPayload('com.statusgator', 'v1', { contentType, body })

describe('StatusGator webhook (/com.statusgator/v1)', () => {
  it('turns the form into a status_change event with camelCase names', async () => {
    expect(oneEvent(await run(statusgator(FORM, BODY)))).toEqual({
      tv: 'com.statusgator-v1',
      e: 'ue',
      p: 'srv',
      ue_pr: ue('iglu:com.statusgator/status_change/jsonschema/1-0-0', {
        lastStatus: 'warn',
        statusPageUrl: 'https://www.cloudflarestatus.com/',
        serviceName: 'CloudFlare',
        faviconUrl: 'https://dwxjd9cd6rwno.cloudfront.net/favicons/cloudflare.ico',
        occurredAt: '2016-05-19T09:26:31+00:00',
        homePageUrl: 'http://www.cloudflare.com',
        currentStatus: 'up',
      }),
    })
  })

  it('refuses a missing or empty body', async () => {
    for (const body of [null, '']) expect(failures(await run(statusgator(FORM, body)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
  })

  it('refuses a missing or other content type', async () => {
    expect(failures(await run(statusgator(null, BODY)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/x-www-form-urlencoded' }])
    expect(failures(await run(statusgator('application/json', BODY)))).toEqual([{ field: 'contentType', value: 'application/json', expectation: 'expected application/x-www-form-urlencoded' }])
  })

  it('refuses a body a strict URI parser would not take', async () => {
    const body = `{${BODY}`
    expect(failures(await run(statusgator(FORM, body)))).toEqual([{ field: 'body', value: body, expectation: `could not parse body: Illegal character in query at index 18: http://localhost/?${body}` }])
  })
})
