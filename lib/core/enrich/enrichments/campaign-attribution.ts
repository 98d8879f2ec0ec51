/**
 * `campaign_attribution`: the `mkt_*` fields from the page URL's query string.
 * Each field takes the value of the first configured parameter present; the
 * click id is the first click-id parameter present (Google's, Microsoft's and
 * DoubleClick's by default, then the configured ones), with its network.
 */
import { tsv } from '../convert'
import { F } from '../fields'
import type { NameValue } from '../querystring'
import type { EnrichedEvent } from '../event'
import type { Enrichment } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'

export const DEFAULT_CLICK_IDS: readonly (readonly [string, string])[] = [['gclid', 'Google'], ['msclkid', 'Microsoft'], ['dclid', 'DoubleClick']]

export interface CampaignFields {
  readonly medium: readonly string[]
  readonly source: readonly string[]
  readonly term: readonly string[]
  readonly content: readonly string[]
  readonly campaign: readonly string[]
  /** Parameter → network, in the order they are tried. */
  readonly clickIds: readonly (readonly [string, string])[]
}

export interface MarketingCampaign {
  readonly medium: string | null
  readonly source: string | null
  readonly term: string | null
  readonly content: string | null
  readonly campaign: string | null
  readonly clickId: string | null
  readonly network: string | null
}

/** The campaign fields of a query string (a repeated parameter: its last value; a parameter without `=`: empty). */
export function marketingFields(query: readonly NameValue[], f: CampaignFields): MarketingCampaign {
  const q = new Map<string, string>()
  for (const [k, v] of query) q.set(k, v ?? '')
  let clickId: string | null = null
  let network: string | null = null
  for (const [p, n] of f.clickIds) {
    const v = q.get(p)
    if (v !== undefined) {
      clickId = v
      network = n
      break
    }
  }
  return {
    medium: firstOf(q, f.medium),
    source: firstOf(q, f.source),
    term: firstOf(q, f.term),
    content: firstOf(q, f.content),
    campaign: firstOf(q, f.campaign),
    clickId,
    network,
  }
}

/** The value of the first of `names` in `q`, or null. */
function firstOf(q: ReadonlyMap<string, string>, names: readonly string[]): string | null {
  for (const n of names) {
    const v = q.get(n)
    if (v !== undefined) return v
  }
  return null
}

/** Sets a column to a campaign value when there is one. */
function setField(ev: EnrichedEvent, col: number, v: string | null): void {
  if (v !== null) ev.f[col] = tsv(v)
}

function names(v: unknown, at: string): string[] {
  if (v === undefined) return []
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new ConfigError(`${at} must be a list of parameter names`)
  return v
}

export const campaignAttribution: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'campaign_attribution',
  models: [1],
  create(config): Enrichment {
    const fields = (config.parameters.fields ?? {}) as Record<string, unknown>
    const custom = fields.mktClickId
    if (custom !== undefined && (typeof custom !== 'object' || custom === null || Array.isArray(custom))) throw new ConfigError('fields.mktClickId must map parameter names to network names')
    const clickIds = new Map<string, string>(DEFAULT_CLICK_IDS.map(([p, n]) => [p, n]))
    for (const [p, n] of Object.entries((custom ?? {}) as Record<string, unknown>)) clickIds.set(p, String(n))
    const f: CampaignFields = {
      medium: names(fields.mktMedium, 'fields.mktMedium'),
      source: names(fields.mktSource, 'fields.mktSource'),
      term: names(fields.mktTerm, 'fields.mktTerm'),
      content: names(fields.mktContent, 'fields.mktContent'),
      campaign: names(fields.mktCampaign, 'fields.mktCampaign'),
      clickIds: [...clickIds],
    }
    return {
      id: 'campaign-attribution',
      order: ORDER.campaignAttribution,
      run(ev, input) {
        const query = input.pageQuery
        if (query === null || query.length === 0) return {}
        const m = marketingFields(query, f)
        setField(ev, F.mkt_medium, m.medium)
        setField(ev, F.mkt_source, m.source)
        setField(ev, F.mkt_term, m.term)
        setField(ev, F.mkt_content, m.content)
        setField(ev, F.mkt_campaign, m.campaign)
        setField(ev, F.mkt_clickid, m.clickId)
        setField(ev, F.mkt_network, m.network)
        return {}
      },
    }
  },
}
