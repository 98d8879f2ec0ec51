import { describe, expect, it } from 'vitest'
import { MAILGUN_SCHEMAS } from '../../../../lib/core/enrich/adapters/mailgun'
import { failures, oneEvent, run, webhookPayload } from './helpers'
import fx from './fixtures/mailgun.json'

const JSON_TYPE = 'application/json'
const mailgun = (contentType: string | null, body: string | null) => webhookPayload('com.mailgun', 'v1', { contentType, body })

describe('Mailgun webhook (/com.mailgun/v1)', () => {
  for (const type of ['delivered', 'opened', 'clicked', 'unsubscribed'] as const) {
    it(`turns a '${type}' event into its event (signature merged, timestamp converted, names camelCased, \`event\` left out)`, async () => {
      expect(oneEvent(await run(mailgun(JSON_TYPE, fx[type].body)))).toEqual({ tv: 'com.mailgun-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(fx[type].ue_pr) })
    })
  }

  it('keeps numbers as written', async () => {
    const r = await run(mailgun(JSON_TYPE, fx.delivered.body))
    expect(r.ok && r.events[0]!.parameters.get('ue_pr')).toContain('"sessionSeconds":0.4331989288330078')
  })

  it('keeps attachment-count only as an integer and drops body-plain', async () => {
    const body = JSON.stringify({ signature: { token: 't', timestamp: '1657907833', signature: 's' }, 'event-data': { event: 'opened', timestamp: 1, 'attachment-count': 2, 'body-plain': 'x' } })
    const data = (oneEvent(await run(mailgun(JSON_TYPE, body))).ue_pr as any).data.data
    expect(data).toEqual({ token: 't', timestamp: '2022-07-15T17:57:13.000Z', signature: 's', attachmentCount: 2 })
    const text = JSON.stringify({ signature: { token: 't', timestamp: '1', signature: 's' }, 'event-data': { event: 'opened', timestamp: 1, 'attachment-count': 'two' } })
    expect((oneEvent(await run(mailgun(JSON_TYPE, text))).ue_pr as any).data.data.attachmentCount).toBeUndefined()
  })

  it('refuses a missing or empty body', async () => {
    for (const body of [null, '']) expect(failures(await run(mailgun(JSON_TYPE, body)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
  })

  it('refuses a missing or other content type', async () => {
    expect(failures(await run(mailgun(null, 'body')))).toEqual([{ field: 'contentType', value: null, expectation: 'no content type: expected application/json' }])
    expect(failures(await run(mailgun('multipart/form-data', 'body')))).toEqual([{ field: 'contentType', value: 'multipart/form-data', expectation: 'expected application/json' }])
  })

  it('refuses a body that is not JSON', async () => {
    const [f] = failures(await run(mailgun(JSON_TYPE, 'body'))) as any[]
    expect(f).toMatchObject({ field: 'body', value: 'body' })
    expect(f.expectation).toMatch(/^could not parse body: invalid json: /)
  })

  it('refuses a body without an event type', async () => {
    expect(failures(await run(mailgun(JSON_TYPE, '{}')))).toEqual([{ field: 'body', value: '{}', expectation: 'no `event` parameter provided: cannot determine event type' }])
  })

  it('names an unknown event type', async () => {
    expect(failures(await run(mailgun(JSON_TYPE, fx.released)))).toEqual([{ actual: 'released', expectedMapping: MAILGUN_SCHEMAS, expectation: 'no schema associated with the provided type parameter' }])
  })

  it('names the missing signature field', async () => {
    expect(failures(await run(mailgun(JSON_TYPE, fx.noTimestamp)))).toEqual([{ field: 'timestamp', value: null, expectation: "missing 'timestamp'" }])
    expect(failures(await run(mailgun(JSON_TYPE, fx.noToken)))).toEqual([{ field: 'token', value: null, expectation: "missing 'token'" }])
    expect(failures(await run(mailgun(JSON_TYPE, fx.noSignature)))).toEqual([{ field: 'signature', value: null, expectation: "missing 'signature'" }])
  })
})
