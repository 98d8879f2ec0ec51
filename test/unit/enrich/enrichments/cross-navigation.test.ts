/** `cross_navigation_config`: the cases of Snowplow's CrossNavigationEnrichmentSpec and the context in the enricher. */
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { crossNavigation, isoTimestamp } from '../../../../lib/core/enrich/enrichments/cross-navigation'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { batch, columns, only, payload, resolver } from '../helpers'

const SID = '176ff68a-4769-4566-ad0e-3792c1c8148f'
const empty = { session_id: null, user_id: null, source_id: null, source_platform: null, reason: null }

describe('cross_navigation_config', () => {
  it('reads the original and the extended _sp formats', () => {
    expect(crossNavigation('abc.1697398398279')).toEqual({ domain_user_id: 'abc', timestamp: '2023-10-15T19:33:18.279Z', ...empty })
    expect(crossNavigation(`abc.1697175843762.${SID}.dGVzdGVy.c29tZVNvdXJjZUlk.web.dGVzdGluZ19yZWFzb24`)).toEqual({
      domain_user_id: 'abc', timestamp: '2023-10-13T05:44:03.762Z', session_id: SID, user_id: 'tester', source_id: 'someSourceId', source_platform: 'web', reason: 'testing_reason',
    })
    expect(crossNavigation('abc.1697175843762..dGVzdGVy..web')).toEqual({ ...empty, domain_user_id: 'abc', timestamp: '2023-10-13T05:44:03.762Z', user_id: 'tester', source_platform: 'web' })
    expect(crossNavigation('abc.1697175843762.....')).toEqual({ domain_user_id: 'abc', timestamp: '2023-10-13T05:44:03.762Z', ...empty })
  })
  it('has no context without a domain user id, without a valid timestamp, or with more than seven parts', () => {
    for (const sp of ['abc', '.1697398398279', `abc..${SID}.dGVzdGVy.c29tZVNvdXJjZUlk.web.dGVzdGluZ19yZWFzb24`, `..${SID}.dGVzdGVy.c29tZVNvdXJjZUlk.web.dGVzdGluZ19yZWFzb24`, `abc..${SID}..`, `abc.1697175843762.${SID}.dGVzdGVy.c29tZVNvdXJjZUlk.web.dGVzdGluZ19yZWFzb24...foo..bar...`, `abc.not-timestamp.${SID}.`, ''])
      expect(crossNavigation(sp), sp).toBeNull()
  })
  it('prints the timestamp with the fraction trimmed', () => {
    expect(isoTimestamp('2015-03-13 11:19:21.368')).toBe('2015-03-13T11:19:21.368Z')
    expect(isoTimestamp('2015-03-13 11:19:21.360')).toBe('2015-03-13T11:19:21.36Z')
    expect(isoTimestamp('2015-03-13 11:19:21.000')).toBe('2015-03-13T11:19:21Z')
  })
  it('adds the context to derived_contexts next to refr_domain_userid', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/cross_navigation_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow.enrichments', name: 'cross_navigation_config', enabled: true } })
    const r = await loadEnrichmentConfigs([{ source: 'x.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const url = encodeURIComponent(`https://shop.example/?_sp=abc.1697175843762.${SID}.dGVzdGVy.c29tZVNvdXJjZUlk.web.dGVzdGluZ19yZWFzb24`)
    const c = columns((only(await e.enrichRecord(payload({ path: '/i', querystring: `e=pv&p=web&tv=js-3&url=${url}` }), batch()), 'good')[0] as { tsv: string }).tsv)
    expect(c.refr_domain_userid).toBe('abc')
    expect(JSON.parse(c.derived_contexts).data).toEqual([{ schema: 'iglu:com.snowplowanalytics.snowplow/cross_navigation/jsonschema/1-0-0', data: { domain_user_id: 'abc', timestamp: '2023-10-13T05:44:03.762Z', session_id: SID, user_id: 'tester', source_id: 'someSourceId', source_platform: 'web', reason: 'testing_reason' } }])
  })
})
