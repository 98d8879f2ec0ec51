/**
 * `asn_lookups` and `bot_detection_enrichment_config`: the cases of
 * Snowplow's AsnLookupsEnrichmentSpec and BotDetectionEnrichmentSpec, and
 * both in the enricher after ip_lookups, YAUAA and the IAB check.
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseBotAsns, withLikelyBot } from '../../../../lib/core/enrich/enrichments/asn-lookups'
import { botIndicators } from '../../../../lib/core/enrich/enrichments/bot-detection'
import { projectRoot } from '../../../../lib/local/handlers'
import { batch, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, payload } from '../helpers'

const ASN = 'iglu:com.snowplowanalytics.snowplow/asn/jsonschema/1-0-1'
const YAUAA = 'iglu:nl.basjes/yauaa_context/jsonschema/1-0-5'
const IAB = 'iglu:com.iab.snowplow/spiders_and_robots/jsonschema/1-0-0'
const CLIENT = 'iglu:com.snowplowanalytics.snowplow/client_side_bot_detection/jsonschema/1-0-0'
const FIXTURES = join(projectRoot, 'test/fixtures')
const ENR = 'com.snowplowanalytics.snowplow.enrichments'

describe('asn_lookups', () => {
  it('reads the bot list CSV (header, first column) and names a line that is no ASN', () => {
    expect(parseBotAsns(readFileSync(join(FIXTURES, 'asn/bot-asns.csv'), 'utf8'), 'bot-asns.csv')).toEqual(new Set([64500, 64501, 3]))
    expect(() => parseBotAsns(readFileSync(join(FIXTURES, 'asn/bot-asns-invalid.csv'), 'utf8'), 'bad.csv')).toThrow(/^Failed to parse CSV file with ASNs \(bad\.csv\)\. Error: line 3: "not-a-number" is not an autonomous system number$/)
  })

  it('adds likelyBot, keeping the organization when there is one', () => {
    const bots = new Set([174, 612])
    expect(JSON.parse(withLikelyBot('{"number":174,"organization":"Cogent Communications"}', bots)!)).toEqual({ number: 174, organization: 'Cogent Communications', likelyBot: true })
    expect(JSON.parse(withLikelyBot('{"number":9999,"organization":"Clean AS"}', bots)!)).toEqual({ number: 9999, organization: 'Clean AS', likelyBot: false })
    expect(JSON.parse(withLikelyBot('{"number":174}', bots)!)).toEqual({ number: 174, likelyBot: true })
    expect(withLikelyBot('{"organization":"x"}', bots)).toBeUndefined()
  })
})

describe('bot_detection_enrichment_config', () => {
  const all = { useYauaa: true, useIab: true, useAsnLookups: true, useClientSideDetection: true }
  const e = (schema: string, data: object) => ({ schema, data: JSON.stringify(data) })

  it('finds each indicator', () => {
    expect(botIndicators(all, [e(YAUAA, { deviceClass: 'Robot', agentClass: 'Robot' })], [])).toEqual(['yauaa'])
    expect(botIndicators(all, [e(YAUAA, { deviceClass: 'Robot Imitator', agentClass: 'Browser' })], [])).toEqual(['yauaa'])
    expect(botIndicators(all, [e(YAUAA, { deviceClass: 'Phone', agentClass: 'Robot Mobile' })], [])).toEqual(['yauaa'])
    expect(botIndicators(all, [e(YAUAA, { deviceClass: 'Desktop', agentClass: 'Browser' })], [])).toEqual([])
    expect(botIndicators(all, [e(IAB, { spiderOrRobot: true })], [])).toEqual(['iab'])
    expect(botIndicators(all, [e(ASN, { number: 1, likelyBot: true })], [])).toEqual(['asnLookups'])
    expect(botIndicators(all, [e(ASN, { number: 1 })], [])).toEqual([])
    expect(botIndicators(all, [], [e(CLIENT, { bot: true })])).toEqual(['clientSideDetection'])
    expect(botIndicators(all, [], [e(CLIENT, { bot: false })])).toEqual([])
  })

  it('lists the input indicator first, then the derived ones in execution order', () => {
    // derived contexts are newest first: ASN lookups (19) ran after YAUAA (16), after IAB (4)
    const derived = [e(ASN, { number: 1, likelyBot: true }), e(YAUAA, { deviceClass: 'Robot' }), e(IAB, { spiderOrRobot: true })]
    expect(botIndicators(all, derived, [e(CLIENT, { bot: true })])).toEqual(['clientSideDetection', 'iab', 'yauaa', 'asnLookups'])
  })

  it('ignores the indicators it is not asked to use', () => {
    const derived = [e(ASN, { number: 1, likelyBot: true }), e(YAUAA, { deviceClass: 'Robot' }), e(IAB, { spiderOrRobot: true })]
    expect(botIndicators({ useYauaa: false, useIab: true, useAsnLookups: false, useClientSideDetection: false }, derived, [e(CLIENT, { bot: true })])).toEqual(['iab'])
    expect(botIndicators({ useYauaa: false, useIab: false, useAsnLookups: false, useClientSideDetection: false }, derived, [])).toEqual([])
  })

  it('works with the enrichments it reads, in enriched events', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-asn-'))
    copyFileSync(join(FIXTURES, 'maxmind/GeoLite2-ASN-Test.mmdb'), join(dir, 'GeoLite2-ASN.mmdb'))
    const iab = join(FIXTURES, 'iab')
    const enricher = await configuredEnricher([
      enrichmentConfig('com.snowplowanalytics.snowplow', 'ip_lookups', '2-0-1', { asn: { uri: `file://${dir}`, database: 'GeoLite2-ASN.mmdb' } }),
      enrichmentConfig(ENR, 'asn_lookups', '1-0-0', { botAsnsFile: { uri: `file://${join(FIXTURES, 'asn')}`, database: 'bot-asns.csv' }, botAsns: [{ asn: 1221, name: 'Telstra' }], bypassPlatforms: ['srv'] }),
      enrichmentConfig(ENR, 'yauaa_enrichment_config', '1-0-0', {}),
      enrichmentConfig(ENR, 'iab_spiders_and_robots_enrichment', '1-0-1', {
        ipFile: { uri: `file://${iab}`, database: 'ip_exclude_current_cidr.txt' }, excludeUseragentFile: { uri: `file://${iab}`, database: 'exclude_current.txt' }, includeUseragentFile: { uri: `file://${iab}`, database: 'include_current.txt' },
      }),
      enrichmentConfig(ENR, 'bot_detection_enrichment_config', '1-0-1', { useYauaa: true, useIab: true, useAsnLookups: true, useClientSideDetection: true }),
    ])
    const run = async (ip: string, ua: string, platform = 'web', cx?: object) => {
      const qs = `e=pv&p=${platform}&tv=js-3${cx ? `&co=${encodeURIComponent(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [cx] }))}` : ''}`
      return derivedOf(goodColumns(await enricher.enrichRecord(payload({ path: '/i', querystring: qs, ipAddress: ip, userAgent: ua }), batch())))
    }
    const bySchema = (list: { schema: string; data: any }[], s: string) => list.find((x) => x.schema.startsWith(s))?.data
    // 1.128.0.0 is AS1221 in MaxMind's test database; "crawler" is on the test exclude list
    const bot = await run('1.128.0.0', 'Mozilla/5.0 (compatible; Googlebot/2.1; crawler; +http://www.google.com/bot.html)')
    expect(bySchema(bot, 'iglu:com.snowplowanalytics.snowplow/asn/')).toEqual({ number: 1221, organization: 'Telstra Pty Ltd', likelyBot: true })
    expect(bySchema(bot, 'iglu:com.snowplowanalytics.snowplow/bot_detection/')).toEqual({ bot: true, indicators: ['iab', 'yauaa', 'asnLookups'] })
    const human = await run('192.0.2.1', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0')
    expect(bySchema(human, 'iglu:com.snowplowanalytics.snowplow/bot_detection/')).toEqual({ bot: false, indicators: [] })
    const server = await run('1.128.0.0', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0', 'srv')
    expect(bySchema(server, 'iglu:com.snowplowanalytics.snowplow/asn/')).toEqual({ number: 1221, organization: 'Telstra Pty Ltd' })
    const flagged = await run('192.0.2.1', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0', 'web', { schema: CLIENT, data: { bot: true, kind: 'headless_chrome' } })
    expect(bySchema(flagged, 'iglu:com.snowplowanalytics.snowplow/bot_detection/')).toEqual({ bot: true, indicators: ['clientSideDetection'] })
  })
})
