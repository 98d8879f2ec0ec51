import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const callrail = (qs: [string, string | null][]) => webhookPayload('com.callrail', 'v1', { qs })

describe('CallRail webhook (/com.callrail/v1)', () => {
  it('turns the query string into a call_complete event with typed values', async () => {
    const qs: [string, string][] = [
      ['answered', 'true'], ['callercity', 'BAKERSFIELD'], ['callercountry', 'US'], ['callername', 'SKYPE CALLER'], ['callernum', '+12612230240'],
      ['callerstate', 'CA'], ['callerzip', '92307'], ['callsource', 'keyword'], ['datetime', '2014-10-09 16:23:45'], ['destinationnum', '2012032051'],
      ['duration', '247'], ['first_call', 'true'], ['ga', ''], ['gclid', ''], ['id', '201235151'], ['ip', '86.178.163.7'], ['keywords', ''],
      ['kissmetrics_id', ''], ['landingpage', 'http://acme.com/'], ['recording', 'http://app.callrail.com/calls/201235151/recording/9f59ad59ba1cfa264312'],
      ['referrer', 'direct'], ['referrermedium', 'Direct'], ['trackingnum', '+12012311668'], ['transcription', ''], ['utm_campaign', ''],
      ['utm_content', ''], ['utm_medium', ''], ['utm_source', ''], ['utm_term', ''], ['utma', ''], ['utmb', ''], ['utmc', ''], ['utmv', ''],
      ['utmx', ''], ['utmz', ''], ['cv', 'clj-0.6.0-tom-0.0.4'], ['nuid', '-'],
    ]
    expect(oneEvent(await run(callrail(qs)))).toEqual({
      tv: 'com.callrail-v1',
      e: 'ue',
      p: 'srv',
      cv: 'clj-0.6.0-tom-0.0.4',
      nuid: '-',
      ue_pr: ue('iglu:com.callrail/call_complete/jsonschema/1-0-2', {
        duration: 247, utm_source: null, utmv: null, ip: '86.178.163.7', utmx: null, ga: null, destinationnum: '2012032051',
        datetime: '2014-10-09T16:23:45.000Z', kissmetrics_id: null, landingpage: 'http://acme.com/', callerzip: '92307', gclid: null,
        callername: 'SKYPE CALLER', utmb: null, id: '201235151', callernum: '+12612230240', utm_content: null, trackingnum: '+12012311668',
        referrermedium: 'Direct', utm_campaign: null, keywords: null, transcription: null, utmz: null, utma: null, referrer: 'direct',
        callerstate: 'CA', recording: 'http://app.callrail.com/calls/201235151/recording/9f59ad59ba1cfa264312', first_call: true, utmc: null,
        callercountry: 'US', utm_medium: null, callercity: 'BAKERSFIELD', utm_term: null, answered: true, callsource: 'keyword',
      }),
    })
  })

  it('keeps values that are not of their type as strings', async () => {
    const e = oneEvent(await run(callrail([['duration', '2.5'], ['answered', 'yes'], ['datetime', '9 October 2014']])))
    expect((e.ue_pr as any).data.data).toEqual({ duration: '2.5', answered: 'yes', datetime: '9 October 2014' })
  })

  it('refuses an empty query string', async () => {
    expect(failures(await run(callrail([])))).toEqual([{ field: 'querystring', value: null, expectation: 'empty querystring' }])
  })
})
