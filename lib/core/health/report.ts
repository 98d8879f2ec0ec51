/**
 * What `/health` answers, and the decisions behind enrich's pause on AWS
 * (a set-up failure disables its own event source mapping; a later change
 * of the configuration enables it again). Plain data in, plain data out.
 */

export interface HealthLine {
  readonly component: string
  readonly since: string
  readonly reason: string
}

/** The health function's environment variable set when enrich's trigger is created disabled for lack of the licence (`licence`). */
export const ENRICH_OFF_ENV = 'FLOE_ENRICH_OFF'

/** The environment variable giving the control plane enrich's mapping: JSON of `EnrichTrigger`. */
export const ENRICH_TRIGGER_ENV = 'FLOE_ENRICH_TRIGGER'

/** A function's stream trigger: the function's physical name and the stream's. */
export interface EnrichTrigger {
  readonly functionName: string
  readonly streamName: string
}

/** Longest line kept, as locally. */
export const HEALTH_LINE_MAX = 500

/** The component the enrich lines name (its trigger: function and stream). */
export const ENRICH_COMPONENT = 'enrich-raw'

export const LICENCE_OFF_REASON =
  'enrich is off until the licence is accepted (on the control plane, or set license.accept = true in its configuration, or ACCEPT_LIMITED_USE_LICENSE=yes); records wait in the stream'

/** The reason shown while enrich's mapping is disabled because its configuration cannot be loaded. */
export function enrichPausedReason(cause: string): string {
  return `enrich is paused: configuration cannot be loaded: ${cause.replace(/\s+/g, ' ').trim()}; records wait in the stream`
}

/** `200 ok`, or `503` with `unavailable` and one line per cause (each cut to `HEALTH_LINE_MAX` characters). */
export function healthAnswer(lines: readonly HealthLine[]): { status: 200 | 503; body: string } {
  if (lines.length === 0) return { status: 200, body: 'ok' }
  const text = lines.map((d) => `${d.component} is down since ${d.since}: ${d.reason}`.slice(0, HEALTH_LINE_MAX))
  return { status: 503, body: `unavailable\n${text.join('\n')}\n` }
}

/** An event source mapping as the Lambda API lists it. */
export interface MappingState {
  readonly uuid: string
  readonly eventSourceArn: string
  /** `Enabled`, `Disabled`, `Enabling`, `Disabling`, `Creating`, `Updating`, `Deleting`. */
  readonly state: string
}

/**
 * Whether a mapping reads `streamName`: its source is the stream
 * (`…:stream/<name>`) or an enhanced fan-out consumer of it
 * (`…:stream/<name>/consumer/…`).
 */
export function readsStream(m: MappingState, streamName: string): boolean {
  const at = m.eventSourceArn.indexOf(':stream/')
  if (at < 0) return false
  const rest = m.eventSourceArn.slice(at + ':stream/'.length)
  return rest === streamName || rest.startsWith(`${streamName}/consumer/`)
}

/** The mappings on `streamName` to disable (those not already off or going away). */
export function mappingsToDisable(mappings: readonly MappingState[], streamName: string): string[] {
  return mappings.filter((m) => readsStream(m, streamName) && !['Disabled', 'Disabling', 'Deleting'].includes(m.state)).map((m) => m.uuid)
}

/** The mappings on `streamName` to enable again (those off or going off). */
export function mappingsToEnable(mappings: readonly MappingState[], streamName: string): string[] {
  return mappings.filter((m) => readsStream(m, streamName) && ['Disabled', 'Disabling'].includes(m.state)).map((m) => m.uuid)
}
