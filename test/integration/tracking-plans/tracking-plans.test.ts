/**
 * The tracking plans' API on the whole local stack: the event specification
 * enrichment is on without any configuration file, a published specification
 * tags the events that follow it, a tracker that claims it and breaks it gets
 * a bad row naming the rule, and the counts, the broken rule, a compatibility
 * warning's witness and a stricter draft tried against the stored events come
 * back from `/control-plane/tracking-plans`.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { basicAuth, useLocalStack } from '../../support/stack'
import { newTenant, objectSchema, putSchema } from '../tracking-design/helpers'

const CHECKOUT = 'iglu:com.acme/checkout_step/jsonschema/1-0-0'
const CART = 'iglu:com.acme/cart/jsonschema/1-0-0'
const SIGNUP = 'iglu:com.acme/signup/jsonschema/1-0-0'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const get = async (path: string) => {
  const r = await fetch(`${stack.current.url}/control-plane/tracking-plans${path}`, { headers: { authorization: basicAuth() } })
  const text = await r.text()
  return { status: r.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined }
}
const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(`${stack.current.url}/control-plane/tracking-plans${path}`, { method: 'POST', headers: { authorization: basicAuth(), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await r.text()
  return { status: r.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined }
}

async function send(step: string, opts: { claim?: object; cart?: boolean } = {}) {
  const contexts = [
    ...(opts.cart === false ? [] : [{ schema: CART, data: { items: 2 } }]),
    ...(opts.claim ? [{ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: opts.claim }] : []),
  ]
  const ue = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: CHECKOUT, data: { step } } })
  const cx = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1', data: contexts })
  const res = await fetch(`${stack.current.url}/i?e=ue&p=web&tv=js-3&aid=plans&ue_px=${ue}${contexts.length ? `&cx=${cx}` : ''}`)
  expect(res.status).toBe(200)
}

describe('tracking plans', () => {
  beforeAll(async () => {
    // The first request starts the authorizer and the control plane (slow on a loaded machine: the gateway may answer 500 once).
    for (let i = 0; i < 3 && (await get('')).status === 500; i++);
  }, 120_000)

  it('shows what a published specification observed, the rule broken, a witness, and a stricter draft against the stored events', async () => {
    await putSchema(stack.current, CHECKOUT, objectSchema({ step: { type: 'string', maxLength: 20 } }))
    await putSchema(stack.current, CART, objectSchema({ items: { type: 'integer' } }))
    await putSchema(stack.current, SIGNUP, objectSchema({ plan: { type: 'string', maxLength: 20 } }))
    const t = await newTenant(stack.current)
    const rules = { type: 'object', properties: { step: { type: 'string', maxLength: 20, enum: ['payment', 'shipping'] } }, required: ['step'], additionalProperties: false }
    const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Checkout step', event: { source: CHECKOUT, schema: rules }, entities: { tracked: [{ source: CART, minCardinality: 0 }] } }, message: 'created' })
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.data[0].id
    const quiet = await t.api('POST', '/event-specs/v1', { spec: { name: 'Signup', event: { source: SIGNUP } }, message: 'created' })
    expect(quiet.status, quiet.text).toBe(201)
    expect((await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [id, quiet.body.data[0].id] })).status).toBe(202)

    await send('payment')
    await send('shipping', { cart: false })
    await send('refund', { claim: { id, version: 1 } }) // claims it, breaks the enum
    await stack.current.drain() // enrich has written everything it read
    await stack.current.drain() // and the loaders have loaded it

    const home = await get('')
    expect(home.status, home.text).toBe(200)
    expect(home.body.organizations.map((o: { id: string }) => o.id)).toContain(t.orgId)
    expect(home.body.enrichment).toMatchObject({ on: true })
    expect(home.body.observed).toEqual({ available: true })

    const list = await get(`/${t.orgId}/specs`)
    expect(list.status, list.text).toBe(200)
    const row = list.body.specs.find((s: { id: string }) => s.id === id)
    expect(row).toMatchObject({ name: 'Checkout step', status: 'published', version: 1, source: 'iglu:com.acme/checkout_step/jsonschema', sourceVersion: '1-0-0', observed: { hour: 2, day: 2, brokenDay: 1, neverSeen: false } })
    expect(list.body.specs.find((s: { name: string }) => s.name === 'Signup').observed).toMatchObject({ day: 0, neverSeen: true })
    expect((await get(`/${t.orgId}/specs?status=draft`)).body.specs).toEqual([])
    expect((await get(`/${t.orgId}/specs?q=CHECK`)).body.specs.map((s: { id: string }) => s.id)).toEqual([id])

    // a newer version of the data structure, stricter than the rules: a warning with its witness
    await putSchema(stack.current, 'iglu:com.acme/checkout_step/jsonschema/1-0-1', objectSchema({ step: { type: 'string', maxLength: 5 } }))
    const detail = await get(`/${t.orgId}/specs/${id}`)
    expect(detail.status, detail.text).toBe(200)
    const o = detail.body.observation
    expect(o).toMatchObject({ hour: 2, day: 2, brokenDay: 1, entities: [{ schema: CART, present: 1, rate: 0.5 }] })
    expect(o.histogram.reduce((a: number, b: number) => a + b, 0)).toBe(2)
    expect(o.brokenRules).toEqual([{ rule: expect.stringMatching(/^event iglu:com\.acme\/checkout_step\/jsonschema\/1-0-0: \$\.step/), version: 1, count: 1 }])
    expect(o.links.tagged).toMatch(/^\/dashboard-ui#index=good&range=24h&q=contexts_com_snowplowanalytics_snowplow_event_specification_1\.id/)
    const warning = detail.body.compatibility.find((c: { witness?: unknown }) => c.witness !== undefined)
    expect(warning).toMatchObject({ type: 'Warning', code: expect.any(String), reason: expect.any(String) })
    expect(JSON.stringify(warning.witness)).toMatch(/step/)
    expect(detail.body.registryLinks[CHECKOUT]).toBe('/registry-server/api/schemas/com.acme/checkout_step/jsonschema/1-0-0')
    expect(detail.body.history).toMatchObject([{ version: 1, status: 'published', message: 'Published' }, { version: 0, status: 'draft', message: 'created', author: t.keyId }])

    // a stricter draft: only the payment step
    const stricter = { ...detail.body.spec, event: { source: CHECKOUT, schema: { ...rules, properties: { step: { type: 'string', enum: ['payment'] } } } } }
    const tried = await post(`/${t.orgId}/specs/${id}/try`, { spec: stricter, events: 100 })
    expect(tried.status, tried.text).toBe(200)
    expect(tried.body).toMatchObject({ ok: true, source: CHECKOUT, examined: 2, matched: 1, violated: 1, violators: [{ reasons: [expect.stringMatching(/\$\.step/)] }] })

    // limits
    expect((await post(`/${t.orgId}/specs/${id}/try`, { spec: stricter, events: 5000 })).status).toBe(422)
    expect((await post(`/${t.orgId}/specs/${id}/try`, { spec: 'x' })).status).toBe(422)
    expect((await post(`/${t.orgId}/specs/${id}/try`, { spec: { name: 'no event' } })).status).toBe(422)
    expect((await get(`/${t.orgId}/specs?status=live`)).status).toBe(422)
    expect((await get(`/${t.orgId}/specs/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
    // a page elsewhere cannot make the stack run a draft
    expect((await post(`/${t.orgId}/specs/${id}/try`, { spec: stricter }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
  }, 240_000)
})
