/**
 * The event specification enrichment on this deployment's tracking-design
 * tables (DynamoDB Local): a specification published through the API is read
 * from the history table and tags the events that follow it; a tracker that
 * claims it and breaks it gets an enrichment failure.
 */
import { describe, expect, it } from 'vitest'
import { DynamoEventSpecSource } from '../../../lib/aws/event-spec-source'
import { EnrichedEvent } from '../../../lib/core/enrich/event'
import { EVENT_SPEC_CONTEXT, indexSpecs, matchEvent } from '../../../lib/core/enrich/enrichments/event-spec'
import { testClients } from '../../support/stack'
import { objectSchema, useTenant } from '../tracking-design/helpers'

const CHECKOUT = 'iglu:com.acme/checkout_step/jsonschema/1-0-0'
const INFO = { schemaKey: 'iglu:com.snowplowanalytics.snowplow.enrichments/event_spec_enrichment_config/jsonschema/1-0-0', identifier: 'event-specification' }
const { stack, t } = useTenant({ [CHECKOUT]: objectSchema({ step: { type: 'string', maxLength: 20 } }) })

const event = (step: string, claim?: object) => {
  const ev = new EnrichedEvent()
  ev.set('event', 'unstruct')
  ev.unstruct = { schema: CHECKOUT, data: JSON.stringify({ step }) }
  if (claim) ev.contexts.push({ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: JSON.stringify(claim) })
  return ev
}

describe('event specifications from the tracking-design tables', () => {
  it('tags events with a specification published through the API, and only once it is published', async () => {
    const source = new DynamoEventSpecSource(testClients().ddb, stack.current.names.tables.specHistory)
    const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Checkout payment step', event: { source: CHECKOUT, schema: { type: 'object', properties: { step: { type: 'string', maxLength: 20, enum: ['payment'] } }, required: ['step'], additionalProperties: false } } }, message: 'created' })
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.data[0].id
    // a draft tags nothing
    expect(matchEvent(indexSpecs(await source.load()), event('payment'), INFO)).toEqual({})
    const published = await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [id] })
    expect(published.status, published.text).toBe(202)
    const index = indexSpecs(await source.load())
    expect(index.skipped).toEqual([])
    expect(matchEvent(index, event('payment'), INFO)).toEqual({ contexts: [{ schema: EVENT_SPEC_CONTEXT, data: JSON.stringify({ id, name: 'Checkout payment step', version: 1 }) }] })
    expect(matchEvent(index, event('shipping'), INFO)).toEqual({})
    // a tracker claiming the specification and breaking its rule
    const claimed = matchEvent(index, event('shipping', { id, version: 1 }), INFO)
    expect(claimed.failures).toHaveLength(1)
    expect((claimed.failures![0]!.message as { error: string }).error).toMatch(new RegExp(`^event specification "Checkout payment step" \\(${id}, version 1\\): event ${CHECKOUT}: \\$\\.step`))
  })
})
