/**
 * `floe logs --stack`: a deployed log group read with CloudWatch Logs'
 * `FilterLogEvents`, through the real SDK client, against a CloudWatch Logs
 * endpoint the test serves (there is no CloudWatch Logs emulator).
 */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { FOLLOW_OVERLAP_MS, lastEvents, runCloudLogs } from '../../../lib/cli/cloud-logs'
import { parseLogsArgs } from '../../../lib/cli/logs'
import { startCloudWatchLogsServer, type CloudWatchLogsServer } from '../../support/cloudwatch-logs-server'

const NOW = Date.parse('2026-06-01T12:00:00.000Z')
const GROUP = '/floe/FloeApp/enrich'
const line = (n: string) => JSON.stringify({ level: 'info', msg: n })

let server: CloudWatchLogsServer
let client: CloudWatchLogsClient

beforeAll(async () => {
  server = await startCloudWatchLogsServer({
    [GROUP]: [
      { timestamp: NOW - 3 * 86_400_000, message: `${line('three days ago')}\n` },
      { timestamp: NOW - 30 * 60_000, message: line('half an hour ago') },
      { timestamp: NOW - 60_000, message: line('a minute ago') },
      { timestamp: NOW - 5_000, message: line('five seconds ago') },
      { timestamp: NOW - 4_000, message: line('four seconds ago') },
      { timestamp: NOW - 3_000, message: line('three seconds ago') },
      { timestamp: NOW - 2_000, message: line('two seconds ago') },
      // later than the command's start: not among the last lines
      { timestamp: NOW + 60_000, message: line('in a minute') },
    ],
    '/floe/FloeApp/empty': [],
  })
  client = new CloudWatchLogsClient({ endpoint: server.url, region: 'eu-west-1', credentials: { accessKeyId: 'TESTKEY', secretAccessKey: 'secret' } })
})

afterAll(async () => {
  client.destroy()
  await server.close()
})

afterEach(() => {
  server.requests.length = 0
})

const msgs = (events: { message: string }[]) => events.map((e) => (JSON.parse(e.message) as { msg: string }).msg)

describe('the last lines of a deployed log group', () => {
  it('reads only the newest window when it holds N lines, following nextToken to its last page', async () => {
    const r = await lastEvents(client, GROUP, 4, NOW)
    expect(msgs(r.events)).toEqual(['five seconds ago', 'four seconds ago', 'three seconds ago', 'two seconds ago'])
    // the exact requests: the 5-minute window up to the start, in pages of 3
    expect(server.requests.map((q) => q.body)).toEqual([
      { logGroupName: GROUP, startTime: NOW - 300_000, endTime: NOW },
      { logGroupName: GROUP, startTime: NOW - 300_000, endTime: NOW, nextToken: '3' },
    ])
    expect(server.requests[0]).toMatchObject({ target: 'Logs_20140328.FilterLogEvents', contentType: 'application/x-amz-json-1.1', accessKeyId: 'TESTKEY', region: 'eu-west-1', service: 'logs' })
  })

  it('looks further back, window by window without overlap, until it has N lines or reaches the beginning', async () => {
    const r = await lastEvents(client, GROUP, 7, NOW)
    expect(msgs(r.events)).toEqual(['three days ago', 'half an hour ago', 'a minute ago', 'five seconds ago', 'four seconds ago', 'three seconds ago', 'two seconds ago'])
    const windows = server.requests.filter((q) => q.body.nextToken === undefined).map((q) => [q.body.startTime, q.body.endTime])
    expect(windows).toEqual([
      [NOW - 300_000, NOW],
      [NOW - 3_600_000, NOW - 300_001],
      [NOW - 86_400_000, NOW - 3_600_001],
      [NOW - 7 * 86_400_000, NOW - 86_400_001],
    ])
    server.requests.length = 0
    const all = await lastEvents(client, GROUP, 50, NOW)
    expect(all.events).toHaveLength(7)
    // the last look has no start: the whole retention
    expect(server.requests.at(-1)!.body).toEqual({ logGroupName: GROUP, endTime: NOW - 30 * 86_400_000 - 1 })
  })

  it('prints each message once, without its trailing newline, oldest first', async () => {
    const out: string[] = []
    expect(await runCloudLogs(client, { group: GROUP, lines: 7, follow: false, description: 'stack FloeApp' }, { out: (l) => out.push(l), now: () => NOW })).toBe(0)
    expect(out[0]).toBe(line('three days ago'))
    expect(out).toHaveLength(7)
  })

  it('says when the log group is missing or has no lines (exit code 2), as a local log does', async () => {
    const run = { out: () => {}, now: () => NOW }
    await expect(runCloudLogs(client, { group: '/floe/FloeApp/search-loader', lines: 5, follow: false, description: 'stack FloeApp' }, run)).rejects.toThrow(
      'stack FloeApp has no log group /floe/FloeApp/search-loader (The specified log group does not exist.): is that function deployed? (-c searchStore=false leaves the search functions out)',
    )
    await expect(runCloudLogs(client, { group: '/floe/FloeApp/empty', lines: 5, follow: false, description: 'stack FloeApp' }, run)).rejects.toThrow(
      /^no log lines in \/floe\/FloeApp\/empty of stack FloeApp yet: .*-f waits for them$/,
    )
  })
})

