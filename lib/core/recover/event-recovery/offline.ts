/**
 * The offline mode's rules (`floe recover --input … --config … --output …`):
 * each bad row becomes one Thrift collector payload, or a Snowplow
 * `recovery_error` bad row saying why not. The shell reads and writes the
 * files; the counts it prints are read back from what it wrote.
 */
import { stringify } from '../../enrich/json'
import { encodeCollectorPayload } from '../../thrift/collector-payload'
import { FLOE_VERSION } from '../../version'
import { toCollectorPayload } from '../events'
import { recoverRow } from './apply'
import type { RecoveryConfig } from './config'

export const SNOWPLOW_RECOVERY_ERROR = 'iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1'
/** The `processor` of the recovery_error rows written. */
export const OFFLINE_PROCESSOR = { artifact: 'floe-recover', version: FLOE_VERSION }

export type LineOutcome = { readonly ok: true; readonly payload: Uint8Array } | { readonly ok: false; readonly badRow: string; readonly reason: string }

/** The first words of an error, for the counts by reason. */
export const reasonKey = (error: string) => (error.startsWith('FailedToMatchConfiguration') ? 'FailedToMatchConfiguration' : error.split(':')[0]!.slice(0, 120))

/** One bad row line: its payload bytes, or its recovery_error row. `runId` names the run in the payload's recovery header. */
export function recoverLine(line: string, config: RecoveryConfig, runId: string): LineOutcome {
  const r = recoverRow(line, config)
  if (r.ok) {
    const payload = r.value.kind === 'thrift' ? r.value.bytes : encodeCollectorPayload(toCollectorPayload(r.value.event, runId))
    return { ok: true, payload }
  }
  const original = r.row !== null && typeof r.row === 'object' && !Array.isArray(r.row) ? r.row : { schema: 'unknown', data: { line: String(r.row) } }
  const badRow = stringify({
    schema: SNOWPLOW_RECOVERY_ERROR,
    data: { processor: OFFLINE_PROCESSOR, failure: { error: r.error, configName: r.configName }, payload: original },
  })
  return { ok: false, badRow, reason: reasonKey(r.error) }
}
