import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, webhookPayload } from './helpers'
import fx from './fixtures/marketo.json'

const marketo = (body: string | null) => webhookPayload('com.marketo', 'v1', { contentType: 'application/json', body })

describe('Marketo webhook (/com.marketo/v1)', () => {
  it('turns the webhook object into an event with its dates converted', async () => {
    expect(oneEvent(await run(marketo(fx.event.body)))).toEqual({ tv: 'com.marketo-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(fx.event.ue_pr) })
  })

  it('refuses a missing body, JSON that does not parse, and JSON that is not an object', async () => {
    expect(failures(await run(marketo(null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    const [f] = failures(await run(marketo('{"a"'))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '{"a"' })
    expect(f.error).toMatch(/^invalid json: /)
    expect(failures(await run(marketo('[1]')))).toEqual([{ field: 'body', value: '[1]', expectation: 'not a json object' }])
  })
})
