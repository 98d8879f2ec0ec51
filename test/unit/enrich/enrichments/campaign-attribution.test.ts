/** `campaign_attribution`: the cases of Snowplow's CampaignAttributionEnrichmentSpec and the step in the enricher. */
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { DEFAULT_CLICK_IDS, marketingFields, type CampaignFields } from '../../../../lib/core/enrich/enrichments/campaign-attribution'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { batch, columns, only, payload, resolver } from '../helpers'

const google: [string, string][] = [['utm_source', 'GoogleSearch'], ['utm_medium', 'cpc'], ['utm_term', 'native american tarot deck'], ['utm_content', '39254295088'], ['utm_campaign', 'uk-tarot--native-american']]
const omniture: [string, string][] = [['cid', 'uk-tarot--native-american']]
const heterogeneous: [string, string][] = [['utm_source', 'GoogleSearch'], ['source', 'bad_source'], ['utm_medium', 'cpc'], ['legacy_term', 'bad_term'], ['utm_term', 'native american tarot deck'], ['legacy_campaign', 'bad_campaign'], ['cid', 'uk-tarot--native-american']]
const clickid: [string, string][] = [...heterogeneous, ['msclkid', '500']]
const none = { medium: null, source: null, term: null, content: null, campaign: null, clickId: null, network: null }
const fields = (over: Partial<CampaignFields>): CampaignFields => ({ medium: [], source: [], term: [], content: [], campaign: [], clickIds: [], ...over })
const precedence = fields({ medium: ['utm_medium', 'medium'], source: ['utm_source', 'source'], term: ['utm_term', 'legacy_term'], content: ['utm_content'], campaign: ['utm_campaign', 'cid', 'legacy_campaign'] })

describe('campaign_attribution', () => {
  it('nothing configured: no fields', () => {
    expect(marketingFields(google, fields({}))).toEqual(none)
  })
  it('the standard Google-style settings', () => {
    expect(marketingFields(google, fields({ medium: ['utm_medium'], source: ['utm_source'], term: ['utm_term'], content: ['utm_content'], campaign: ['utm_campaign'] }))).toEqual({
      medium: 'cpc', source: 'GoogleSearch', term: 'native american tarot deck', content: '39254295088', campaign: 'uk-tarot--native-american', clickId: null, network: null,
    })
  })
  it('the standard Omniture settings', () => {
    expect(marketingFields(omniture, fields({ campaign: ['cid'] }))).toEqual({ ...none, campaign: 'uk-tarot--native-american' })
  })
  it('the order of precedence of the configured names', () => {
    expect(marketingFields(heterogeneous, precedence)).toEqual({ medium: 'cpc', source: 'GoogleSearch', term: 'native american tarot deck', content: null, campaign: 'uk-tarot--native-american', clickId: null, network: null })
  })
  it('click id and network', () => {
    expect(marketingFields(clickid, { ...precedence, clickIds: DEFAULT_CLICK_IDS })).toEqual({ medium: 'cpc', source: 'GoogleSearch', term: 'native american tarot deck', content: null, campaign: 'uk-tarot--native-american', clickId: '500', network: 'Microsoft' })
  })

  it('sets mkt_* from the page URL in enriched events, with configured click ids after the defaults', async () => {
    const text = JSON.stringify({
      schema: 'iglu:com.snowplowanalytics.snowplow/campaign_attribution/jsonschema/1-0-1',
      data: { vendor: 'com.snowplowanalytics.snowplow', name: 'campaign_attribution', enabled: true, parameters: { mapping: 'static', fields: { mktMedium: ['utm_medium'], mktSource: ['utm_source'], mktTerm: ['utm_term'], mktContent: ['utm_content'], mktCampaign: ['utm_campaign'], mktClickId: { fbclid: 'Facebook' } } } },
    })
    const r = await loadEnrichmentConfigs([{ source: 'c.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const url = (q: string) => encodeURIComponent(`https://shop.example/landing?${q}`)
    const run = async (q: string) => columns((only(await e.enrichRecord(payload({ path: '/i', querystring: `e=pv&p=web&tv=js-3&url=${url(q)}` }), batch()), 'good')[0] as { tsv: string }).tsv)
    const a = await run('utm_source=news&utm_medium=email&utm_campaign=spring&fbclid=abc')
    expect([a.mkt_source, a.mkt_medium, a.mkt_campaign, a.mkt_term, a.mkt_clickid, a.mkt_network]).toEqual(['news', 'email', 'spring', '', 'abc', 'Facebook'])
    const b = await run('gclid=g1&fbclid=f1')
    expect([b.mkt_clickid, b.mkt_network]).toEqual(['g1', 'Google'])
  })
})
