import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs'
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda'

/** SQS's largest receive; Lambda reads bigger batches in several receives. */
const MAX_RECEIVE = 10

export interface QueueTriggerOptions {
  /** Names the mapping in logs, e.g. `recoverWorker-recoverRuns`. */
  readonly id: string
  readonly sqs: SQSClient
  readonly queueUrl: string
  readonly queueArn: string
  /** Messages per invocation (Lambda: 1–10 without a batching window). */
  readonly batchSize: number
  /** The mapping's `ReportBatchItemFailures`: the function answers `{batchItemFailures}` and only those messages stay. */
  readonly reportBatchItemFailures: boolean
  readonly invoke: (event: SQSEvent) => Promise<unknown>
  /** Long-poll wait of one receive, seconds (Lambda: 20; shorter stops sooner). */
  readonly waitTimeSeconds?: number
  readonly region?: string
  readonly log?: (line: string) => void
  /** First pause after a failed receive; doubles up to 5 s. */
  readonly retryDelayMs?: number
  readonly sleep?: (ms: number) => Promise<void>
}

/** What one invocation did to its batch. */
export interface BatchOutcome {
  readonly deleted: readonly string[]
  /** Left in the queue: they reappear after the visibility timeout (and go to the dead-letter queue after `maxReceiveCount` receives). */
  readonly kept: readonly string[]
  readonly error?: string
}

