import { Enricher, type EnrichSettings, type RecordOutcome } from '../../../lib/core/enrich/enrich'
import { F, FIELDS } from '../../../lib/core/enrich/fields'
import { ENRICH_PROCESSOR } from '../../../lib/core/enrich/version'
import { defaultResolver } from '../../../lib/core/iglu/resolver-config'
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
