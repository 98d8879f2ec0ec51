/**
 * The one declaration of Floe's functions (with the HTTP routes each serves
 * and the resources each is granted) and of the stream triggers that invoke
 * them. Read by the CDK stacks and the local runtime alike.
 */
import { enrichDeployment } from '../core/enrich/deploy'
import { LICENCE_SOURCE_ENV } from '../core/enrich/function-config'
import type { Access, BucketKey, DatabaseKey, QueueKey, StreamKey, TableKey } from './resources'
import type { ServiceName } from './services'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS' | 'ANY'
/** An API Gateway HTTP API route: a method and a path template, or `$default`. */
export type RouteDecl = { readonly method: HttpMethod; readonly path: string } | '$default'

export interface FunctionDecl {
  readonly description: string
  /** Module path from the project root; it exports `handler`. */
  readonly entry: string
  readonly memoryMb?: number
  readonly timeoutSeconds?: number
  readonly tables?: Partial<Record<TableKey, Access>>
  readonly streams?: Partial<Record<StreamKey, Access>>
  readonly buckets?: Partial<Record<BucketKey, Access>>
  /** `write`: sends messages; `read`: receives and deletes them (a queue trigger grants it); the queue's URL is in its environment variable. */
  readonly queues?: Partial<Record<QueueKey, Access>>
  /**
   * Declared databases the function uses. A deployment without one of them
   * (`-c searchStore=false`) leaves the function, its routes and its
   * stream triggers out.
   */
  readonly databases?: Partial<Record<DatabaseKey, Access>>
  /** Declared databases the function uses when the deployment has them; it is kept without them. */
  readonly optionalDatabases?: Partial<Record<DatabaseKey, Access>>
  readonly routes?: readonly RouteDecl[]
  readonly environment?: Readonly<Record<string, string>>
  /**
   * Resolves schemas through the resolver: the Iglu Central snapshot
   * (`schemas/iglu-central`) ships with it, and it reads the registry's change
   * counter from the settings table (granted with this).
   */
  readonly resolvesSchemas?: boolean
  /** Data files of npm packages read at run time (`package/file`), shipped next to the bundle (see `lib/core/package-files.ts`). */
  readonly packageFiles?: readonly string[]
  /**
   * Why the function cannot run in this configuration, if it cannot. Its stream
   * triggers are then created disabled (on AWS) or not started (locally), so
   * records wait in the stream instead of failing; the reason is shown.
   */
  readonly disabledReason?: string
  /**
   * `basic`: every route of the function is behind HTTP basic authentication.
   * The declared authorizer (`httpAuthorizer`) runs first and passes its
   * verdict; the function answers 401 (with `WWW-Authenticate`) or 429 itself.
   */
  readonly auth?: 'basic'
  /**
   * Why the function's routes have no authorizer at API Gateway, and what
   * protects them instead (required for a function with routes and no `auth`;
   * the stack test checks it).
   */
  readonly openRoutes?: string
  /** Ships the prebuilt pages (`lib/ui`) next to its bundle, under `ui/`. */
  readonly ui?: boolean
  /**
   * The control plane's names for this function (`service_name` of
   * `/control-plane/restart-service`). A restart drops its caches and
   * re-reads its configuration; it reads the deployment's restart
   * generations from the settings table (granted with this).
   */
  readonly services?: readonly ServiceName[]
  /**
   * Reports the metrics of the deployment (`GET /metrics`): on AWS it may call
   * `cloudwatch:GetMetricData`, and gets the physical names of every other
   * function and of every stream in `FLOE_METRICS_TARGETS` (JSON). No function
   * may refer to it, or the stack would have a circular dependency.
   */
  readonly readsMetrics?: boolean
  /**
   * Declared functions whose stream triggers this one may disable and enable
   * (enrich pauses its own on a set-up failure; the control plane resumes it).
   * On AWS: `lambda:ListEventSourceMappings` (no resource-level permissions)
   * and `lambda:UpdateEventSourceMapping` on mappings of those functions only.
   */
  readonly controlsTriggersOf?: readonly string[]
}

export { serviceAliases, serviceNames, type ServiceName } from './services'

/**
 * The deployer's values of non-secret settings, passed to a function's
 * environment (so `FLOE_COLLECTOR_CONFIG=… npx cdk deploy` configures the
 * deployed collector as it does `npm start`). Unset variables are left out.
 */
function fromDeployEnvironment(...names: string[]): Readonly<Record<string, string>> {
  const env: Record<string, string> = {}
  for (const n of names) {
    const v = process.env[n]
    if (v !== undefined && v !== '') env[n] = v
  }
  return env
}

