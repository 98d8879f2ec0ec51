/**
 * The offline mode's rules (`floe recover --input … --config … --output …`):
 * each bad row becomes one Thrift collector payload, or a Snowplow
 * `recovery_error` bad row saying why not. The shell reads and writes the
 * files; the counts it prints are read back from what it wrote.
 */
import { readSchema } from '../../collector/config'
import { stringify } from '../../enrich/json'
import { encodeCollectorPayload } from '../../thrift/collector-payload'
import { FLOE_VERSION } from '../../version'
import { toCollectorPayload } from '../events'
import { RECOVERY_ERROR_SCHEMA } from '../run'
import { reasonKey, recoverRow } from './apply'
import type { RecoveryConfig } from './config'

export const SNOWPLOW_RECOVERY_ERROR = 'iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1'
const SNOWPLOW_RECOVERY_ERROR_SCHEMA_PATH = 'iglu-central/schemas/com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1'
/** The `processor` of the recovery_error rows written. */
export const OFFLINE_PROCESSOR = { artifact: 'floe-recover', version: FLOE_VERSION }

export type LineOutcome = { readonly ok: true; readonly payload: Uint8Array } | { readonly ok: false; readonly badRow: string; readonly reason: string }


let snowplowPayloads: ReadonlySet<string> | undefined

/** The bad-row schemas a Snowplow recovery_error 1-0-1 may hold (its schema's enum). */
function holdable(schema: unknown): boolean {
  snowplowPayloads ??= new Set((readSchema(SNOWPLOW_RECOVERY_ERROR_SCHEMA_PATH) as { properties: { payload: { properties: { schema: { enum: string[] } } } } }).properties.payload.properties.schema.enum)
  return typeof schema === 'string' && snowplowPayloads.has(schema)
}

/**
 * One bad row line: its payload bytes, or why not as a bad row: Snowplow's
 * `recovery_error` (the original row in `payload`) when its schema may hold
 * the row, else Floe's (`iglu:io.floe/recovery_error/jsonschema/1-0-0`, the
 * line as text: a line that is not JSON, or a bad row of a newer version).
 * `runId` names the run in the payload's recovery header; `now` is the time.
 */
export function recoverLine(line: string, config: RecoveryConfig, runId: string, now: number): LineOutcome {
  const r = recoverRow(line, config)
  if (r.ok) {
    const payload = r.value.kind === 'thrift' ? r.value.bytes : encodeCollectorPayload(toCollectorPayload(r.value.event, runId))
    return { ok: true, payload }
  }
  const error = r.error.slice(0, 10_000)
  const original = r.row !== null && typeof r.row === 'object' && !Array.isArray(r.row) ? (r.row as Record<string, unknown>) : undefined
  const badRow = original && holdable(original.schema)
    ? stringify({ schema: SNOWPLOW_RECOVERY_ERROR, data: { processor: OFFLINE_PROCESSOR, failure: { error, configName: r.configName }, payload: original } })
    : stringify({ schema: RECOVERY_ERROR_SCHEMA, data: { processor: OFFLINE_PROCESSOR, failure: { timestamp: new Date(now).toISOString(), error, run: runId, steps: r.configName }, payload: line } })
  return { ok: false, badRow, reason: reasonKey(r.error) }
}
