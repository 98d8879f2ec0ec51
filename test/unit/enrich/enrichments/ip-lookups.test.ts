/** `ip_lookups` on MaxMind's test databases: the cases of Snowplow's IpLookupsEnrichmentSpec and the fields in the enricher. */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Reader } from 'maxmind'
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { IpLookups, lookupAddress } from '../../../../lib/core/enrich/enrichments/ip-lookups'
import { assetsOf, buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { projectRoot } from '../../../../lib/local/handlers'
import { batch, columns, only, payload, resolver } from '../helpers'

const DIR = join(projectRoot, 'test/fixtures/maxmind')
const reader = (f: string) => new Reader<Record<string, any>>(readFileSync(join(DIR, f)))
const lookups = new IpLookups({ geo: reader('GeoIP2-City-Test.mmdb'), isp: reader('GeoIP2-ISP-Test.mmdb'), domain: reader('GeoIP2-Domain-Test.mmdb'), connectionType: reader('GeoIP2-Connection-Type-Test.mmdb') })
const CHANGCHUN = { country: 'CN', region: '22', city: 'Changchun', zipcode: null, latitude: 43.88, longitude: 125.3228, regionName: 'Jilin Sheng', timezone: 'Asia/Harbin' }

describe('ip_lookups', () => {
  it('finds nothing for blank, missing, invalid and oversized addresses', () => {
    for (const ip of ['', 'localhost', 'hello', ':::::::::::::::', 'a'.repeat(1_000_000)]) expect(lookups.lookup(ip).location, ip).toBeUndefined()
  })
  it('locates an address, with or without a port', () => {
    expect(lookups.lookup('175.16.199.0').location).toEqual(CHANGCHUN)
    expect(lookups.lookup('175.16.199.0:8080').location).toEqual(CHANGCHUN)
    expect(lookupAddress('[2001:db8::1]:443')).toBe('2001:db8::1')
  })
  it('reads the ISP, the organization and the ASN from the ISP database', () => {
    expect(lookups.lookup('70.46.123.145')).toMatchObject({ isp: 'FDN Communications', organization: 'DSLAM WAN Allocation' })
    expect(lookups.lookup('18.11.120.0').asn).toEqual({ number: 3, organization: 'Massachusetts Institute of Technology' })
  })
  it('reads the domain and the connection type', () => {
    expect(lookups.lookup('1.2.0.0').domain).toBe('maxmind.com')
    expect(lookups.lookup('1.0.1.0').connectionType).toBe('Cellular')
  })

  it('sets the geo and ip columns and adds the asn context in enriched events', async () => {
    // The configuration schema names the databases; the test databases stand in for them.
    const dir = mkdtempSync(join(tmpdir(), 'floe-mmdb-'))
    for (const [test, real] of [['GeoIP2-City-Test.mmdb', 'GeoIP2-City.mmdb'], ['GeoIP2-ISP-Test.mmdb', 'GeoIP2-ISP.mmdb'], ['GeoLite2-ASN-Test.mmdb', 'GeoLite2-ASN.mmdb']]) copyFileSync(join(DIR, test!), join(dir, real!))
    const db = (name: string) => ({ uri: `file://${dir}`, database: name })
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/ip_lookups/jsonschema/2-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ip_lookups', enabled: true, parameters: { geo: db('GeoIP2-City.mmdb'), isp: db('GeoIP2-ISP.mmdb'), asn: db('GeoLite2-ASN.mmdb') } } })
    const r = await loadEnrichmentConfigs([{ source: 'ip.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    expect(assetsOf(r.configs).map((a) => a.location)).toEqual([`file://${dir}/GeoIP2-City.mmdb`, `file://${dir}/GeoIP2-ISP.mmdb`, `file://${dir}/GeoLite2-ASN.mmdb`])
    const built = await buildEnrichments(r.configs, { assets: { path: (l) => l.slice('file://'.length) }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const run = async (ip: string) => columns((only(await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', ipAddress: ip }), batch()), 'good')[0] as { tsv: string }).tsv)
    const c = await run('175.16.199.0')
    expect([c.geo_country, c.geo_region, c.geo_city, c.geo_latitude, c.geo_longitude, c.geo_region_name, c.geo_timezone]).toEqual(['CN', '22', 'Changchun', '43.88', '125.3228', 'Jilin Sheng', 'Asia/Harbin'])
    const m = await run('18.11.120.0')
    expect([m.ip_isp, m.ip_organization]).toEqual(['Massachusetts Institute of Technology', 'Massachusetts Institute of Technology'])
    expect(JSON.parse(m.derived_contexts).data).toEqual([{ schema: 'iglu:com.snowplowanalytics.snowplow/asn/jsonschema/1-0-1', data: { number: 3, organization: 'Massachusetts Institute of Technology' } }])
  })

  it('refuses a file that is not a MaxMind database', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/ip_lookups/jsonschema/2-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ip_lookups', enabled: true, parameters: { geo: { uri: 'file:///x', database: 'GeoIP2-City.mmdb' } } } })
    const r = await loadEnrichmentConfigs([{ source: 'ip.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    expect(await buildEnrichments(r.configs, { assets: { path: () => join(projectRoot, 'package.json') }, legacyOrder: false })).toMatchObject({ ok: false, errors: [expect.stringMatching(/^ip\.json: file:\/\/\/x\/GeoIP2-City\.mmdb is not a MaxMind database/)] })
  })
})
