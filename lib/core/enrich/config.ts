/**
 * Enrich's configuration file (HOCON): every common parameter, the
 * shard-stream (Kinesis) and file-based inputs and outputs, with their
 * defaults. Other variants' parameters are recognised and refused. Unknown
 * keys and wrong types are errors naming the key.
 */
import { DEFAULT_FIELD_LIMITS, isFieldName, type FieldName } from './fields'
import { WEBHOOKS } from './adapters'
import { schemaOverrides } from './adapters/schemas'
import { splitUnread } from './config/enrich-keys'

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

export interface Backoff {
  readonly minBackoffMs: number
  readonly maxBackoffMs: number
  readonly maxRetries: number
}

export const PARTITION_KEYS = ['event_id', 'event_fingerprint', 'domain_userid', 'network_userid', 'user_ipaddress', 'domain_sessionid', 'user_fingerprint'] as const
/** One of `PARTITION_KEYS` (enrich 3 to 5), or any other atomic field (enrich 6 takes any). */
export type PartitionKey = FieldName

export interface KinesisInput {
  readonly type: 'Kinesis'
  readonly appName: string
  readonly streamName: string
  readonly region?: string
  readonly initialPosition: { readonly type: 'LATEST' | 'TRIM_HORIZON' | 'AT_TIMESTAMP'; readonly timestamp?: string }
  readonly retrievalMode: { readonly type: 'Polling' | 'FanOut'; readonly maxRecords: number }
  readonly bufferSize: number
  readonly customEndpoint?: string
  readonly leaseTableCustomEndpoint?: string
  readonly metricsCustomEndpoint?: string
}

export interface KinesisOutput {
  readonly type: 'Kinesis'
  readonly streamName: string
  readonly region?: string
  /** Unset: a random UUID per record. */
  readonly partitionKey?: PartitionKey
  readonly backoffPolicy: Backoff
  readonly throttledBackoffPolicy: { readonly minBackoffMs: number; readonly maxBackoffMs: number }
  readonly recordLimit: number
  readonly customEndpoint?: string
}

export interface FileInput {
  readonly type: 'FileSystem'
  readonly dir: string
}

export interface FileOutput {
  readonly type: 'FileSystem'
  readonly file: string
  readonly maxBytes?: number
}

export interface Outputs<T> {
  readonly good: T
  readonly incomplete?: T
  readonly bad: T
  readonly pii?: T
}

/** A setting that is accepted but cannot mean anything where it runs: warned about at start. */
export interface SettingNotice {
  readonly key: string
  readonly reason: string
  /** The warning as a whole, when it names several keys. */
  readonly text?: string
}

/** The warning line of a notice. */
export const noticeText = (n: SettingNotice): string => n.text ?? `${n.key} has no effect here: ${n.reason}`

export interface CommonConfig {
  /** `concurrency.sink`: PutRecords calls in flight per output stream. */
  readonly concurrency: { readonly enrich: number; readonly sink: number }
  /** Settings given that have no effect in this variant, and why (logged as warnings at start). */
  readonly notices: readonly SettingNotice[]
  readonly assetsUpdatePeriodMs?: number
  readonly monitoring: {
    /** Errors are reported to this Sentry project, with these tags on every event. */
    readonly sentry?: { readonly dsn: string; readonly tags: Readonly<Record<string, string>> }
    readonly metrics: {
      readonly statsd?: { readonly hostname: string; readonly port: number; readonly periodMs: number; readonly tags: Readonly<Record<string, string>>; readonly prefix: string }
      readonly stdout?: { readonly periodMs: number; readonly prefix: string }
      readonly cloudwatch: boolean
    }
  }
  readonly telemetry: { readonly disable: boolean; readonly userProvidedId?: string }
  readonly featureFlags: { readonly acceptInvalid: boolean; readonly legacyEnrichmentOrder: boolean; readonly exitOnJsCompileError: boolean }
  readonly validation: { readonly atomicFieldsLimits: Readonly<Record<string, number>> }
  readonly maxJsonDepth: number
  /** Webhooks served by HTTP services (none unless configured). */
  readonly remoteAdapters: RemoteAdaptersConfig
  /** `adaptersSchemas`: the webhook adapters' schemas replaced, default URI → configured URI. */
  readonly adaptersSchemas: Readonly<Record<string, string>>
}

