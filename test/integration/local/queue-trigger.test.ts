import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs'
import type { SQSEvent, SQSRecord } from 'aws-lambda'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { queues, type QueueDecl } from '../../../lib/infra/resources'
import { keptMessages, QueueTrigger } from '../../../lib/local/queue-trigger'
import { createDeclaredQueue, startSqs, type LocalSqs, type MadeQueue } from '../../../lib/local/sqs'
import { uniquePrefix } from '../../support/stack'

let server: LocalSqs
let sqs: SQSClient
beforeAll(async () => {
  server = await startSqs()
  sqs = new SQSClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
})
afterAll(async () => {
  sqs.destroy()
  await server.stop()
})

const running: QueueTrigger[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.stop()))
})

/** A queue like the declared ones, with a short visibility timeout so a failed message comes back within the test. */
const shortDecl = (fifo: boolean, maxReceiveCount = 2): QueueDecl => ({ description: 'test', visibilityTimeoutSeconds: 1, maxReceiveCount, deadLetterRetentionDays: 1, fifo })

async function receiveAll(url: string): Promise<{ body: string; count: string | undefined }[]> {
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'] }))
  return Messages.map((m) => ({ body: m.Body ?? '', count: m.Attributes?.ApproximateReceiveCount }))
}

function startTrigger(q: MadeQueue, handler: (e: SQSEvent) => unknown, batchSize = 10, reportBatchItemFailures = true): { trigger: QueueTrigger; batches: string[][] } {
  const batches: string[][] = []
  const trigger = new QueueTrigger({
    id: 'test-queue',
    sqs,
    queueUrl: q.url,
    queueArn: q.arn,
    batchSize,
    reportBatchItemFailures,
    invoke: async (e) => {
      batches.push(e.Records.map((r) => r.body))
      return handler(e)
    },
  })
  running.push(trigger)
  trigger.start()
  return { trigger, batches }
}

describe('the local SQS server with the SDK client', () => {
  it('creates the declared recovery queue as the app stack does: FIFO, visibility timeout, redrive to its dead-letter queue', async () => {
    const name = uniquePrefix('recover')
    const q = await createDeclaredQueue(sqs, name, queues.recoverRuns)
    // on the server's own address, as on AWS: the SDK sends a queue's requests to its URL's host
    expect(q.url).toBe(`${server.endpoint}/000000000000/${name}.fifo`)
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: `${name}.fifo` }))).QueueUrl).toBe(q.url)
    const { Attributes: a = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['All'] }))
    expect(a.FifoQueue).toBe('true')
    expect(a.VisibilityTimeout).toBe(String(queues.recoverRuns.visibilityTimeoutSeconds))
    expect(JSON.parse(a.RedrivePolicy!)).toEqual({ deadLetterTargetArn: q.deadLetterArn, maxReceiveCount: queues.recoverRuns.maxReceiveCount })
    // the same call again answers the same queue
    expect((await createDeclaredQueue(sqs, name, queues.recoverRuns)).url).toBe(q.url)
  })

  it('deduplicates by MessageDeduplicationId, keeps a group in order, counts receives and redrives after maxReceiveCount', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('fifo'), shortDecl(true, 2))
    await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'a', MessageGroupId: 'g', MessageDeduplicationId: 'a' }))
    await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'a again', MessageGroupId: 'g', MessageDeduplicationId: 'a' }))
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [{ Id: '1', MessageBody: 'b', MessageGroupId: 'g', MessageDeduplicationId: 'b' }] }))
    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: q.url, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['All'] }))
    expect(first.Messages?.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount, m.Attributes?.MessageGroupId])).toEqual([['a', '1', 'g']])
    // made visible again at once: the second receive
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: first.Messages![0]!.ReceiptHandle, VisibilityTimeout: 0 }))
    expect((await receiveAll(q.url)).map((m) => [m.body, m.count])).toEqual([['a', '2']])
    // after its visibility timeout, `a` has had its two receives: it goes to the dead-letter queue and `b` comes next
    let next: { body: string }[] = []
    while (next.length === 0) next = await receiveAll(q.url)
    expect(next.map((m) => m.body)).toEqual(['b'])
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: q.deadLetterUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }))
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['a'])
    await sqs.send(new DeleteMessageCommand({ QueueUrl: q.deadLetterUrl, ReceiptHandle: dead.Messages![0]!.ReceiptHandle }))
  })
})

