/**
 * Records written by a function of the stack's process are read at once by
 * the triggers of their stream, not at the next poll: `wake()` ends a shard's
 * wait for its next poll (also a wake that comes while a read is in flight),
 * and in the stack the collector's writes wake enrich's trigger and enrich's
 * writes the loaders', so an event reaches the search store with polls a
 * minute apart.
 */
import { CreateStreamCommand, DescribeStreamSummaryCommand, GetRecordsCommand, PutRecordsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { streamTriggerDefaults } from '../../../lib/infra/functions'
import { MemoryCheckpointStore } from '../../../lib/local/checkpoints'
import { StreamTrigger } from '../../../lib/local/stream-trigger'
import { testClients, uniquePrefix, useLocalStack, withAuth } from '../../support/stack'

const { kinesis } = testClients()
const MINUTE = 60_000

async function newStream(): Promise<string> {
  const name = uniquePrefix('w')
  await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }))
  for (;;) {
    const { StreamDescriptionSummary: s } = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: name }))
    if (s?.StreamStatus === 'ACTIVE') return name
  }
}

const running: StreamTrigger[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((t) => t.stop()))
})

/**
 * The Kinesis client, with its reads held when asked: `holdReads()` makes the
 * next read reach the stream, then wait before its answer is returned.
 */
function holdingClient() {
  let hold: { read: () => void; release: Promise<void> } | undefined
  const client = {
    send: async (command: unknown) => {
      const out = await kinesis.send(command as never)
      const h = hold
      if (command instanceof GetRecordsCommand && h) {
        hold = undefined
        h.read()
        await h.release
      }
      return out
    },
  } as unknown as KinesisClient
  const holdReads = () => {
    let read!: () => void
    let release!: () => void
    const wasRead = new Promise<void>((r) => (read = r))
    hold = { read, release: new Promise<void>((r) => (release = r)) }
    return { wasRead, release }
  }
  return { client, holdReads }
}

/** A trigger polling a new stream once a minute; `next()` resolves with the next batch it delivers. */
async function slowTrigger() {
  const stream = await newStream()
  const { client, holdReads } = holdingClient()
  const delivered: string[][] = []
  const waiting: ((b: string[]) => void)[] = []
  const trigger = new StreamTrigger({
    id: 'wake-test',
    kinesis: client,
    streamName: stream,
    functionName: 'test',
    settings: { ...streamTriggerDefaults, maxBatchingWindowSeconds: 0 },
    checkpoints: new MemoryCheckpointStore(),
    invoke: async (e) => {
      const b = e.Records.map((r) => Buffer.from(r.kinesis.data, 'base64').toString())
      delivered.push(b)
      waiting.shift()?.(b)
    },
    writeFailure: async () => {},
    pollIntervalMs: MINUTE,
  })
  await trigger.start()
  running.push(trigger)
  // its first read found nothing: it now waits a minute for the next
  await trigger.drain()
  const put = async (v: string) => {
    const out = await kinesis.send(new PutRecordsCommand({ StreamName: stream, Records: [{ Data: Buffer.from(v), PartitionKey: 'k' }] }))
    expect(out.FailedRecordCount).toBe(0)
  }
  return { trigger, put, holdReads, delivered, next: () => new Promise<string[]>((resolve) => waiting.push(resolve)) }
}

describe('waking stream triggers', () => {
  it('wake() reads now instead of at the next poll', async () => {
    const t = await slowTrigger()
    await t.put('a')
    const next = t.next()
    t.trigger.wake()
    expect(await next).toEqual(['a'])
    // and again, once idle
    await t.trigger.drain()
    await t.put('b')
    const again = t.next()
    t.trigger.wake()
    expect(await again).toEqual(['b'])
  }, 20_000)

  it('a wake while a read is in flight is not lost: the shard reads again instead of waiting for the poll', async () => {
    const t = await slowTrigger()
    const next = t.next()
    // a read reaches the stream (finding nothing) and is held before it answers
    const held = t.holdReads()
    const drained = t.trigger.drain()
    await held.wasRead
    // the record comes after that read; the wake comes while the read is in flight
    await t.put('c')
    t.trigger.wake()
    held.release()
    await drained
    expect(await next).toEqual(['c'])
  }, 20_000)
})

describe('the stack wakes the triggers of what its functions wrote', () => {
  const stack = useLocalStack({ pollIntervalMs: MINUTE, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

  it('an event sent to the collector is in the search store long before the next poll', async () => {
    const s = stack.current
    // every trigger has made its first read and waits a minute for the next
    await s.drain()
    const eid = randomUUID()
    const sent = await fetch(`${s.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'test-1', aid: 'woken', eid }] }),
    })
    expect(sent.status).toBe(200)
    const t0 = Date.now()
    const r = await fetch(`${s.url}/micro/wait`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify({ filters: [{ column: 'event_id', values: [eid] }], timeout: 25_000 }) })
    expect(await r.json()).toMatchObject({ complete: true, total: 1 })
    expect(Date.now() - t0).toBeLessThan(MINUTE / 2)
  }, 60_000)
})
