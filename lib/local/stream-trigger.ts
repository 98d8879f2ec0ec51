import { randomUUID } from 'node:crypto'
import {
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  type KinesisClient,
  type _Record,
} from '@aws-sdk/client-kinesis'
import type { KinesisStreamEvent, KinesisStreamRecord } from 'aws-lambda'
import type { StreamTriggerSettings } from '../infra/functions'
import { markDown, markUp } from '../runtime/dependencies'
import { isDependencyUnavailable, isSetupError } from '../runtime/setup-error'
import type { CheckpointStore } from './checkpoints'
import { countStreamRead } from './metrics'

/** Lambda's limit on the payload of one invocation. */
const MAX_BATCH_BYTES = 6 * 1024 * 1024

export interface FailureDocument {
  readonly key: string
  readonly body: string
}

export interface StreamTriggerOptions {
  /** Identifies the mapping in checkpoints and logs, e.g. `archive-raw`. */
  readonly id: string
  readonly kinesis: KinesisClient
  readonly streamName: string
  readonly functionName: string
  readonly settings: StreamTriggerSettings
  readonly checkpoints: CheckpointStore
  readonly invoke: (event: KinesisStreamEvent) => Promise<unknown>
  /** Writes the record of a batch given up on (on AWS: the S3 on-failure destination). */
  readonly writeFailure: (doc: FailureDocument) => Promise<void>
  /** Delay between polls of an idle shard (Lambda polls about once a second). */
  readonly pollIntervalMs?: number
  /** First delay between retries of a failing batch; doubles up to 5 s. */
  readonly retryDelayMs?: number
  /** Consecutive failed invocations after which `/health` names the trigger (default 3); the next success clears it. */
  readonly failingAfter?: number
  readonly region?: string
  readonly log?: (line: string) => void
}

type Outcome =
  | { kind: 'ok' }
  | { kind: 'partial'; firstFailed: number }
  | { kind: 'error'; message: string }
  /** The function could not set itself up: not about these records. */
  | { kind: 'setup'; message: string }
  /** The function cannot write where its records go (its store is down): not about these records either. */
  | { kind: 'unavailable'; message: string }

/** Longest pause between two attempts of a function that cannot set itself up. */
const SETUP_RETRY_MAX_MS = 10_000
/** Longest pause between two attempts of a function whose store is unavailable (a restarting store is back within seconds). */
const UNAVAILABLE_RETRY_MAX_MS = 2_000

const ARN_PREFIX = 'arn:aws:kinesis:us-east-1:000000000000:stream/'

/** A message on one line, cut to a length `/health` can show. */
function oneLine(message: string): string {
  const s = message.replace(/\s*\n\s*/g, '; ').trim()
  return s.length > 500 ? `${s.slice(0, 499)}…` : s
}

/**
 * Emulates a Lambda Kinesis event source mapping for one stream and function:
 * per-shard polling, batch size and batching window, partial batch failure
 * reporting (checkpoint before the lowest failed record, retry from it), bisect
 * on error, bounded retries and record age, and a failure record for batches
 * given up on. Checkpoints only move past records that are done.
 */
export class StreamTrigger {
  private readonly pollers: ShardPoller[] = []
  private running = false

  constructor(readonly options: StreamTriggerOptions) {}

  async start(): Promise<void> {
    const { Shards = [] } = await this.options.kinesis.send(new ListShardsCommand({ StreamName: this.options.streamName }))
    this.running = true
    for (const shard of Shards) {
      const poller = new ShardPoller(this.options, shard.ShardId!)
      this.pollers.push(poller)
      poller.start()
    }
  }

  /**
   * Records were just written to the stream (by a function of this process):
   * shards waiting for records read now instead of at their next poll. A
   * shard pausing after a failure keeps its pause.
   */
  wake(): void {
    for (const p of this.pollers) p.wakeIfIdle()
  }

  /** Resolves once every shard has read to the end of the stream and has no batch in flight. */
  async drain(): Promise<void> {
    await Promise.all(this.pollers.map((p) => p.drain()))
  }

  /** Stops polling; an invocation in flight finishes (and checkpoints) first. */
  async stop(): Promise<void> {
    if (!this.running) return
    this.running = false
    await Promise.all(this.pollers.map((p) => p.stop()))
  }
}

