import type { KinesisClient } from '@aws-sdk/client-kinesis'
import { describe, expect, it } from 'vitest'
import { chunkRecords, CoalescingKinesisWriter, KinesisWriteError, KinesisWriter, MAX_BYTES_PER_CALL, type KinesisRecord } from '../../../lib/aws/kinesis-writer'

type Answer = (records: { PartitionKey: string; Data: Uint8Array }[]) => { FailedRecordCount: number; Records: { ErrorCode?: string; ErrorMessage?: string; SequenceNumber?: string }[] }

function fakeClient(answers: (Answer | Error)[]) {
  const calls: { StreamName: string; Records: { PartitionKey: string; Data: Uint8Array }[] }[] = []
  const client = {
    async send(cmd: { input: { StreamName: string; Records: { PartitionKey: string; Data: Uint8Array }[] } }) {
      calls.push(cmd.input)
      const a = answers.shift() ?? ok
      if (a instanceof Error) throw a
      return a(cmd.input.Records)
    },
  } as unknown as KinesisClient
  return { client, calls }
}
const ok: Answer = (rs) => ({ FailedRecordCount: 0, Records: rs.map((_, i) => ({ SequenceNumber: String(i) })) })
const failing = (code: string, which: (i: number) => boolean): Answer => (rs) => {
  const Records = rs.map((_, i) => (which(i) ? { ErrorCode: code, ErrorMessage: `${code} on ${i}` } : { SequenceNumber: String(i) }))
  return { FailedRecordCount: Records.filter((r) => r.ErrorCode).length, Records }
}
const rec = (i: number, size = 10): KinesisRecord => ({ partitionKey: `k${i}`, data: Buffer.alloc(size, i % 256) })
const awsError = (name: string, status: number) => Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status } })

function writerWith(client: KinesisClient) {
  const sleeps: number[] = []
  const writer = new KinesisWriter(client, {
    retry: { baseDelayMs: 10, maxDelayMs: 40, maxAttempts: 4 },
    throttled: { baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 6 },
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.999,
  })
  return { writer, sleeps }
}

describe('Kinesis writer', () => {
  it('chunks at 500 records and 5 MiB, keeping order', () => {
    expect(chunkRecords(Array.from({ length: 1201 }, (_, i) => rec(i))).map((c) => c.length)).toEqual([500, 500, 201])
    const big = Array.from({ length: 12 }, (_, i) => rec(i, 1_000_000))
    const chunks = chunkRecords(big)
    expect(chunks.map((c) => c.length)).toEqual([5, 5, 2])
    for (const c of chunks) expect(c.reduce((n, r) => n + r.data.length + r.partitionKey.length, 0)).toBeLessThanOrEqual(MAX_BYTES_PER_CALL)
    expect(chunks.flat()).toEqual(big)
  })

  it('writes every chunk', async () => {
    const { client, calls } = fakeClient([])
    await writerWith(client).writer.write('s', Array.from({ length: 1001 }, (_, i) => rec(i)))
    expect(calls.map((c) => c.Records.length)).toEqual([500, 500, 1])
    expect(calls.every((c) => c.StreamName === 's')).toBe(true)
  })

  it('retries only the records that failed, with growing jittered delays', async () => {
    const { client, calls } = fakeClient([failing('InternalFailure', (i) => i % 2 === 0), failing('InternalFailure', (i) => i === 0), ok])
    const { writer, sleeps } = writerWith(client)
    await writer.write('s', [rec(0), rec(1), rec(2), rec(3)])
    expect(calls.map((c) => c.Records.map((r) => r.PartitionKey))).toEqual([['k0', 'k1', 'k2', 'k3'], ['k0', 'k2'], ['k0']])
    expect(sleeps).toEqual([9, 19])
  })

  it('uses the slower policy for throttled records', async () => {
    const { client } = fakeClient([failing('ProvisionedThroughputExceededException', () => true), failing('ProvisionedThroughputExceededException', () => true), ok])
    const { writer, sleeps } = writerWith(client)
    await writer.write('s', [rec(0)])
    expect(sleeps).toEqual([99, 199])
  })

  it('gives up with a clear error naming what was lost', async () => {
    const { client, calls } = fakeClient([failing('InternalFailure', (i) => i === 1), ...Array.from({ length: 9 }, () => failing('InternalFailure', () => true))])
    const { writer, sleeps } = writerWith(client)
    const err = await writer.write('events', [rec(0), rec(1), rec(2)]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KinesisWriteError)
    const e = err as KinesisWriteError
    expect(e.message).toBe("Could not write 1 of 3 record(s) to Kinesis stream 'events' after 4 attempt(s): InternalFailure: InternalFailure on 0")
    expect(e.failed.map((f) => f.record.partitionKey)).toEqual(['k1'])
    expect(calls).toHaveLength(4)
    expect(sleeps).toHaveLength(3)
  })

  it('retries transient call failures, but not permanent ones', async () => {
    const transient = fakeClient([awsError('InternalFailure', 500), Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), ok])
    await writerWith(transient.client).writer.write('s', [rec(0)])
    expect(transient.calls).toHaveLength(3)

    const missing = fakeClient([awsError('ResourceNotFoundException', 400)])
    const err = (await writerWith(missing.client).writer.write('gone', [rec(0), rec(1)]).catch((e: unknown) => e)) as KinesisWriteError
    expect(err).toBeInstanceOf(KinesisWriteError)
    expect(err.message).toMatch(/^Could not write 2 of 2 record\(s\) to Kinesis stream 'gone' after 1 attempt\(s\): ResourceNotFoundException/)
    expect(missing.calls).toHaveLength(1)
  })

  it('refuses records over 1 MiB without calling Kinesis', async () => {
    const { client, calls } = fakeClient([])
    await expect(writerWith(client).writer.write('s', [rec(0, 1024 * 1024 + 1)])).rejects.toThrow(/exceeds the 1 MiB limit/)
    expect(calls).toEqual([])
  })
})

