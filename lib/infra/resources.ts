/**
 * The one declaration of Floe's infrastructure. The CDK stacks (`lib/infra/stacks.ts`)
 * and the local runtime (`lib/local/`) both read it; nothing here is declared twice.
 *
 * Conventions: every table uses the generic key attributes `pk`/`sk` and index
 * attributes `gsi1pk`/`gsi1sk`, so new access patterns need no schema change.
 * Functions receive the physical names of what they are granted through the
 * environment variables named by `envVar` (see `lib/runtime/resources.ts`).
 */

import { enrichDeployment } from '../core/enrich/deploy'

export type AttributeType = 'S' | 'N' | 'B'
export interface KeyDecl {
  readonly name: string
  readonly type: AttributeType
}
export interface IndexDecl {
  readonly partitionKey: KeyDecl
  readonly sortKey?: KeyDecl
}
export interface TableDecl {
  readonly description: string
  readonly partitionKey: KeyDecl
  readonly sortKey?: KeyDecl
  readonly indexes?: Readonly<Record<string, IndexDecl>>
  /** Attribute holding an epoch-seconds expiry; readers must still filter on it. */
  readonly ttlAttribute?: string
}

const pk: KeyDecl = { name: 'pk', type: 'S' }
const sk: KeyDecl = { name: 'sk', type: 'S' }
const gsi1: IndexDecl = { partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' } }

export const tables = {
  eventSpecs: {
    description: 'Event specifications: pk = organization id, sk = event specification id.',
    partitionKey: pk,
    sortKey: sk,
    indexes: { gsi1 },
  },
  specHistory: {
    description: 'History of event specification changes: pk = organization#spec id, sk = sortable version and time.',
    partitionKey: pk,
    sortKey: sk,
  },
  schemas: {
    description: 'Schema registry: pk = vendor/name/format, sk = SchemaVer; gsi1 lists by vendor.',
    partitionKey: pk,
    sortKey: sk,
    indexes: { gsi1 },
  },
  apiKeys: {
    description: 'Hashed API keys (registry keys and organization keys): pk = key hash; gsi1 lists keys by owner.',
    partitionKey: pk,
    indexes: { gsi1 },
    ttlAttribute: 'expiresAt',
  },
  settings: {
    description: 'Organizations, data products, source applications and deployment settings: pk/sk by record type.',
    partitionKey: pk,
    sortKey: sk,
    indexes: { gsi1 },
    ttlAttribute: 'expiresAt',
  },
} as const satisfies Record<string, TableDecl>

export interface StreamDecl {
  readonly description: string
  /** What a record holds: binary Thrift, one TSV line, or one JSON document. */
  readonly format: 'thrift' | 'tsv' | 'json'
  readonly shards: number
  readonly retentionHours: number
}

export const streams = {
  raw: { description: 'Thrift CollectorPayload records written by the collector.', format: 'thrift', shards: 2, retentionHours: 24 },
  good: { description: 'Enriched events, 131-column TSV.', format: 'tsv', shards: 2, retentionHours: 24 },
  incomplete: { description: 'Failed events in the enriched format.', format: 'tsv', shards: 1, retentionHours: 24 },
  bad: { description: 'Failed events as self-describing JSON bad rows.', format: 'json', shards: 1, retentionHours: 24 },
  pii: { description: 'PII transformation events.', format: 'tsv', shards: 1, retentionHours: 24 },
} as const satisfies Record<string, StreamDecl>

export interface BucketDecl {
  readonly description: string
  /** Objects under these prefixes expire after the given number of days. */
  readonly expirations?: Readonly<Record<string, number>>
}

export const buckets = {
  assets: { description: 'Static registry export, enrichment assets and other published files.' },
  archive: {
    description: 'Event archive written by the loaders, and batches that stream consumers gave up on.',
    expirations: { 'aws/lambda/': 30 },
  },
} as const satisfies Record<string, BucketDecl>

export type TableKey = keyof typeof tables
export type StreamKey = keyof typeof streams
export type BucketKey = keyof typeof buckets
export type Access = 'read' | 'write' | 'readWrite'

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
  readonly routes?: readonly RouteDecl[]
  readonly environment?: Readonly<Record<string, string>>
}

