/**
 * The Kinesis event source mappings of the templates, run by the local
 * stream trigger emulator (lib/local/stream-trigger.ts) with the settings
 * the template gives each (batch size, batching window, starting position,
 * bisect, ReportBatchItemFailures, retries, record age, parallelization)
 * and Lambda's defaults where it says nothing; the function invoked through
 * the function host; batches given up on written to the mapping's on-failure
 * destination (an S3 bucket; a queue destination needs the SQS port). SQS
 * mappings go to the SQS trigger given (a port), else they are skipped.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import type { KinesisClient } from '@aws-sdk/client-kinesis'
import type { FunctionInventory, Trigger } from '../../core/rehearse/inventory'
import type { StartingPosition, StreamTriggerSettings } from '../../infra/functions'
import { MemoryCheckpointStore, type CheckpointStore } from '../checkpoints'
import { StreamTrigger, type FailureDocument } from '../stream-trigger'
import type { FunctionHost } from './functions'

/** What Lambda takes for a Kinesis mapping whose template leaves a setting out. */
export const KINESIS_MAPPING_DEFAULTS = {
  batchSize: 100,
  maxBatchingWindowSeconds: 0,
  retryAttempts: -1,
  maxRecordAgeSeconds: -1,
  parallelizationFactor: 1,
} as const

/** The trigger emulator's settings of a mapping as the template declares it. */
export function mappingSettings(t: Trigger): StreamTriggerSettings {
  const position = t.startingPosition === 'LATEST' || t.startingPosition === 'AT_TIMESTAMP' ? t.startingPosition : 'TRIM_HORIZON'
  return {
    batchSize: t.batchSize ?? KINESIS_MAPPING_DEFAULTS.batchSize,
    maxBatchingWindowSeconds: t.maxBatchingWindowSeconds ?? KINESIS_MAPPING_DEFAULTS.maxBatchingWindowSeconds,
    startingPosition: position as StartingPosition,
    reportBatchItemFailures: t.reportBatchItemFailures,
    bisectBatchOnError: t.bisectOnError,
    retryAttempts: t.maxRetryAttempts ?? KINESIS_MAPPING_DEFAULTS.retryAttempts,
    maxRecordAgeSeconds: t.maxRecordAgeSeconds ?? KINESIS_MAPPING_DEFAULTS.maxRecordAgeSeconds,
    parallelizationFactor: t.parallelizationFactor ?? KINESIS_MAPPING_DEFAULTS.parallelizationFactor,
  }
}

/** The name of a stream from its ARN (`…:stream/<name>`). */
export function streamNameOf(arn: string): string | undefined {
  return /:stream\/([^/]+)$/.exec(arn)?.[1]
}

export interface MappingRunOptions {
  readonly functions: readonly FunctionInventory[]
  readonly host: Pick<FunctionHost, 'invoke'>
  readonly kinesis: KinesisClient
  /**
   * The Kinesis client a function's mappings poll with, when Lambda's reads
   * of the stream are to be authorized as the function's role (a client
   * signed with its key, through the IAM proxy); `kinesis` otherwise.
   */
  readonly kinesisFor?: (fn: FunctionInventory) => KinesisClient
  readonly s3: S3Client
  readonly checkpoints?: CheckpointStore
  readonly pollIntervalMs?: number
  /**
   * Starts an SQS mapping (an SQS endpoint's trigger emulator), given the
   * mapping as the template declares it and the function to invoke (throws
   * the function's error); without it, SQS mappings are skipped.
   */
  readonly startQueueTrigger?: (t: Trigger, fn: FunctionInventory, invoke: (event: unknown) => Promise<unknown>) => Promise<{ stop(): Promise<void>; drain?(): Promise<void> }>
  /**
   * Whether the search store is stood in (its Data API endpoint given to the
   * functions). Without it, the mappings of a function that writes to it (its
   * environment names an RDS cluster) are skipped: such a function waits for
   * the store with its records, so its mapping would never drain.
   */
  readonly searchStore?: boolean
  readonly log?: (line: string) => void
}

