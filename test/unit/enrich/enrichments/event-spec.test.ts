/**
 * The event specification enrichment: matching events against published
 * specifications (event schema, required entities, cardinalities, JSON Schema
 * rules), checking the specification a tracker claims, and refreshing the set.
 */
import { describe, expect, it } from 'vitest'
import { EnrichedEvent } from '../../../../lib/core/enrich/event'
import { createEventSpecEnrichment, EVENT_SPEC_CONTEXT, indexSpecs, matchEvent, type EventSpecSource, type SpecRecord } from '../../../../lib/core/enrich/enrichments/event-spec'
import { ORDER } from '../../../../lib/core/enrich/enrichments/module'
import { badRows, batch, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, only, tp2 } from '../helpers'

const CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
const INFO = { schemaKey: 'iglu:com.snowplowanalytics.snowplow.enrichments/event_spec_enrichment_config/jsonschema/1-0-0', identifier: 'event-specification' }
const ID = '5a1b2c3d-0000-4000-8000-000000000001'
const ID2 = '5a1b2c3d-0000-4000-8000-000000000002'

const spec = (over: Partial<SpecRecord> & { snapshot?: Record<string, unknown> } = {}): SpecRecord => ({
  id: ID,
  version: 1,
  status: 'published',
  ...over,
  snapshot: {
    name: 'Nav click',
    event: { source: CLICK, schema: { type: 'object', properties: { targetUrl: { type: 'string', pattern: '^https://' } } } },
    entities: { tracked: [{ source: WEB_PAGE, minCardinality: 1, maxCardinality: 1 }] },
    ...over.snapshot,
  },
})

function click(targetUrl: string, pages = 1, claim?: object): EnrichedEvent {
  const ev = new EnrichedEvent()
  ev.set('event', 'unstruct')
  ev.unstruct = { schema: CLICK, data: JSON.stringify({ targetUrl }) }
  for (let i = 0; i < pages; i++) ev.contexts.push({ schema: WEB_PAGE, data: `{"id":"00000000-0000-4000-8000-00000000000${i}"}` })
  if (claim) ev.contexts.push({ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: JSON.stringify(claim) })
  return ev
}

describe('matching published specifications', () => {
  const index = indexSpecs([spec()])

  it('tags an event that satisfies a specification with its id, name and version', () => {
    expect(matchEvent(index, click('https://a.example'), INFO)).toEqual({ contexts: [{ schema: EVENT_SPEC_CONTEXT, data: `{"id":"${ID}","name":"Nav click","version":1}` }] })
  })

  it('does not tag an event that misses a required entity, breaks a cardinality or a JSON Schema rule, or has another schema', () => {
    expect(matchEvent(index, click('https://a.example', 0), INFO)).toEqual({})
    expect(matchEvent(index, click('https://a.example', 2), INFO)).toEqual({})
    expect(matchEvent(index, click('http://a.example'), INFO)).toEqual({})
    const other = click('https://a.example')
    other.unstruct = { schema: 'iglu:com.acme/other/jsonschema/1-0-0', data: '{}' }
    expect(matchEvent(index, other, INFO)).toEqual({})
  })

  it('tags with every specification satisfied, using only the latest version of each and only while it is published', () => {
    const records = [
      spec({ version: 1 }),
      spec({ version: 3, snapshot: { name: 'Nav click v3' } }),
      spec({ id: ID2, version: 1, snapshot: { name: 'Any click', event: { source: CLICK }, entities: {} } }),
      spec({ id: ID2, version: 2, status: 'deprecated', snapshot: { name: 'Any click', event: { source: CLICK }, entities: {} } }),
      spec({ id: '5a1b2c3d-0000-4000-8000-000000000003', version: 1, status: 'draft', snapshot: { name: 'Draft', event: { source: CLICK }, entities: {} } }),
    ]
    const r = matchEvent(indexSpecs(records), click('https://a.example'), INFO)
    expect(r.contexts!.map((c) => JSON.parse(c.data))).toEqual([{ id: ID, name: 'Nav click v3', version: 3 }])
  })

  it('builds page_view and page_ping data from the page fields', () => {
    const pv = indexSpecs([spec({ snapshot: { name: 'Checkout page', event: { source: 'iglu:com.snowplowanalytics.snowplow/page_view/jsonschema/1-0-0', schema: { properties: { page_urlpath: { const: '/checkout' } }, required: ['page_urlpath'] } }, entities: {} } })])
    const ev = new EnrichedEvent()
    ev.set('event_name', 'page_view')
    ev.set('page_urlpath', '/checkout')
    expect(matchEvent(pv, ev, INFO).contexts).toHaveLength(1)
    ev.set('page_urlpath', '/home')
    expect(matchEvent(pv, ev, INFO)).toEqual({})
  })

  it('skips versions it cannot use, saying why, and keeps the others', () => {
    const idx = indexSpecs([spec({ snapshot: { event: { source: 'not a uri' } } }), spec({ id: ID2, snapshot: { event: { source: CLICK, schema: { type: 'no-such-type' } } } }), spec({ id: '5a1b2c3d-0000-4000-8000-000000000003' })])
    expect(idx.skipped).toEqual([
      `event specification ${ID} version 1: it names no event schema (event.source)`,
      expect.stringMatching(new RegExp(`^event specification ${ID2} version 1: event\\.schema: the schema does not compile`)),
    ])
    expect(idx.byVersion.size).toBe(1)
  })
})

