import { describe, expect, it } from 'vitest'
import { javaUrlDecode } from '../../../../lib/core/enrich/adapters/cloudfront'
import { failures, run, webhookPayload } from './helpers'
import fx from './fixtures/cloudfront.json'

const cloudfront = (body: string | null) => webhookPayload('com.amazon.aws.cloudfront', 'wd_access_log', { body })
const URL = 'http://snowplowanalytics.com/analytics/index.html'
const SINGLE_ENCODED_UA =
  'Mozilla/5.0%20(Macintosh;%20Intel%20Mac%20OS%20X%2010_9_2)%20AppleWebKit/537.36%20(KHTML,%20like%20Gecko)%20Chrome/34.0.1847.131%20Safari/537.36'

describe('CloudFront access log adapter (/com.amazon.aws.cloudfront/wd_access_log)', () => {
  for (const [k, fields] of [['e1', 12], ['e2', 15], ['e3', 18], ['e4', 19], ['e5', 23], ['e6', 24], ['e7', 26]] as const) {
    it(`turns a line of ${fields} fields into an access log event, with the line's time, client IP and user agent`, async () => {
      expect(fx[k].line.split('\t')).toHaveLength(fields)
      const r = await run(cloudfront(fx[k].line))
      if (!r.ok) throw new Error(JSON.stringify(r.messages))
      expect(r.events).toHaveLength(1)
      const e = r.events[0]!
      expect(Object.fromEntries([...e.parameters].map(([n, v]) => [n, n === 'ue_pr' ? JSON.parse(v!) : v]))).toEqual({
        tv: 'com.amazon.aws.cloudfront/wd_access_log',
        e: 'ue',
        p: 'srv',
        url: URL,
        ue_pr: JSON.parse(fx[k].ue_pr),
      })
      expect(e.payload.timestamp).toBe(Date.parse('2013-10-07T23:35:30.000Z'))
      expect(e.payload.ipAddress).toBe('255.255.255.255')
      expect(e.payload.userAgent).toBe(SINGLE_ENCODED_UA)
      expect(e.payload.refererUri).toBeNull()
    })
  }

  it('writes timeTaken as a number', async () => {
    const r = await run(cloudfront(fx.e7.line))
    expect(r.ok && r.events[0]!.parameters.get('ue_pr')).toContain('"csBytes":90,"timeTaken":0.001,')
  })

  it('refuses a line of another field count', async () => {
    const body = '2013-10-07\t23:35:30\tc\t\t'
    expect(failures(await run(cloudfront(body)))).toEqual([{ field: 'body', value: body, expectation: 'access log contained 5 fields, expected 12, 15, 18, 19, 23, 24 or 26' }])
    expect(failures(await run(cloudfront(null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body' }])
  })

  it('names an unreadable timestamp first, then the unreadable fields', async () => {
    const body = `a\tb\tc\td\te\tf\tg\th\ti\t${URL}\tk\ta=b%2520c`
    expect(failures(await run(cloudfront(body)))).toEqual([
      { field: 'dateTime', value: 'a b', expectation: 'could not convert access log timestamp: Invalid format: "aTb+00:00"' },
      { field: 'scBytes', value: 'd', expectation: 'cannot be converted to Int' },
    ])
    const late = fx.e7.line.replace('23:35:30', '23:35:30x').replace('\t90\t0.001\t', '\tninety\tslow\t')
    expect(failures(await run(cloudfront(late)))).toEqual([
      { field: 'dateTime', value: '2013-10-07 23:35:30x', expectation: 'could not convert access log timestamp: Invalid format: "2013-10-07T23:35:30x+00:00" is malformed at "x+00:00"' },
      { field: 'timeTaken', value: 'slow', expectation: 'cannot be converted to Double' },
      { field: 'csBytes', value: 'ninety', expectation: 'cannot be converted to Int' },
    ])
    const month = fx.e1.line.replace('2013-10-07', '2013-13-07')
    expect(failures(await run(cloudfront(month)))).toEqual([
      { field: 'dateTime', value: '2013-13-07 23:35:30', expectation: 'could not convert access log timestamp: Cannot parse "2013-13-07T23:35:30+00:00": Value 13 for monthOfYear must be in the range [1,12]' },
    ])
  })

  it('refuses a year beyond what a date can hold', async () => {
    const far = fx.e1.line.replace('2013-10-07', '999999999-10-07')
    expect(failures(await run(cloudfront(far)))).toEqual([
      { field: 'dateTime', value: '999999999-10-07 23:35:30', expectation: 'could not convert access log timestamp: Cannot parse "999999999-10-07T23:35:30+00:00": Value 999999999 for year must be in the range [-271821,275760]' },
    ])
  })

  it('names a user agent that does not URL-decode', async () => {
    const body = fx.e1.line.split('\t').map((f, i) => (i === 10 ? 'Mozilla%zz' : f)).join('\t')
    expect(failures(await run(cloudfront(body)))).toEqual([
      { field: 'csUserAgent', value: 'Mozilla%zz', expectation: 'Exception URL-decoding (encoding UTF-8): URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 0 in: "zz"' },
    ])
  })

  it('URL-decodes as Java does', () => {
    expect(javaUrlDecode('a+b%20c%C3%A9')).toEqual({ ok: true, value: 'a b cé' })
    expect(javaUrlDecode('a%2')).toEqual({ ok: false, error: 'URLDecoder: Incomplete trailing escape (%) pattern' })
    expect(javaUrlDecode('%-1')).toEqual({ ok: false, error: 'URLDecoder: Illegal hex characters in escape (%) pattern - negative value' })
  })
})
