/**
 * The dashboard names a failed event by its event_name; when its own schema
 * failed, enrich set none, and the name comes from the schema of the
 * self-describing event in the bad row's raw parameters (ue_pr or ue_px).
 */
import { describe, expect, it } from 'vitest'

// the pages' module (plain browser JavaScript, without types)
const COLUMNS: string = '../../../lib/ui/dashboard/columns.js'
type Event = Record<string, unknown>
const { failedEventOf, failedEventName } = (await import(COLUMNS)) as { failedEventOf: (doc: unknown) => Event | undefined; failedEventName: (e: Event | undefined) => string }

const UE = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/checkout_started/jsonschema/1-0-2', data: {} } })
const badRow = (enriched: unknown, parameters: unknown = []) => ({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: {}, payload: { enriched, raw: { parameters } } } })

describe('a failed event in the dashboard', () => {
  it('is named by its event_name when enrich set one', () => {
    expect(failedEventName(failedEventOf(badRow({ event: 'unstruct', event_name: 'link_click' })))).toBe('link_click')
    expect(failedEventName(failedEventOf(badRow({ event: 'page_view', event_name: 'page_view' })))).toBe('page_view')
  })
  it("is named by its own schema when that schema failed (ue_pr or ue_px)", () => {
    const e = failedEventOf(badRow({ event: 'unstruct', event_name: null, event_vendor: null }, [{ name: 'e', value: 'ue' }, { name: 'ue_pr', value: UE }]))
    expect(e).toMatchObject({ event_name: 'checkout_started', event_vendor: 'com.acme', event_version: '1-0-2', event: 'unstruct' })
    expect(failedEventName(failedEventOf(badRow({ event: 'unstruct' }, [{ name: 'ue_px', value: Buffer.from(UE).toString('base64url') }])))).toBe('checkout_started')
    // as the search store keeps them: the parameters as JSON text
    expect(failedEventName(failedEventOf(badRow({ event: 'unstruct' }, JSON.stringify([{ name: 'ue_pr', value: UE }]))))).toBe('checkout_started')
  })
  it('falls back to its event type; other bad rows are no failed events', () => {
    expect(failedEventName(failedEventOf(badRow({ event: 'unstruct' }, [{ name: 'ue_pr', value: 'not json' }])))).toBe('unstruct')
    expect(failedEventOf({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { failure: {}, payload: { vendor: 'x' } } })).toBeUndefined()
  })
})
