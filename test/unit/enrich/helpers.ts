import { Enricher, type EnrichSettings, type RecordOutcome } from '../../../lib/core/enrich/enrich'
import { F, FIELDS } from '../../../lib/core/enrich/fields'
import { ENRICH_PROCESSOR } from '../../../lib/core/enrich/version'
import { defaultResolver } from '../../../lib/runtime/default-resolver'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA, type CollectorPayload } from '../../../lib/core/thrift/types'

/** Project schemas and Iglu Central test data, no network. */
export const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })

export function enricher(settings: Partial<EnrichSettings> = {}): Enricher {
  return new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, ...settings })
}

export const ETL = Date.UTC(2025, 3, 30, 10, 5)
export const COLLECTED = Date.UTC(2025, 3, 30, 10, 0)
export const batch = () => {
  let n = 0
  return { etlTimestamp: ETL, newEventId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` }
}

export function payload(p: Partial<CollectorPayload>): Buffer {
  return encodeCollectorPayload({
    schema: COLLECTOR_PAYLOAD_SCHEMA,
    ipAddress: '175.16.199.0',
    timestamp: COLLECTED,
    encoding: 'UTF-8',
    collector: 'test-collector',
    hostname: 'collector.snplow.net',
    ...p,
  })
}

export const tp2 = (querystring: string, extra: Partial<CollectorPayload> = {}) => payload({ path: '/com.snowplowanalytics.snowplow/tp2', querystring, ...extra })

export async function run(record: Uint8Array, settings: Partial<EnrichSettings> = {}): Promise<RecordOutcome> {
  return enricher(settings).enrichRecord(record, batch())
}

/** The columns of a TSV line by name (empty → ''). */
export function columns(tsv: string): Record<string, string> {
  const cols = tsv.split('\t')
  return Object.fromEntries(FIELDS.map((f, i) => [f, cols[i]!]))
}

export function only(o: RecordOutcome, kind: 'good' | 'incomplete' | 'bad' | 'pii') {
  return o.outputs.filter((x) => x.kind === kind)
}

export function goodColumns(o: RecordOutcome): Record<string, string> {
  const g = only(o, 'good')
  if (g.length !== 1) throw new Error(`expected one good event, got ${JSON.stringify(o.outputs.map((x) => (x.kind === 'bad' ? x.json : x.kind)))}`)
  return columns((g[0] as { tsv: string }).tsv)
}

export function badRows(o: RecordOutcome): any[] {
  return only(o, 'bad').map((b) => JSON.parse((b as { json: string }).json))
}

export { F }

/** An enrichment configuration document for `{vendor}/{name}` at `version`. */
export const enrichmentConfig = (vendor: string, name: string, version: string, parameters: object, extra: object = {}) => ({
  schema: `iglu:${vendor}/${name}/jsonschema/${version}`,
  data: { vendor, name, enabled: true, parameters, ...extra },
})

/**
 * An enricher running the enrichments of configuration documents, validated
 * and built as at start; `file://` assets are read in place unless `assetPath` says otherwise.
 */
export async function configuredEnricher(docs: readonly object[], assetPath: (location: string) => string = (l) => l.replace(/^file:\/\//, ''), settings: Partial<EnrichSettings> = {}): Promise<Enricher> {
  const { loadEnrichmentConfigs, buildEnrichments } = await import('../../../lib/core/enrich/enrichments/registry')
  const r = await loadEnrichmentConfigs(docs.map((d, i) => ({ source: `config-${i}.json`, text: JSON.stringify(d) })), resolver)
  if (!r.ok) throw new Error(r.errors.join('\n'))
  const built = await buildEnrichments(r.configs, { assets: { path: assetPath }, legacyOrder: false })
  if (!built.ok) throw new Error(built.errors.join('\n'))
  return enricher({ enrichments: built.enrichments, ...settings })
}

/** The derived contexts of a good event's columns, as JSON. */
export const derivedOf = (c: Record<string, string>): { schema: string; data: any }[] => (c.derived_contexts ? JSON.parse(c.derived_contexts).data : [])