describe('QueueTrigger (an SQS event source mapping)', () => {
  it('invokes with the Lambda SQS event and deletes what succeeded', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('ok'), shortDecl(true))
    let seen: SQSRecord | undefined
    const { trigger, batches } = startTrigger(q, (e) => {
      seen ??= e.Records[0]
      return { batchItemFailures: [] }
    })
    await sqs.send(
      new SendMessageCommand({ QueueUrl: q.url, MessageBody: '{"share":0}', MessageGroupId: 'run-1', MessageDeduplicationId: 'run-1.0', MessageAttributes: { kind: { DataType: 'String', StringValue: 'share' } } }),
    )
    await trigger.drain()
    await trigger.drain()
    expect(batches).toEqual([['{"share":0}']])
    expect(seen).toMatchObject({
      body: '{"share":0}',
      eventSource: 'aws:sqs',
      eventSourceARN: q.arn,
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'run-1', MessageDeduplicationId: 'run-1.0' },
      messageAttributes: { kind: { dataType: 'String', stringValue: 'share', stringListValues: [], binaryListValues: [] } },
    })
    expect(seen?.messageId).toMatch(/\S/)
    expect(seen?.receiptHandle).toMatch(/\S/)
    expect(trigger.outcomes).toEqual([{ deleted: [seen!.messageId], kept: [] }])
    const { Attributes: a = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))
    expect([a.ApproximateNumberOfMessages, a.ApproximateNumberOfMessagesNotVisible]).toEqual(['0', '0'])
  })

  it('keeps the batch item failures: they come back after the visibility timeout and go to the dead-letter queue after maxReceiveCount', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('partial'), shortDecl(false, 2))
    const counts: string[] = []
    const { trigger } = startTrigger(q, (e) => {
      const bad = e.Records.filter((r) => r.body === 'bad')
      for (const r of bad) counts.push(r.attributes.ApproximateReceiveCount)
      return { batchItemFailures: bad.map((r) => ({ itemIdentifier: r.messageId })) }
    })
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: ['good', 'bad'].map((b, i) => ({ Id: String(i), MessageBody: b })) }))
    while (counts.length < 2) await trigger.drain()
    await trigger.stop()
    expect(counts).toEqual(['1', '2'])
    expect(trigger.outcomes[0]?.deleted).toHaveLength(1)
    expect(trigger.outcomes[0]?.kept).toHaveLength(1)
    let dead: { body: string }[] = []
    while (dead.length === 0) {
      await receiveAll(q.url) // the third receive is the one that moves it
      dead = await receiveAll(q.deadLetterUrl)
    }
    expect(dead.map((m) => m.body)).toEqual(['bad'])
  })

  it('keeps the whole batch when the invocation fails or the answer names a message not in the batch', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('fail'), shortDecl(false, 5))
    let calls = 0
    const { trigger, batches } = startTrigger(q, () => {
      calls++
      if (calls === 1) throw new Error('boom')
      if (calls === 2) return { batchItemFailures: [{ itemIdentifier: 'not-in-the-batch' }] }
      return undefined
    })
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: ['x', 'y'].map((b, i) => ({ Id: String(i), MessageBody: b })) }))
    while (trigger.outcomes.reduce((n, o) => n + o.deleted.length, 0) < 2) await trigger.drain()
    // a receive may return some of the messages (as SQS may): each of the two batches is kept whole, whatever its size
    expect(trigger.outcomes[0]).toMatchObject({ deleted: [], error: 'boom' })
    expect(trigger.outcomes[0]?.kept).toHaveLength(batches[0]!.length)
    expect(trigger.outcomes[1]?.deleted).toEqual([])
    expect(trigger.outcomes[1]?.kept).toHaveLength(batches[1]!.length)
  })

  it('deletes everything without ReportBatchItemFailures, whatever the answer', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('noreport'), shortDecl(false))
    const { trigger } = startTrigger(q, (e) => ({ batchItemFailures: e.Records.map((r) => ({ itemIdentifier: r.messageId })) }), 10, false)
    await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'z' }))
    while (trigger.outcomes.length === 0) await trigger.drain()
    expect(trigger.outcomes[0]?.deleted).toHaveLength(1)
    expect(trigger.outcomes[0]?.kept).toEqual([])
  })

  it('honours the batch size and delivers a FIFO group in order, one share per invocation like the recovery worker', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('order'), shortDecl(true, 3))
    const { trigger, batches } = startTrigger(q, () => ({ batchItemFailures: [] }), 1)
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [0, 1, 2, 3].map((i) => ({ Id: String(i), MessageBody: `s${i}`, MessageGroupId: 'run', MessageDeduplicationId: `run.${i}` })) }))
    while (batches.length < 4) await trigger.drain()
    expect(batches).toEqual([['s0'], ['s1'], ['s2'], ['s3']])
  })
})

