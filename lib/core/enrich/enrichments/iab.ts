/**
 * `iab_spiders_and_robots_enrichment`: the `spiders_and_robots` context from
 * the IAB/ABC International Spiders and Bots lists (three asset files: the
 * excluded IP addresses and ranges, and the user-agent include and exclude
 * lists, pipe-separated, `#` comments, ISO-8859-1), plus the configuration's
 * own `includeUseragents` and `excludeUseragents` substrings (checked first).
 * Checks, in order: own include list → browser; own exclude list → robot;
 * excluded IP → robot; no include-list match → robot; exclude-list match →
 * robot (active or inactive, by the record's inactive date against the
 * event's `derived_tstamp`); else browser. Runs before the IP is anonymised.
 */
import { readFileSync } from 'node:fs'
import { BlockList, isIPv4 } from 'node:net'
import { toIgluUri } from '../../iglu/keys'
import { F } from '../fields'
import type { Enrichment } from '../steps'
import { lookupAddress } from './ip-lookups'
import { assetOf, ConfigError, ORDER, type EnrichmentModule } from './module'

export const IAB_SCHEMA = 'iglu:com.iab.snowplow/spiders_and_robots/jsonschema/1-0-0'

export interface IabResult {
  readonly spiderOrRobot: boolean
  readonly category: 'BROWSER' | 'SPIDER_OR_ROBOT' | 'ACTIVE_SPIDER_OR_ROBOT' | 'INACTIVE_SPIDER_OR_ROBOT'
  readonly reason: 'PASSED_ALL' | 'FAILED_IP_EXCLUDE' | 'FAILED_UA_INCLUDE' | 'FAILED_UA_EXCLUDE'
  readonly primaryImpact: 'NONE' | 'UNKNOWN' | 'PAGE_IMPRESSIONS' | 'AD_IMPRESSIONS' | 'PAGE_AND_AD_IMPRESSIONS'
}

const BROWSER: IabResult = { spiderOrRobot: false, category: 'BROWSER', reason: 'PASSED_ALL', primaryImpact: 'NONE' }
const robot = (reason: IabResult['reason'], category: IabResult['category'] = 'SPIDER_OR_ROBOT', primaryImpact: IabResult['primaryImpact'] = 'UNKNOWN'): IabResult => ({ spiderOrRobot: true, category, reason, primaryImpact })

/** The records of a list file: `|`-separated fields, trimmed; blank lines and `#` lines left out. */
export function listRecords(text: string): string[][] {
  const out: string[][] = []
  for (const line of text.split(/\r?\n|\r/)) {
    if (line.trim() === '' || line.startsWith('#')) continue
    out.push(line.split('|').map((f) => unquote(f.trim())))
  }
  return out
}

const unquote = (f: string) => (f.length >= 2 && f.startsWith('"') && f.endsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f)

/** An `MM/dd/yyyy` inactive date as epoch milliseconds (UTC), or undefined. */
function inactiveDate(s: string | undefined): number | undefined {
  const m = s === undefined ? null : /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s)
  return m ? Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2])) : undefined
}

const flag = (s: string | undefined) => s === '1'

interface IncludeRecord {
  readonly pattern: string
  readonly active: boolean
  readonly startOnly: boolean
  readonly inactive: number | undefined
}
interface ExcludeRecord extends IncludeRecord {
  readonly exceptions: readonly string[]
  readonly impact: string | undefined
}

const IMPACTS: Record<string, IabResult['primaryImpact']> = { '0': 'PAGE_IMPRESSIONS', '1': 'AD_IMPRESSIONS', '2': 'PAGE_AND_AD_IMPRESSIONS' }
const matches = (r: IncludeRecord, ua: string) => (r.startOnly ? ua.startsWith(r.pattern) : ua.includes(r.pattern))

export class IabLists {
  private readonly include: IncludeRecord[]
  private readonly exclude: ExcludeRecord[]
  private readonly ips = new BlockList()