export interface RemoteAdaptersConfig {
  /** Longest wait for one remote adapter's answer (connection and reading), in ms. */
  readonly timeoutMs: number
  readonly configs: readonly { readonly vendor: string; readonly version: string; readonly url: string; readonly timeoutMs: number }[]
}

export type EnrichConfig =
  | (CommonConfig & { readonly variant: 'kinesis'; readonly input: KinesisInput; readonly output: Outputs<KinesisOutput> })
  | (CommonConfig & { readonly variant: 'file'; readonly input: FileInput; readonly output: Outputs<FileOutput> })

export type ConfigResult = { ok: true; config: EnrichConfig } | { ok: false; errors: string[] }

export const LICENSE_MESSAGE =
  'Enrich runs only once its licence terms are accepted: set license.accept = true in the configuration, or the environment variable ACCEPT_LIMITED_USE_LICENSE=yes.'

/** The licence enrich runs under (its name and text). */
export const LICENCE = { name: 'Snowplow Limited Use License', url: 'https://docs.snowplow.io/limited-use-license-1.1/' } as const

const acceptedValue = (v: unknown) => v === true || (typeof v === 'string' && /^(true|yes|on|1)$/i.test(v.trim()))

/** The environment variable that accepts the licence. */
export const LICENCE_ENV = 'ACCEPT_LIMITED_USE_LICENSE'

/**
 * Who accepted the licence for this configuration document: the
 * environment variable `ACCEPT_LIMITED_USE_LICENSE` (also when the document
 * takes its value, `accept = ${?ACCEPT_LIMITED_USE_LICENSE}`, as the
 * embedded default does), else the document's own `license.accept`, else
 * undefined.
 */
export function licenceSource(doc: unknown, env: Readonly<Record<string, string | undefined>>): 'configuration' | 'environment' | undefined {
  const lic = isObj(doc) && isObj(doc.license) ? doc.license.accept : undefined
  const fromEnv = env[LICENCE_ENV]
  if (acceptedValue(fromEnv) && (lic === undefined || String(lic).trim().toLowerCase() === fromEnv!.trim().toLowerCase())) return 'environment'
  if (acceptedValue(lic)) return 'configuration'
  if (acceptedValue(fromEnv)) return 'environment'
  return undefined
}

export const DEFAULT_METRICS_PREFIX = 'floe.enrich'

/**
 * The CloudWatch namespace of enrich's embedded-metric-format lines (the
 * stdout prefix, else `floe.enrich`; dimension `function`, the function's
 * name), or undefined when `monitoring.metrics.cloudwatch` is off.
 */
export function cloudWatchNamespace(c: CommonConfig): string | undefined {
  return c.monitoring.metrics.cloudwatch ? (c.monitoring.metrics.stdout?.prefix ?? DEFAULT_METRICS_PREFIX) : undefined
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6, nano: 1e-6, nanos: 1e-6, nanosecond: 1e-6, nanoseconds: 1e-6,
  us: 1e-3, micro: 1e-3, micros: 1e-3, microsecond: 1e-3, microseconds: 1e-3,
  ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
  s: 1000, second: 1000, seconds: 1000,
  m: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
}

