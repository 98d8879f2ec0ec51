/**
 * The shell of enrich on Kinesis: builds the enricher and the stream writers
 * from the configuration, enriches a batch of raw records and writes every
 * output with PutRecords. A record is acknowledged only once all of its outputs
 * are written; the others are reported as failed so the batch is retried from
 * them (at least once).
 */
import { randomUUID } from 'node:crypto'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { KinesisClient } from '@aws-sdk/client-kinesis'
import type { S3Client } from '@aws-sdk/client-s3'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cloudWatchNamespace, noticeText, type EnrichConfig, type KinesisOutput, type Outputs } from '../core/enrich/config'
import { Enricher, type Output, type RecordOutcome } from '../core/enrich/enrich'
import { F } from '../core/enrich/fields'
import { emfLine, Metrics, MetricsReporter } from '../core/enrich/metrics'
import { countOutcome, enrichBatch, invalidLogLines } from '../core/enrich/runner'
import { ENRICH_PROCESSOR } from '../core/enrich/version'
import type { Resolver } from '../core/iglu/resolver'
import { enrichmentFiles } from '../infra/enrichments'
import { envVar, streams, type StreamKey } from '../infra/resources'
import { clients } from './clients'
import { KinesisWriter, KinesisWriteError, type KinesisRecord } from './kinesis-writer'
import { deferredTracker, noErrorTracker, type ErrorTracker } from './error-tracker'
import { deploymentResolver } from './resolver'
import { AssetCache, configsFromBucket, EnrichmentSetupError, setupEnrichments, type EnrichmentSetup } from './enrichments'
import { DynamoEventSpecSource } from './event-spec-source'
import { eventSpecDefaultOn, withDefaultEventSpec } from '../core/enrich/enrichments/event-spec-default'
import { followSpecs } from '../runtime/spec-changes'
import { remoteAdapters } from '../core/enrich/adapters/remote'

type OutputKind = Output['kind']

/** A stream named after a declared stream key means this deployment's stream; any other name is physical. */
export function physicalStreamName(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (Object.prototype.hasOwnProperty.call(streams, name)) {
    const v = env[envVar('stream', name as StreamKey)]
    if (v) return v
  }
  return name
}

interface Sink {
  readonly streamName: string
  readonly writer: KinesisWriter
  readonly partitionKey?: number
}

export interface EnrichKinesisRuntime {
  readonly config: Extract<EnrichConfig, { variant: 'kinesis' }>
  readonly enricher: Enricher
  readonly sinks: Partial<Record<OutputKind, Sink>>
  readonly metrics: Metrics
  readonly reporter: MetricsReporter
  readonly log: (line: string) => void
  /** Where errors are reported (`monitoring.sentry`); flushed before an invocation ends. */
  readonly errors: ErrorTracker
  readonly debug: boolean
  /**
   * Records (by sequence number) whose outputs were all written in a batch
   * where another record's write failed. Lambda retries such a batch from the
   * failed record on; this instance then neither enriches nor writes them
   * again. Bounded: emptied at `WRITTEN_LIMIT` entries.
   */
  readonly written: Set<string>
}

/** How many written records an instance remembers (a few full batches of the largest size). */
export const WRITTEN_LIMIT = 100_000

export interface RuntimeOptions {
  readonly resolver?: Resolver
  readonly kinesis?: KinesisClient
  /** Reads this deployment's registry (default: the shared client). */
  readonly ddb?: DynamoDBClient
  readonly log?: (line: string) => void
  readonly env?: NodeJS.ProcessEnv
}

function kinesisFor(o: KinesisOutput, shared: KinesisClient): KinesisClient {
  if (!o.customEndpoint && !o.region) return shared
  return new KinesisClient({ region: o.region, endpoint: o.customEndpoint })
}

