/**
 * The event specification enrichment is on by default: it reads nothing but
 * this deployment's own tracking-design tables, so it needs no choice from
 * the deployer. When no configuration file names it (enabled or not), enrich
 * adds this built-in one; `FLOE_EVENT_SPEC_ENRICHMENT=off` (or a file with
 * `"enabled": false`) turns it off.
 */
import { isObject } from '../../iglu/selfdesc'
import type { ConfigFile } from './registry'

export const EVENT_SPEC_SETTING = 'FLOE_EVENT_SPEC_ENRICHMENT'
/** How often the built-in configuration reads the specifications again (seconds). */
export const DEFAULT_REFRESH_SECONDS = 10
export const DEFAULT_SOURCE = `built-in event specification enrichment (${EVENT_SPEC_SETTING}=off turns it off)`
const NAME = 'event_spec_enrichment_config'

export const DEFAULT_EVENT_SPEC_CONFIG = {
  schema: `iglu:com.snowplowanalytics.snowplow.enrichments/${NAME}/jsonschema/1-0-0`,
  data: { name: NAME, vendor: 'com.snowplowanalytics.snowplow.enrichments', enabled: true, parameters: { refreshPeriodSeconds: DEFAULT_REFRESH_SECONDS } },
} as const

/** Whether the setting leaves the default on (`on`, unset) or turns it off (`off`); anything else is refused with the rule. */
export function eventSpecDefaultOn(env: Readonly<Record<string, string | undefined>>): boolean {
  const v = env[EVENT_SPEC_SETTING]?.trim().toLowerCase()
  if (v === undefined || v === '' || v === 'on' || v === 'true') return true
  if (v === 'off' || v === 'false') return false
  throw new Error(`${EVENT_SPEC_SETTING} must be on or off (got '${String(env[EVENT_SPEC_SETTING]).slice(0, 40)}')`)
}

/** The file configuring the event specification enrichment among `files`, if any (by the schema's name). */
export function eventSpecFile(files: readonly ConfigFile[]): { file: ConfigFile; enabled: boolean } | undefined {
  for (const file of files) {
    let doc: unknown
    try {
      doc = JSON.parse(file.text)
    } catch {
      continue // reported by the loader
    }
    if (!isObject(doc) || typeof doc.schema !== 'string' || !doc.schema.includes(`/${NAME}/`)) continue
    return { file, enabled: !(isObject(doc.data) && doc.data.enabled === false) }
  }
  return undefined
}

export type EventSpecState =
  | { readonly on: true; readonly source: string; readonly refreshSeconds?: number }
  | { readonly on: false; readonly reason: string }

/** The files with the built-in configuration added when none names the enrichment and the setting leaves it on. */
export function withDefaultEventSpec(files: readonly ConfigFile[], defaultOn: boolean): ConfigFile[] {
  if (!defaultOn || eventSpecFile(files) !== undefined) return [...files]
  return [...files, { source: DEFAULT_SOURCE, text: JSON.stringify(DEFAULT_EVENT_SPEC_CONFIG) }]
}

/** Whether enrich tags events with specifications, and why not (for the pages). */
export function eventSpecState(files: readonly ConfigFile[], defaultOn: boolean): EventSpecState {
  const f = eventSpecFile(files)
  if (f !== undefined) {
    if (!f.enabled) return { on: false, reason: `the event specification enrichment is disabled by ${f.file.source} ("enabled": false); enable it to tag events with their specifications` }
    let refresh: number | undefined
    try {
      const p = (JSON.parse(f.file.text) as { data?: { parameters?: { refreshPeriodSeconds?: unknown } } }).data?.parameters?.refreshPeriodSeconds
      if (typeof p === 'number') refresh = p
    } catch {
      // not JSON: enrich refuses it and says so
    }
    return { on: true, source: f.file.source, ...(refresh !== undefined ? { refreshSeconds: refresh } : {}) }
  }
  if (!defaultOn) return { on: false, reason: `the event specification enrichment is turned off (${EVENT_SPEC_SETTING}=off): no event is tagged with a specification or checked against one` }
  return { on: true, source: DEFAULT_SOURCE, refreshSeconds: DEFAULT_REFRESH_SECONDS }
}