/** A HOCON duration (`10 seconds`, `100 ms`, `7 days`; a bare number is milliseconds) in ms. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v
  if (typeof v !== 'string') return undefined
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(v)
  if (!m) return undefined
  const unit = m[2] === '' ? 'ms' : m[2]!
  const f = DURATION_UNITS[unit]
  return f === undefined ? undefined : Number(m[1]) * f
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Variant parameters this deployment recognises but does not run. */
const OTHER_VARIANTS: { readonly name: string; readonly inputKeys: readonly string[]; readonly outputKeys: readonly string[] }[] = [
  { name: 'subscription-topic', inputKeys: ['subscription', 'parallelPullCount', 'maxQueueSize', 'maxRequestBytes', 'maxAckExtensionPeriod'], outputKeys: ['topic', 'attributes', 'delayThreshold', 'maxBatchSize', 'maxBatchBytes'] },
  { name: 'partitioned-log', inputKeys: ['topicName', 'bootstrapServers', 'consumerConf'], outputKeys: ['topicName', 'bootstrapServers', 'producerConf', 'headers'] },
  { name: 'lookup-queue', inputKeys: ['lookupHost', 'lookupPort', 'channel'], outputKeys: ['nsqdHost', 'nsqdPort'] },
]
const unsupported = (variant: string, key: string) =>
  `${key}: a parameter of the ${variant} variant, which is not supported by this deployment (it runs the shard-stream variant on Kinesis, and the file-based variant)`

/**
 * Kinesis input settings of enrich's own consumer (the KCL) that a Lambda
 * event source mapping has no counterpart for: accepted, with a warning at start.
 */
export const KINESIS_INPUT_NOTICES: Readonly<Record<string, string>> = {
  'input.appName': 'it names the consumer application and its lease table; the Lambda event source mapping of the enrich trigger keeps the checkpoints itself, so there is nothing to name',
  'input.region': "the enrich trigger reads this deployment's raw stream, in the deployment's region; a Lambda event source mapping cannot read a stream in another region",
  'input.bufferSize': 'it sizes the buffer between fetching and processing records; Lambda hands each batch to the function whole, so there is no such buffer (input.retrievalMode.maxRecords sets the batch size)',
  'input.customEndpoint': "the event source mapping reads the stream through Lambda's own Kinesis endpoint; the function makes no Kinesis read calls",
  'input.leaseTableCustomEndpoint': 'there is no lease table: the event source mapping keeps the checkpoints',
  'input.metricsCustomEndpoint': "there are no consumer-library metrics to send; enrich's metrics reach CloudWatch through its log (monitoring.metrics.cloudwatch), and Lambda publishes the trigger's own (IteratorAge, …)",
}

/** Reads values at paths, collecting errors; `done` reports keys nobody read. */
class Reader {
  readonly errors: string[] = []
  private readonly seen = new Set<string>()
  constructor(private readonly root: Record<string, unknown>) {}

