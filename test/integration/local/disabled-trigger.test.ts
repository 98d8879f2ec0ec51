import { PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stacks: LocalStack[] = []
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.stop()))
})

async function start(prefix: string, licence: string): Promise<LocalStack> {
  const s = await startLocalStack({
    endpoints: sharedEndpoints(),
    namePrefix: prefix,
    pollIntervalMs: 50,
    retryDelayMs: 10,
    triggerOverrides: { maxBatchingWindowSeconds: 0 },
    environment: { ACCEPT_LIMITED_USE_LICENSE: licence },
  })
  stacks.push(s)
  return s
}

describe('a function that cannot run', () => {
  it('keeps its trigger stopped, so records wait in the stream until it can run', async () => {
    const prefix = uniquePrefix()
    const without = await start(prefix, '')
    expect(without.disabledTriggers.get('enrich-raw')).toMatch(/licence/)
    expect(without.triggers.has('enrich-raw')).toBe(false)
    expect(without.triggers.has('archive-raw')).toBe(true)
    const health = await fetch(`${without.url}/health`)
    // Deliberate, not a fault: the stack takes events, which wait.
    expect(health.status).toBe(200)
    expect(await health.text()).toContain('enrich-raw is off on purpose since')

    const payload = encodeCollectorPayload({
      schema: COLLECTOR_PAYLOAD_SCHEMA,
      ipAddress: '10.0.0.1',
      timestamp: Date.now(),
      encoding: 'UTF-8',
      collector: 'test',
      path: '/i',
      querystring: 'e=pv&url=http%3A%2F%2Fexample.com%2F&p=web&tv=js-4.0.0&eid=7f3c0f1e-6d1a-4b8e-9c1d-1f2e3d4c5b6a',
      networkUserId: '9d4a0ab3-6a0b-4b33-9e88-5f6f7c2e1e11',
    })
    await testClients().kinesis.send(new PutRecordsCommand({ StreamName: without.names.streams.raw, Records: [{ Data: payload, PartitionKey: 'p' }] }))
    await without.drain()
    expect(await readTexts(testClients().kinesis, without.names.streams.good)).toEqual([])
    await without.stop()
    stacks.pop()

    const withLicence = await start(prefix, 'yes')
    expect(withLicence.disabledTriggers.size).toBe(0)
    // The first stack's line went with it.
    expect(await (await fetch(`${withLicence.url}/health`)).text()).toBe('ok')
    await withLicence.drain()
    const good = await readTexts(testClients().kinesis, withLicence.names.streams.good)
    expect(good).toHaveLength(1)
    expect(good[0]).toContain('7f3c0f1e-6d1a-4b8e-9c1d-1f2e3d4c5b6a')
  }, 90_000)
})
