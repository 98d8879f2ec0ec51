/**
 * `iab_spiders_and_robots_enrichment`: the cases of Snowplow's
 * IabEnrichmentSpec and the list semantics (start-of-string, exceptions,
 * inactive dates, primary impact, the configuration's own lists) on small
 * lists in the IAB format, and the context in the enricher.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { IabLists } from '../../../../lib/core/enrich/enrichments/iab'
import { projectRoot } from '../../../../lib/local/handlers'
import { batch, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, payload } from '../helpers'

const DIR = join(projectRoot, 'test/fixtures/iab')
const read = (f: string) => readFileSync(join(DIR, f), 'latin1')
const files = { ip: read('ip_exclude_current_cidr.txt'), include: read('include_current.txt'), exclude: read('exclude_current.txt') }
const lists = new IabLists(files)
const NOW = Date.UTC(2025, 3, 30)
const check = (ua: string | null, ip: string | null, at = NOW) => lists.check(ua, ip, at)

describe('iab_spiders_and_robots_enrichment', () => {
  it('answers the cases of Snowplow\'s spec', () => {
    expect(check('Xdroid', '192.168.0.1')).toEqual({ spiderOrRobot: false, category: 'BROWSER', reason: 'PASSED_ALL', primaryImpact: 'NONE' })
    expect(check('Mozilla/5.0', '192.168.151.21')).toEqual({ spiderOrRobot: true, category: 'SPIDER_OR_ROBOT', reason: 'FAILED_IP_EXCLUDE', primaryImpact: 'UNKNOWN' })
    expect(check('xonitor', '192.168.0.1')).toEqual({ spiderOrRobot: true, category: 'SPIDER_OR_ROBOT', reason: 'FAILED_UA_INCLUDE', primaryImpact: 'UNKNOWN' })
  })

  it('matches excluded addresses and ranges, IPv4 and IPv6', () => {
    for (const ip of ['10.20.3.4', '203.0.113.70', '2001:db8:bad::1']) expect(check('Mozilla/5.0', ip).reason, ip).toBe('FAILED_IP_EXCLUDE')
    for (const ip of ['10.21.0.1', '203.0.113.130', '2001:db8:bae::1']) expect(check('Mozilla/5.0', ip).reason, ip).toBe('PASSED_ALL')
    expect(check(null, '10.20.0.1').reason).toBe('FAILED_IP_EXCLUDE')
    expect(check(null, '10.21.0.1').reason).toBe('PASSED_ALL')
  })

  it('reads exclude records: case, exceptions, start of string, primary impact', () => {
    expect(check('Mozilla/5.0 (compatible; ExampleBot/2.1)', null)).toEqual({ spiderOrRobot: true, category: 'ACTIVE_SPIDER_OR_ROBOT', reason: 'FAILED_UA_EXCLUDE', primaryImpact: 'PAGE_AND_AD_IMPRESSIONS' })
    expect(check('Mozilla/5.0 (crawler)', null)).toMatchObject({ reason: 'FAILED_UA_EXCLUDE', primaryImpact: 'PAGE_IMPRESSIONS' })
    expect(check('Mozilla/5.0 NotACrawler', null).reason).toBe('PASSED_ALL')
    expect(check('Mozilla/5.0 (compatible; Fetcher/1.0)', null)).toMatchObject({ reason: 'FAILED_UA_EXCLUDE', primaryImpact: 'AD_IMPRESSIONS' })
    expect(check('Opera/9 Mozilla/5.0 (compatible; Fetcher/1.0)', null).reason).toBe('PASSED_ALL')
    expect(check('Mozilla/5.0 #commented-bot', null).reason).toBe('PASSED_ALL')
  })

  it('applies inactive dates to the event\'s time', () => {
    expect(check('Mozilla/5.0 old-spider', null).category).toBe('INACTIVE_SPIDER_OR_ROBOT')
    expect(check('Mozilla/5.0 old-spider', null, Date.UTC(2018, 0, 1)).category).toBe('ACTIVE_SPIDER_OR_ROBOT')
    expect(check('Mozilla/5.0 future-spider', null).category).toBe('ACTIVE_SPIDER_OR_ROBOT')
    expect(check('Retired Browser', null).reason).toBe('FAILED_UA_INCLUDE')
    expect(check('Retired Browser', null, Date.UTC(2019, 0, 1)).reason).toBe('PASSED_ALL')
    expect(check('Fading Browser', null).reason).toBe('PASSED_ALL')
  })

  it('checks the configuration\'s own lists first', () => {
    const own = new IabLists(files, { include: ['ExampleBot'], exclude: ['xdroid'] })
    expect(own.check('Mozilla/5.0 (compatible; ExampleBot/2.1)', '10.20.0.1', NOW).reason).toBe('PASSED_ALL')
    expect(own.check('Xdroid', null, NOW)).toEqual({ spiderOrRobot: true, category: 'SPIDER_OR_ROBOT', reason: 'FAILED_UA_EXCLUDE', primaryImpact: 'UNKNOWN' })
  })

  it('refuses an IP list line that is no address', () => {
    expect(() => new IabLists({ ...files, ip: '10.0.0.0/8\nnot-an-ip\n' }, undefined, 'ip.txt')).toThrow('ip.txt: line 2 is not an IP address or CIDR range: "not-an-ip"')
    expect(() => new IabLists({ ...files, ip: '10.0.0.0/33' })).toThrow('line 1')
  })

  const config = (extra: object = {}) => enrichmentConfig('com.snowplowanalytics.snowplow.enrichments', 'iab_spiders_and_robots_enrichment', '1-0-1', {
    ipFile: { uri: `file://${DIR}`, database: 'ip_exclude_current_cidr.txt' },
    excludeUseragentFile: { uri: `file://${DIR}`, database: 'exclude_current.txt' },
    includeUseragentFile: { uri: `file://${DIR}`, database: 'include_current.txt' },
    ...extra,
  })

  it('adds the context in enriched events, before the address is anonymised', async () => {
    const anon = enrichmentConfig('com.snowplowanalytics.snowplow', 'anon_ip', '1-0-1', { anonOctets: 2, anonSegments: 1 })
    const e = await configuredEnricher([config(), anon])
    const c = goodColumns(await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', userAgent: 'Mozilla/5.0 (X11)', ipAddress: '10.20.9.9' }), batch()))
    expect(c.user_ipaddress).toBe('10.20.x.x')
    expect(derivedOf(c)).toEqual([{ schema: 'iglu:com.iab.snowplow/spiders_and_robots/jsonschema/1-0-0', data: { spiderOrRobot: true, category: 'SPIDER_OR_ROBOT', reason: 'FAILED_IP_EXCLUDE', primaryImpact: 'UNKNOWN' } }])
    const none = goodColumns(await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', ipAddress: 'unknown' }), batch()))
    expect(derivedOf(none)).toEqual([])
  })

  it('reports a record it cannot use as an enrichment failure', async () => {
    const e = await configuredEnricher([config()])
    const o = await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', userAgent: 'Mozilla/5.0 broken-impact', ipAddress: '192.0.2.1' }), batch())
    const bad = o.outputs.find((x) => x.kind === 'bad') as { json: string }
    expect(JSON.parse(bad.json).data.failure.messages).toEqual([{ enrichment: { schemaKey: 'iglu:com.snowplowanalytics.snowplow.enrichments/iab_spiders_and_robots_enrichment/jsonschema/1-0-1', identifier: 'iab-spiders-and-robots' }, message: { error: "Invalid value of impression flag: '7'" } }])
  })
})