describe('the recovery worker behind the trigger', () => {
  it('a share that keeps failing is delivered maxReceiveCount times, reported failed each time, then kept in the dead-letter queue', async () => {
    const { handler } = await import('../../../functions/recover-worker/handler')
    const decl = { ...queues.recoverRuns, visibilityTimeoutSeconds: 1 }
    const q = await createDeclaredQueue(sqs, uniquePrefix('worker'), decl)
    const deliveries: string[] = []
    const answers: unknown[] = []
    const trigger = new QueueTrigger({
      id: 'recoverWorker-recoverRuns',
      sqs,
      queueUrl: q.url,
      queueArn: q.arn,
      batchSize: 1, // as declared in queueTriggers
      reportBatchItemFailures: true,
      invoke: async (e) => {
        deliveries.push(e.Records[0]!.attributes.ApproximateReceiveCount)
        const answer = await handler(e)
        answers.push(answer)
        return answer
      },
    })
    running.push(trigger)
    const body = JSON.stringify({ runId: 'run-x', share: 0, selection: {}, source: 'nowhere' })
    await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: body, MessageGroupId: 'run-x', MessageDeduplicationId: 'run-x.0' }))
    trigger.start()
    let dead: { body: string; count: string | undefined }[] = []
    while (dead.length === 0) {
      await trigger.drain()
      dead = await receiveAll(q.deadLetterUrl)
    }
    expect(deliveries).toEqual(Array.from({ length: queues.recoverRuns.maxReceiveCount }, (_, i) => String(i + 1)))
    expect(answers.every((a) => (a as { batchItemFailures: unknown[] }).batchItemFailures.length === 1)).toBe(true)
    expect(dead.map((m) => m.body)).toEqual([body])
  })
})

describe('QueueTrigger when the queue cannot be read', () => {
  it('logs, backs off and receives again: the message is delivered once the queue answers', async () => {
    const q = await createDeclaredQueue(sqs, uniquePrefix('flaky'), shortDecl(false))
    let failing = 2
    const flaky = { send: (cmd: Parameters<SQSClient['send']>[0]) => (cmd instanceof ReceiveMessageCommand && failing-- > 0 ? Promise.reject(new Error('connect ECONNREFUSED')) : sqs.send(cmd)) } as unknown as SQSClient
    const lines: string[] = []
    const pauses: number[] = []
    const bodies: string[] = []
    const trigger = new QueueTrigger({
      id: 'flaky',
      sqs: flaky,
      queueUrl: q.url,
      queueArn: q.arn,
      batchSize: 10,
      reportBatchItemFailures: true,
      invoke: async (e) => void bodies.push(...e.Records.map((r) => r.body)),
      log: (l) => lines.push(l),
      sleep: async (ms) => void pauses.push(ms),
    })
    running.push(trigger)
    await sqs.send(new SendMessageCommand({ QueueUrl: q.url, MessageBody: 'after the outage' }))
    trigger.start()
    while (bodies.length === 0) await trigger.drain()
    expect(bodies).toEqual(['after the outage'])
    expect(pauses).toEqual([250, 500])
    expect(lines[0]).toBe('flaky: receiving failed (connect ECONNREFUSED); again in 250 ms')
  })
})

describe('keptMessages', () => {
  const rec = (id: string, group?: string) => ({ messageId: id, attributes: group ? { MessageGroupId: group } : {} }) as unknown as SQSRecord
  const batch = [rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b')]
  const fail = (...ids: string[]) => ({ batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) })

  it('keeps the named failures; an empty or absent list is a success', () => {
    expect([...keptMessages(batch, fail('2'), true, false)]).toEqual(['2'])
    expect(keptMessages(batch, fail(), true, false).size).toBe(0)
    expect(keptMessages(batch, undefined, true, false).size).toBe(0)
    expect(keptMessages(batch, {}, true, false).size).toBe(0)
  })

  it('keeps the whole batch for an empty, unknown or malformed identifier', () => {
    expect(keptMessages(batch, fail(''), true, false).size).toBe(4)
    expect(keptMessages(batch, fail('9'), true, false).size).toBe(4)
    expect(keptMessages(batch, { batchItemFailures: [{ id: '1' }] }, true, false).size).toBe(4)
    expect(keptMessages(batch, { batchItemFailures: 'x' }, true, false).size).toBe(4)
  })

  it('on a FIFO queue keeps the messages after a failed one of the same group', () => {
    expect([...keptMessages(batch, fail('1'), true, true)].sort()).toEqual(['1', '3'])
    expect([...keptMessages(batch, fail('3'), true, true)]).toEqual(['3'])
  })
})
