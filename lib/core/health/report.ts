/**
 * What `/health` answers, and the decisions behind enrich's pause on AWS
 * (a set-up failure disables its own event source mapping; a later change
 * of the configuration enables it again). Plain data in, plain data out.
 *
 * `/health` means "this instance takes events": it lists the components
 * that are not simply working, each with a state. A `deliberate` state is
 * one someone chose or has yet to choose (the licence not accepted yet, a
 * trigger paused on purpose): the instance takes events, they wait, and
 * `/health` answers 200. A `fault` is something that should work and does
 * not (a dependency down, enrich failing on its configuration, a loader that
 * cannot write): `/health` answers 503.
 */

/** How a component listed by `/health` stands (a component not listed is working). */
export type HealthState = 'deliberate' | 'fault'

export interface HealthLine {
  readonly component: string
  readonly since: string
  readonly reason: string
  /** Default `fault`. */
  readonly state?: HealthState
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
  'enrich is off until the licence is accepted (on /home: Control plane, Licence; or set license.accept = true in its configuration, or ACCEPT_LIMITED_USE_LICENSE=yes); records wait in the stream'

/** The start banner's line while the licence is not accepted (`url`: the stack's HTTP address). */
export function licenceBannerLine(url: string): string {
  return `  licence         not accepted yet: accept it on /home (${url}/home#/control-plane/license), or start with ACCEPT_LIMITED_USE_LICENSE=yes; until then enrich is off on purpose, events wait in the raw stream and /health answers 200 listing ${ENRICH_COMPONENT}`
}

/** The reason shown while enrich's mapping is disabled because its configuration cannot be loaded. */
export function enrichPausedReason(cause: string): string {
  return `enrich is paused: configuration cannot be loaded: ${cause.replace(/\s+/g, ' ').trim()}; records wait in the stream`
}

/** One line of `/health`'s body: `<component> is down since <time>: <reason>` (a fault) or `… is off on purpose since …` (deliberate), cut to `HEALTH_LINE_MAX` characters. */
export function healthLineText(l: HealthLine): string {
  return `${l.component} is ${l.state === 'deliberate' ? 'off on purpose' : 'down'} since ${l.since}: ${l.reason}`.slice(0, HEALTH_LINE_MAX)
}

/**
 * `503` with `unavailable` and one line per fault while there is one, else
 * `200` with `ok`; then one line per deliberate state, in both cases.
 */
export function healthAnswer(lines: readonly HealthLine[]): { status: 200 | 503; body: string } {
  const faults = lines.filter((l) => l.state !== 'deliberate')
  const deliberate = lines.filter((l) => l.state === 'deliberate')
  if (lines.length === 0) return { status: 200, body: 'ok' }
  const text = [...faults, ...deliberate].map(healthLineText)
  return { status: faults.length > 0 ? 503 : 200, body: `${faults.length > 0 ? 'unavailable' : 'ok'}\n${text.join('\n')}\n` }
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
