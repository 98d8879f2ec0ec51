/**
 * `asn_lookups`: adds `likelyBot` to the `asn` context the IP lookups derived
 * (true when its number is on the bot list: the `botAsnsFile` CSV, a header
 * line then one ASN per line in the first column, plus the configuration's
 * `botAsns`), except for events of a `bypassPlatforms` platform.
 */
import { readFileSync } from 'node:fs'
import { F } from '../fields'
import type { Enrichment } from '../steps'
import { ASN_SCHEMA, asnData } from './ip-lookups'
import { assetOf, ConfigError, ORDER, type EnrichmentModule } from './module'

/** The ASNs of a bot-list CSV (first line a header; blank lines ignored); throws `ConfigError` naming the first bad line. */
export function parseBotAsns(csv: string, where: string): Set<number> {
  const out = new Set<number>()
  csv.split(/\r?\n/).forEach((line, i) => {
    if (i === 0 || line.trim() === '') return
    const first = line.split(',')[0]!.trim()
    if (!/^\d{1,10}$/.test(first) || Number(first) > 4294967295) {
      throw new ConfigError(`Failed to parse CSV file with ASNs (${where}). Error: line ${i + 1}: ${JSON.stringify(first.slice(0, 80))} is not an autonomous system number`)
    }
    out.add(Number(first))
  })
  return out
}

/** The `asn` context's data with `likelyBot`, or undefined when it has no number. */
export function withLikelyBot(data: string, botAsns: ReadonlySet<number>): string | undefined {
  const d = JSON.parse(data) as { number?: unknown; organization?: unknown }
  if (typeof d.number !== 'number' || !Number.isInteger(d.number)) return undefined
  return asnData({ number: d.number, ...(typeof d.organization === 'string' ? { organization: d.organization } : {}), likelyBot: botAsns.has(d.number) })
}

export const asnLookups: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'asn_lookups',
  models: [1],
  assets: (config) => assetOf('botAsnsFile', config.parameters.botAsnsFile),
  create(config, ctx): Enrichment {
    const p = config.parameters
    const file = assetOf('botAsnsFile', p.botAsnsFile)[0]
    const botAsns = file ? parseBotAsns(readFileSync(ctx.assets.path(file.location), 'utf8'), file.location) : new Set<number>()
    if (Array.isArray(p.botAsns)) for (const b of p.botAsns as { asn: number }[]) botAsns.add(b.asn)
    const bypass = new Set(Array.isArray(p.bypassPlatforms) ? p.bypassPlatforms.map(String) : [])
    return {
      id: 'asn-lookups',
      order: ORDER.asnLookups,
      run(ev) {
        if (bypass.has(ev.f[F.platform] as string)) return {}
        if (!ev.derived.some((e) => e.schema === ASN_SCHEMA)) return {}
        ev.derived = ev.derived.map((e) => {
          if (e.schema !== ASN_SCHEMA) return e
          const data = withLikelyBot(e.data, botAsns)
          return data === undefined ? e : { schema: e.schema, data }
        })
        return {}
      },
    }
  },
}