export const functions = {
  health: {
    description: 'Answers the stack health check.',
    entry: 'functions/health/handler.ts',
    memoryMb: 128,
    timeoutSeconds: 3,
    routes: [{ method: 'GET', path: '/health' }],
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
  },
  collector: {
    description: 'Snowplow-compatible collector: every tracker request to a Thrift CollectorPayload on the raw stream (FLOE_COLLECTOR_CONFIG: optional JSON configuration).',
    entry: 'functions/collector/handler.ts',
    memoryMb: 512,
    timeoutSeconds: 10,
    streams: { raw: 'write', bad: 'write' },
    routes: ['$default'],
  },
  trackingDesign: {
    description: 'Tracking-design API under /api/msc/v1: tokens, event specifications, data products, source applications, data structures (FLOE_JWT_SECRET: optional token signing secret).',
    entry: 'functions/tracking-design/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 29,
    tables: { eventSpecs: 'readWrite', specHistory: 'readWrite', apiKeys: 'readWrite', settings: 'readWrite', schemas: 'read' },
    routes: [{ method: 'ANY', path: '/api/msc/v1/{proxy+}' }],
  },
  // Enrich: settings derived from its HOCON configuration (lib/core/enrich/README.md).
  enrich: {
    description: 'Enrich: raw collector payloads to enriched events (good), failed events (incomplete), bad rows (bad) and pii events (FLOE_ENRICH_CONFIG: HOCON configuration file).',
    entry: 'functions/enrich/handler.ts',
    memoryMb: 1024,
    timeoutSeconds: 120,
    streams: { raw: 'read', good: 'write', incomplete: 'write', bad: 'write', pii: 'write' },
    buckets: { assets: 'read' },
    get environment(): Readonly<Record<string, string>> {
      return enrichDeployment().environment
    },
  },
} as const satisfies Record<string, FunctionDecl>

export type FunctionKey = keyof typeof functions

export type StartingPosition = 'TRIM_HORIZON' | 'LATEST'

/**
 * Kinesis event source mapping settings. The defaults below apply to every
 * mapping; a mapping overrides only what it must.
 */
export interface StreamTriggerSettings {
  readonly batchSize: number
  readonly maxBatchingWindowSeconds: number
  readonly startingPosition: StartingPosition
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

export interface StreamTriggerDecl extends Partial<StreamTriggerSettings> {
  readonly function: FunctionKey
  readonly stream: StreamKey
}

export const streamTriggers = [
  { function: 'archive', stream: 'raw', batchSize: 500, maxBatchingWindowSeconds: 5 },
  { function: 'archive', stream: 'good', batchSize: 500, maxBatchingWindowSeconds: 5 },
  { function: 'archive', stream: 'incomplete', batchSize: 500, maxBatchingWindowSeconds: 5 },
  { function: 'archive', stream: 'bad', batchSize: 500, maxBatchingWindowSeconds: 5 },
  { function: 'archive', stream: 'pii', batchSize: 500, maxBatchingWindowSeconds: 5 },
  // Enrich: batch size and starting position come from its configuration (input.retrievalMode.maxRecords, input.initialPosition).
  {
    function: 'enrich',
    stream: 'raw',
    get batchSize(): number {
      return enrichDeployment().batchSize
    },
    get startingPosition(): StartingPosition {
      return enrichDeployment().startingPosition
    },
  },
] as const satisfies readonly StreamTriggerDecl[]

/** The full settings of a mapping: the defaults, overridden by the mapping's own. */
export function triggerSettings(t: StreamTriggerDecl): StreamTriggerSettings & StreamTriggerDecl {
  return { ...streamTriggerDefaults, ...t }
}

/** A stable identifier of a mapping, e.g. `archive-raw`. */
export function triggerId(t: StreamTriggerDecl): string {
  return `${t.function}-${t.stream}`
}

export type ResourceKind = 'table' | 'stream' | 'bucket'

/** The environment variable carrying a resource's physical name, e.g. `FLOE_TABLE_EVENT_SPECS`. */
export function envVar(kind: ResourceKind, key: string): string {
  return `FLOE_${kind.toUpperCase()}_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`
}

/** Physical names used by the local runtime (`floe-event-specs`, …). On AWS, CloudFormation names them. */
export function localName(key: string, prefix = 'floe'): string {
  return `${prefix}-${key.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}`
}

/** Physical names of every declared resource, keyed like the declaration. */
export interface ResourceNames {
  readonly tables: Readonly<Record<TableKey, string>>
  readonly streams: Readonly<Record<StreamKey, string>>
  readonly buckets: Readonly<Record<BucketKey, string>>
}

function mapKeys<K extends string>(o: Record<K, unknown>, f: (k: K) => string): Record<K, string> {
  return Object.fromEntries(Object.keys(o).map((k) => [k, f(k as K)])) as Record<K, string>
}

/** Local physical names of every declared resource under a name prefix. */
export function localNames(prefix = 'floe'): ResourceNames {
  return {
    tables: mapKeys(tables, (k) => localName(k, prefix)),
    streams: mapKeys(streams, (k) => localName(k, prefix)),
    buckets: mapKeys(buckets, (k) => localName(k, prefix)),
  }
}

/** The environment variables that tell functions the physical names of resources. */
export function resourceEnvironment(names: ResourceNames): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(names.tables)) env[envVar('table', k)] = v
  for (const [k, v] of Object.entries(names.streams)) env[envVar('stream', k)] = v
  for (const [k, v] of Object.entries(names.buckets)) env[envVar('bucket', k)] = v
  return env
}
