/** `ua_parser_config`: the cases of Snowplow's UaParserEnrichmentSpec, custom rules from an asset, and the context in the enricher. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { loadRules, parseUserAgent } from '../../../../lib/core/enrich/enrichments/ua-parser'
import { assetsOf, buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { projectRoot } from '../../../../lib/local/handlers'
import { packageFile } from '../../../../lib/core/package-files'
import { batch, columns, only, payload, resolver } from '../helpers'

const uapCore = loadRules(readFileSync(packageFile('uap-core/regexes.yaml'), 'utf8'), 'uap-core')
const TEST_RULES = join(projectRoot, 'test/fixtures/ua-parser/test-rules.yml')

describe('ua_parser_config', () => {
  it('parses the user agents of Snowplow\'s spec with uap-core\'s rules', () => {
    expect(parseUserAgent(uapCore, 'Mozilla/5.0 (iPhone; CPU iPhone OS 5_1_1 like Mac OS X) AppleWebKit/534.46 (KHTML, like Gecko) Version/5.1 Mobile/9B206 Safari/7534.48.3')).toEqual({
      useragentFamily: 'Mobile Safari', useragentMajor: '5', useragentMinor: '1', useragentPatch: null, useragentVersion: 'Mobile Safari 5.1',
      osFamily: 'iOS', osMajor: '5', osMinor: '1', osPatch: '1', osPatchMinor: null, osVersion: 'iOS 5.1.1', deviceFamily: 'iPhone',
    })
    expect(parseUserAgent(uapCore, 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_10) AppleWebKit/600.1.25 (KHTML, like Gecko) Version/8.0 Safari/600.1.25')).toEqual({
      useragentFamily: 'Safari', useragentMajor: '8', useragentMinor: '0', useragentPatch: null, useragentVersion: 'Safari 8.0',
      osFamily: 'Mac OS X', osMajor: '10', osMinor: '10', osPatch: null, osPatchMinor: null, osVersion: 'Mac OS X 10.10', deviceFamily: 'Mac',
    })
  })
  it('answers Other for what no rule matches', () => {
    expect(parseUserAgent(uapCore, '')).toMatchObject({ useragentFamily: 'Other', useragentVersion: 'Other', osFamily: 'Other', deviceFamily: 'Other' })
  })
  it('uses a rules file named by uri + database', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/ua_parser_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ua_parser_config', enabled: true, parameters: { uri: `file://${join(projectRoot, 'test/fixtures/ua-parser')}`, database: 'test-rules.yml' } } })
    const r = await loadEnrichmentConfigs([{ source: 'ua.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    expect(assetsOf(r.configs).map((a) => a.location)).toEqual([`file://${TEST_RULES}`])
    const built = await buildEnrichments(r.configs, { assets: { path: () => TEST_RULES }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const c = columns((only(await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', userAgent: 'UAP Test Agent' }), batch()), 'good')[0] as { tsv: string }).tsv)
    expect(JSON.parse(c.derived_contexts).data).toEqual([{ schema: 'iglu:com.snowplowanalytics.snowplow/ua_parser_context/jsonschema/1-0-0', data: {
      useragentFamily: 'UAP Test Family', useragentMajor: null, useragentMinor: null, useragentPatch: null, useragentVersion: 'UAP Test Family',
      osFamily: 'UAP Test OS', osMajor: null, osMinor: null, osPatch: null, osPatchMinor: null, osVersion: 'UAP Test OS', deviceFamily: 'UAP Test Device',
    } }])
  })
  it('refuses a rules file that is not one', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/ua_parser_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ua_parser_config', enabled: true, parameters: { uri: 'file:///x', database: 'rules.yml' } } })
    const r = await loadEnrichmentConfigs([{ source: 'ua.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => join(projectRoot, 'package.json') }, legacyOrder: false })
    expect(built).toMatchObject({ ok: false, errors: [expect.stringMatching(/^ua\.json: file:\/\/\/x\/rules\.yml does not hold ua-parser rules/)] })
  })
})