describe('a specification the tracker claims', () => {
  const index = indexSpecs([spec({ version: 1 }), spec({ version: 2, snapshot: { name: 'Nav click' } })])

  it('passes quietly when the event follows it, and never tags the event', () => {
    expect(matchEvent(index, click('https://a.example', 1, { id: ID, version: 1 }), INFO)).toEqual({})
  })

  it('fails the event with one enrichment failure per broken rule, naming the specification and the rule', () => {
    const r = matchEvent(index, click('http://a.example', 3, { id: ID, version: 2 }), INFO)
    expect(r.failures!.map((f) => f.message)).toEqual([
      { error: `event specification "Nav click" (${ID}, version 2): event ${CLICK}: $.targetUrl: does not match the pattern "^https://"` },
      { error: `event specification "Nav click" (${ID}, version 2): entity ${WEB_PAGE}: expected at most 1, found 3` },
    ].map((m) => ({ error: expect.stringContaining(m.error.split(': $')[0]!) })))
    expect(r.failures!.every((f) => f.enrichment === INFO)).toBe(true)
    expect(r.failures![0]!.message).toEqual({ error: expect.stringMatching(/targetUrl/) })
    expect(matchEvent(index, click('https://a.example', 0, { id: ID, version: 1 }), INFO).failures!.map((f) => (f.message as { error: string }).error)).toEqual([
      `event specification "Nav click" (${ID}, version 1): entity ${WEB_PAGE}: expected at least 1, found 0`,
    ])
  })

  it('names a different event schema as a broken rule', () => {
    const ev = click('https://a.example', 1, { id: ID, version: 1 })
    ev.unstruct = { schema: 'iglu:com.acme/other/jsonschema/1-0-0', data: '{}' }
    expect((matchEvent(index, ev, INFO).failures![0]!.message as { error: string }).error).toBe(`event specification "Nav click" (${ID}, version 1): the event is iglu:com.acme/other/jsonschema/1-0-0, the specification's event is ${CLICK}`)
  })

  it('leaves alone claims without a version, and versions this deployment has not published', () => {
    expect(matchEvent(index, click('http://a.example', 0, { id: ID }), INFO)).toEqual({})
    expect(matchEvent(index, click('http://a.example', 0, { id: ID, version: 7 }), INFO)).toEqual({})
    expect(matchEvent(index, click('http://a.example', 0, { id: 'unknown', version: 1 }), INFO)).toEqual({})
  })
})