  constructor(files: { ip: string; include: string; exclude: string }, private readonly own: { include: readonly string[]; exclude: readonly string[] } = { include: [], exclude: [] }, ipSource = 'ipFile') {
    // pattern | active | start-of-string | inactive date
    this.include = listRecords(files.include).map((r) => ({ pattern: r[0]!.toLowerCase(), active: flag(r[1]), startOnly: flag(r[2]), inactive: inactiveDate(r[3]) }))
    // pattern | active | exceptions | (unused) | primary impact | start-of-string | inactive date
    this.exclude = listRecords(files.exclude).map((r) => ({
      pattern: r[0]!.toLowerCase(),
      active: flag(r[1]),
      exceptions: (r[2] ?? '').toLowerCase().split(',').map((e) => e.trim()).filter((e) => e !== ''),
      impact: r[4],
      startOnly: flag(r[5]),
      inactive: inactiveDate(r[6]),
    }))
    files.ip.split(/\r?\n|\r/).forEach((line, i) => {
      const entry = line.trim()
      if (entry === '') return
      const [addr, bits] = entry.split('/')
      const ip = lookupAddress(addr!)
      const family = ip !== undefined && isIPv4(ip) ? 'ipv4' : 'ipv6'
      const prefix = bits === undefined ? undefined : Number(bits)
      if (ip === undefined || (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 'ipv4' ? 32 : 128)))) {
        throw new ConfigError(`${ipSource}: line ${i + 1} is not an IP address or CIDR range: ${JSON.stringify(entry.slice(0, 80))}`)
      }
      if (prefix === undefined) this.ips.addAddress(ip, family)
      else this.ips.addSubnet(ip, prefix, family)
    })
    this.own = { include: own.include.map((s) => s.toLowerCase()), exclude: own.exclude.map((s) => s.toLowerCase()) }
  }

  /** The check for a user agent (null: none) and an address (null: none) at a time (epoch ms). Throws for a record with an invalid primary impact. */
  check(userAgent: string | null, ip: string | null, at: number): IabResult {
    const ua = userAgent?.toLowerCase() ?? null
    if (ua !== null && this.own.include.some((p) => ua.includes(p))) return BROWSER
    if (ua !== null && this.own.exclude.some((p) => ua.includes(p))) return robot('FAILED_UA_EXCLUDE')
    if (ip !== null && this.ips.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6')) return robot('FAILED_IP_EXCLUDE')
    if (ua === null) return BROWSER
    if (!this.include.some((r) => matches(r, ua) && (r.active || (r.inactive !== undefined && at < r.inactive)))) return robot('FAILED_UA_INCLUDE')
    const hit = this.exclude.find((r) => (r.active || r.inactive !== undefined) && matches(r, ua) && !r.exceptions.some((e) => ua.includes(e)))
    if (!hit) return BROWSER
    const impact = IMPACTS[hit.impact ?? '']
    if (!impact) throw new Error(`Invalid value of impression flag: '${hit.impact ?? 'null'}'`)
    return robot('FAILED_UA_EXCLUDE', hit.inactive === undefined || at < hit.inactive ? 'ACTIVE_SPIDER_OR_ROBOT' : 'INACTIVE_SPIDER_OR_ROBOT', impact)
  }
}

/** The context's data, fields in Snowplow's order. */
export const iabData = (r: IabResult) => `{"spiderOrRobot":${r.spiderOrRobot},"category":"${r.category}","reason":"${r.reason}","primaryImpact":"${r.primaryImpact}"}`

/** A `derived_tstamp` column (`yyyy-MM-dd HH:mm:ss.SSS`, UTC) as epoch milliseconds. */
export const tstampMs = (t: string) => Date.parse(`${t.replace(' ', 'T')}Z`)

const FILES = ['ipFile', 'excludeUseragentFile', 'includeUseragentFile'] as const

export const iabSpidersAndRobots: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'iab_spiders_and_robots_enrichment',
  models: [1],
  assets: (config) => FILES.flatMap((f) => assetOf(f, config.parameters[f])),
  create(config, ctx): Enrichment {
    const read = (f: (typeof FILES)[number]) => readFileSync(ctx.assets.path(assetOf(f, config.parameters[f])[0]!.location), 'latin1')
    const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : [])
    const lists = new IabLists(
      { ip: read('ipFile'), include: read('includeUseragentFile'), exclude: read('excludeUseragentFile') },
      { include: strings(config.parameters.includeUseragents), exclude: strings(config.parameters.excludeUseragents) },
      assetOf('ipFile', config.parameters.ipFile)[0]!.location,
    )
    const info = { schemaKey: toIgluUri(config.schema), identifier: 'iab-spiders-and-robots' }
    return {
      id: 'iab-spiders-and-robots',
      order: ORDER.iabSpidersAndRobots,
      run(ev) {
        const t = ev.f[F.derived_tstamp] as string | null
        if (t === null) return {}
        const rawUa = ev.f[F.useragent] as string | null
        const ua = rawUa !== null && rawUa.trim() !== '' ? rawUa : null
        const rawIp = ev.f[F.user_ipaddress] as string | null
        const ip = rawIp === null ? null : (lookupAddress(rawIp) ?? null)
        if (ua === null && ip === null) return {}
        try {
          return { contexts: [{ schema: IAB_SCHEMA, data: iabData(lists.check(ua, ip, tstampMs(t))) }] }
        } catch (err) {
          return { failures: [{ enrichment: info, message: { error: (err as Error).message } }] }
        }
      },
    }
  },
}
