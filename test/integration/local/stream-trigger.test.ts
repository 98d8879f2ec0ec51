import { CreateStreamCommand, DescribeStreamSummaryCommand, PutRecordsCommand } from '@aws-sdk/client-kinesis'
import type { KinesisStreamEvent } from 'aws-lambda'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { streamTriggerDefaults, type StreamTriggerSettings } from '../../../lib/infra/functions'
import { FileCheckpointStore, MemoryCheckpointStore, type CheckpointStore } from '../../../lib/local/checkpoints'
import { StreamTrigger, type FailureDocument } from '../../../lib/local/stream-trigger'
import { downDependencies } from '../../../lib/runtime/dependencies'
import { FunctionSetupError } from '../../../lib/runtime/setup-error'
import { eventually } from '../../support/process'
import { testClients, uniquePrefix } from '../../support/stack'

const { kinesis } = testClients()

async function newStream(shards = 1): Promise<string> {
  const name = uniquePrefix('s')
  await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: shards }))
  for (;;) {
    const { StreamDescriptionSummary: s } = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: name }))
    if (s?.StreamStatus === 'ACTIVE') return name
  }
}

async function put(stream: string, values: string[]): Promise<void> {
  const out = await kinesis.send(
    new PutRecordsCommand({ StreamName: stream, Records: values.map((v) => ({ Data: Buffer.from(v), PartitionKey: 'k' })) }),
  )
  expect(out.FailedRecordCount).toBe(0)
}

const payloads = (e: KinesisStreamEvent) => e.Records.map((r) => Buffer.from(r.kinesis.data, 'base64').toString())

interface Harness {
  trigger: StreamTrigger
  batches: string[][]
  failures: FailureDocument[]
  checkpoints: CheckpointStore
}

const running: StreamTrigger[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.stop()))
})

async function startTrigger(
  stream: string,
  handler: (values: string[], event: KinesisStreamEvent) => unknown,
  settings: Partial<StreamTriggerSettings> = {},
  checkpoints: CheckpointStore = new MemoryCheckpointStore(),
): Promise<Harness> {
  const batches: string[][] = []
  const failures: FailureDocument[] = []
  const trigger = new StreamTrigger({
    id: 'test-mapping',
    kinesis,
    streamName: stream,
    functionName: 'test',
    settings: { ...streamTriggerDefaults, maxBatchingWindowSeconds: 0, ...settings },
    checkpoints,
    invoke: async (event) => {
      const values = payloads(event)
      batches.push(values)
      return handler(values, event)
    },
    writeFailure: async (doc) => {
      failures.push(doc)
    },
    pollIntervalMs: 20,
    retryDelayMs: 1,
  })
  await trigger.start()
  running.push(trigger)
  return { trigger, batches, failures, checkpoints }
}

const seqOf = (e: KinesisStreamEvent, value: string) =>
  e.Records.find((r) => Buffer.from(r.kinesis.data, 'base64').toString() === value)!.kinesis.sequenceNumber