  private at(path: string): unknown {
    let cur: unknown = this.root
    for (const part of path.split('.')) {
      if (!isObj(cur)) return undefined
      cur = cur[part]
    }
    return cur
  }
  private mark(path: string): void {
    const parts = path.split('.')
    for (let i = 1; i <= parts.length; i++) this.seen.add(parts.slice(0, i).join('.'))
  }
  has(path: string): boolean {
    return this.at(path) !== undefined
  }
  /** Marks a whole subtree as read (for maps read separately). */
  take(path: string): unknown {
    const v = this.at(path)
    if (v !== undefined) {
      this.mark(path)
      const walk = (p: string, x: unknown) => {
        this.seen.add(p)
        if (isObj(x)) for (const [k, y] of Object.entries(x)) walk(`${p}.${k}`, y)
      }
      walk(path, v)
    }
    return v
  }
  string(path: string, required = false): string | undefined {
    const v = this.at(path)
    if (v === undefined || v === null) {
      if (required) this.errors.push(`${path}: required`)
      return undefined
    }
    this.mark(path)
    if (typeof v !== 'string') {
      this.errors.push(`${path}: must be a string, got ${JSON.stringify(v)}`)
      return undefined
    }
    return v
  }
  int(path: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.at(path)
    if (v === undefined || v === null) return def
    this.mark(path)
    const n = typeof v === 'string' && /^-?[0-9]+$/.test(v.trim()) ? Number(v) : v
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      this.errors.push(`${path}: must be a whole number, got ${JSON.stringify(v)}`)
      return def
    }
    if (n < min || n > max) {
      this.errors.push(`${path}: must be between ${min} and ${max}, got ${n}`)
      return def
    }
    return n
  }
  optInt(path: string, min = 0): number | undefined {
    return this.has(path) ? this.int(path, 0, min) : undefined
  }
  bool(path: string, def: boolean): boolean {
    const v = this.at(path)
    if (v === undefined || v === null) return def
    this.mark(path)
    if (typeof v === 'boolean') return v
    if (typeof v === 'string' && /^(true|false|yes|no|on|off)$/i.test(v)) return /^(true|yes|on)$/i.test(v)
    this.errors.push(`${path}: must be true or false, got ${JSON.stringify(v)}`)
    return def
  }
  duration(path: string, def?: number): number | undefined {
    const v = this.at(path)
    if (v === undefined || v === null) return def
    this.mark(path)
    const d = parseDuration(v)
    if (d === undefined) this.errors.push(`${path}: must be a duration such as "10 seconds", got ${JSON.stringify(v)}`)
    return d ?? def
  }
  oneOf<T extends string>(path: string, values: readonly T[], def: T): T {
    const v = this.at(path)
    if (v === undefined || v === null) return def
    this.mark(path)
    if (typeof v !== 'string' || !values.includes(v as T)) {
      this.errors.push(`${path}: must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`)
      return def
    }
    return v as T
  }
  object(path: string): void {
    const v = this.at(path)
    if (v !== undefined && !isObj(v)) this.errors.push(`${path}: must be an object, got ${JSON.stringify(v)}`)
  }
  /** Every key present but never read. */
  unknown(): string[] {
    const out: string[] = []
    const walk = (p: string, x: unknown) => {
      if (!this.seen.has(p)) {
        out.push(p)
        return
      }
      if (isObj(x)) for (const [k, y] of Object.entries(x)) walk(`${p}.${k}`, y)
    }
    for (const [k, v] of Object.entries(this.root)) walk(k, v)
    return out
  }
}

const BUILT_IN_PATHS = new Set(['com.snowplowanalytics.snowplow/tp1', 'com.snowplowanalytics.snowplow/tp2', 'r/tp2', 'com.snowplowanalytics.iglu/v1', ...WEBHOOKS.keys()])

/**
 * `remoteAdapters { connectionTimeout, readTimeout, configs: [{ vendor, version, url, timeout? }] }`:
 * each `vendor/version` (the collector path) handled by the HTTP service at `url`.
 */
function readRemoteAdapters(r: Reader): RemoteAdaptersConfig {
  r.object('remoteAdapters')
  const connection = r.duration('remoteAdapters.connectionTimeout', 10_000)!
  const read = r.duration('remoteAdapters.readTimeout', 45_000)!
  r.int('remoteAdapters.maxConnections', 10, 1)
  const timeoutMs = connection + read
  const list = r.take('remoteAdapters.configs')
  const configs: { vendor: string; version: string; url: string; timeoutMs: number }[] = []
  if (list === undefined) return { timeoutMs, configs }
  if (!Array.isArray(list)) {
    r.errors.push(`remoteAdapters.configs: must be a list of { vendor, version, url }, got ${JSON.stringify(list)}`)
    return { timeoutMs, configs }
  }
  const seen = new Set<string>()
  list.forEach((c: unknown, i) => {
    const at = `remoteAdapters.configs[${i}]`
    if (!isObj(c)) {
      r.errors.push(`${at}: must be an object { vendor, version, url }, got ${JSON.stringify(c)}`)
      return
    }
    for (const k of Object.keys(c)) if (!['vendor', 'version', 'url', 'timeout'].includes(k)) r.errors.push(`${at}.${k}: unknown key (expected vendor, version, url, timeout)`)
    const text = (k: string, re: RegExp, what: string): string | undefined => {
      const v = c[k]
      if (typeof v !== 'string' || !re.test(v)) {
        r.errors.push(`${at}.${k}: must be ${what}, got ${JSON.stringify(v)}`)
        return undefined
      }
      return v
    }
    const vendor = text('vendor', /^[^/\s]+$/, 'the first segment of the collector path (no "/" or spaces)')
    const version = text('version', /^[^/\s]+$/, 'the second segment of the collector path (no "/" or spaces)')
    const url = text('url', /^https?:\/\/[^\s]+$/, 'an http:// or https:// URL')
    let ms = timeoutMs
    if (c.timeout !== undefined) {
      const d = parseDuration(c.timeout)
      if (d === undefined || d <= 0) r.errors.push(`${at}.timeout: must be a duration such as "5 seconds", got ${JSON.stringify(c.timeout)}`)
      else ms = d
    }
    if (vendor === undefined || version === undefined || url === undefined) return
    const key = `${vendor}/${version}`
    if (BUILT_IN_PATHS.has(key)) r.errors.push(`${at}: ${key} is served by a built-in adapter; a remote adapter needs another vendor/version`)
    else if (seen.has(key)) r.errors.push(`${at}: ${key} is configured twice`)
    seen.add(key)
    configs.push({ vendor, version, url, timeoutMs: ms })
  })
  return { timeoutMs, configs }
}

