/**
 * `ip_lookups`: `geo_*`, `ip_isp`, `ip_organization`, `ip_domain` and
 * `ip_netspeed` from MaxMind databases (City, ISP, Domain, Connection-Type,
 * and ASN, each optional) for `user_ipaddress`, and the `asn` context from the
 * ISP or ASN database. Lookups that find nothing or fail are ignored, as
 * Snowplow does (never an enrichment failure).
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { Reader } from 'maxmind'
import { F } from '../fields'
import { quote } from '../json'
import type { Enrichment, StepResult } from '../steps'
import { assetOf, ConfigError, orderOf, type AssetRef, type EnrichmentModule } from './module'

export const ASN_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/asn/jsonschema/1-0-1'
const CACHE_SIZE = 10_000
const DATABASES = ['geo', 'isp', 'domain', 'connectionType', 'asn'] as const
type Db = (typeof DATABASES)[number]

type MmdbRecord = Record<string, any>

/** The address to look up: an `ip:port` or `[ipv6]:port` loses its port; anything that is no address is undefined. */
export function lookupAddress(ip: string): string | undefined {
  if (isIP(ip)) return ip
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(ip)
  if (v4 && isIP(v4[1]!)) return v4[1]
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::\d{1,5})?$/.exec(ip)
  if (v6 && isIP(v6[1]!)) return v6[1]
  return undefined
}

export interface IpLookupResult {
  readonly location?: { country: string | null; region: string | null; city: string | null; zipcode: string | null; latitude: number | null; longitude: number | null; regionName: string | null; timezone: string | null }
  readonly isp?: string
  readonly organization?: string
  readonly domain?: string
  readonly connectionType?: string
  readonly asn?: { number: number; organization?: string }
}

export class IpLookups {
  constructor(private readonly readers: Partial<Record<Db, Reader<MmdbRecord>>>) {}

  private get(db: Db, ip: string): MmdbRecord | undefined {
    const r = this.readers[db]
    if (!r) return undefined
    try {
      return r.get(ip) ?? undefined
    } catch {
      return undefined
    }
  }

  lookup(rawIp: string): IpLookupResult {
    const ip = lookupAddress(rawIp)
    if (ip === undefined) return {}
    const out: { -readonly [K in keyof IpLookupResult]: IpLookupResult[K] } = {}
    const city = this.get('geo', ip)
    if (city?.country?.iso_code) {
      const sub = Array.isArray(city.subdivisions) && city.subdivisions.length > 0 ? city.subdivisions[city.subdivisions.length - 1] : undefined
      out.location = {
        country: city.country.iso_code,
        region: sub?.iso_code ?? null,
        city: city.city?.names?.en ?? null,
        zipcode: city.postal?.code ?? null,
        latitude: typeof city.location?.latitude === 'number' ? city.location.latitude : null,
        longitude: typeof city.location?.longitude === 'number' ? city.location.longitude : null,
        regionName: sub?.names?.en ?? null,
        timezone: city.location?.time_zone ?? null,
      }
    }
    const isp = this.get('isp', ip)
    if (typeof isp?.isp === 'string') out.isp = isp.isp
    if (typeof isp?.organization === 'string') out.organization = isp.organization
    const domain = this.get('domain', ip)
    if (typeof domain?.domain === 'string') out.domain = domain.domain
    const ct = this.get('connectionType', ip)
    if (typeof ct?.connection_type === 'string') out.connectionType = ct.connection_type
    const asn = this.get('asn', ip) ?? isp
    if (typeof asn?.autonomous_system_number === 'number') {
      out.asn = { number: asn.autonomous_system_number, ...(typeof asn.autonomous_system_organization === 'string' ? { organization: asn.autonomous_system_organization } : {}) }
    }
    return out
  }
}

/** The `asn` context's data. */
export function asnData(asn: { number: number; organization?: string; likelyBot?: boolean }): string {
  return `{"number":${asn.number}${asn.organization === undefined ? '' : `,"organization":${quote(asn.organization)}`}${asn.likelyBot === undefined ? '' : `,"likelyBot":${asn.likelyBot}`}}`
}

function refs(parameters: Record<string, unknown>): (AssetRef & { db: Db })[] {
  return DATABASES.flatMap((db) => assetOf(db, parameters[db]).map((a) => ({ ...a, db })))
}

export const ipLookups: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'ip_lookups',
  models: [2],
  assets: (config) => refs(config.parameters),
  create(config, ctx): Enrichment {
    const readers: Partial<Record<Db, Reader<MmdbRecord>>> = {}
    for (const a of refs(config.parameters)) {
      try {
        readers[a.db] = new Reader<MmdbRecord>(readFileSync(ctx.assets.path(a.location)))
      } catch (err) {
        throw new ConfigError(`${a.location} is not a MaxMind database: ${(err as Error).message}`)
      }
    }
    const lookups = new IpLookups(readers)
    // An answer per address, as Snowplow's IP lookups keep one (the events of a session share their address).
    const cache = new Map<string, { r: IpLookupResult; out: StepResult }>()
    return {
      id: 'ip-lookups',
      order: orderOf('ipLookups', ctx.legacyOrder),
      run(ev) {
        const ip = ev.f[F.user_ipaddress] as string | null
        if (ip === null) return {}
        let hit = cache.get(ip)
        if (hit === undefined) {
          const found = lookups.lookup(ip)
          hit = { r: found, out: found.asn ? { contexts: [{ schema: ASN_SCHEMA, data: asnData(found.asn) }] } : {} }
          cache.set(ip, hit)
          if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
        }
        const r = hit.r
        const l = r.location
        if (l) {
          ev.f[F.geo_country] = l.country
          ev.f[F.geo_region] = l.region
          ev.f[F.geo_city] = l.city
          ev.f[F.geo_zipcode] = l.zipcode
          ev.f[F.geo_latitude] = l.latitude
          ev.f[F.geo_longitude] = l.longitude
          ev.f[F.geo_region_name] = l.regionName
          ev.f[F.geo_timezone] = l.timezone
        }
        if (r.isp !== undefined) ev.f[F.ip_isp] = r.isp
        if (r.organization !== undefined) ev.f[F.ip_organization] = r.organization
        if (r.domain !== undefined) ev.f[F.ip_domain] = r.domain
        if (r.connectionType !== undefined) ev.f[F.ip_netspeed] = r.connectionType
        return hit.out
      },
    }
  },
}