/** Whether a function reaches an Aurora cluster (an RDS cluster ARN in its environment, such as its database connection). */
export function usesDatabase(fn: FunctionInventory): boolean {
  return Object.values(fn.environment).some((v) => v.includes('arn:aws:rds:'))
}

export interface RunningMappings {
  /** `{logicalId, function, stream}` of each mapping started (`stream`: a queue's ARN for an SQS mapping). */
  readonly started: readonly { readonly logicalId: string; readonly function: string; readonly stream: string }[]
  /** Mappings not started, and why (disabled, not a Kinesis source). */
  readonly skipped: readonly { readonly logicalId: string; readonly function: string; readonly reason: string }[]
  drain(): Promise<void>
  stop(): Promise<void>
}

/** Starts every enabled Kinesis mapping of the functions. */
export async function startMappings(o: MappingRunOptions): Promise<RunningMappings> {
  const triggers: StreamTrigger[] = []
  const started: RunningMappings['started'][number][] = []
  const skipped: RunningMappings['skipped'][number][] = []
  const checkpoints = o.checkpoints ?? new MemoryCheckpointStore()
  const queueTriggers: { stop(): Promise<void>; drain?(): Promise<void> }[] = []
  const invokeOf = (fn: FunctionInventory) => async (event: unknown) => {
    const r = await o.host.invoke(fn.logicalId, event)
    if (!r.ok) throw Object.assign(new Error(r.error.errorMessage), { name: r.error.errorType })
    return r.result
  }
  for (const fn of o.functions) {
    for (const t of fn.triggers) {
      const stream = t.kind === 'kinesis' ? streamNameOf(t.source) : undefined
      if (!t.enabled) { skipped.push({ logicalId: t.logicalId, function: fn.logicalId, reason: 'disabled in the template' }); continue }
      if (!o.searchStore && usesDatabase(fn)) { skipped.push({ logicalId: t.logicalId, function: fn.logicalId, reason: 'writes to the search store, which is not stood in' }); continue }
      if (t.kind === 'sqs') {
        if (!o.startQueueTrigger) { skipped.push({ logicalId: t.logicalId, function: fn.logicalId, reason: 'sqs source: no SQS trigger given' }); continue }
        queueTriggers.push(await o.startQueueTrigger(t, fn, invokeOf(fn)))
        started.push({ logicalId: t.logicalId, function: fn.logicalId, stream: t.source })
        continue
      }
      if (stream === undefined) { skipped.push({ logicalId: t.logicalId, function: fn.logicalId, reason: `${t.kind} source: not run by the stream trigger emulator` }); continue }
      const writeFailure = async (doc: FailureDocument) => {
        const bucket = t.onFailure === undefined ? undefined : /^arn:[^:]+:s3:::([^/]+)$/.exec(t.onFailure)?.[1]
        if (bucket === undefined) throw new Error(`${t.logicalId}: no S3 on-failure destination to write ${doc.key} to (${t.onFailure ?? 'none declared'})`)
        await o.s3.send(new PutObjectCommand({ Bucket: bucket, Key: doc.key, Body: doc.body, ContentType: 'application/json' }))
      }
      const trigger = new StreamTrigger({
        id: t.logicalId,
        kinesis: o.kinesisFor?.(fn) ?? o.kinesis,
        streamName: stream,
        functionName: fn.name,
        settings: mappingSettings(t),
        checkpoints,
        invoke: invokeOf(fn),
        writeFailure,
        ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
        ...(o.log ? { log: o.log } : {}),
      })
      await trigger.start()
      triggers.push(trigger)
      started.push({ logicalId: t.logicalId, function: fn.logicalId, stream })
    }
  }
  return {
    started,
    skipped,
    drain: async () => { await Promise.all([...triggers.map((t) => t.drain()), ...queueTriggers.map((t) => t.drain?.())]) },
    stop: async () => { await Promise.all([...triggers.map((t) => t.stop()), ...queueTriggers.map((t) => t.stop())]) },
  }
}