class ShardPoller {
  private running = false
  private loop: Promise<void> = Promise.resolve()
  private wake: (() => void) | undefined
  /** Sleeping until the next poll (not pausing after a failure): `wakeIfIdle` may end the sleep. */
  private idle = false
  /** Records were written while a read was in flight (it may have missed them): the next poll is not waited for. */
  private wokenMeanwhile = false
  private iterator: string | undefined
  private lastFetched: string | undefined
  private buffer: _Record[] = []
  private bufferSince = 0
  private fetchesStarted = 0
  private currentFetch = 0
  private drainWaiters: { after: number; resolve: () => void }[] = []
  /** Failed invocations in a row (a set-up failure counts apart). */
  private failures = 0
  /** Invocations in a row that could not set the function up. */
  private setupFailures = 0
  private readonly log: (l: string) => void
  private readonly s: StreamTriggerSettings

  constructor(private readonly o: StreamTriggerOptions, private readonly shardId: string) {
    this.log = o.log ?? (() => {})
    this.s = o.settings
  }

  start(): void {
    this.running = true
    this.loop = this.run().catch((err) => {
      this.log(`${this.o.id} ${this.shardId}: stopped on error: ${(err as Error).stack ?? err}`)
    })
  }

  async stop(): Promise<void> {
    this.running = false
    this.wake?.()
    await this.loop
    for (const w of this.drainWaiters.splice(0)) w.resolve()
    markUp(this.component)
  }

  /** The name `/health` gives this shard's trouble. */
  private get component(): string {
    return `${this.o.id} (${this.shardId})`
  }

