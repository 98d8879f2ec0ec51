import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const FORM = 'application/x-www-form-urlencoded'
const QS: [string, string][] = [['schema', 'iglu:com.unbounce/test/jsonschema/1-0-0']]
const unbounce = (contentType: string | null, body: string | null) => webhookPayload('com.unbounce', 'v1', { qs: QS, contentType, body })

const DATA = '%7B%22email%22%3A%5B%22test%40snowplowanalytics.com%22%5D%2C%22ip_address%22%3A%5B%22200.121.220.179%22%5D%2C%22time_submitted%22%3A%5B%2204%3A17%20PM%20UTC%22%5D%7D'
const PAGE_ID = 'page_id=f7afd389-65a3-45fa-8bad-b7a42236044c'
const PAGE_NAME = 'page_name=Test-Webhook'
const VARIANT = 'variant=a'
const PAGE_URL = 'page_url=http%3A%2F%2Funbouncepages.com%2Ftest-webhook-1'
const form = (...parts: string[]) => parts.join('&')

describe('Unbounce webhook (/com.unbounce/v1)', () => {
  it('turns the form post into a form_post event: data.json parsed, data.xml dropped, names camelCased', async () => {
    const body =
      'page_url=http%3A%2F%2Funbouncepages.com%2Fwayfaring-147%2F&page_name=Wayfaring&page_id=7648177d-7323-4330-b4f9-9951a52138b6&variant=a&data.json=%7B%22userfield1%22%3A%5B%22asdfasdf%22%5D%2C%22ip_address%22%3A%5B%2285.73.39.163%22%5D%2C%22page_uuid%22%3A%5B%227648177d-7323-4330-b4f9-9951a52138b6%22%5D%2C%22variant%22%3A%5B%22a%22%5D%2C%22time_submitted%22%3A%5B%2211%3A45+AM+UTC%22%5D%2C%22date_submitted%22%3A%5B%222017-11-15%22%5D%2C%22page_url%22%3A%5B%22http%3A%2F%2Funbouncepages.com%2Fwayfaring-147%2F%22%5D%2C%22page_name%22%3A%5B%22Wayfaring%22%5D%7D&data.xml=%3C%3Fxml+version%3D%221.0%22+encoding%3D%22UTF-8%22%3F%3E%3Cform_data%3E%3Cuserfield1%3Easdfasdf%3C%2Fuserfield1%3E%3C%2Fform_data%3E'
    expect(oneEvent(await run(unbounce(FORM, body)))).toEqual({
      tv: 'com.unbounce-v1',
      e: 'ue',
      p: 'srv',
      ue_pr: ue('iglu:com.unbounce/form_post/jsonschema/1-0-0', {
        'data.json': {
          userfield1: ['asdfasdf'],
          ipAddress: ['85.73.39.163'],
          pageUuid: ['7648177d-7323-4330-b4f9-9951a52138b6'],
          variant: ['a'],
          timeSubmitted: ['11:45 AM UTC'],
          dateSubmitted: ['2017-11-15'],
          pageUrl: ['http://unbouncepages.com/wayfaring-147/'],
          pageName: ['Wayfaring'],
        },
        variant: 'a',
        pageId: '7648177d-7323-4330-b4f9-9951a52138b6',
        pageName: 'Wayfaring',
        pageUrl: 'http://unbouncepages.com/wayfaring-147/',
      }),
    })
  })

  it('refuses a missing or empty body', async () => {
    for (const body of [null, '']) expect(failures(await run(unbounce(FORM, body)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
  })

  it('refuses a missing or other content type', async () => {
    const body = form(PAGE_ID, PAGE_NAME, VARIANT, PAGE_URL, `data.json=${DATA}`)
    expect(failures(await run(unbounce(null, body)))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/x-www-form-urlencoded' }])
    expect(failures(await run(unbounce('application/json', body)))).toEqual([{ field: 'contentType', value: 'application/json', expectation: 'expected application/x-www-form-urlencoded' }])
  })

  it('names each missing field', async () => {
    const cases: [string, string][] = [
      [form(PAGE_ID, PAGE_NAME, VARIANT, PAGE_URL), 'data.json'],
      [form(PAGE_NAME, VARIANT, PAGE_URL, `data.json=${DATA}`), 'page_id'],
      [form(PAGE_ID, VARIANT, PAGE_URL, `data.json=${DATA}`), 'page_name'],
      [form(PAGE_ID, PAGE_NAME, PAGE_URL, `data.json=${DATA}`), 'variant'],
      [form(PAGE_ID, PAGE_NAME, VARIANT, `data.json=${DATA}`), 'page_url'],
    ]
    for (const [body, field] of cases) expect(failures(await run(unbounce(FORM, body)))).toEqual([{ field, value: null, expectation: `missing '${field}' field in body` }])
  })

  it('refuses an empty data.json', async () => {
    expect(failures(await run(unbounce(FORM, form(PAGE_ID, PAGE_NAME, VARIANT, PAGE_URL, 'data.json='))))).toEqual([{ field: 'data.json', value: null, expectation: "empty 'data.json' field in body" }])
  })

  it('refuses a data.json that is not JSON', async () => {
    const [f] = failures(await run(unbounce(FORM, form(PAGE_ID, PAGE_NAME, VARIANT, PAGE_URL, `data.json=%7B${DATA}`)))) as any[]
    expect(f.field).toBe('data.json')
    expect(f.value).toBe('{{"email":["test@snowplowanalytics.com"],"ip_address":["200.121.220.179"],"time_submitted":["04:17 PM UTC"]}')
    expect(f.error).toMatch(/^invalid json: /)
  })
})