function lambdaAttributes(m: Message): SQSRecordAttributes {
  const a = m.Attributes ?? {}
  return {
    ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
    SentTimestamp: a.SentTimestamp ?? '',
    SenderId: a.SenderId ?? '000000000000',
    ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? '',
    ...(a.SequenceNumber !== undefined ? { SequenceNumber: a.SequenceNumber } : {}),
    ...(a.MessageGroupId !== undefined ? { MessageGroupId: a.MessageGroupId } : {}),
    ...(a.MessageDeduplicationId !== undefined ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
  }
}

function lambdaMessageAttributes(attrs: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {}
  for (const [name, v] of Object.entries(attrs ?? {})) {
    out[name] = {
      dataType: v.DataType ?? 'String',
      ...(v.StringValue !== undefined ? { stringValue: v.StringValue } : {}),
      ...(v.BinaryValue !== undefined ? { binaryValue: Buffer.from(v.BinaryValue).toString('base64') } : {}),
      stringListValues: v.StringListValues ?? [],
      binaryListValues: (v.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
    }
  }
  return out
}

/** A received message as Lambda's SQS event gives it. */
export function sqsRecord(m: Message, queueArn: string, region = 'us-east-1'): SQSRecord {
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: lambdaAttributes(m),
    messageAttributes: lambdaMessageAttributes(m.MessageAttributes),
    md5OfBody: m.MD5OfBody ?? '',
    ...(m.MD5OfMessageAttributes ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  } as SQSRecord
}

/**
 * The messages of a batch that stay in the queue, as Lambda decides: all of
 * them when the invocation failed, or when `ReportBatchItemFailures` is on and
 * the answer is malformed or names a message not in the batch; otherwise the
 * ones named in `batchItemFailures`. On a FIFO queue, a message after a failed
 * one of its group stays too, so the group keeps its order.
 */
export function keptMessages(records: readonly SQSRecord[], response: unknown, reportBatchItemFailures: boolean, fifo: boolean): Set<string> {
  const all = new Set(records.map((r) => r.messageId))
  if (!reportBatchItemFailures || response === undefined || response === null) return new Set()
  if (typeof response !== 'object') return new Set()
  const failures = (response as Partial<SQSBatchResponse>).batchItemFailures
  if (failures === undefined || failures === null) return new Set()
  if (!Array.isArray(failures)) return all
  const kept = new Set<string>()
  for (const f of failures) {
    const id = (f as { itemIdentifier?: unknown } | null)?.itemIdentifier
    if (typeof id !== 'string' || id === '' || !all.has(id)) return all
    kept.add(id)
  }
  if (fifo) {
    const failedGroups = new Set<string>()
    for (const r of records) {
      const group = r.attributes.MessageGroupId ?? ''
      if (kept.has(r.messageId)) failedGroups.add(group)
      else if (failedGroups.has(group)) kept.add(r.messageId)
    }
  }
  return kept
}

/**
 * Emulates a Lambda SQS event source mapping for one queue and function:
 * long-polls the queue, invokes with up to `batchSize` messages in Lambda's SQS
 * event shape, deletes the messages the invocation finished (all on success,
 * all but `batchItemFailures` with `ReportBatchItemFailures`) and leaves the
 * rest to reappear after the queue's visibility timeout; the queue's redrive
 * policy moves a message that keeps failing to its dead-letter queue. One
 * poller: a FIFO queue's groups are delivered in order.
 */
export class QueueTrigger {
  private running = false
  private loop: Promise<void> = Promise.resolve()
  private receivesStarted = 0
  private drainWaiters: { after: number; resolve: () => void }[] = []
  private readonly log: (l: string) => void
  private readonly fifo: boolean
  /** Every batch's outcome, in order (for tests and the rehearsal's report). */
  readonly outcomes: BatchOutcome[] = []

  constructor(readonly options: QueueTriggerOptions) {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > 10_000) throw new Error(`${options.id}: batch size ${options.batchSize} is outside 1–10,000`)
    this.log = options.log ?? (() => {})
    this.fifo = options.queueUrl.endsWith('.fifo')
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run().catch((err) => {
      this.log(`${this.options.id}: stopped on error: ${(err as Error).stack ?? err}`)
    })
  }

  /** Stops polling; a batch in flight finishes (and deletes what it finished) first. */
  async stop(): Promise<void> {
    this.running = false
    await this.loop
    for (const w of this.drainWaiters.splice(0)) w.resolve()
  }

  /** Resolves after a receive that started after this call found no visible message and no batch is in flight. */
  drain(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.running) return resolve()
      this.drainWaiters.push({ after: this.receivesStarted, resolve })
    })
  }

  private async run(): Promise<void> {
    let failures = 0
    while (this.running) {
      const started = ++this.receivesStarted
      let messages: Message[]
      try {
        messages = await this.receive()
        failures = 0
      } catch (err) {
        // the queue cannot be read (the server restarting, the queue not made yet): try again, backing off up to 5 s
        const pause = Math.min(5000, (this.options.retryDelayMs ?? 250) * 2 ** failures++)
        this.log(`${this.options.id}: receiving failed (${(err as Error).message}); again in ${pause} ms`)
        await (this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))))(pause)
        continue
      }
      if (messages.length === 0) {
        for (const w of this.drainWaiters.filter((w) => w.after < started)) {
          this.drainWaiters.splice(this.drainWaiters.indexOf(w), 1)
          w.resolve()
        }
        continue
      }
      await this.handle(messages)
    }
  }

  /** Up to `batchSize` messages: the first receive long-polls, the next ones take what is visible now. */
  private async receive(): Promise<Message[]> {
    const o = this.options
    const out: Message[] = []
    while (out.length < o.batchSize && this.running) {
      const { Messages = [] } = await o.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: o.queueUrl,
          MaxNumberOfMessages: Math.min(MAX_RECEIVE, o.batchSize - out.length),
          WaitTimeSeconds: out.length === 0 ? (o.waitTimeSeconds ?? 1) : 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      )
      out.push(...Messages)
      if (Messages.length < MAX_RECEIVE) break
    }
    return out
  }

  private async handle(messages: Message[]): Promise<void> {
    const o = this.options
    const records = messages.map((m) => sqsRecord(m, o.queueArn, o.region))
    let response: unknown
    let error: string | undefined
    try {
      response = await o.invoke({ Records: records })
    } catch (err) {
      error = (err as Error).message ?? String(err)
    }
    const kept = error !== undefined ? new Set(records.map((r) => r.messageId)) : keptMessages(records, response, o.reportBatchItemFailures, this.fifo)
    const done = records.filter((r) => !kept.has(r.messageId))
    for (let i = 0; i < done.length; i += MAX_RECEIVE) {
      const chunk = done.slice(i, i + MAX_RECEIVE)
      const { Failed = [] } = await o.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: o.queueUrl, Entries: chunk.map((r, j) => ({ Id: String(j), ReceiptHandle: r.receiptHandle })) }))
      for (const f of Failed) this.log(`${o.id}: deleting ${chunk[Number(f.Id)]?.messageId} failed: ${f.Message ?? f.Code}`)
    }
    const outcome: BatchOutcome = { deleted: done.map((r) => r.messageId), kept: records.filter((r) => kept.has(r.messageId)).map((r) => r.messageId), ...(error !== undefined ? { error } : {}) }
    this.outcomes.push(outcome)
    if (error !== undefined) this.log(`${o.id}: invocation failed (${records.length} messages stay in the queue): ${error}`)
    else if (outcome.kept.length > 0) this.log(`${o.id}: ${outcome.kept.length} of ${records.length} messages failed and stay in the queue`)
  }
}
