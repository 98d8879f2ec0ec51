import { describe, expect, it } from 'vitest'
import { VERO_SCHEMAS } from '../../../../lib/core/enrich/adapters/vero'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'
import fx from './fixtures/vero.json'

const vero = (body: string | null) => webhookPayload('com.getvero', 'v1', { contentType: 'application/json', body })

describe('Vero webhook (/com.getvero/v1)', () => {
  const cases: [keyof typeof fx, string][] = [
    ['e1', 'sent'], ['e2', 'delivered'], ['e3', 'opened'], ['e4', 'clicked'], ['e5', 'bounced'], ['e6', 'unsubscribed'], ['e7', 'user_created'], ['e8', 'user_updated'],
  ]
  for (const [k, type] of cases) {
    it(`turns a '${type}' event into its event (timestamps converted, type left out, _tags renamed)`, async () => {
      expect(oneEvent(await run(vero(fx[k].body)))).toEqual({ tv: 'com.getvero-v1', e: 'ue', p: 'srv', ue_pr: JSON.parse(fx[k].ue_pr) })
    })
  }

  it('maps each type to its schema', async () => {
    for (const [type, schema] of Object.entries(VERO_SCHEMAS)) expect(oneEvent(await run(vero(`{"type":"${type}"}`))).ue_pr).toEqual(ue(schema, {}))
  })

  it('refuses a missing body, JSON that does not parse, and a missing or unknown type', async () => {
    expect(failures(await run(vero(null)))).toEqual([{ field: 'body', value: null, expectation: 'empty body: no events to process' }])
    const [f] = failures(await run(vero('{'))) as any[]
    expect(f).toMatchObject({ field: 'body', value: '{' })
    expect(failures(await run(vero('{}')))).toEqual([{ field: 'type', value: null, expectation: "could not extract 'type': DecodingFailure at .type: Missing required field" }])
    expect(failures(await run(vero('{"type":1}')))).toEqual([{ field: 'type', value: null, expectation: "could not extract 'type': DecodingFailure at .type: Got value '1' with wrong type, expecting string" }])
    expect(failures(await run(vero('{"type":"x"}')))).toEqual([{ actual: 'x', expectedMapping: VERO_SCHEMAS, expectation: 'no schema associated with the provided type parameter' }])
  })
})
