/**
 * The common production set of enrichments (campaign attribution, referer
 * parser, ua-parser, YAUAA, IP lookups, event fingerprint, anonymised IP,
 * cookie extractor) as a directory of configuration files, with its assets
 * in the repository: MaxMind's City test database under the name the
 * configuration schema expects, and the small referer database (or the
 * referer-parser project's own, when it is beside the repository).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildEnrichments, loadEnrichmentConfigs, type ConfigFile } from '../../lib/core/enrich/enrichments/registry'
import type { BuildContext } from '../../lib/core/enrich/enrichments/module'
import type { Enrichment } from '../../lib/core/enrich/steps'
import type { Resolver } from '../../lib/core/iglu/resolver'
import { projectRoot } from '../../lib/local/handlers'
import { upstreamAsset } from './upstream'

const SP = 'com.snowplowanalytics.snowplow'
const ENR = 'com.snowplowanalytics.snowplow.enrichments'

const doc = (vendor: string, name: string, version: string, parameters: object) => ({ schema: `iglu:${vendor}/${name}/jsonschema/${version}`, data: { vendor, name, enabled: true, parameters } })

export interface ProductionSet {
  /** The directory of configuration files. */
  readonly dir: string
  /** Which referer database the set reads. */
  readonly referers: 'referer-parser project' | 'test fixture'
}

export function productionEnrichments(): ProductionSet {
  const root = mkdtempSync(join(tmpdir(), 'floe-production-set-'))
  const dir = join(root, 'enrichments')
  const assets = join(root, 'assets')
  mkdirSync(dir)
  mkdirSync(assets)
  copyFileSync(join(projectRoot, 'test/fixtures/maxmind/GeoIP2-City-Test.mmdb'), join(assets, 'GeoLite2-City.mmdb'))
  const upstream = upstreamAsset('referer-parser/referers-latest.json', "the referer-parser project's database (the small test database is used instead)")
  const referers = upstream ? 'referer-parser project' : 'test fixture'
  copyFileSync(upstream ?? join(projectRoot, 'test/fixtures/referer-parser/referers.json'), join(assets, 'referers-latest.json'))
  const files: Record<string, object> = {
    'campaign_attribution.json': doc(SP, 'campaign_attribution', '1-0-1', { mapping: 'static', fields: { mktMedium: ['utm_medium'], mktSource: ['utm_source'], mktTerm: ['utm_term'], mktContent: ['utm_content'], mktCampaign: ['utm_campaign'] } }),
    'referer_parser.json': doc(SP, 'referer_parser', '2-0-1', { internalDomains: [], uri: `file://${assets}`, database: 'referers-latest.json' }),
    'ua_parser_config.json': doc(SP, 'ua_parser_config', '1-0-1', {}),
    'yauaa_enrichment_config.json': doc(ENR, 'yauaa_enrichment_config', '1-0-0', {}),
    'ip_lookups.json': doc(SP, 'ip_lookups', '2-0-1', { geo: { uri: `file://${assets}`, database: 'GeoLite2-City.mmdb' } }),
    'event_fingerprint_config.json': doc(SP, 'event_fingerprint_config', '1-0-1', { excludeParameters: ['cv', 'eid', 'nuid', 'stm'], hashAlgorithm: 'MD5' }),
    'anon_ip.json': doc(SP, 'anon_ip', '1-0-1', { anonOctets: 1, anonSegments: 1 }),
    'cookie_extractor_config.json': doc(SP, 'cookie_extractor_config', '1-0-0', { cookies: ['sp'] }),
  }
  for (const [name, d] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(d, null, 2))
  return { dir, referers }
}

/** A page view from Changchun (MaxMind's test data), from a Google search, with campaign parameters. */
export const ENRICHABLE = {
  query: `e=pv&p=web&tv=js-3&aid=enriched&url=${encodeURIComponent('https://shop.example/landing?utm_source=news&utm_medium=email&utm_campaign=spring')}&refr=${encodeURIComponent('https://www.google.com/search?q=floe+pipeline')}`,
  headers: { 'X-Forwarded-For': '175.16.199.7', 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36', Cookie: 'sp=c0ffee00-0000-4000-8000-000000000001' },
}

/** Writes a file-variant enrich configuration (licence accepted) reading `inputDir` and writing `good` and `bad` under `outputDir`; returns its path. */
export function writeFileEnrichConfig(file: string, inputDir: string, outputDir: string): string {
  writeFileSync(file, `license.accept = true
input { type = FileSystem, dir = "${inputDir}" }
output {
  good { type = FileSystem, file = "${join(outputDir, 'good')}" }
  bad { type = FileSystem, file = "${join(outputDir, 'bad')}" }
}`)
  return file
}

/** The steps of enrichment configuration files, validated and built as at start (`file://` assets read in place); throws on any error. */
export async function buildSteps(files: readonly ConfigFile[], resolver: Resolver, ctx: Partial<BuildContext> = {}): Promise<Enrichment[]> {
  const loaded = await loadEnrichmentConfigs(files, resolver)
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'))
  const built = await buildEnrichments(loaded.configs, { assets: { path: (l) => l.replace(/^file:\/\//, '') }, legacyOrder: false, ...ctx })
  if (!built.ok) throw new Error(built.errors.join('\n'))
  return built.enrichments
}

/** The steps of the production set (`productionEnrichments`). */
export async function productionSteps(resolver: Resolver, set: ProductionSet = productionEnrichments()): Promise<Enrichment[]> {
  return buildSteps(readdirSync(set.dir).map((f) => ({ source: f, text: readFileSync(join(set.dir, f), 'utf8') })), resolver)
}
