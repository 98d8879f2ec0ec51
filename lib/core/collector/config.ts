import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import type { ErrorObject, ValidateFunction } from 'ajv'

/**
 * Collector configuration. Every key is optional in the input; the defaults
 * below follow the Snowplow stream collector's `reference.conf` unless a note
 * says otherwise. The JSON Schema of the input is
 * `schemas/io.floe/collector_config/jsonschema/1-0-0`.
 */
export interface CollectorConfig {
  /** Written to `CollectorPayload.collector` (enrich's `v_collector`). Default `floe-<version>-kinesis`. */
  readonly collectorName: string
  /**
   * Custom paths: `/{vendor}/{version}` requests whose path is a key here are
   * treated as the mapped path, one of `/com.snowplowanalytics.snowplow/tp2`,
   * `/com.snowplowanalytics.iglu/v1` or `/r/tp2` (which redirects even when
   * default redirects are off). Default `{}`.
   */
  readonly paths: Readonly<Record<string, MappedPath>>
  readonly cookie: CookieConfig
  readonly doNotTrackCookie: DoNotTrackCookieConfig
  readonly cookieBounce: CookieBounceConfig
  readonly cors: CorsConfig
  /** Serve `/r/tp2` redirects. Default `false`: any `/r/…` path answers 404 `redirects disabled`. */
  readonly enableDefaultRedirect: boolean
  /** Hosts a redirect may send the browser to; empty (the default) allows any host. */
  readonly redirectDomains: readonly string[]
  readonly crossDomain: CrossDomainConfig
  readonly rootResponse: RootResponseConfig
  readonly networking: NetworkingConfig
  readonly streams: StreamsConfig
}

export type MappedPath = '/com.snowplowanalytics.snowplow/tp2' | '/com.snowplowanalytics.iglu/v1' | '/r/tp2'
export const MAPPED_PATHS: readonly MappedPath[] = ['/com.snowplowanalytics.snowplow/tp2', '/com.snowplowanalytics.iglu/v1', '/r/tp2']

export type SameSite = 'None' | 'Lax' | 'Strict'

export interface CookieConfig {
  /** Set and read the network user id cookie. Default `true`. */
  readonly enabled: boolean
  /** Default `sp`. */
  readonly name: string
  /** Lifetime of the cookie from the request time. Default 365 days. */
  readonly expirationDays: number
  /**
   * Cookie domains: the first one equal to, or a parent of, the host of the
   * request's `Origin` is used. Default `[]` (host-only cookie unless `fallbackDomain`).
   */
  readonly domains: readonly string[]
  /** Domain used when no entry of `domains` matches. Default: none. */
  readonly fallbackDomain?: string
  /** Default `true`. */
  readonly secure: boolean
  /** Default `true`. */
  readonly httpOnly: boolean
  /** Default `None`, so the cookie is sent on cross-site tracker requests. */
  readonly sameSite: SameSite
  /** Default `/`. */
  readonly path: string
  /** When set, a second cookie with this name and the same value, readable by scripts (`HttpOnly` off). */
  readonly clientCookieName?: string
}

export interface DoNotTrackCookieConfig {
  /** Default `false`. */
  readonly enabled: boolean
  /** Name of the cookie that opts the user out. */
  readonly name: string
  /** Regular expression the whole cookie value must match. */
  readonly value: string
}

export interface CookieBounceConfig {
  /**
   * Default `false`. When on, a pixel request without a network user id is
   * redirected to itself with `<name>=true` to test whether the browser keeps
   * the cookie; nothing is recorded for the first request.
   */
  readonly enabled: boolean
  /** Default `n3pc`. */
  readonly name: string
  /** Network user id for browsers that came back from the bounce without the cookie. */
  readonly fallbackNetworkUserId: string
  /** Header carrying the original scheme behind a proxy. Default `X-Forwarded-Proto`. */
  readonly forwardedProtocolHeader: string
}

export interface CorsConfig {
  /** `Access-Control-Max-Age` of preflight responses. Default 3600 (60 minutes). */
  readonly accessControlMaxAgeSeconds: number
}

