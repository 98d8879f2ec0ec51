import { describe, expect, it } from 'vitest'
import { DEFAULT_SOURCE, eventSpecDefaultOn, eventSpecState, withDefaultEventSpec } from '../../../../lib/core/enrich/enrichments/event-spec-default'
import { loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { defaultResolver } from '../../../../lib/runtime/default-resolver'

const specFile = (enabled: boolean) => ({
  source: 'event_spec.json',
  text: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/event_spec_enrichment_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow.enrichments', name: 'event_spec_enrichment_config', enabled, parameters: { refreshPeriodSeconds: 30 } } }),
})
const other = { source: 'ua.json', text: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/ua_parser_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ua_parser_config', enabled: true, parameters: {} } }) }

describe('the event specification enrichment is on by default', () => {
  it('adds the built-in configuration when no file names the enrichment, and it loads', async () => {
    const files = withDefaultEventSpec([other], true)
    expect(files.map((f) => f.source)).toEqual(['ua.json', DEFAULT_SOURCE])
    const r = await loadEnrichmentConfigs(files, defaultResolver())
    if (!r.ok) throw new Error(r.errors.join('\n'))
    expect(r.configs.map((c) => [c.schema.name, c.parameters.refreshPeriodSeconds])).toContainEqual(['event_spec_enrichment_config', 10])
    expect(eventSpecState([other], true)).toEqual({ on: true, source: DEFAULT_SOURCE, refreshSeconds: 10 })
  })

  it('leaves a file that names it in charge, enabled or not', () => {
    expect(withDefaultEventSpec([specFile(false)], true)).toEqual([specFile(false)])
    expect(eventSpecState([specFile(false)], true)).toMatchObject({ on: false, reason: expect.stringContaining('disabled by event_spec.json') })
    expect(eventSpecState([specFile(true)], false)).toEqual({ on: true, source: 'event_spec.json', refreshSeconds: 30 })
  })

  it('is turned off by FLOE_EVENT_SPEC_ENRICHMENT=off, and refuses any other value', () => {
    expect(eventSpecDefaultOn({})).toBe(true)
    expect(eventSpecDefaultOn({ FLOE_EVENT_SPEC_ENRICHMENT: 'on' })).toBe(true)
    expect(eventSpecDefaultOn({ FLOE_EVENT_SPEC_ENRICHMENT: 'off' })).toBe(false)
    expect(() => eventSpecDefaultOn({ FLOE_EVENT_SPEC_ENRICHMENT: 'maybe' })).toThrow(/must be on or off/)
    expect(withDefaultEventSpec([other], false)).toEqual([other])
    expect(eventSpecState([other], false)).toMatchObject({ on: false, reason: expect.stringContaining('FLOE_EVENT_SPEC_ENRICHMENT=off') })
  })
})
