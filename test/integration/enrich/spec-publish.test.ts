/**
 * A specification published through the tracking-design API is used by the
 * running enrich from its next batch, with the built-in configuration's
 * refresh (10 s) and no restart: an event sent right after the publish is
 * tagged with it; one sent right after a deprecation is not. As a function on
 * AWS follows the change counter: a publish counted by another process is
 * read again at the first check `SPEC_CHECK_MS` after the last read.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { envVar } from '../../../lib/infra/resources'
import { bumpChangeCounter } from '../../../lib/runtime/change-counter'
import { checkSpecChanges, followSpecs, resetSpecChanges, SPEC_CHECK_MS } from '../../../lib/runtime/spec-changes'
import { postTp2 } from '../../support/schemas'
import { testClients, useLocalStack, withAuth } from '../../support/stack'
import { newTenant, objectSchema, putSchema, type Tenant } from '../tracking-design/helpers'

const CHECKOUT = 'iglu:com.acme/checkout_step/jsonschema/1-0-0'
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
const SPEC_CONTEXT = 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
let t: Tenant

beforeAll(async () => {
  await putSchema(stack.current, CHECKOUT, { $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#', self: { vendor: 'com.acme', name: 'checkout_step', format: 'jsonschema', version: '1-0-0' }, ...objectSchema({ step: { type: 'string' } }) })
  t = await newTenant(stack.current)
}, 120_000)
afterAll(() => resetSpecChanges())

/** Sends one checkout_step event; answers the specification contexts the good event was given (derived contexts) once enrich and the loader are done. */
async function send(step: string): Promise<unknown[]> {
  const eid = randomUUID()
  await postTp2(stack.current.url, [{ e: 'ue', p: 'web', tv: 'test-0', aid: 'spec-publish', eid, ue_pr: JSON.stringify({ schema: UE, data: { schema: CHECKOUT, data: { step } } }) }])
  await stack.current.drain()
  await stack.current.drain()
  const r = await fetch(`${stack.current.url}/micro/good`, { headers: withAuth() })
  const good = ((await r.json()) as { event: Record<string, any> }[]).find((g) => g.event.event_id === eid)
  expect(good, `event ${eid} is good`).toBeDefined()
  const contexts = (good!.event.derived_contexts?.data ?? []) as { schema: string; data: unknown }[]
  return contexts.filter((c) => c.schema === SPEC_CONTEXT).map((c) => c.data)
}

describe('a published event specification', () => {
  it('tags the events of the batch after the publish, and a deprecation stops it from the next batch', async () => {
    // enrich is running with the specifications it read (none published yet)
    expect(await send('payment')).toEqual([])
    const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Payment step', event: { source: CHECKOUT, schema: { type: 'object', properties: { step: { type: 'string', enum: ['payment'] } }, required: ['step'], additionalProperties: false } } }, message: 'created' })
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.data[0].id
    // a draft changes nothing
    expect(await send('payment')).toEqual([])

    const published = await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [id] })
    expect(published.status, published.text).toBe(202)
    // right after the publish: no wait for the refresh
    expect(await send('payment')).toEqual([{ id, name: 'Payment step', version: 1 }])
    expect(await send('shipping')).toEqual([])

    const current = await t.api('GET', `/event-specs/v1/${id}`)
    const deprecated = await t.api('PUT', `/event-specs/v1/${id}`, { spec: { ...current.body.data[0], version: current.body.data[0].version + 1, status: 'deprecated' }, message: 'retired' })
    expect(deprecated.status, deprecated.text).toBe(200)
    expect(await send('payment')).toEqual([])
  }, 180_000)
})

describe("the specifications' change counter", () => {
  it('a publish counted elsewhere is read again at the first check SPEC_CHECK_MS after the last read, before the batch goes on', async () => {
    resetSpecChanges()
    const ddb = testClients().ddb
    const table = stack.current.names.tables.settings
    const env = { [envVar('table', 'settings')]: table }
    let reloads = 0
    const follower = followSpecs({ reload: async () => void reloads++ })
    const t0 = 1_000_000
    await checkSpecChanges(() => ddb, env, t0)
    const first = reloads // the first read counts as a change
    // Another process (the tracking-design API) publishes and counts it.
    await bumpChangeCounter(ddb, table, 'spec-changes')
    await checkSpecChanges(() => ddb, env, t0 + SPEC_CHECK_MS - 1)
    expect(reloads).toBe(first)
    await checkSpecChanges(() => ddb, env, t0 + SPEC_CHECK_MS)
    expect(reloads).toBe(first + 1)
    await checkSpecChanges(() => ddb, env, t0 + 2 * SPEC_CHECK_MS)
    expect(reloads).toBe(first + 1)
    expect(follower).toBeDefined()
  }, 60_000)
})