export interface CrossDomainConfig {
  /** Serve `/crossdomain.xml`. Default `false`. */
  readonly enabled: boolean
  /** Default `["*"]`. */
  readonly domains: readonly string[]
  /** Default `true`. */
  readonly secure: boolean
}

export interface RootResponseConfig {
  /** Answer `GET /` with the response below. Default `false` (404). */
  readonly enabled: boolean
  /** Default 302. */
  readonly statusCode: number
  /** Default `{}`. */
  readonly headers: Readonly<Record<string, string>>
  /** Default `""`. */
  readonly body: string
}

export interface NetworkingConfig {
  /** Request bodies larger than this are refused with 413. Default 2,097,152 (2 MiB). */
  readonly dropPayloadSize: number
}

export interface StreamsConfig {
  /**
   * Physical name of the stream for collector payloads. Default: the raw stream
   * the deployment grants (`FLOE_STREAM_RAW`).
   */
  readonly good?: string
  /** Physical name of the stream for bad rows. Default: the deployment's bad stream (`FLOE_STREAM_BAD`). */
  readonly bad?: string
  /** Partition records by client IP instead of a random UUID. Default `false`. */
  readonly useIpAddressAsPartitionKey: boolean
  /**
   * Largest serialized record written to a stream, in bytes. Larger POST
   * batches are split; events that still do not fit become `size_violation`
   * bad rows. Default 1,000,000 (Kinesis records are limited to 1 MiB
   * including the partition key).
   */
  readonly maxBytes: number
}

/** Version written into `collectorName` and bad-row `processor.version`. */
export const COLLECTOR_VERSION = '0.1.0'
export const COLLECTOR_ARTIFACT = 'floe-collector'

export const DEFAULT_COLLECTOR_CONFIG: CollectorConfig = {
  collectorName: `floe-${COLLECTOR_VERSION}-kinesis`,
  paths: {},
  cookie: {
    enabled: true,
    name: 'sp',
    expirationDays: 365,
    domains: [],
    secure: true,
    httpOnly: true,
    sameSite: 'None',
    path: '/',
  },
  doNotTrackCookie: { enabled: false, name: '', value: '' },
  cookieBounce: {
    enabled: false,
    name: 'n3pc',
    fallbackNetworkUserId: '00000000-0000-4000-A000-000000000000',
    forwardedProtocolHeader: 'X-Forwarded-Proto',
  },
  cors: { accessControlMaxAgeSeconds: 3600 },
  enableDefaultRedirect: false,
  redirectDomains: [],
  crossDomain: { enabled: false, domains: ['*'], secure: true },
  rootResponse: { enabled: false, statusCode: 302, headers: {}, body: '' },
  networking: { dropPayloadSize: 2_097_152 },
  streams: { useIpAddressAsPartitionKey: false, maxBytes: 1_000_000 },
}

type DeepPartial<T> = { -readonly [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K] }
/** What a user writes: any subset of the configuration. */
export type CollectorConfigInput = DeepPartial<CollectorConfig>

export type ConfigResult =
  | { readonly ok: true; readonly config: CollectorConfig }
  | { readonly ok: false; readonly errors: readonly string[] }

export const COLLECTOR_CONFIG_SCHEMA_KEY = 'io.floe/collector_config/jsonschema/1-0-0'

/** Finds the project's `schemas/` directory: `FLOE_SCHEMAS_DIR`, else upwards from this module, else the working directory. */
export function schemasDir(): string {
  const fromEnv = process.env.FLOE_SCHEMAS_DIR
  if (fromEnv) return fromEnv
  const starts = [dirname(fileURLToPath(import.meta.url)), process.cwd()]
  for (const start of starts) {
    let dir = resolve(start)
    for (;;) {
      const candidate = join(dir, 'schemas')
      if (existsSync(join(candidate, 'io.floe'))) return candidate
      const parent = dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  throw new Error('Cannot find the schemas/ directory (set FLOE_SCHEMAS_DIR)')
}

/** Reads a self-describing JSON Schema from `schemas/` by its `vendor/name/format/version` key. */
export function readSchema(key: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemasDir(), ...key.split('/')), 'utf8')) as Record<string, unknown>
}

