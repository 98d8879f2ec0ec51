import { describe, expect, it } from 'vitest'
import { failures, oneEvent, run, ue, webhookPayload } from './helpers'

const pingdom = (qs: [string, string | null][]) => webhookPayload('com.pingdom', 'v1', { qs })

describe('Pingdom webhook (/com.pingdom/v1)', () => {
  it('turns the `message` alert into an incident event, its `action` picking the schema and left out', async () => {
    const message = '{"check": "1421338", "checkname": "Webhooks_Test", "host": "7eef51c2.ngrok.com", "action": "assign", "incidentid": 3, "description": "down"}'
    expect(oneEvent(await run(pingdom([['p', 'apps'], ['message', message]])))).toEqual({
      tv: 'com.pingdom-v1',
      e: 'ue',
      p: 'apps',
      ue_pr: ue('iglu:com.pingdom/incident_assign/jsonschema/1-0-0', { check: '1421338', checkname: 'Webhooks_Test', host: '7eef51c2.ngrok.com', incidentid: 3, description: 'down' }),
    })
  })

  it('keeps a document without `action` as it is, and names the missing type', async () => {
    const r = await run(pingdom([['message', '{"actions":"assign","agent":"smith"}']]))
    expect(failures(r)).toEqual([
      { actual: null, expectedMapping: expect.objectContaining({ assign: 'iglu:com.pingdom/incident_assign/jsonschema/1-0-0' }), expectation: 'cannot determine event type: type parameter not provided' },
    ])
  })

  it('refuses values that are Python tuple reprs', async () => {
    expect(failures(await run(pingdom([['p', "(u'apps',)"]])))).toEqual([{ field: 'p', value: 'apps', expectation: "should not pass regex \\(u'([^']+)',\\)" }])
  })

  it('refuses an empty query string', async () => {
    expect(failures(await run(pingdom([])))).toEqual([{ field: 'querystring', value: null, expectation: 'empty querystring: no events to process' }])
  })

  it('refuses a query string without `message`', async () => {
    expect(failures(await run(pingdom([['p', 'apps']])))).toEqual([{ field: 'querystring', value: 'p=apps', expectation: 'no `message` parameter provided' }])
  })

  it('refuses a `message` that is not JSON', async () => {
    const [f] = failures(await run(pingdom([['message', '{"action":']]))) as { field: string; value: string; error: string }[]
    expect(f!.field).toBe('message')
    expect(f!.value).toBe('{"action":')
    expect(f!.error).toMatch(/^invalid json: /)
  })

  it('names an unknown action', async () => {
    expect(failures(await run(pingdom([['message', '{"action":"ping"}']])))).toEqual([
      { actual: 'ping', expectedMapping: expect.any(Object), expectation: 'no schema associated with the provided type parameter' },
    ])
  })
})