export interface ValidateOptions {
  /** Environment (licence variable). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The licence's acceptance recorded from the control plane (read by the caller). */
  readonly licenceRecorded?: boolean
}

/** Validates a parsed configuration document. */
export function validateConfig(doc: unknown, opts: ValidateOptions = {}): ConfigResult {
  if (!isObj(doc)) return { ok: false, errors: ['the configuration must be an object'] }
  const r = new Reader(doc)
  const env = opts.env ?? process.env

  // Licence.
  const licenseValue = r.has('license.accept') ? r.take('license.accept') : undefined
  r.take('license')
  if (!acceptedValue(licenseValue) && !acceptedValue(env.ACCEPT_LIMITED_USE_LICENSE) && opts.licenceRecorded !== true) return { ok: false, errors: [LICENSE_MESSAGE] }
  if (licenseValue !== undefined && typeof licenseValue !== 'boolean' && typeof licenseValue !== 'string') r.errors.push(`license.accept: must be true or false`)

  // Variant parameters this deployment does not run.
  for (const v of OTHER_VARIANTS) {
    for (const k of v.inputKeys) if (r.has(`input.${k}`)) r.errors.push(unsupported(v.name, `input.${k}`))
    for (const o of ['good', 'incomplete', 'bad', 'pii']) for (const k of v.outputKeys) if (r.has(`output.${o}.${k}`)) r.errors.push(unsupported(v.name, `output.${o}.${k}`))
    if (v.name === 'lookup-queue' && r.has('input.topic')) r.errors.push(unsupported(v.name, 'input.topic'))
  }
  if (r.errors.length > 0) return { ok: false, errors: r.errors }

  // Common parameters.
  r.object('concurrency')
  const concurrency = { enrich: r.int('concurrency.enrich', 256, 1), sink: r.int('concurrency.sink', 1, 1) }
  const assetsUpdatePeriodMs = r.duration('assetsUpdatePeriod')
  const dsn = r.string('monitoring.sentry.dsn', r.has('monitoring.sentry'))
  if (dsn !== undefined && !isSentryDsn(dsn)) r.errors.push(`monitoring.sentry.dsn: must be a Sentry DSN such as https://<key>@<host>/<projectId>, got ${JSON.stringify(dsn)}`)
  const sentryTags = r.take('monitoring.sentry.tags')
  if (sentryTags !== undefined && (!isObj(sentryTags) || !Object.values(sentryTags).every((t) => typeof t === 'string' || typeof t === 'number' || typeof t === 'boolean'))) {
    r.errors.push('monitoring.sentry.tags: must be an object of strings')
  }
  let statsd: CommonConfig['monitoring']['metrics']['statsd']
  if (r.has('monitoring.metrics.statsd')) {
    const tags = r.take('monitoring.metrics.statsd.tags')
    if (tags !== undefined && (!isObj(tags) || !Object.values(tags).every((t) => typeof t === 'string' || typeof t === 'number' || typeof t === 'boolean'))) {
      r.errors.push('monitoring.metrics.statsd.tags: must be an object of strings')
    }
    statsd = {
      hostname: r.string('monitoring.metrics.statsd.hostname', true) ?? '',
      port: r.int('monitoring.metrics.statsd.port', 8125, 1, 65535),
      periodMs: r.duration('monitoring.metrics.statsd.period', 10_000)!,
      tags: isObj(tags) ? Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, String(v)])) : {},
      prefix: stripDot(r.string('monitoring.metrics.statsd.prefix') ?? DEFAULT_METRICS_PREFIX),
    }
    if (!r.has('monitoring.metrics.statsd.port')) r.errors.push('monitoring.metrics.statsd.port: required')
  }
  let stdout: CommonConfig['monitoring']['metrics']['stdout']
  if (r.has('monitoring.metrics.stdout')) {
    const periodMs = r.duration('monitoring.metrics.stdout.period')
    r.take('monitoring.metrics.stdout')
    const prefix = stripDot(r.string('monitoring.metrics.stdout.prefix') ?? DEFAULT_METRICS_PREFIX)
    if (periodMs !== undefined) stdout = { periodMs, prefix }
  }
  const cloudwatch = r.bool('monitoring.metrics.cloudwatch', true)
  const telemetry = { disable: r.bool('telemetry.disable', false), userProvidedId: r.string('telemetry.userProvidedId') }
  // enrich 6 moved these under `validation`; the older place wins when both are given
  const featureFlags = {
    acceptInvalid: r.bool('featureFlags.acceptInvalid', r.bool('validation.acceptInvalid', false)),
    legacyEnrichmentOrder: r.bool('featureFlags.legacyEnrichmentOrder', false),
    exitOnJsCompileError: r.bool('featureFlags.exitOnJsCompileError', r.bool('validation.exitOnJsCompileError', true)),
  }
  const limitsDoc = r.take('validation.atomicFieldsLimits')
  const atomicFieldsLimits: Record<string, number> = {}
  if (limitsDoc !== undefined) {
    if (!isObj(limitsDoc)) r.errors.push('validation.atomicFieldsLimits: must be an object of field name → maximum length')
    else {
      const unsupportedFields = Object.keys(limitsDoc).filter((k) => !isFieldName(k) || DEFAULT_FIELD_LIMITS[k] === undefined)
      if (unsupportedFields.length > 0) {
        r.errors.push(`validation.atomicFieldsLimits: configured atomic fields [${unsupportedFields.join(', ')}] are not supported. Supported fields: [${Object.keys(DEFAULT_FIELD_LIMITS).join(', ')}]`)
      }
      for (const [k, v] of Object.entries(limitsDoc)) {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) r.errors.push(`validation.atomicFieldsLimits.${k}: must be a whole number ≥ 0, got ${JSON.stringify(v)}`)
        else atomicFieldsLimits[k] = v
      }
    }
  }
  const maxJsonDepth = r.int('maxJsonDepth', r.int('validation.maxJsonDepth', 50, 1, 10_000), 1, 10_000)
  const remoteAdapters = readRemoteAdapters(r)
  const overrides = schemaOverrides(r.take('adaptersSchemas'))
  if (!overrides.ok) r.errors.push(...overrides.errors)
  const adaptersSchemas = overrides.ok ? Object.fromEntries(overrides.overrides) : {}
  const common: CommonConfig = {
    concurrency,
    notices: [],
    assetsUpdatePeriodMs,
    monitoring: {
      sentry: dsn !== undefined ? { dsn, tags: isObj(sentryTags) ? Object.fromEntries(Object.entries(sentryTags).map(([k, v]) => [k, String(v)])) : {} } : undefined,
      metrics: { statsd, stdout, cloudwatch } },
    telemetry,
    featureFlags,
    validation: { atomicFieldsLimits },
    maxJsonDepth,
    remoteAdapters,
    adaptersSchemas,
  }

  // Input and outputs.
  r.object('input')
  r.object('output')
  const inputType = r.has('input.type') ? r.oneOf('input.type', ['Kinesis', 'FileSystem'] as const, 'Kinesis') : r.has('input.dir') ? 'FileSystem' : 'Kinesis'
  let result: EnrichConfig | undefined
  if (inputType === 'FileSystem') {
    const input: FileInput = { type: 'FileSystem', dir: r.string('input.dir', true) ?? '' }
    const out = (name: string, required: boolean): FileOutput | undefined => {
      if (!r.has(`output.${name}`)) {
        if (required) r.errors.push(`output.${name}: required`)
        return undefined
      }
      r.oneOf(`output.${name}.type`, ['FileSystem'] as const, 'FileSystem')
      if (!r.has(`output.${name}.type`)) r.errors.push(`output.${name}.type: required (FileSystem)`)
      return { type: 'FileSystem', file: r.string(`output.${name}.file`, true) ?? '', maxBytes: r.optInt(`output.${name}.maxBytes`, 1) }
    }
    if (!r.has('input.type')) r.errors.push('input.type: required (FileSystem)')
    const output = { good: out('good', true)!, incomplete: out('incomplete', false), bad: out('bad', true)!, pii: out('pii', false) }
    const notices = r.has('concurrency.sink')
      ? [{ key: 'concurrency.sink', reason: 'the file outputs are written by one writer each, in order; there are no concurrent writes to bound' }]
      : []
    result = { ...common, notices, variant: 'file', input, output }
  } else {
    const ip = r.oneOf('input.initialPosition.type', ['LATEST', 'TRIM_HORIZON', 'AT_TIMESTAMP'] as const, 'TRIM_HORIZON')
    const ts = r.string('input.initialPosition.timestamp', ip === 'AT_TIMESTAMP')
    if (ts !== undefined && Number.isNaN(Date.parse(ts))) r.errors.push(`input.initialPosition.timestamp: must be an ISO 8601 timestamp, got ${JSON.stringify(ts)}`)
    const input: KinesisInput = {
      type: 'Kinesis',
      appName: r.string('input.appName') ?? 'floe-enrich-kinesis',
      streamName: r.string('input.streamName', true) ?? '',
      region: r.string('input.region'),
      initialPosition: { type: ip, timestamp: ts },
      retrievalMode: { type: r.oneOf('input.retrievalMode.type', ['Polling', 'FanOut'] as const, 'Polling'), maxRecords: r.int('input.retrievalMode.maxRecords', 10_000, 1, 10_000) },
      bufferSize: r.int('input.bufferSize', 3, 1),
      customEndpoint: r.string('input.customEndpoint'),
      leaseTableCustomEndpoint: r.string('input.leaseTableCustomEndpoint'),
      metricsCustomEndpoint: r.string('input.metricsCustomEndpoint'),
    }
    // enrich 5.4's preview of the enrich 6 configuration names the good output `enriched`
    const goodName = !r.has('output.good') && r.has('output.enriched') ? 'enriched' : 'good'
    const defaults = (name: string): Omit<KinesisOutput, 'streamName'> => {
      // the good output's settings are the defaults of the others
      const base = name === goodName ? undefined : good
      const pk = r.has(`output.${name}.partitionKey`) ? partitionKey(r, `output.${name}.partitionKey`) : base?.partitionKey
      return {
        type: 'Kinesis',
        region: r.string(`output.${name}.region`) ?? base?.region,
        partitionKey: name === 'pii' || name === goodName ? pk : r.has(`output.${name}.partitionKey`) ? pk : undefined,
        backoffPolicy: {
          minBackoffMs: r.duration(`output.${name}.backoffPolicy.minBackoff`, base?.backoffPolicy.minBackoffMs ?? 100)!,
          maxBackoffMs: r.duration(`output.${name}.backoffPolicy.maxBackoff`, base?.backoffPolicy.maxBackoffMs ?? 10_000)!,
          maxRetries: r.int(`output.${name}.backoffPolicy.maxRetries`, base?.backoffPolicy.maxRetries ?? 10, 0),
        },
        throttledBackoffPolicy: {
          minBackoffMs: r.duration(`output.${name}.throttledBackoffPolicy.minBackoff`, base?.throttledBackoffPolicy.minBackoffMs ?? 100)!,
          maxBackoffMs: r.duration(`output.${name}.throttledBackoffPolicy.maxBackoff`, base?.throttledBackoffPolicy.maxBackoffMs ?? 1000)!,
        },
        recordLimit: r.int(`output.${name}.recordLimit`, base?.recordLimit ?? 500, 1, 500),
        customEndpoint: r.string(`output.${name}.customEndpoint`) ?? base?.customEndpoint,
      }
    }
    const out = (name: string, required: boolean): KinesisOutput | undefined => {
      if (!r.has(`output.${name}`)) {
        if (required) r.errors.push(`output.${name}.streamName: required`)
        return undefined
      }
      if (r.has(`output.${name}.type`)) r.oneOf(`output.${name}.type`, ['Kinesis'] as const, 'Kinesis')
      return { ...defaults(name), streamName: r.string(`output.${name}.streamName`, true) ?? '' }
    }
    if (r.has('input.type')) r.oneOf('input.type', ['Kinesis'] as const, 'Kinesis')
    const good = out(goodName, true)
    // enrich 6 names the incomplete output `failed`
    const incomplete = !r.has('output.incomplete') && r.has('output.failed') ? out('failed', true) : out('incomplete', true)
    const output = { good: good!, incomplete, bad: out('bad', true)!, pii: out('pii', false) }
    const notices = Object.entries(KINESIS_INPUT_NOTICES)
      .filter(([key]) => r.has(key))
      .map(([key, reason]) => ({ key, reason }))
    if (ts !== undefined && ip !== 'AT_TIMESTAMP') {
      notices.push({ key: 'input.initialPosition.timestamp', reason: `it is where an AT_TIMESTAMP start begins, and input.initialPosition.type is ${ip}` })
    }
    result = { ...common, notices, variant: 'kinesis', input, output }
  }
  const telemetryNotices = (['telemetry.disable', 'telemetry.userProvidedId'] as const)
    .filter((key) => r.has(key))
    .map((key) => ({ key, reason: 'Floe sends no telemetry, so there is nothing to disable or to identify' }))
  if (telemetryNotices.length > 0) result = { ...result, notices: [...result.notices, ...telemetryNotices] }
  const unread = splitUnread(doc, r.unknown())
  for (const k of unread.unknown) r.errors.push(`${k}: unknown parameter`)
  if (unread.ignored.length > 0) result = { ...result, notices: [...result.notices, ignoredNotice(unread.ignored)] }
  if (r.errors.length > 0) return { ok: false, errors: r.errors }
  return { ok: true, config: result }
}

