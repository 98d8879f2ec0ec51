import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseTailArgs, runTail } from '../../../lib/cli/tail'
import { CreateStreamCommand, PutRecordCommand, SplitShardCommand, waitUntilStreamExists } from '@aws-sdk/client-kinesis'
import { testClients, uniquePrefix, useLocalStack } from '../../support/stack'

const stack = useLocalStack({ triggers: false })
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'floe-tail-'))
  const prefix = stack.current.names.streams.raw.replace(/-raw$/, '')
  writeFileSync(join(dir, 'endpoints.json'), JSON.stringify({ http: stack.current.url, ...stack.current.endpoints, namePrefix: prefix, pid: process.pid }))
  process.env.FLOE_DATA_DIR = dir
})
afterAll(() => {
  delete process.env.FLOE_DATA_DIR
  rmSync(dir, { recursive: true, force: true })
})

const send = (eid: string) => fetch(`${stack.current.url}/i?e=pv&eid=${eid}`).then((r) => expect(r.status).toBe(200))

describe('floe tail', () => {
  it('--from-start --count N --json prints decoded payloads from the oldest', async () => {
    await send('tail-1')
    await send('tail-2')
    const lines: string[] = []
    expect(await runTail(['raw', '--from-start', '--count', '2', '--json'], { out: (l) => lines.push(l) })).toBe(0)
    const payloads = lines.map((l) => JSON.parse(l))
    expect(payloads.map((p) => new URLSearchParams(p.querystring).get('eid')).sort()).toEqual(['tail-1', 'tail-2'])
    expect(payloads[0]).toMatchObject({ schema: 'iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-0', path: '/i', encoding: 'UTF-8' })
  })

  it('without --from-start follows new records; the text form is one summary per payload', async () => {
    const lines: string[] = []
    let ready!: () => void
    const started = new Promise<void>((r) => (ready = r))
    const done = runTail(['raw', '--count=1'], { out: (l) => lines.push(l), onReady: ready, pollMs: 20 })
    await started
    await send('tail-3')
    expect(await done).toBe(0)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z 127\.0\.0\.1 GET \/i\?e=pv&eid=tail-3  nuid=[0-9a-f-]{36}\n  user-agent: node$/)
  })

  it('stops when aborted', async () => {
    const controller = new AbortController()
    let ready!: () => void
    const started = new Promise<void>((r) => (ready = r))
    const done = runTail(['bad'], { out: () => {}, onReady: ready, signal: controller.signal, pollMs: 20 })
    await started
    controller.abort()
    expect(await done).toBe(0)
  })

  it('rejects bad arguments with a usage message', () => {
    expect(() => parseTailArgs([])).toThrow(/which stream\? One of: raw, good/)
    expect(() => parseTailArgs(['nope'])).toThrow(/unknown stream 'nope'/)
    expect(() => parseTailArgs(['raw', '--count', '0'])).toThrow(/--count needs a positive whole number/)
    expect(() => parseTailArgs(['raw', '--follow'])).toThrow(/unknown option '--follow'/)
    expect(parseTailArgs(['raw', '--json', '--from-start', '--count', '3'])).toEqual({ stream: 'raw', json: true, fromStart: true, count: 3 })
  })
})

describe('floe tail across a resharding', () => {
  it('follows the children of a shard that is split while it runs', async () => {
    const { kinesis } = testClients()
    const name = uniquePrefix('reshard')
    await kinesis.send(new CreateStreamCommand({ StreamName: name, ShardCount: 1 }))
    await waitUntilStreamExists({ client: kinesis, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { StreamName: name })
    const lines: string[] = []
    let ready!: () => void
    const started = new Promise<void>((r) => (ready = r))
    const done = runTail(['bad', '--count=3'], { out: (l) => lines.push(l), onReady: ready, pollMs: 20, kinesis, streamName: name })
    await started
    await kinesis.send(new PutRecordCommand({ StreamName: name, PartitionKey: 'a', Data: Buffer.from('{"n":1}') }))
    await kinesis.send(new SplitShardCommand({ StreamName: name, ShardToSplit: 'shardId-000000000000', NewStartingHashKey: (2n ** 127n).toString() }))
    await waitUntilStreamExists({ client: kinesis, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { StreamName: name })
    for (const [n, key] of [[2, 'a'], [3, 'zz']] as const) await kinesis.send(new PutRecordCommand({ StreamName: name, PartitionKey: key, Data: Buffer.from(`{"n":${n}}`) }))
    expect(await done).toBe(0)
    expect(lines.sort()).toEqual(['{"n":1}', '{"n":2}', '{"n":3}'])
  })
})