/** Compiles a self-describing draft-04 schema (the `self` block and Iglu meta-schema reference removed). */
export function compileSelfDescribing(schema: Record<string, unknown>): ValidateFunction {
  const { self: _self, $schema: _meta, ...body } = schema
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats(ajv)
  return ajv.compile(body)
}

let validator: ValidateFunction | undefined
function configValidator(): ValidateFunction {
  validator ??= compileSelfDescribing(readSchema(COLLECTOR_CONFIG_SCHEMA_KEY))
  return validator
}

function keyPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (extra !== undefined) parts.push(extra)
  if (parts.length === 0) return '(root)'
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? (i === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`)).join('')
}

function describe(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `${keyPath(e.instancePath, String((e.params as { additionalProperty: string }).additionalProperty))}: unknown key`
    case 'enum':
      return `${keyPath(e.instancePath)}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
    default:
      return `${keyPath(e.instancePath)}: ${e.message ?? e.keyword}`
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function merge<T>(defaults: T, input: unknown): T {
  if (!isObject(defaults) || !isObject(input)) return (input === undefined ? defaults : input) as T
  const out: Record<string, unknown> = { ...defaults }
  for (const [k, v] of Object.entries(input)) {
    const d = (defaults as Record<string, unknown>)[k]
    // `paths` and header maps are replaced, not merged with defaults (which are empty anyway).
    out[k] = isObject(d) && isObject(v) && Object.keys(d).length > 0 ? merge(d, v) : v
  }
  return out as T
}

/**
 * Validates a configuration document against the collector_config schema and
 * fills in defaults. Errors name the offending key path, e.g.
 * `cookie.sameSite: must be one of "None", "Lax", "Strict"` or `cookie.nmae: unknown key`.
 */
export function parseCollectorConfig(input: unknown): ConfigResult {
  const doc = input === undefined || input === null ? {} : input
  const validate = configValidator()
  if (!validate(doc)) {
    const errors = [...new Set((validate.errors ?? []).map(describe))]
    return { ok: false, errors }
  }
  const errors: string[] = []
  const d = doc as CollectorConfigInput
  if (d.doNotTrackCookie?.value !== undefined) {
    try {
      new RegExp(d.doNotTrackCookie.value)
    } catch (err) {
      errors.push(`doNotTrackCookie.value: not a valid regular expression (${(err as Error).message})`)
    }
  }
  if (d.doNotTrackCookie?.enabled && !d.doNotTrackCookie.name) {
    errors.push('doNotTrackCookie.name: required when doNotTrackCookie.enabled is true')
  }
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, config: merge(DEFAULT_COLLECTOR_CONFIG, doc) }
}

/** Like `parseCollectorConfig`, but throws one error listing every problem. */
/**
 * Environment variable naming a path that `GET /` redirects to when the
 * deployment's configuration says nothing about `rootResponse`. The local
 * stack sets it to `/home` (its home page is served on the same origin);
 * deployed stacks leave it unset, so their root answers 404 unless configured.
 */
export const ROOT_REDIRECT_ENV = 'FLOE_COLLECTOR_ROOT_REDIRECT'

/** `input` with a root response redirecting to `location`, unless `input` configures one itself. */
export function withRootRedirect(input: unknown, location: string | undefined): unknown {
  if (!location) return input
  const doc = input === undefined || input === null ? {} : input
  if (typeof doc !== 'object' || Array.isArray(doc) || 'rootResponse' in doc) return input
  return { ...doc, rootResponse: { enabled: true, statusCode: 302, headers: { location }, body: '' } }
}

export function loadCollectorConfig(input: unknown): CollectorConfig {
  const r = parseCollectorConfig(input)
  if (!r.ok) throw new Error(`Invalid collector configuration:\n  ${r.errors.join('\n  ')}`)
  return r.config
}