  /**
   * Resolves after a read that started after this call found nothing new and
   * no batch is buffered or in flight: everything written before is done.
   */
  drain(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve()
      this.drainWaiters.push({ after: this.fetchesStarted, resolve })
      this.wakeIfIdle() // a read in flight may have started before: the next one is not waited for
    })
  }

  wakeIfIdle(): void {
    if (this.idle && this.wake) this.wake()
    else this.wokenMeanwhile = true
  }

  /** Waits for the next poll; records written meanwhile (`wakeIfIdle`) end the wait. */
  private async idleSleep(ms: number): Promise<void> {
    if (this.wokenMeanwhile) {
      this.wokenMeanwhile = false
      return
    }
    this.idle = true
    try {
      await this.sleep(ms)
    } finally {
      this.idle = false
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve() // stopped while it was not sleeping: nothing to wait for
      const t = setTimeout(() => {
        this.wake = undefined
        resolve()
      }, ms)
      this.wake = () => {
        clearTimeout(t)
        this.wake = undefined
        resolve()
      }
    })
  }

  private async newIterator(): Promise<string> {
    const after = this.lastFetched ?? this.o.checkpoints.get(this.o.id, this.shardId)
    const { ShardIterator } = await this.o.kinesis.send(
      new GetShardIteratorCommand({
        StreamName: this.o.streamName,
        ShardId: this.shardId,
        ...(after
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: after }
          : this.s.startingPosition === 'AT_TIMESTAMP'
            ? { ShardIteratorType: 'AT_TIMESTAMP', Timestamp: new Date((this.s.startingPositionTimestamp ?? 0) * 1000) }
            : { ShardIteratorType: this.s.startingPosition }),
      }),
    )
    return ShardIterator!
  }

  private async fetch(): Promise<number> {
    this.iterator ??= await this.newIterator()
    this.currentFetch = ++this.fetchesStarted
    this.wokenMeanwhile = false // this read sees what was written before it
    let out
    try {
      out = await this.o.kinesis.send(new GetRecordsCommand({ ShardIterator: this.iterator, Limit: Math.min(10_000, Math.max(this.s.batchSize, 100)) }))
    } catch (err) {
      if (err instanceof ExpiredIteratorException) {
        this.iterator = undefined
        return this.fetch()
      }
      throw err
    }
    this.iterator = out.NextShardIterator
    const records = out.Records ?? []
    countStreamRead(this.o.functionName, this.o.streamName, records)
    if (records.length > 0) {
      if (this.buffer.length === 0) this.bufferSince = Date.now()
      this.buffer.push(...records)
      this.lastFetched = records.at(-1)!.SequenceNumber
    }
    return records.length
  }

  private takeBatch(): _Record[] {
    let bytes = 0
    let n = 0
    while (n < this.buffer.length && n < this.s.batchSize) {
      const size = (this.buffer[n]!.Data?.length ?? 0) * 1.34 + 512
      if (n > 0 && bytes + size > MAX_BATCH_BYTES) break
      bytes += size
      n++
    }
    return this.buffer.splice(0, n)
  }

  private async run(): Promise<void> {
    const pollMs = this.o.pollIntervalMs ?? 1000
    while (this.running) {
      const windowMs = this.s.maxBatchingWindowSeconds * 1000
      const full = this.buffer.length >= this.s.batchSize
      const windowOver = this.buffer.length > 0 && Date.now() - this.bufferSince >= windowMs
      if (!full && !windowOver) {
        let got = 0
        try {
          got = await this.fetch()
        } catch (err) {
          this.log(`${this.o.id} ${this.shardId}: GetRecords failed: ${(err as Error).message}`)
          await this.sleep(pollMs)
          continue
        }
        if (got === 0) {
          if (this.buffer.length === 0) {
            const done = this.drainWaiters.filter((w) => w.after < this.currentFetch)
            this.drainWaiters = this.drainWaiters.filter((w) => w.after >= this.currentFetch)
            for (const w of done) w.resolve()
            await this.idleSleep(pollMs)
          } else {
            await this.idleSleep(Math.max(0, Math.min(pollMs, windowMs - (Date.now() - this.bufferSince))))
          }
        }
        continue
      }
      try {
        await this.process(this.takeBatch())
      } catch (err) {
        // E.g. the failure location could not be written. Nothing past the
        // checkpoint is assumed done: read again from it after a pause.
        this.log(`${this.o.id} ${this.shardId}: ${(err as Error).message}; resuming from the last checkpoint`)
        this.buffer = []
        this.iterator = undefined
        this.lastFetched = undefined
        await this.sleep(pollMs)
        continue
      }
      if (this.buffer.length > 0) this.bufferSince = Date.now()
    }
  }

  /** Processes one batch to completion: done, or given up on and recorded. */
  private async process(records: _Record[]): Promise<void> {
    const queue: _Record[][] = [records]
    while (queue.length > 0) {
      let batch = queue.shift()!
      let retries = 0
      let paused = 0
      for (;;) {
        batch = await this.dropExpired(batch)
        if (batch.length === 0) break
        const outcome = await this.invoke(batch)
        this.report(outcome, batch.length + this.buffer.length)
        if (outcome.kind === 'ok') {
          await this.checkpoint(batch.at(-1)!)
          break
        }
        if (outcome.kind === 'setup' || outcome.kind === 'unavailable') {
          // Not about these records: no retry is spent, nothing is checkpointed
          // or sent to the failure location; the batch waits and is tried again.
          const what = outcome.kind === 'setup' ? 'cannot set itself up' : 'cannot write'
          if (paused++ === 0) this.log(`${this.o.id} ${this.shardId}: ${this.o.functionName} ${what} (${outcome.message}); records wait in the stream, trying again`)
          const max = outcome.kind === 'setup' ? SETUP_RETRY_MAX_MS : UNAVAILABLE_RETRY_MAX_MS
          await this.sleep(Math.min(max, (this.o.retryDelayMs ?? 200) * 2 ** Math.min(paused - 1, 16)))
          if (!this.running) return // resumes from the checkpoint on the next start
          continue
        }
        if (outcome.kind === 'partial') {
          // Everything before the lowest failed record is done; retry from it.
          if (outcome.firstFailed > 0) await this.checkpoint(batch[outcome.firstFailed - 1]!)
          batch = batch.slice(outcome.firstFailed)
        } else if (this.s.bisectBatchOnError && batch.length > 1) {
          // A split is not a retry: each half gets the full retry budget.
          const mid = Math.ceil(batch.length / 2)
          queue.unshift(batch.slice(0, mid), batch.slice(mid))
          this.log(`${this.o.id} ${this.shardId}: function error (${outcome.message}); bisecting ${batch.length} records`)
          break
        }
        retries++
        if (this.s.retryAttempts >= 0 && retries > this.s.retryAttempts) {
          await this.giveUp(batch, 'RetryAttemptsExhausted', retries, outcome)
          break
        }
        await this.sleep(Math.min(5000, (this.o.retryDelayMs ?? 200) * 2 ** (retries - 1)))
        if (!this.running) return // resumes from the checkpoint on the next start
      }
    }
  }

  private async dropExpired(batch: _Record[]): Promise<_Record[]> {
    if (this.s.maxRecordAgeSeconds < 0) return batch
    const limit = Date.now() - this.s.maxRecordAgeSeconds * 1000
    let n = 0
    while (n < batch.length && (batch[n]!.ApproximateArrivalTimestamp?.getTime() ?? Infinity) < limit) n++
    if (n === 0) return batch
    await this.giveUp(batch.slice(0, n), 'RecordAgeExceeded', 0, { kind: 'error', message: 'record age exceeded' })
    return batch.slice(n)
  }

  private event(batch: _Record[]): KinesisStreamEvent {
    const arn = ARN_PREFIX + this.o.streamName
    return {
      Records: batch.map(
        (r): KinesisStreamRecord => ({
          kinesis: {
            kinesisSchemaVersion: '1.0',
            partitionKey: r.PartitionKey!,
            sequenceNumber: r.SequenceNumber!,
            data: Buffer.from(r.Data ?? new Uint8Array()).toString('base64'),
            approximateArrivalTimestamp: (r.ApproximateArrivalTimestamp?.getTime() ?? Date.now()) / 1000,
          },
          eventSource: 'aws:kinesis',
          eventVersion: '1.0',
          eventID: `${this.shardId}:${r.SequenceNumber}`,
          eventName: 'aws:kinesis:record',
          invokeIdentityArn: `arn:aws:iam::000000000000:role/${this.o.functionName}`,
          awsRegion: this.o.region ?? 'us-east-1',
          eventSourceARN: arn,
        }),
      ),
    }
  }

  /** Tells `/health` when the function cannot set itself up or fails invocation after invocation, and when it is well again. */
  private report(outcome: Outcome, waiting: number): void {
    const fn = this.o.functionName
    if (outcome.kind === 'setup') {
      this.setupFailures++
      markDown(this.component, `${fn}: configuration cannot be loaded (tried ${this.setupFailures} times): ${oneLine(outcome.message)}; records wait in the stream`)
      return
    }
    if (outcome.kind === 'unavailable') {
      // at once: a loader that cannot write is a fault, and its records are not moving
      markDown(this.component, `${fn} ${oneLine(outcome.message)}; ${waiting} record(s) read so far wait in the stream`)
      return
    }
    this.setupFailures = 0
    if (outcome.kind === 'error') {
      this.failures++
      if (this.failures >= (this.o.failingAfter ?? 3)) markDown(this.component, `${fn} fails every batch (${this.failures} failed invocations in a row); last error: ${oneLine(outcome.message)}`)
      return
    }
    // A partial failure is an answer about some records: the function works.
    this.failures = 0
    markUp(this.component)
  }

  private async invoke(batch: _Record[]): Promise<Outcome> {
    let result: unknown
    try {
      result = await this.o.invoke(this.event(batch))
    } catch (err) {
      const message = (err as Error)?.message ?? String(err)
      return isSetupError(err) ? { kind: 'setup', message } : isDependencyUnavailable(err) ? { kind: 'unavailable', message } : { kind: 'error', message }
    }
    if (!this.s.reportBatchItemFailures) return { kind: 'ok' }
    const failures = (result as { batchItemFailures?: { itemIdentifier?: unknown }[] } | null | undefined)?.batchItemFailures
    if (failures === undefined || failures === null || failures.length === 0) return { kind: 'ok' }
    let first = Infinity
    for (const f of failures) {
      const idx = typeof f?.itemIdentifier === 'string' ? batch.findIndex((r) => r.SequenceNumber === f.itemIdentifier) : -1
      // An empty, null or unknown identifier fails the whole batch, as on Lambda.
      if (idx < 0) return { kind: 'error', message: `invalid batchItemFailures entry ${JSON.stringify(f)}` }
      first = Math.min(first, idx)
    }
    return { kind: 'partial', firstFailed: first }
  }

  private async checkpoint(r: _Record): Promise<void> {
    await this.o.checkpoints.set(this.o.id, this.shardId, r.SequenceNumber!)
  }

  private async giveUp(batch: _Record[], condition: string, attempts: number, outcome: Outcome): Promise<void> {
    const now = new Date()
    const stamp = now.toISOString().replace(/:/g, '.').replace(/\.\d{3}Z$/, '')
    const ymd = now.toISOString().slice(0, 10).replace(/-/g, '/')
    const key = `aws/lambda/${this.o.id}/${this.shardId}/${ymd}/${stamp}-${randomUUID()}`
    const doc = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: `arn:aws:lambda:us-east-1:000000000000:function:${this.o.functionName}`,
        condition,
        approximateInvokeCount: attempts,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: outcome.kind === 'error' ? outcome.message : 'PartialBatchFailure' },
      version: '1.0',
      timestamp: now.toISOString(),
      KinesisBatchInfo: {
        shardId: this.shardId,
        startSequenceNumber: batch[0]!.SequenceNumber,
        endSequenceNumber: batch.at(-1)!.SequenceNumber,
        approximateArrivalOfFirstRecord: batch[0]!.ApproximateArrivalTimestamp?.toISOString(),
        approximateArrivalOfLastRecord: batch.at(-1)!.ApproximateArrivalTimestamp?.toISOString(),
        batchSize: batch.length,
        streamArn: ARN_PREFIX + this.o.streamName,
      },
      payload: JSON.stringify(this.event(batch)),
    }
    // The failure record is written before the checkpoint moves, so nothing is lost.
    await this.o.writeFailure({ key, body: JSON.stringify(doc) })
    this.log(`${this.o.id} ${this.shardId}: gave up on ${batch.length} record(s) (${condition}); recorded at ${key}`)
    await this.checkpoint(batch.at(-1)!)
  }
}
