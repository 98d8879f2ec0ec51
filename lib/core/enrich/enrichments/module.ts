/**
 * What a configurable enrichment is made of: the configuration schema it
 * answers to, where it runs in the execution order, the assets it needs, and
 * a factory that turns its validated `parameters` into a step (`Enrichment`)
 * once, at start. Modules are pure: the asset files they read are handed to
 * them as local paths.
 */
import type { SchemaKey } from '../../iglu/keys'
import type { JsonObject } from '../../iglu/selfdesc'
import type { Enrichment } from '../steps'
import type { EventSpecContext, LookupServices, WebServices } from './services'

/** One enrichment configuration file, validated against its schema. */
export interface EnrichmentConfig {
  /** Where it was read from (a file name or object key), for messages. */
  readonly source: string
  readonly schema: SchemaKey
  /** The configuration's `data` (`vendor`, `name`, `enabled`, `parameters`, and `emitEvent` etc.). */
  readonly data: JsonObject
  readonly parameters: JsonObject
}

/** An asset a configuration names: a database file at `uri` + `/` + `database`. */
export interface AssetRef {
  /** The parameter it comes from, e.g. `geo` or `excludeUseragentFile`. */
  readonly name: string
  /** Full location: `s3://…`, `http(s)://…` or `file://…`. */
  readonly location: string
}

/** Local copies of the assets, by location. */
export interface AssetFiles {
  /** The local path of a downloaded asset (throws for an asset that was not declared). */
  path(location: string): string
}

export interface BuildContext {
  readonly assets: AssetFiles
  /** `featureFlags.legacyEnrichmentOrder`. */
  readonly legacyOrder: boolean
  /** The network, for enrichments that read a web service (absent: they cannot be built). */
  readonly web?: WebServices
  /** HTTP, SQL databases and the clock, for the enrichments that look data up elsewhere (given by the shell). */
  readonly services?: LookupServices
  /** `featureFlags.exitOnJsCompileError` (default true): false makes a script that cannot start fail every event instead. */
  readonly exitOnJsCompileError?: boolean
  /** This deployment's published event specifications (for the event specification enrichment), where enrich can read them. */
  readonly eventSpecs?: EventSpecContext
}

/** A problem with a configuration, reported with its file and stopping enrich. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

export interface EnrichmentModule {
  /** The configuration schema's vendor and name, and the model(s) supported. */
  readonly vendor: string
  readonly name: string
  readonly models: readonly number[]
  /**
   * Parameters this deployment accepts besides those of the configuration
   * schema, each with its check (a message for an unusable value). They are
   * taken out of `parameters` before the configuration is validated against
   * its schema, checked here, and handed to `create` with the others.
   */
  readonly extensions?: Readonly<Record<string, (value: unknown) => string | undefined>>
  /** The assets the configuration names (downloaded before `create`). */
  assets?(config: EnrichmentConfig): AssetRef[]
  /** The step, from the validated configuration; throws `ConfigError` for a configuration it cannot use. */
  create(config: EnrichmentConfig, ctx: BuildContext): Enrichment | Promise<Enrichment>
}

/** `uri` + `/` + `database`, as Snowplow joins them (one slash between). */
export function assetLocation(uri: string, database: string): string {
  return `${uri.replace(/\/+$/, '')}/${database.replace(/^\/+/, '')}`
}

/** The asset of a `{uri, database}` parameter, when present. */
export function assetOf(name: string, v: unknown): AssetRef[] {
  if (typeof v !== 'object' || v === null) return []
  const { uri, database } = v as { uri?: unknown; database?: unknown }
  return typeof uri === 'string' && typeof database === 'string' ? [{ name, location: assetLocation(uri, database) }] : []
}

/** The execution order of Snowplow enrich 6.10 (step numbers), and the legacy order's positions where they differ. */
export const ORDER = {
  iabSpidersAndRobots: 4,
  userAgentUtils: 5,
  uaParser: 6,
  currencyConversion: 7,
  refererParser: 8,
  campaignAttribution: 10,
  crossNavigation: 11,
  eventFingerprint: 12,
  cookieExtractor: 13,
  httpHeaderExtractor: 14,
  weather: 15,
  yauaa: 16,
  ipLookups: 18,
  asnLookups: 19,
  botDetection: 20,
  javascript: 21,
  sqlQuery: 22,
  apiRequest: 23,
  anonIp: 24,
  pii: 25,
  eventSpec: 26,
} as const

/**
 * `featureFlags.legacyEnrichmentOrder`: the JavaScript enrichment right after
 * the event's schema fields (built-in step 16.5), then currency conversion,
 * weather and IP lookups, before ASN lookups.
 */
export const LEGACY_ORDER: Partial<Record<keyof typeof ORDER, number>> = {
  javascript: 16.6,
  currencyConversion: 16.7,
  weather: 16.8,
  ipLookups: 16.9,
}

export function orderOf(step: keyof typeof ORDER, legacy: boolean): number {
  return (legacy ? LEGACY_ORDER[step] : undefined) ?? ORDER[step]
}