describe('stream trigger (Kinesis event source mapping emulator)', () => {
  it('delivers every record once, in order, in batches of at most batchSize, and checkpoints the last', async () => {
    const stream = await newStream()
    const values = Array.from({ length: 25 }, (_, i) => `r${i}`)
    await put(stream, values)
    let lastSeq = ''
    const h = await startTrigger(stream, (_v, e) => {
      lastSeq = e.Records.at(-1)!.kinesis.sequenceNumber
    }, { batchSize: 10 })
    await h.trigger.drain()
    expect(h.batches.flat()).toEqual(values)
    expect(Math.max(...h.batches.map((b) => b.length))).toBeLessThanOrEqual(10)
    expect(h.checkpoints.get('test-mapping', 'shardId-000000000000')).toBe(lastSeq)
  })

  it('waits for the batching window to fill a batch', async () => {
    const stream = await newStream()
    const h = await startTrigger(stream, () => undefined, { batchSize: 100, maxBatchingWindowSeconds: 1 })
    await put(stream, ['a', 'b'])
    await put(stream, ['c'])
    await h.trigger.drain()
    // Records arriving within one window go out together.
    expect(h.batches).toEqual([['a', 'b', 'c']])
  })

  it('on a partial failure, checkpoints before the lowest failed record and retries from it', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'b', 'c', 'd', 'e'])
    const checkpoints = new MemoryCheckpointStore()
    const seen: { values: string[]; checkpoint?: string }[] = []
    const seq: Record<string, string> = {}
    let failuresLeft = 2
    const h = await startTrigger(
      stream,
      (values, event) => {
        seen.push({ values, checkpoint: checkpoints.get('test-mapping', 'shardId-000000000000') })
        for (const v of values) seq[v] = seqOf(event, v)
        if (failuresLeft-- > 0) {
          // Report e and c: the lowest (c) decides where the retry starts.
          return { batchItemFailures: [{ itemIdentifier: seq.e }, { itemIdentifier: seq.c }] }
        }
        return { batchItemFailures: [] }
      },
      {},
      checkpoints,
    )
    await h.trigger.drain()
    expect(seen.map((s) => s.values)).toEqual([
      ['a', 'b', 'c', 'd', 'e'],
      ['c', 'd', 'e'],
      ['c', 'd', 'e'],
    ])
    // While c was failing, the checkpoint stood at b: never past a failed record.
    expect(seen[1]!.checkpoint).toBe(seq.b)
    expect(seen[2]!.checkpoint).toBe(seq.b)
    expect(checkpoints.get('test-mapping', 'shardId-000000000000')).toBe(seq.e)
    expect(h.failures).toEqual([])
  })

  it('treats an unknown or empty itemIdentifier as a failure of the whole batch', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'b'])
    let calls = 0
    const h = await startTrigger(stream, () => (++calls === 1 ? { batchItemFailures: [{ itemIdentifier: '' }] } : undefined), { bisectBatchOnError: false })
    await h.trigger.drain()
    expect(h.batches).toEqual([['a', 'b'], ['a', 'b']])
  })

  it('bisects a batch with a poison record, retries it, then records it at the failure location and moves on', async () => {
    const stream = await newStream()
    const values = ['a', 'b', 'c', 'poison', 'e', 'f', 'g', 'h']
    await put(stream, values)
    const processed: string[] = []
    const h = await startTrigger(
      stream,
      (vs) => {
        if (vs.includes('poison')) throw new Error('cannot handle poison')
        processed.push(...vs)
      },
      { retryAttempts: 2 },
    )
    await h.trigger.drain()
    expect(processed).toEqual(['a', 'b', 'c', 'e', 'f', 'g', 'h'])
    // 8 → 4 → 2 → 1 by bisection, then the single record is tried 1 + 2 times.
    expect(h.batches.filter((b) => b.length === 1 && b[0] === 'poison')).toHaveLength(3)
    expect(h.failures).toHaveLength(1)
    const doc = JSON.parse(h.failures[0]!.body)
    expect(doc.requestContext.condition).toBe('RetryAttemptsExhausted')
    expect(doc.KinesisBatchInfo.batchSize).toBe(1)
    expect(payloads(JSON.parse(doc.payload))).toEqual(['poison'])
    expect(h.failures[0]!.key).toMatch(/^aws\/lambda\/test-mapping\/shardId-000000000000\/\d{4}\/\d{2}\/\d{2}\//)
  })

  it('without bisection, retries the whole batch and records all of it', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'poison'])
    const h = await startTrigger(stream, (vs) => {
      if (vs.includes('poison')) throw new Error('boom')
    }, { bisectBatchOnError: false, retryAttempts: 1 })
    await h.trigger.drain()
    expect(h.batches).toEqual([['a', 'poison'], ['a', 'poison']])
    expect(payloads(JSON.parse(JSON.parse(h.failures[0]!.body).payload))).toEqual(['a', 'poison'])
  })

  it('does not lose a batch when the failure location cannot be written: it is retried from the checkpoint', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'poison', 'c'])
    let failureWrites = 0
    const batches: string[][] = []
    const trigger = new StreamTrigger({
      id: 'm',
      kinesis,
      streamName: stream,
      functionName: 'test',
      settings: { ...streamTriggerDefaults, maxBatchingWindowSeconds: 0, bisectBatchOnError: false, retryAttempts: 0 },
      checkpoints: new MemoryCheckpointStore(),
      invoke: async (e) => {
        const vs = payloads(e)
        batches.push(vs)
        if (vs.includes('poison')) throw new Error('boom')
      },
      writeFailure: async () => {
        if (++failureWrites === 1) throw new Error('S3 is down')
      },
      pollIntervalMs: 20,
      retryDelayMs: 1,
    })
    await trigger.start()
    running.push(trigger)
    await trigger.drain()
    expect(batches).toEqual([['a', 'poison', 'c'], ['a', 'poison', 'c']])
    expect(failureWrites).toBe(2)
  })

  it('sends records older than maxRecordAge to the failure location without invoking', async () => {
    const stream = await newStream()
    await put(stream, ['old'])
    const h = await startTrigger(stream, () => undefined, { maxRecordAgeSeconds: 0 })
    await h.trigger.drain()
    expect(h.batches).toEqual([])
    expect(JSON.parse(h.failures[0]!.body).requestContext.condition).toBe('RecordAgeExceeded')
  })

  it('resumes from the durable checkpoint after a restart, reprocessing nothing already checkpointed', async () => {
    const stream = await newStream(2)
    const dir = mkdtempSync(join(tmpdir(), 'floe-cp-'))
    try {
      const file = join(dir, 'checkpoints.json')
      await put(stream, ['a', 'b', 'c'])
      const first = await startTrigger(stream, () => undefined, {}, new FileCheckpointStore(file))
      await first.trigger.drain()
      await first.trigger.stop()
      await put(stream, ['d', 'e'])
      const second = await startTrigger(stream, () => undefined, {}, new FileCheckpointStore(file))
      await second.trigger.drain()
      expect(first.batches.flat()).toEqual(['a', 'b', 'c'])
      expect(second.batches.flat()).toEqual(['d', 'e'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('redelivers a batch whose invocation never completed (stopped mid-retry): at least once', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'b'])
    const checkpoints = new MemoryCheckpointStore()
    let release!: () => void
    const blocked = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const inHandler = new Promise<void>((r) => (entered = r))
    const first = await startTrigger(stream, async () => {
      entered()
      await blocked
      throw new Error('crashed')
    }, { bisectBatchOnError: false, retryAttempts: -1 }, checkpoints)
    await inHandler
    const stopping = first.trigger.stop()
    release()
    await stopping
    expect(checkpoints.get('test-mapping', 'shardId-000000000000')).toBeUndefined()
    const second = await startTrigger(stream, () => undefined, {}, checkpoints)
    await second.trigger.drain()
    expect(second.batches.flat()).toEqual(['a', 'b'])
  })

  it('starts AT_TIMESTAMP: records that arrived before the timestamp are not delivered', async () => {
    const stream = await newStream()
    await put(stream, ['before-1', 'before-2'])
    // arrival times are kept in milliseconds: step past the last one
    await new Promise((r) => setTimeout(r, 20))
    const at = Date.now()
    await new Promise((r) => setTimeout(r, 20))
    await put(stream, ['after-1', 'after-2'])
    const h = await startTrigger(stream, () => undefined, { startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp: at / 1000 })
    await h.trigger.drain()
    expect(h.batches.flat()).toEqual(['after-1', 'after-2'])
  })

  it('a function that cannot set itself up pauses the trigger: no retry is spent, nothing is given up on or checkpointed, /health names it until it works', async () => {
    const stream = await newStream()
    await put(stream, ['a', 'b'])
    let broken = true
    const h = await startTrigger(stream, () => {
      if (broken) throw new FunctionSetupError('the configuration is unusable')
    }, { retryAttempts: 2 })
    // Many more attempts than the two retries a record failure gets.
    const line = await eventually(async () => {
      const d = downDependencies().find((x) => x.component === 'test-mapping (shardId-000000000000)')
      return d && h.batches.length >= 6 ? d : undefined
    }, 'the trigger to be named down after several attempts')
    expect(line.reason).toMatch(/^test: configuration cannot be loaded \(tried \d+ times\): the configuration is unusable; records wait in the stream$/)
    expect(h.failures).toEqual([])
    expect(h.checkpoints.get('test-mapping', 'shardId-000000000000')).toBeUndefined()
    expect(new Set(h.batches.map((b) => b.join()))).toEqual(new Set(['a,b'])) // never bisected
    broken = false
    await h.trigger.drain()
    expect(h.batches.at(-1)).toEqual(['a', 'b'])
    expect(h.failures).toEqual([])
    expect(h.checkpoints.get('test-mapping', 'shardId-000000000000')).toBeDefined()
    expect(downDependencies()).toEqual([])
  })

  it('a function that fails batch after batch is named on /health with its last error, until an invocation succeeds', async () => {
    const stream = await newStream()
    await put(stream, ['a'])
    let failing = true
    let n = 0
    const h = await startTrigger(stream, () => {
      if (failing) throw new Error(`boom ${++n}`)
    }, { retryAttempts: -1, maxRecordAgeSeconds: -1 })
    const line = await eventually(async () => downDependencies().find((x) => x.component === 'test-mapping (shardId-000000000000)'), 'the trigger to be named down')
    expect(line.reason).toMatch(/^test fails every batch \(\d+ failed invocations in a row\); last error: boom \d+$/)
    failing = false
    await h.trigger.drain()
    expect(h.failures).toEqual([])
    expect(downDependencies()).toEqual([])
  })
})
