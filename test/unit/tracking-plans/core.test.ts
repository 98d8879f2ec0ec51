import { describe, expect, it } from 'vitest'
import { specIdsOfBadRow, specIdsOfEvent, specOfFailure } from '../../../lib/core/search/documents'
import { registryLink, trackingPlansApi } from '../../../lib/core/tracking-plans/api'
import { contextKey } from '../../../lib/core/tracking-plans/observed'
import { eventFromTsv } from '../../../lib/core/tracking-plans/try-draft'
import type { CatalogStore, RegistryReader, SpecStore } from '../../../lib/core/tracking-design/ports'
import type { StoredSpec } from '../../../lib/core/tracking-design/types'
import { FIELD_COUNT, F } from '../../../lib/core/enrich/fields'
import type { HttpRequest } from '../../../lib/http/types'

const ID = '47e26006-41b4-4c8f-acc0-82b83021d53b'
const ORG = '11111111-2222-4333-8444-555555555555'

describe('specification ids in the search store', () => {
  it('reads the failures the event specification enrichment writes, names with quotes included', () => {
    expect(specOfFailure(`event specification "Check \\"out\\" (x, version 9): " (${ID.toUpperCase()}, version 3): entity iglu:com.acme/cart/jsonschema/1-0-0: expected at least 1, found 0`))
      .toEqual({ id: ID, version: 3, rule: 'entity iglu:com.acme/cart/jsonschema/1-0-0: expected at least 1, found 0' })
    expect(specOfFailure(`event specification (${ID}, version 1): event iglu:a/b/jsonschema/1-0-0: $.step: must be equal to one of the allowed values`)?.rule).toBe('event iglu:a/b/jsonschema/1-0-0: $.step: must be equal to one of the allowed values')
    expect(specOfFailure('Open Exchange Rates error')).toBeUndefined()
    const row = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/enrichment_failures/jsonschema/2-0-0', data: { failure: { messages: [{ message: { error: `event specification "A" (${ID}, version 1): x` } }, { message: { error: 'other' } }, { message: { error: `event specification "A" (${ID}, version 1): y` } }] } } }
    expect(specIdsOfBadRow(row)).toEqual([ID])
    expect(specIdsOfBadRow({ data: { failure: { messages: 'x' } } })).toEqual([])
  })

  it('reads the ids of an event\'s event_specification entities, distinct and lower-case', () => {
    expect(specIdsOfEvent({ contexts_com_snowplowanalytics_snowplow_event_specification_1: [{ id: ID.toUpperCase(), version: 1 }, { id: ID }, { name: 'no id' }] })).toEqual([ID])
    expect(specIdsOfEvent({ contexts_com_snowplowanalytics_snowplow_event_specification_1: 'x' })).toEqual([])
    expect(specIdsOfEvent({})).toEqual([])
  })
})

describe('tracking plans core', () => {
  it('names the shredded key of an entity and the registry view of a schema', () => {
    expect(contextKey('iglu:com.acme/shopping-cart/jsonschema/2-0-1')).toBe('contexts_com_acme_shopping_cart_2')
    expect(contextKey('not a uri')).toBeUndefined()
    expect(registryLink('iglu:com.acme/cart/jsonschema/1-0-0')).toBe('/registry-server/api/schemas/com.acme/cart/jsonschema/1-0-0')
  })

  it('reads an enriched line back into the event the enrichment checks', () => {
    const cols = new Array<string>(FIELD_COUNT).fill('')
    cols[F.event] = 'unstruct'
    cols[F.event_id] = 'e1'
    cols[F.contexts] = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1', data: [{ schema: 'iglu:com.acme/cart/jsonschema/1-0-0', data: { items: 2 } }] })
    cols[F.unstruct_event] = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/step/jsonschema/1-0-0', data: { step: 'pay' } } })
    const ev = eventFromTsv(cols.join('\t'))!
    expect(ev.get('event_id')).toBe('e1')
    expect(ev.contexts).toEqual([{ schema: 'iglu:com.acme/cart/jsonschema/1-0-0', data: '{"items":2}' }])
    expect(ev.unstruct).toEqual({ schema: 'iglu:com.acme/step/jsonschema/1-0-0', data: '{"step":"pay"}' })
    expect(eventFromTsv('a\tb')).toBeUndefined()
  })

  it('says why nothing is observed without a search store or with the enrichment off, and refuses a try', async () => {
    const spec: StoredSpec = { orgId: ORG, id: ID, rev: 1, doc: { id: ID, name: 'A', status: 'published', version: 1, event: { source: 'iglu:com.acme/step/jsonschema/1-0-0' } }, latest: { eventSpecId: ID, version: 1, status: 'published', author: 'k', message: 'm', date: '2026-01-01T00:00:00.000Z' } }
    const specs = { get: async () => spec, list: async () => [spec], history: async () => [] } as unknown as SpecStore
    const catalog = { list: async () => [], get: async () => undefined } as unknown as CatalogStore
    const registry = { get: async () => undefined, listGroup: async () => [], listAll: async () => [] } as RegistryReader
    const api = trackingPlansApi({ specs, catalog, registry, listOrgs: async () => [{ id: ORG, name: 'acme', createdAt: '' }], enrichment: async () => ({ on: false, reason: 'turned off (FLOE_EVENT_SPEC_ENRICHMENT=off)' }), now: () => 0 })
    const req = (method: string, path: string, body = ''): HttpRequest => ({ method, path, query: {}, headers: { 'content-type': 'application/json' }, body: Buffer.from(body), params: {} }) as unknown as HttpRequest
    const list = await api(req('GET', `/control-plane/tracking-plans/${ORG}/specs`))
    const body = JSON.parse(String(list.body))
    expect(body.specs[0]).not.toHaveProperty('observed')
    expect(body.observed).toEqual({ available: false, reason: expect.stringContaining('-c searchStore=false') })
    expect(body.enrichment).toEqual({ on: false, reason: expect.stringContaining('FLOE_EVENT_SPEC_ENRICHMENT=off') })
    expect((await api(req('POST', `/control-plane/tracking-plans/${ORG}/specs/${ID}/try`, '{}'))).statusCode).toBe(409)
    expect((await api(req('GET', `/control-plane/tracking-plans/not-an-org/specs`))).statusCode).toBe(404)
    expect((await api(req('DELETE', `/control-plane/tracking-plans/${ORG}/specs/${ID}`))).statusCode).toBe(405)
  })
})