function partitionKey(r: Reader, path: string): PartitionKey | undefined {
  const v = r.string(path)
  if (v === undefined) return undefined
  if (isFieldName(v)) return v
  r.errors.push(`${path}: must be an atomic field such as ${PARTITION_KEYS.join(', ')}, got ${JSON.stringify(v)}`)
  return undefined
}

/** The one warning that names every setting of Snowplow enrich that Floe has no use for. */
function ignoredNotice(keys: readonly string[]): SettingNotice {
  const reason = "settings of Snowplow enrich's own consumer, producer, probes and telemetry, which Floe's enrich has no counterpart for"
  return { key: keys.join(', '), reason, text: `ignored (${reason}): ${keys.join(', ')}` }
}

/** A Sentry DSN: `http(s)://<public key>@<host>[:port][/path]/<project id>`. */
export function isSentryDsn(dsn: string): boolean {
  if (dsn.length > 2048) return false
  let u: URL
  try {
    u = new URL(dsn)
  } catch {
    return false
  }
  return (u.protocol === 'https:' || u.protocol === 'http:') && /^[A-Za-z0-9]+$/.test(u.username) && u.hostname !== '' && /\/[A-Za-z0-9_-]+$/.test(u.pathname)
}

function stripDot(s: string): string {
  return s.endsWith('.') ? s.slice(0, -1) : s
}
