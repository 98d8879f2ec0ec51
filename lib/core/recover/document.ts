/**
 * A recovery document, whichever of the two formats: Floe's own steps
 * (`io.floe/recovery_steps/jsonschema/1-0-0`) or a snowplow-event-recovery
 * configuration (`com.snowplowanalytics.snowplow/recoveries/jsonschema/…`),
 * told apart by its `schema`.
 */
import { isEventRecoveryConfig, parseEventRecoveryConfig } from './event-recovery/config'
import { parseSteps, type StepsResult } from './steps'

export const EVENT_RECOVERY_NAME = 'snowplow-event-recovery configuration'

export function parseRecoveryDocument(doc: unknown): StepsResult {
  if (!isEventRecoveryConfig(doc)) return parseSteps(doc)
  const c = parseEventRecoveryConfig(doc)
  return c.ok ? { ok: true, value: { name: EVENT_RECOVERY_NAME, steps: [], eventRecovery: c.value } } : c
}
