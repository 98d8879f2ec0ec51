/**
 * A stack that starts its own emulators, as `npm start` does: `/metrics`
 * reports DynamoDB Local's Java process from /proc, and the emulators that run
 * inside the Floe process as part of it.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmulatorService, MetricsReport } from '../../../lib/core/metrics/report'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { TEST_CREDENTIALS, uniquePrefix, withAuth } from '../../support/stack'
import { parseExposition } from '../../unit/metrics/exposition'

let stack: LocalStack

beforeAll(async () => {
  stack = await startLocalStack({
    namePrefix: uniquePrefix(),
    triggers: false,
    environment: { FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password },
  })
}, 120_000)
afterAll(async () => {
  await stack?.stop()
})

describe('/metrics of a stack with its own emulators', () => {
  it('reads DynamoDB Local\'s process from /proc; kinesis, s3 and postgres are part of the Floe process', async () => {
    await fetch(`${stack.url}/registry-server/api/meta/health`) // some DynamoDB work
    const r = await fetch(`${stack.url}/metrics`, { headers: withAuth() })
    expect(r.status).toBe(200)
    const report = (await r.json()) as MetricsReport
    const dynamodb = report.services.dynamodb as EmulatorService
    expect(dynamodb.runsIn).toBe('child')
    const p = dynamodb.process!
    expect(p.pid).not.toBe(process.pid)
    expect(readFileSync(`/proc/${p.pid}/cmdline`, 'utf8')).toContain('DynamoDBLocal.jar')
    expect(p.command).toBe('DynamoDB Local (java)')
    expect(p.cpu.userSeconds).toBeGreaterThan(0)
    expect(p.memory.rssBytes).toBeGreaterThan(10 * 1024 * 1024)
    expect(p.memory.peakRssBytes).toBeGreaterThanOrEqual(p.memory.rssBytes)
    expect(p.threads).toBeGreaterThan(1)
    expect(p.uptimeSeconds).toBeGreaterThan(0)
    expect(p.uptimeSeconds).toBeLessThan(600)
    expect(p.io === null || p.io.writtenBytes > 0).toBe(true)
    for (const k of ['kinesis', 's3', 'postgres']) expect(report.services[k]).toEqual({ kind: 'emulator', runsIn: 'floe', process: null })
    expect(report.notes.join(' ')).toMatch(/kinesis, s3, postgres run inside the Floe process/)

    const text = await (await fetch(`${stack.url}/metrics?format=prometheus`, { headers: withAuth() })).text()
    const rss = parseExposition(text).samples.find((s) => s.name === 'floe_process_resident_memory_bytes' && s.labels.process === 'dynamodb')
    expect(rss).toMatchObject({ labels: { pid: String(p.pid) } })
  })
})