export function createRuntime(config: EnrichConfig, opts: RuntimeOptions = {}): EnrichKinesisRuntime {
  if (config.variant !== 'kinesis') throw new Error('the Kinesis runtime needs a configuration of the shard-stream (Kinesis) variant')
  const env = opts.env ?? process.env
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const shared = opts.kinesis ?? clients().kinesis
  const sinks: Partial<Record<OutputKind, Sink>> = {}
  const outputs = config.output as Outputs<KinesisOutput>
  for (const kind of ['good', 'incomplete', 'bad', 'pii'] as const) {
    const o = outputs[kind]
    if (!o) continue
    sinks[kind] = {
      streamName: physicalStreamName(o.streamName, env),
      partitionKey: o.partitionKey === undefined ? undefined : F[o.partitionKey],
      writer: new KinesisWriter(kinesisFor(o, shared), {
        recordLimit: o.recordLimit,
        // concurrency.sink: PutRecords calls in flight per output stream
        concurrency: config.concurrency.sink,
        retry: { baseDelayMs: o.backoffPolicy.minBackoffMs, maxDelayMs: o.backoffPolicy.maxBackoffMs, maxAttempts: o.backoffPolicy.maxRetries + 1 },
        // throttling is retried for as long as the invocation lasts
        throttled: { baseDelayMs: o.throttledBackoffPolicy.minBackoffMs, maxDelayMs: o.throttledBackoffPolicy.maxBackoffMs, maxAttempts: Number.POSITIVE_INFINITY },
      }),
    }
  }
  const enricher = new Enricher({
    resolver: opts.resolver ?? deploymentResolver(env, opts.ddb),
    processor: ENRICH_PROCESSOR,
    atomicFieldsLimits: config.validation.atomicFieldsLimits,
    acceptInvalid: config.featureFlags.acceptInvalid,
    emitFailed: sinks.incomplete !== undefined,
    emitPii: sinks.pii !== undefined,
    maxJsonDepth: config.maxJsonDepth,
    remoteAdapters: remoteAdapters(config.remoteAdapters.configs),
    schemaOverrides: new Map(Object.entries(config.adaptersSchemas)),
  })
  const metrics = new Metrics()
  const stdout = config.monitoring.metrics.stdout
  const statsd = config.monitoring.metrics.statsd
  const reporter = new MetricsReporter({
    metrics,
    stdout: stdout && { ...stdout, write: log },
    statsd,
  })
  const debug = /^debug$/i.test(env.FLOE_LOG_LEVEL ?? '')
  for (const n of config.notices) log(JSON.stringify({ level: 'WARN', message: noticeText(n), key: n.key }))
  const sentry = config.monitoring.sentry
  const errors = sentry
    ? deferredTracker(async () =>
        (await import('./sentry')).sentryTracker({ dsn: sentry.dsn, tags: sentry.tags, release: `${ENRICH_PROCESSOR.artifact}-${ENRICH_PROCESSOR.version}`, serverName: env.AWS_LAMBDA_FUNCTION_NAME }),
      )
    : noErrorTracker
  return { config, enricher, sinks, metrics, reporter, log, errors, debug, written: new Set() }
}

export interface InputRecord {
  /** The identifier reported back on failure (the Kinesis sequence number). */
  readonly id: string
  readonly data: Uint8Array
}

export interface BatchResult {
  /** Ids of the records to retry. */
  readonly failed: string[]
  /** The outcomes of the records enriched by this call (those written before are skipped). */
  readonly outcomes: RecordOutcome[]
  /** Ids of the records skipped because this instance wrote all their outputs before. */
  readonly skipped: string[]
}

/**
 * The configured field's value; without one, a key shared by the outputs of
 * one collector payload, so that events sent together stay on one shard, in
 * the order they were sent (the search store's arrival order relies on it).
 */
function partitionKeyOf(out: Output, sink: Sink, payloadKey: string): string {
  if (sink.partitionKey !== undefined && 'event' in out) {
    const v = out.event.f[sink.partitionKey]
    if (v !== null && v !== undefined && v !== '') return String(v)
  }
  return payloadKey
}