describe('refreshing', () => {
  it('reads the source again after the refresh period, in the background, and keeps the set when a refresh fails', async () => {
    let now = 0
    let answer: () => Promise<SpecRecord[]> = async () => []
    let loads = 0
    const source: EventSpecSource = { load: () => (loads++, answer()) }
    const warnings: string[] = []
    const step = await createEventSpecEnrichment({ source, now: () => now, warn: (m) => warnings.push(m) }, 60_000, INFO)
    expect(step.order).toBe(ORDER.eventSpec)
    expect(await step.run(click('https://a.example'), {} as any)).toEqual({})
    answer = async () => [spec()]
    now = 59_999
    step.run(click('https://a.example'), {} as any)
    expect(loads).toBe(1)
    now = 60_000
    step.run(click('https://a.example'), {} as any)
    expect(loads).toBe(2)
    await new Promise((r) => setImmediate(r))
    expect((await step.run(click('https://a.example'), {} as any)).contexts).toHaveLength(1)
    answer = async () => {
      throw new Error('table unreachable')
    }
    now = 200_000
    step.run(click('https://a.example'), {} as any)
    await new Promise((r) => setImmediate(r))
    expect(warnings).toEqual(['event specifications not refreshed, keeping the current ones: table unreachable'])
    expect((await step.run(click('https://a.example'), {} as any)).contexts).toHaveLength(1)
  })

  it('gives the shell a reload that replaces the set at once, and a read begun before it never overwrites it', async () => {
    const followed: { reload(): Promise<void> }[] = []
    const reads: ((r: SpecRecord[]) => void)[] = []
    let first = true
    const source: EventSpecSource = {
      load: () => (first ? ((first = false), Promise.resolve([])) : new Promise((resolve) => reads.push(resolve))),
    }
    let now = 0
    const step = await createEventSpecEnrichment({ source, now: () => now, follow: (f) => followed.push(f) }, 60_000, INFO)
    expect(followed).toEqual([step])
    now = 60_000
    // a periodic read starts (before the publish), then the shell's reload (after it)
    step.run(click('https://a.example'), {} as any)
    const reloaded = step.reload()
    expect(reads).toHaveLength(2)
    reads[1]!([spec()])
    await reloaded
    expect((await step.run(click('https://a.example'), {} as any)).contexts).toHaveLength(1)
    reads[0]!([]) // the older read answers last: ignored
    await new Promise((r) => setImmediate(r))
    expect((await step.run(click('https://a.example'), {} as any)).contexts).toHaveLength(1)
  })

  it('stops at start when the specifications cannot be read', async () => {
    await expect(createEventSpecEnrichment({ source: { load: async () => { throw new Error('no table') } }, now: () => 0 }, 1000, INFO)).rejects.toThrow('cannot read the event specifications: no table')
  })
})

describe('through the enricher', () => {
  const config = enrichmentConfig('com.snowplowanalytics.snowplow.enrichments', 'event_spec_enrichment_config', '1-0-0', { refreshPeriodSeconds: 30 })
  const cx = (claim?: object) => Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: WEB_PAGE, data: { id: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e1000' } }, ...(claim ? [{ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: claim }] : [])] })).toString('base64url')
  const ue = (url: string) => Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: CLICK, data: { targetUrl: url } } })).toString('base64url')

  it('tags matching events and turns a broken claim into an enrichment_failures bad row', async () => {
    const { Enricher } = await import('../../../../lib/core/enrich/enrich')
    const { buildEnrichments, loadEnrichmentConfigs } = await import('../../../../lib/core/enrich/enrichments/registry')
    const { resolver } = await import('../helpers')
    const { ENRICH_PROCESSOR } = await import('../../../../lib/core/enrich/version')
    const loaded = await loadEnrichmentConfigs([{ source: 'event_spec.json', text: JSON.stringify(config) }], resolver)
    if (!loaded.ok) throw new Error(loaded.errors.join('\n'))
    const built = await buildEnrichments(loaded.configs, { assets: { path: (l) => l }, legacyOrder: false, eventSpecs: { source: { load: async () => [spec()] }, now: () => 0 } })
    if (!built.ok) throw new Error(built.errors.join('\n'))
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const good = goodColumns(await e.enrichRecord(tp2(`e=ue&p=web&tv=js-3&ue_px=${ue('https://a.example')}&cx=${cx()}`), batch()))
    expect(derivedOf(good)).toEqual([{ schema: EVENT_SPEC_CONTEXT, data: { id: ID, name: 'Nav click', version: 1 } }])
    const failed = await e.enrichRecord(tp2(`e=ue&p=web&tv=js-3&ue_px=${ue('http://a.example')}&cx=${cx({ id: ID, version: 1 })}`), batch())
    expect(only(failed, 'good')).toHaveLength(0)
    const [row] = badRows(failed)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/enrichment_failures/jsonschema/2-0-1')
    expect(row.data.failure.messages[0]).toMatchObject({ enrichment: INFO, message: { error: expect.stringMatching(/^event specification "Nav click" \(.*, version 1\): event .*targetUrl/) } })
  })

  it('refuses to start where the specifications cannot be reached', async () => {
    await expect(configuredEnricher([config])).rejects.toThrow(/event_spec_enrichment_config|tracking-design API/)
  })
})
