/**
 * Stopping the stream emulator with requests in flight: its leveldb store is
 * closed only once they are answered (kinesalite's own close closes the store
 * first, and a request still running then throws `cannot call iterator()
 * before open()` outside any callback, killing the process).
 */
import { CreateStreamCommand, KinesisClient } from '@aws-sdk/client-kinesis'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startKinesalite } from '../../../lib/local/emulators'

const dataDir = mkdtempSync(join(tmpdir(), 'floe-kinesalite-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('the stream emulator on a data directory', () => {
  it('stops with requests in flight: each is answered or refused, and nothing throws', async () => {
    const k = await startKinesalite({ dataDir }, '127.0.0.1')
    const kinesis = new KinesisClient({ endpoint: k.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() })
    await kinesis.send(new CreateStreamCommand({ StreamName: 'warm', ShardCount: 1 }))
    // Stream creations take a lock in turn: once the first is answered, the others are in flight.
    let first!: () => void
    const answered = new Promise<void>((r) => (first = r))
    const calls = Array.from({ length: 30 }, (_, i) =>
      kinesis.send(new CreateStreamCommand({ StreamName: `s${i}`, ShardCount: 1 })).then(
        () => (first(), 'created'),
        (err: Error) => (first(), err.name),
      ),
    )
    await answered
    await k.stop()
    const outcomes = await Promise.all(calls)
    expect(outcomes).toContain('created')
    for (const o of outcomes) expect(['created', 'ServiceUnavailable', 'ServiceUnavailableException', 'TimeoutError', 'Error']).toContain(o)
    kinesis.destroy()
  })
})