describe('coalescing writer', () => {
  it('a lone write goes out at once; concurrent writes share calls; each promise settles with its own records', async () => {
    const gates: (() => void)[] = []
    const calls: string[][] = []
    const client = {
      async send(cmd: { input: { Records: { PartitionKey: string }[] } }) {
        calls.push(cmd.input.Records.map((r) => r.PartitionKey))
        await new Promise<void>((resolve) => gates.push(resolve))
        return ok(cmd.input.Records as never)
      },
    } as unknown as KinesisClient
    const { writer } = writerWith(client)
    const c = new CoalescingKinesisWriter(writer, { maxInFlight: 1 })
    const first = c.write('s', [rec(0)])
    expect(calls).toEqual([['k0']])
    const rest = [c.write('s', [rec(1)]), c.write('s', [rec(2), rec(3)]), c.write('s', [rec(4)])]
    expect(calls).toHaveLength(1)
    gates.shift()!()
    await first
    await Promise.resolve()
    expect(calls).toEqual([['k0'], ['k1', 'k2', 'k3', 'k4']])
    gates.shift()!()
    await Promise.all(rest)
  })

  it('only the callers whose records failed are rejected, each with its own records', async () => {
    let n = 0
    const client = {
      async send(cmd: { input: { Records: { PartitionKey: string; Data: Uint8Array }[] } }) {
        n++
        if (n === 1) {
          await new Promise((resolve) => setImmediate(resolve))
          return ok(cmd.input.Records)
        }
        return failing('InternalFailure', (i) => cmd.input.Records[i]!.PartitionKey === 'k2')(cmd.input.Records)
      },
    } as unknown as KinesisClient
    const { writer } = writerWith(client)
    const c = new CoalescingKinesisWriter(writer, { maxInFlight: 1 })
    const first = c.write('s', [rec(0)])
    const a = c.write('s', [rec(1)])
    const b = c.write('s', [rec(2), rec(3)])
    await first
    await a
    const err = (await b.catch((e: unknown) => e)) as KinesisWriteError
    expect(err).toBeInstanceOf(KinesisWriteError)
    expect(err.failed.map((f) => f.record.partitionKey)).toEqual(['k2'])
    expect(err.total).toBe(2)
  })

  it('a writer error that is not about records rejects the whole call', async () => {
    const client = { send: async () => { throw new TypeError('boom') } } as unknown as KinesisClient
    const c = new CoalescingKinesisWriter(writerWith(client).writer)
    await expect(c.write('s', [rec(0)])).rejects.toThrow()
  })
})

describe('writer across chunks', () => {
  it('attempts every chunk and reports exactly the records not written', async () => {
    const missingOnce: (Answer | Error)[] = [awsError('ResourceNotFoundException', 400), ok]
    const { client, calls } = fakeClient(missingOnce)
    const err = (await writerWith(client).writer.write('s', Array.from({ length: 600 }, (_, i) => rec(i))).catch((e: unknown) => e)) as KinesisWriteError
    expect(calls.map((c) => c.Records.length)).toEqual([500, 100])
    expect(err.failed).toHaveLength(500)
    expect(err.total).toBe(600)
    expect(err.message).toMatch(/^Could not write 500 of 600 record/)
  })
})
