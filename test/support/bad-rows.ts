/** Bad rows as enrich writes them, for recovery tests. */
import { randomUUID } from 'node:crypto'

export const SCHEMA_VIOLATIONS = 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1'

/** A schema_violations bad row of one page view (its event id `eid`), with its tracker parameters and request. */
export function schemaViolation(eid: string = randomUUID(), at = Date.parse('2026-11-28T10:00:00Z'), aid = 'crash', headers: string[] = ['Host: localhost']): string {
  const ts = new Date(at).toISOString()
  return JSON.stringify({
    schema: SCHEMA_VIOLATIONS,
    data: {
      processor: { artifact: 'floe-enrich', version: '1.0.0' },
      failure: { timestamp: ts, messages: [{ schemaKey: 'iglu:com.acme/click/jsonschema/1-0-0', error: { error: 'ResolutionError', lookupHistory: [] } }] },
      payload: {
        enriched: { event_id: eid, app_id: aid },
        raw: {
          vendor: 'com.snowplowanalytics.snowplow',
          version: 'tp2',
          parameters: [{ name: 'e', value: 'pv' }, { name: 'p', value: 'web' }, { name: 'tv', value: 'test-0' }, { name: 'aid', value: aid }, { name: 'eid', value: eid }],
          timestamp: ts,
          headers,
          ipAddress: '127.0.0.1',
          useragent: 'test',
        },
      },
    },
  })
}
