/**
 * `cross_navigation_config`: the `cross_navigation` context from the page
 * URL's `_sp` parameter (`duid.tstamp.session.user.source.platform.reason`,
 * user, source and reason base64url-encoded) when it has both a domain user id
 * and a timestamp. The built-in cross-domain step sets `refr_domain_userid`
 * and `refr_dvce_tstamp` from the same parameter whether or not this runs.
 */
import { base64Text, toTimestamp, tsv } from '../convert'
import { quote } from '../json'
import type { Enrichment } from '../steps'
import { ORDER, type EnrichmentModule } from './module'

const SCHEMA = 'iglu:com.snowplowanalytics.snowplow/cross_navigation/jsonschema/1-0-0'
const NAMES = ['domain_user_id', 'timestamp', 'session_id', 'user_id', 'source_id', 'source_platform', 'reason'] as const

const nonBlank = (s: string): string | null => (s.trim() === '' ? null : s)

/** `yyyy-MM-dd HH:mm:ss.SSS` as ISO 8601 with a `Z`, the fraction without trailing zeros (none when zero). */
export function isoTimestamp(t: string): string {
  const [date, time] = t.split(' ') as [string, string]
  const [hms, frac = ''] = time.split('.')
  const f = frac.replace(/0+$/, '')
  return `${date}T${hms}${f ? `.${f}` : ''}Z`
}

/** The context's data for a `_sp` value, or null when it has no domain user id or no valid timestamp (or more than 7 parts). */
export function crossNavigation(sp: string): Record<(typeof NAMES)[number], string | null> | null {
  if (sp === '') return null
  const values = sp.split('.')
  if (values.length > NAMES.length) return null
  while (values.length < NAMES.length) values.push('')
  const duid = tsv(values[0]!)
  const t = values[1]!
  if (duid === null || t === '') return null
  const ts = toTimestamp(t)
  if (!ts.ok) return null
  const decoded = (s: string) => nonBlank(base64Text(s) ?? "")
  return {
    domain_user_id: duid,
    timestamp: isoTimestamp(ts.value as string),
    session_id: nonBlank(values[2]!),
    user_id: decoded(values[3]!),
    source_id: decoded(values[4]!),
    source_platform: nonBlank(values[5]!),
    reason: decoded(values[6]!),
  }
}

export const crossNavigationEnrichment: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'cross_navigation_config',
  models: [1],
  create(): Enrichment {
    return {
      id: 'cross-navigation',
      order: ORDER.crossNavigation,
      run(_ev, input) {
        let sp: string | null | undefined
        for (const [k, v] of input.pageQuery ?? []) if (k === '_sp') sp = v
        if (sp === undefined || sp === null) return {}
        const data = crossNavigation(sp)
        if (data === null) return {}
        const json = `{${NAMES.map((n) => `${quote(n)}:${data[n] === null ? 'null' : quote(data[n]!)}`).join(',')}}`
        return { contexts: [{ schema: SCHEMA, data: json }] }
      },
    }
  },
}