const RESOLVER_SETTINGS = ['FLOE_RESOLVER_CONFIG', 'FLOE_IGLU_CENTRAL_URL', 'FLOE_RESOLVER_CACHE_TTL', 'FLOE_RESOLVER_LOOKUP_TIMEOUT'] as const

export const functions = {
  health: {
    description: 'Answers the stack health check.',
    entry: 'functions/health/handler.ts',
    memoryMb: 128,
    timeoutSeconds: 3,
    routes: [{ method: 'GET', path: '/health' }],
    // the causes recorded there (enrich paused by a set-up failure)
    tables: { settings: 'read' },
    openRoutes: 'The health check answers whether the stack is up, nothing more.',
  },
  archive: {
    description: 'Loader: archives stream records to the archive bucket, one object per batch.',
    entry: 'functions/archive/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 60,
    buckets: { archive: 'write' },
  },
  registry: {
    description: 'Iglu-compatible schema registry server under /registry-server.',
    entry: 'functions/registry/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 29,
    tables: { schemas: 'readWrite', apiKeys: 'readWrite', settings: 'readWrite' },
    buckets: { assets: 'readWrite' },
    routes: [{ method: 'ANY', path: '/registry-server/{proxy+}' }, { method: 'ANY', path: '/registry-server' }],
    openRoutes: 'Iglu clients send the registry API key (apikey header); the function checks it and serves only public schemas without one.',
    services: ['registry'],
    environment: fromDeployEnvironment('FLOE_REGISTRY_PATCHES_ALLOWED', 'FLOE_REGISTRY_MAX_PAYLOAD', 'FLOE_REGISTRY_EXPORT_PREFIX'),
  },
  collector: {
    description: 'Snowplow-compatible collector: every tracker request to a Thrift CollectorPayload on the raw stream (FLOE_COLLECTOR_CONFIG: optional JSON configuration).',
    entry: 'functions/collector/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 10,
    streams: { raw: 'write', bad: 'write' },
    routes: ['$default'],
    openRoutes: 'Trackers send events without credentials, as to any Snowplow collector; the stage is throttled.',
    services: ['collector'],
    environment: fromDeployEnvironment('FLOE_COLLECTOR_CONFIG'),
  },
  trackingDesign: {
    description: 'Tracking-design API under /api/msc/v1: tokens, event specifications, data products, source applications, data structures (FLOE_JWT_SECRET: optional token signing secret).',
    entry: 'functions/tracking-design/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 29,
    tables: { eventSpecs: 'readWrite', specHistory: 'readWrite', apiKeys: 'readWrite', settings: 'readWrite', schemas: 'read' },
    routes: [{ method: 'ANY', path: '/api/msc/v1/{proxy+}' }],
    openRoutes: 'The function checks organization API keys and the tokens it issues for them on every request.',
    services: ['registry'],
    resolvesSchemas: true,
    environment: fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_SCHEMA_CACHE_SECONDS', 'FLOE_SPEC_LIST_CACHE_SECONDS'),
  },
  // Enrich: settings derived from its HOCON configuration (lib/core/enrich/README.md).
  enrich: {
    description: 'Enrich: raw collector payloads to enriched events (good), failed events (incomplete), bad rows (bad) and pii events (FLOE_ENRICH_CONFIG: HOCON configuration file).',
    entry: 'functions/enrich/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 120,
    streams: { raw: 'read', good: 'write', incomplete: 'write', bad: 'write', pii: 'write' },
    // specHistory: the published event specifications (event specification enrichment);
    // settings: restart generations, and why it paused itself
    tables: { schemas: 'read', specHistory: 'read', settings: 'readWrite' },
    // on a set-up failure it disables its own trigger (records wait in the stream)
    controlsTriggersOf: ['enrich'],
    buckets: { assets: 'read' },
    resolvesSchemas: true,
    packageFiles: ['uap-core/regexes.yaml', '@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'],
    services: ['enrich', 'registry'],
    get environment(): Readonly<Record<string, string>> {
      return { ...enrichDeployment().environment, ...fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_LOG_LEVEL', 'FLOE_EVENT_SPEC_ENRICHMENT') }
    },
    get disabledReason(): string | undefined {
      return enrichDeployment().disabledReason
    },
  },
  searchLoader: {
    description: 'Loader: enriched events (good), failed events (incomplete, kept apart from the good index), bad rows (bad) and the requests as received (raw, for /micro/good rawEvent) into the search store (FLOE_SEARCH_RETENTION_DAYS: days kept, default 7).',
    entry: 'functions/search-loader/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 60,
    databases: { search: 'readWrite' },
    services: ['esLoaderGood', 'esLoaderBad'],
    environment: fromDeployEnvironment('FLOE_SEARCH_RETENTION_DAYS'),
  },
  search: {
    description: 'The search store API (/search-store, Elasticsearch-shaped) and the Snowplow Micro-compatible API (/micro) (FLOE_SEARCH_TIMEOUT_MS: time budget of a request, default 10,000, then a 504).',
    entry: 'functions/search/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 29,
    databases: { search: 'readWrite' },
    tables: { schemas: 'read' },
    resolvesSchemas: true,
    routes: [
      { method: 'ANY', path: '/search-store' },
      { method: 'ANY', path: '/search-store/{proxy+}' },
      { method: 'ANY', path: '/micro/{proxy+}' },
    ],
    auth: 'basic',
    services: ['searchstore', 'registry'],
    environment: fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_SEARCH_TIMEOUT_MS'),
  },
  microValidate: {
    description: "Snowplow Micro's testing loop: /micro/validate/<collector path> answers what enrich makes of each event of a tracker's request (this stack's collector configuration, registry and enrichments), writing nothing.",
    entry: 'functions/micro-validate/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 29,
    // as enrich reads them: the registry, the published event specifications, the licence, restarts and registry changes
    tables: { schemas: 'read', specHistory: 'read', settings: 'read' },
    buckets: { assets: 'read' },
    resolvesSchemas: true,
    packageFiles: ['uap-core/regexes.yaml', '@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'],
    // more specific than the search function's /micro/{proxy+}: API Gateway (and the local gateway) send these here
    routes: [{ method: 'ANY', path: '/micro/validate' }, { method: 'ANY', path: '/micro/validate/{proxy+}' }],
    auth: 'basic',
    services: ['enrich', 'registry'],
    get environment(): Record<string, string> {
      // enrich's configuration and the collector's: events are judged as the stack's collector and enrich would
      return { ...enrichDeployment().environment, ...fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_EVENT_SPEC_ENRICHMENT', 'FLOE_COLLECTOR_CONFIG') }
    },
  },
  authorizer: {
    description: 'HTTP basic authentication of the single-instance pages and APIs: checks the credentials kept hashed in the settings table (FLOE_USERNAME: the username of a first start; the password is generated and logged once).',
    entry: 'functions/authorizer/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 10,
    tables: { settings: 'readWrite' },
    services: ['dashboard'],
    // Not the password: a secret is never put in a function's configuration.
    environment: fromDeployEnvironment('FLOE_USERNAME'),
  },
  controlPlane: {
    description: 'The control plane under /control-plane: restarts, search store reset, credentials, super API key, external registries, enrichments, telemetry, domain, version, recovery of failed events, tracking plans.',
    entry: 'functions/control-plane/handler.ts',
    // recovery runs enrich in-process to judge the fixed events
    memoryMb: 1024,
    timeoutSeconds: 29,
    // eventSpecs, specHistory: the tracking plans (read only)
    tables: { settings: 'readWrite', apiKeys: 'readWrite', schemas: 'read', eventSpecs: 'read', specHistory: 'read' },
    buckets: { assets: 'readWrite', archive: 'read' },
    // recovery: replayed payloads to raw, recovery errors to bad; runs larger than one invocation to the worker's queue
    streams: { raw: 'write', bad: 'write' },
    queues: { recoverRuns: 'write' },
    packageFiles: ['uap-core/regexes.yaml', '@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'],
    optionalDatabases: { search: 'readWrite' },
    routes: [{ method: 'ANY', path: '/control-plane/{proxy+}' }],
    auth: 'basic',
    resolvesSchemas: true,
    // Who accepted enrich's licence at deploy time (GET /control-plane/license).
    get environment(): Record<string, string> {
      // enrich's configuration too: recovery judges events as enrich would
      return { ...enrichDeployment().environment, ...fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_EVENT_SPEC_ENRICHMENT'), [LICENCE_SOURCE_ENV]: enrichDeployment().licenceSource }
    },
    // enables enrich's trigger again after an enrichment change or a restart of enrich
    controlsTriggersOf: ['enrich'],
  },
  recoverWorker: {
    description: 'Recovery runs too large for one request: one share (at most 5,000 bad rows) per message of the recoverRuns queue; records progress in recovery_runs, sends the next share.',
    entry: 'functions/recover-worker/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 900,
    // as the control plane's recovery: the settings (licence, restarts), the registry and the specifications enrich reads
    tables: { settings: 'read', schemas: 'read', specHistory: 'read' },
    buckets: { assets: 'read', archive: 'read' },
    streams: { raw: 'write', bad: 'write' },
    queues: { recoverRuns: 'readWrite' },
    databases: { search: 'readWrite' },
    packageFiles: ['uap-core/regexes.yaml', '@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'],
    resolvesSchemas: true,
    get environment(): Record<string, string> {
      return { ...enrichDeployment().environment, ...fromDeployEnvironment(...RESOLVER_SETTINGS, 'FLOE_EVENT_SPEC_ENRICHMENT') }
    },
  },
  ui: {
    description: 'The pages: /home (overview, example events, registry, control plane) and /dashboard-ui (the event explorer), prebuilt with esbuild.',
    entry: 'functions/ui/handler.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'GET', path: '/home' },
      { method: 'GET', path: '/home/{proxy+}' },
      { method: 'GET', path: '/dashboard-ui' },
      { method: 'GET', path: '/dashboard-ui/{proxy+}' },
    ],
    auth: 'basic',
    services: ['dashboard'],
    ui: true,
  },
  metrics: {
    description: 'Runtime metrics of every service under /metrics: JSON, or Prometheus text exposition.',
    entry: 'functions/metrics/handler.ts',
    memoryMb: 256,
    timeoutSeconds: 29,
    routes: [{ method: 'GET', path: '/metrics' }],
    auth: 'basic',
    readsMetrics: true,
  },
} as const satisfies Record<string, FunctionDecl>

export type FunctionKey = keyof typeof functions

/**
 * The Lambda authorizer in front of every route of a function declared with
 * `auth: 'basic'`. It has no identity source, so API Gateway calls it for every
 * such request (a request without credentials must still reach the function,
 * which answers 401 with `WWW-Authenticate`, something an HTTP API authorizer
 * cannot do); it keeps its own short cache of verdicts.
 */
export const httpAuthorizer = { function: 'authorizer', cacheSeconds: 0 } as const satisfies { function: FunctionKey; cacheSeconds: number }

export type StartingPosition = 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP'

/**
 * Kinesis event source mapping settings. The defaults below apply to every
 * mapping; a mapping overrides only what it must.
 */
export interface StreamTriggerSettings {
  readonly batchSize: number
  readonly maxBatchingWindowSeconds: number
  readonly startingPosition: StartingPosition
  /** With `AT_TIMESTAMP`: where to start, in seconds since the epoch. */
  readonly startingPositionTimestamp?: number
  /** Read through an enhanced fan-out consumer of the mapping's own (dedicated throughput, pushed records) instead of polling. */
  readonly enhancedFanOut?: boolean
  /** Report per-record failures; the checkpoint stops before the lowest failed record. */
  readonly reportBatchItemFailures: boolean
  /** Split a failing batch in two and retry each half. */
  readonly bisectBatchOnError: boolean
  /** Retries of a failing batch before it is sent to the failure location (0–10,000). */
  readonly retryAttempts: number
  /** Records older than this are sent to the failure location instead of being retried. */
  readonly maxRecordAgeSeconds: number
  readonly parallelizationFactor: number
}

export const streamTriggerDefaults: StreamTriggerSettings = {
  batchSize: 100,
  maxBatchingWindowSeconds: 1,
  startingPosition: 'TRIM_HORIZON',
  reportBatchItemFailures: true,
  bisectBatchOnError: true,
  retryAttempts: 5,
  maxRecordAgeSeconds: 3600,
  parallelizationFactor: 1,
}

/** Where batches that exhausted their retries are written (on AWS: an S3 on-failure destination). */
export const streamTriggerFailureBucket: BucketKey = 'archive'
/** Where Lambda writes them in that bucket (`aws/lambda/<mapping id>/<shard>/…`; the bucket's declaration expires them). */
export const streamTriggerFailurePrefix = 'aws/lambda/'
/** The S3 request-metrics filter of that prefix on AWS: the failed-batches alarm counts its `PutRequests`. */
export const streamTriggerFailureMetricsId = 'StreamTriggerFailures'

export interface StreamTriggerDecl extends Partial<StreamTriggerSettings> {
  readonly function: FunctionKey
  readonly stream: StreamKey
  /**
   * What the local stack's trigger does differently. On AWS a batch that
   * cannot be processed in time goes to the on-failure destination, which an
   * alarm watches; locally nobody watches that location, so a trigger that
   * must never give up retries for ever instead (and `/health` names it).
   */
  readonly local?: Partial<StreamTriggerSettings>
}

/**
 * The search loader never gives up on a record. Locally it retries for ever
 * (no retry limit, no record age) while the store cannot be written. On AWS
 * it retries for up to 23 hours, under the streams' 24-hour retention, so a
 * record is never silently expired by the stream: one still not stored by
 * then goes to the on-failure destination (the `failedBatches` alarm) with
 * its payload, from where it can be replayed (docs/architecture.md: Loaders).
 */
const SEARCH_LOADER_TRIGGER = {
  batchSize: 500,
  maxBatchingWindowSeconds: 0,
  retryAttempts: 10_000,
  maxRecordAgeSeconds: 23 * 3600,
  local: { retryAttempts: -1, maxRecordAgeSeconds: -1 },
} as const satisfies Partial<StreamTriggerDecl>

export const streamTriggers = [
  // The archive is read later, not watched: large batches (Lambda cuts them at 6 MB) keep S3 PUTs,
  // which the cost model shows as its largest line at volume, to about one per shard a minute.
  { function: 'archive', stream: 'raw', batchSize: 10_000, maxBatchingWindowSeconds: 60 },
  { function: 'archive', stream: 'good', batchSize: 10_000, maxBatchingWindowSeconds: 60 },
  { function: 'archive', stream: 'incomplete', batchSize: 10_000, maxBatchingWindowSeconds: 60 },
  { function: 'archive', stream: 'bad', batchSize: 10_000, maxBatchingWindowSeconds: 60 },
  { function: 'archive', stream: 'pii', batchSize: 10_000, maxBatchingWindowSeconds: 60 },
  // the search store is where people watch events arrive: load at once, no batching window
  { function: 'searchLoader', stream: 'good', ...SEARCH_LOADER_TRIGGER },
  { function: 'searchLoader', stream: 'incomplete', ...SEARCH_LOADER_TRIGGER },
  { function: 'searchLoader', stream: 'bad', ...SEARCH_LOADER_TRIGGER },
  // what the collector received, for /micro/good's rawEvent: loaded before enrich's output reaches the store (one hop fewer)
  { function: 'searchLoader', stream: 'raw', ...SEARCH_LOADER_TRIGGER },
  // Enrich: batch size, starting position and retrieval mode come from its configuration (input.retrievalMode, input.initialPosition).
  {
    function: 'enrich',
    stream: 'raw',
    get batchSize(): number {
      return enrichDeployment().batchSize
    },
    get startingPosition(): StartingPosition {
      return enrichDeployment().startingPosition
    },
    get startingPositionTimestamp(): number | undefined {
      return enrichDeployment().startingPositionTimestamp
    },
    get enhancedFanOut(): boolean {
      return enrichDeployment().enhancedFanOut
    },
    // Lambda's default window (1 s) saves invocations on AWS; locally an invocation costs nothing, and the
    // second it adds to every event is most of the wait between a send and the event in the search store.
    local: { maxBatchingWindowSeconds: 0 },
  },
] as const satisfies readonly StreamTriggerDecl[]

/** SQS event source mappings: a declared function invoked with the messages of a declared queue. */
export interface QueueTriggerDecl {
  readonly function: FunctionKey
  readonly queue: QueueKey
  /** Messages per invocation. */
  readonly batchSize: number
}

export const queueTriggers = [
  // one share of a recovery run per invocation
  { function: 'recoverWorker', queue: 'recoverRuns', batchSize: 1 },
] as const satisfies readonly QueueTriggerDecl[]

/** The databases a function uses that `present` does not include (the function is then left out). */
export function missingDatabases(decl: FunctionDecl, present: (key: DatabaseKey) => boolean): DatabaseKey[] {
  return (Object.keys(decl.databases ?? {}) as DatabaseKey[]).filter((k) => !present(k))
}

/** The full settings of a mapping: the defaults, overridden by the mapping's own. */
export function triggerSettings(t: StreamTriggerDecl): StreamTriggerSettings & StreamTriggerDecl {
  return { ...streamTriggerDefaults, ...t }
}

/** The settings of the local stack's trigger: the mapping's, with its `local` ones. */
export function localTriggerSettings(t: StreamTriggerDecl): StreamTriggerSettings & StreamTriggerDecl {
  return { ...triggerSettings(t), ...t.local }
}

/** A stable identifier of a mapping, e.g. `archive-raw`. */
export function triggerId(t: StreamTriggerDecl): string {
  return `${t.function}-${t.stream}`
}
