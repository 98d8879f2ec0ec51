/**
 * The one declaration of Floe's data resources: tables, streams and buckets.
 * Functions, routes and stream triggers are declared in `./functions.ts`. The
 * CDK stacks (`lib/infra/stacks.ts`) and the local runtime (`lib/local/`) both
 * read them; nothing is declared twice. This module has no imports, so
 * functions can read resource names (`lib/runtime/resources.ts`) cheaply.
 *
 * The search store is a declared database: PostgreSQL, on AWS an Aurora
 * Serverless v2 cluster reached through the RDS Data API, locally PGlite
 * served over PostgreSQL's wire protocol.
 *
 * Conventions: every table uses the generic key attributes `pk`/`sk` and index
 * attributes `gsi1pk`/`gsi1sk`, so new access patterns need no schema change.
 * Functions receive the physical names of what they are granted through the
 * environment variables named by `envVar` (see `lib/runtime/resources.ts`).
 */


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
const gsi2: IndexDecl = { partitionKey: { name: 'gsi2pk', type: 'S' }, sortKey: { name: 'gsi2sk', type: 'S' } }
const gsi3: IndexDecl = { partitionKey: { name: 'gsi3pk', type: 'S' }, sortKey: { name: 'gsi3sk', type: 'S' } }

export const tables = {
  eventSpecs: {
    description:
      'Event specifications: pk = organization id, sk = event specification id; gsi1 lists by status, gsi2 by data product, gsi3 by source data structure and version.',
    partitionKey: pk,
    sortKey: sk,
    indexes: { gsi1, gsi2, gsi3 },
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

export interface QueueDecl {
  readonly description: string
  /** Seconds a received message stays hidden: at least its consumer's timeout. */
  readonly visibilityTimeoutSeconds: number
  /** Receives before a message goes to the queue's dead-letter queue. */
  readonly maxReceiveCount: number
  /** Days the dead-letter queue keeps a message (1–14). */
  readonly deadLetterRetentionDays: number
  /** First in, first out, with deduplication by message id: a continuation sent twice within five minutes is delivered once. */
  readonly fifo?: boolean
}

/** SQS queues (with their dead-letter queues); locally none: their work runs in-process. */
export const queues = {
  recoverRuns: {
    description: 'Recovery runs too large for one invocation: each message is one share of a run (the selection, the steps and the share number); the worker replays the share and sends the next.',
    visibilityTimeoutSeconds: 6 * 900,
    maxReceiveCount: 3,
    deadLetterRetentionDays: 14,
    fifo: true,
  },
} as const satisfies Record<string, QueueDecl>

export interface DatabaseDecl {
  readonly description: string
  /** The database created in the cluster. */
  readonly databaseName: string
  /** Aurora capacity units: 0 lets the cluster pause when idle. */
  readonly minCapacity: number
  readonly maxCapacity: number
  /** Seconds without connections before a cluster at capacity 0 pauses (300–86,400). */
  readonly pauseAfterSeconds: number
  /**
   * The CDK context key that leaves the database, and every function that
   * uses it, out of a deployment when set to `false` (`-c searchStore=false`).
   */
  readonly contextFlag: string
}

export const databases = {
  search: {
    description: 'Search store: enriched events and bad rows, searched by /search-store and /micro.',
    databaseName: 'floe',
    minCapacity: 0,
    maxCapacity: 4,
    pauseAfterSeconds: 300,
    contextFlag: 'searchStore',
  },
} as const satisfies Record<string, DatabaseDecl>

export type TableKey = keyof typeof tables
export type StreamKey = keyof typeof streams
export type BucketKey = keyof typeof buckets
export type DatabaseKey = keyof typeof databases
export type QueueKey = keyof typeof queues
export type Access = 'read' | 'write' | 'readWrite'

export type ResourceKind = 'table' | 'stream' | 'bucket' | 'database' | 'queue'

/**
 * How a function reaches a declared database: the value of its `database`
 * environment variable, as JSON. Locally a PostgreSQL URL; on AWS the
 * cluster and secret ARNs the RDS Data API needs.
 */
export type DatabaseConnection = (
  | { readonly kind: 'postgres'; readonly url: string }
  | { readonly kind: 'rds-data'; readonly resourceArn: string; readonly secretArn: string; readonly database: string }
) & {
  /** The PostgreSQL schema holding the tables (default `public`); local stacks sharing one server each have their own. */
  readonly schema?: string
}

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