describe('following a deployed log group', () => {
  it('prints the lines that arrive, late ones included, each once, until aborted', async () => {
    const group = '/floe/FloeApp/collector'
    server.put(group, { timestamp: NOW - 1_000, message: 'before' }, { timestamp: NOW - 500, message: 'just before' })
    const controller = new AbortController()
    const out: string[] = []
    let clock = NOW
    const waiters: { text: string; resolve: () => void }[] = []
    const seen = (text: string) => new Promise<void>((resolve) => (out.includes(text) ? resolve() : waiters.push({ text, resolve })))
    let following!: () => void
    const started = new Promise<void>((r) => (following = r))
    const done = runCloudLogs(client, { group, lines: 1, follow: true, description: 'stack FloeApp' }, {
      out: (l) => {
        out.push(l)
        for (const w of waiters.filter((x) => x.text === l)) w.resolve()
      },
      now: () => clock,
      pollMs: 5,
      signal: controller.signal,
      onFollowing: following,
    })
    await started
    expect(out).toEqual(['just before'])
    clock = NOW + 2_000
    server.put(group, { timestamp: NOW + 1_000, message: 'first' }, { timestamp: NOW + 1_500, message: 'second' })
    await seen('second')
    // ingested late: older than the newest line printed, but within the overlap
    server.put(group, { timestamp: NOW + 1_200, message: 'late' })
    await seen('late')
    server.put(group, { timestamp: NOW + 3_000, message: 'third' })
    await seen('third')
    controller.abort()
    expect(await done).toBe(0)
    // 'before' was older than the last line asked for, and within the overlap: never printed
    expect(out).toEqual(['just before', 'first', 'second', 'late', 'third'])
    // every poll starts the overlap before the newest line printed so far (a late line does not move it back), with no end
    const starts = new Set(server.requests.filter((q) => q.body.logGroupName === group && q.body.endTime === undefined).map((q) => q.body.startTime))
    expect(starts).toContain(NOW - FOLLOW_OVERLAP_MS)
    expect(starts).toContain(NOW + 1_500 - FOLLOW_OVERLAP_MS)
    expect([...starts].filter((t) => ![NOW, NOW + 1_500, NOW + 3_000].map((c) => c - FOLLOW_OVERLAP_MS).includes(t as number))).toEqual([])
  })
})

describe('floe logs names on a deployment', () => {
  it('has api-access and no floe log', () => {
    expect(parseLogsArgs(['api-access'], { deployed: true }).log).toBe('apiAccess')
    expect(() => parseLogsArgs(['floe'], { deployed: true })).toThrow(/^'floe' is the local stack's own log; a deployment has a log group per function/)
    expect(() => parseLogsArgs(['api-access'])).toThrow(/^unknown service 'api-access'/)
    expect(parseLogsArgs(['search-loader', '-f', '-n', '3'], { deployed: true })).toEqual({ log: 'searchLoader', follow: true, lines: 3 })
  })
})
