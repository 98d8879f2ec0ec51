/**
 * A stack started without the licence: events wait in the raw stream until a
 * signed-in user accepts the licence on the control plane, which starts
 * enrich's trigger at once (no restart) and clears /health's licence line.
 */
import { describe, expect, it } from 'vitest'
import { TEST_CREDENTIALS, testClients, useLocalStack, withAuth } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: '' } })
const MARKER = `licence-${Date.now()}`

const goodWithMarker = async () => (await readTexts(testClients().kinesis, stack.current.names.streams.good)).filter((t) => t.includes(MARKER))
const post = (body: string) =>
  fetch(`${stack.current.url}/control-plane/license`, {
    method: 'POST',
    headers: withAuth({ 'content-type': 'application/x-www-form-urlencoded', origin: stack.current.url }),
    body,
  })

describe('accepting the licence on the control plane', () => {
  it('starts enrich on the waiting events and clears /health', async () => {
    const before = await fetch(`${stack.current.url}/health`)
    expect(before.status).toBe(200)
    expect(await before.text()).toMatch(/^ok\nenrich-raw is off on purpose since \S+: enrich is off until the licence is accepted/)
    const state = await fetch(`${stack.current.url}/control-plane/license`, { headers: withAuth() })
    expect(state.status).toBe(200)
    expect(await state.json()).toEqual({ accepted: false, licence: { name: 'Snowplow Limited Use License', url: 'https://docs.snowplow.io/limited-use-license-1.1/' } })

    const sent = await fetch(`${stack.current.url}/i?e=pv&p=web&tv=js-4.0.0&aid=${MARKER}`)
    expect(sent.status).toBe(200)
    await stack.current.drain()
    expect(await goodWithMarker()).toEqual([])

    const refused = await post('accept=no')
    expect(refused.status).toBe(400)
    expect(await refused.text()).toMatch(/accept must be yes/)
    expect(stack.current.disabledTriggers.has('enrich-raw')).toBe(true)

    const accepted = await post('accept=yes')
    expect(await accepted.text()).toBe(`licence accepted by ${TEST_CREDENTIALS.username}: enrich starts processing the waiting records\n`)
    expect(accepted.status).toBe(200)
    expect(stack.current.triggers.has('enrich-raw')).toBe(true)

    await stack.current.drain()
    expect(await goodWithMarker()).toHaveLength(1)
    const after = await fetch(`${stack.current.url}/health`)
    expect(after.status).toBe(200)
    const now = await (await fetch(`${stack.current.url}/control-plane/license`, { headers: withAuth() })).json()
    expect(now).toMatchObject({ accepted: true, by: TEST_CREDENTIALS.username, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
  }, 120_000)
})