/** Enriches a batch and writes its outputs; answers which records must be retried. */
export async function processBatch(rt: EnrichKinesisRuntime, batch: readonly InputRecord[], now = Date.now()): Promise<BatchResult> {
  const skipped = batch.filter((r) => rt.written.has(r.id)).map((r) => r.id)
  const records = skipped.length === 0 ? batch : batch.filter((r) => !rt.written.has(r.id))
  const outcomes = await enrichBatch(rt.enricher, records.map((r) => r.data), { concurrency: rt.config.concurrency.enrich, now })
  const failed = new Set<string>()
  const byStream = new Map<Sink, { record: KinesisRecord; owner: number }[]>()
  outcomes.forEach((o, i) => {
    const payloadKey = randomUUID()
    for (const out of o.outputs) {
      const sink = rt.sinks[out.kind]
      if (!sink) continue
      const text = out.kind === 'bad' ? out.json : out.tsv
      const list = byStream.get(sink) ?? []
      list.push({ record: { partitionKey: partitionKeyOf(out, sink, payloadKey), data: Buffer.from(text, 'utf8') }, owner: i })
      byStream.set(sink, list)
    }
  })
  await Promise.all(
    [...byStream].map(async ([sink, items]) => {
      try {
        await sink.writer.write(sink.streamName, items.map((x) => x.record))
      } catch (err) {
        const lost = err instanceof KinesisWriteError ? new Set(err.failed.map((f) => f.record)) : undefined
        for (const x of items) if (!lost || lost.has(x.record)) failed.add(records[x.owner]!.id)
        rt.log(JSON.stringify({ level: 'ERROR', message: `Writing to ${sink.streamName} failed: ${(err as Error).message}` }))
        rt.errors.capture(err, { stream: sink.streamName, records: String(items.length) })
      }
    }),
  )
  let oldest: number | null = null
  outcomes.forEach((o, i) => {
    if (failed.has(records[i]!.id)) return
    countOutcome(rt.metrics, o)
    if (rt.debug) for (const l of invalidLogLines(o)) rt.log(l)
    if (o.collectorTimestamp !== null && (oldest === null || o.collectorTimestamp < oldest)) oldest = o.collectorTimestamp
  })
  rt.metrics.latencyOf(oldest, Date.now())
  if (failed.size > 0) {
    // The batch comes back from its first failed record: remember what was written after it.
    if (rt.written.size + records.length > WRITTEN_LIMIT) rt.written.clear()
    for (const r of records) if (!failed.has(r.id)) rt.written.add(r.id)
  }
  return { failed: records.filter((r) => failed.has(r.id)).map((r) => r.id), outcomes, skipped }
}

/**
 * Reads the enrichment configurations from the assets bucket's `enrichments/`
 * prefix (when the function may read the bucket), downloads their assets into
 * `FLOE_ASSETS_CACHE_DIR` (default: the temporary directory) and puts the steps
 * in place; with `assetsUpdatePeriod`, refreshed assets swap them in later.
 */
export async function loadEnrichments(rt: EnrichKinesisRuntime, opts: { env?: NodeJS.ProcessEnv; s3?: S3Client; ddb?: DynamoDBClient } = {}): Promise<EnrichmentSetup | undefined> {
  const env = opts.env ?? process.env
  // the tracking-design API's history table, read by the event specification enrichment
  const specHistory = env[envVar('table', 'specHistory')]
  const bucket = env[envVar('bucket', enrichmentFiles.bucket)]
  if (!bucket) return undefined
  const s3 = opts.s3 ?? clients().s3
  // The event specification enrichment reads this deployment's own tables: on unless a file or the setting says otherwise.
  const stored = await configsFromBucket(s3, bucket)
  let defaultOn: boolean
  try {
    defaultOn = eventSpecDefaultOn(env)
  } catch (err) {
    throw new EnrichmentSetupError((err as Error).message)
  }
  const files = specHistory ? withDefaultEventSpec(stored, defaultOn) : stored
  if (files.length === 0) return undefined
  const setup = await setupEnrichments(files, {
    resolver: rt.enricher.settings.resolver,
    cache: new AssetCache({ dir: env.FLOE_ASSETS_CACHE_DIR || join(tmpdir(), 'floe-assets'), s3 }),
    legacyOrder: rt.config.featureFlags.legacyEnrichmentOrder,
    exitOnJsCompileError: rt.config.featureFlags.exitOnJsCompileError,
    ...(specHistory ? { eventSpecs: { source: new DynamoEventSpecSource(opts.ddb ?? clients().ddb, specHistory), now: () => Date.now(), warn: (m: string) => rt.log(JSON.stringify({ level: 'WARN', message: m })), follow: followSpecs } } : {}),
    updatePeriodMs: rt.config.assetsUpdatePeriodMs,
    onChange: (e) => rt.enricher.replaceEnrichments(e),
    log: rt.log,
  })
  rt.enricher.replaceEnrichments(setup.enrichments)
  return setup
}

/** One embedded-metric-format line with the counts since the last call (CloudWatch reads it from the logs). */
export function emitEmf(rt: EnrichKinesisRuntime, functionName: string): void {
  const namespace = cloudWatchNamespace(rt.config)
  if (namespace === undefined) return
  rt.log(emfLine(rt.metrics.take(), namespace, { function: functionName }, Date.now()))
}
