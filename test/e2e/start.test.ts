import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb'
import { GetRecordsCommand, GetShardIteratorCommand, PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeClients } from '../../lib/aws/clients'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { alive, eventually, floe, killOrphanDynamo, type Running } from '../support/process'
import { TEST_CREDENTIALS, withAuth } from '../support/stack'

/** The archive loader's trigger waits up to 60 s to fill a batch (its batching window, as on AWS); here at most 1 s. */
const ARCHIVE_WAIT_MS = 30_000

const dataDir = mkdtempSync(join(tmpdir(), 'floe-start-'))
const env = { FLOE_DATA_DIR: dataDir, PORT: '0', FLOE_BATCHING_WINDOW_SECONDS: '1', ACCEPT_LIMITED_USE_LICENSE: '', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password }
const started: Running[] = []

afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL')
  // A DynamoDB Local orphaned by the kill -9 below is stopped by the restart; make sure.
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})


async function start(): Promise<{ proc: Running; ep: EndpointsFile }> {
  const proc = floe(['start'], env)
  started.push(proc)
  await proc.waitFor('Floe is up')
  const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
  expect(ep.pid).toBe(proc.child.pid)
  return { proc, ep }
}

async function archiveKeys(ep: EndpointsFile): Promise<string[]> {
  const { s3 } = makeClients(ep)
  const out = await s3.send(new ListObjectsV2Command({ Bucket: 'floe-archive', Prefix: 'floe-raw/' }))
  return (out.Contents ?? []).map((o) => o.Key!).sort()
}

describe('floe start', () => {
  it('serves /health, writes endpoints.json, and keeps all data across kill -9 and a clean SIGTERM stop', async () => {
    const first = await start()
    expect(first.proc.output()).toMatch(/HTTP API\s+http:\/\/127\.0\.0\.1:\d+/)
    // Without the licence, enrich's trigger is not started, and the banner says why.
    expect(first.proc.output()).toMatch(/not started\s+enrich-raw: Enrich runs only once its licence terms are accepted/)
    expect(first.proc.output()).toMatch(/licence +not accepted yet: accept it on \/home \(http:\/\/\S+\/home#\/control-plane\/license\)/)
    // …and /health answers 200 listing it as off on purpose: the collector takes events, which wait in the raw stream.
    const health = await fetch(`${first.ep.http}/health`)
    expect(health.status).toBe(200)
    expect(await health.text()).toMatch(/^ok\nenrich-raw is off on purpose since \S+: enrich is off until the licence is accepted/)
    // No FLOE_SUPER_API_KEY: the registry's super key is generated and shown once, at startup.
    expect(first.proc.output()).toMatch(/generated one: [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/)

    const aws = makeClients(first.ep)
    await aws.ddb.send(new PutItemCommand({ TableName: 'floe-settings', Item: { pk: { S: 'probe' }, sk: { S: 'x' }, v: { S: 'kept' } } }))
    await aws.kinesis.send(new PutRecordsCommand({ StreamName: 'floe-raw', Records: [{ Data: Buffer.from('r1'), PartitionKey: 'a' }] }))
    const keysBefore = await eventually(async () => {
      const keys = await archiveKeys(first.ep)
      return keys.length > 0 ? keys : undefined
    }, 'the archive loader to write the first record', ARCHIVE_WAIT_MS)
    // The search store: a bad row on the bad stream is loaded, searchable, and kept across the kill.
    const badRow = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/generic_error/jsonschema/1-0-0', data: { processor: { artifact: 'probe', version: '1' }, failure: { timestamp: new Date().toISOString(), errors: ['kept across kill -9'] }, payload: 'x' } })
    await aws.kinesis.send(new PutRecordsCommand({ StreamName: 'floe-bad', Records: [{ Data: Buffer.from(badRow), PartitionKey: 'a' }] }))
    const badCount = async (ep: EndpointsFile) => ((await (await fetch(`${ep.http}/search-store/bad/_count`, { headers: withAuth() })).json()) as { count: number }).count
    await eventually(async () => ((await badCount(first.ep)) === 1 ? true : undefined), 'the search loader to store the bad row')
    expect(first.proc.output()).toMatch(/search store\s+http:\/\/127\.0\.0\.1:\d+\/search-store/)
    const checkpoints = await eventually(async () => {
      const f = join(dataDir, 'checkpoints.json')
      const text = existsSync(f) ? readFileSync(f, 'utf8') : ''
      // every trigger that has read a record: the raw record and the bad row, each archived and loaded
      return ['archive-raw', 'archive-bad', 'searchLoader-raw', 'searchLoader-bad'].every((id) => text.includes(`"${id}`)) ? text : undefined
    }, 'the checkpoints of the archive and search loaders')
    const orphan = Number(readFileSync(join(dataDir, 'dynamodb.pid'), 'utf8'))

    first.proc.child.kill('SIGKILL')
    await first.proc.exited
    expect(alive(orphan)).toBe(true) // the Java child outlives a hard kill

    const second = await start()
    expect(second.proc.output()).toContain('left running by a previous run')
    expect(second.proc.output()).not.toContain('generated one')
    expect(alive(orphan)).toBe(false)
    const aws2 = makeClients(second.ep)
    const item = await aws2.ddb.send(new GetItemCommand({ TableName: 'floe-settings', Key: { pk: { S: 'probe' }, sk: { S: 'x' } } }))
    expect(item.Item?.v?.S).toBe('kept')
    expect(await badCount(second.ep)).toBe(1)
    const hits = (await (await fetch(`${second.ep.http}/search-store/bad/_search?q=${encodeURIComponent('"kept across kill -9"')}`, { headers: withAuth() })).json()) as { hits: { total: { value: number } } }
    expect(hits.hits.total.value).toBe(1)
    expect(await archiveKeys(second.ep)).toEqual(keysBefore)
    expect(JSON.parse(readFileSync(join(dataDir, 'checkpoints.json'), 'utf8'))).toEqual(JSON.parse(checkpoints))
    // The stream kept its record too.
    let found = false
    for (const shard of ['shardId-000000000000', 'shardId-000000000001']) {
      const it = await aws2.kinesis.send(new GetShardIteratorCommand({ StreamName: 'floe-raw', ShardId: shard, ShardIteratorType: 'TRIM_HORIZON' }))
      const recs = await aws2.kinesis.send(new GetRecordsCommand({ ShardIterator: it.ShardIterator }))
      found ||= (recs.Records ?? []).some((r) => Buffer.from(r.Data!).toString() === 'r1')
    }
    expect(found).toBe(true)

    // New records after the restart are archived; the old one is not archived again.
    await aws2.kinesis.send(new PutRecordsCommand({ StreamName: 'floe-raw', Records: [{ Data: Buffer.from('r2'), PartitionKey: 'b' }] }))
    const keysAfter = await eventually(async () => {
      const keys = await archiveKeys(second.ep)
      return keys.length > keysBefore.length ? keys : undefined
    }, 'the archive loader to write the new record', ARCHIVE_WAIT_MS)
    expect(keysAfter).toHaveLength(keysBefore.length + 1)

    const ddbPid = Number(readFileSync(join(dataDir, 'dynamodb.pid'), 'utf8'))
    second.proc.child.kill('SIGTERM')
    expect(await second.proc.exited).toBe(0)
    expect(second.proc.output()).toContain('stopped')
    expect(existsSync(join(dataDir, 'endpoints.json'))).toBe(false)
    expect(alive(ddbPid)).toBe(false)
  }, 360_000)

  it('refuses a second stack on the same data directory with a clear message', async () => {
    const a = await start()
    const b = floe(['start'], env)
    expect(await b.exited).toBe(1)
    expect(b.output()).toContain('is in use by another Floe process')
    a.proc.child.kill('SIGTERM')
    expect(await a.proc.exited).toBe(0)
  }, 120_000)
})

describe('floe start with a bad setting', () => {
  it('refuses to start, naming the variable', async () => {
    const p = floe(['start'], { FLOE_DATA_DIR: join(dataDir, 'other'), PORT: '0', FLOE_SUPER_API_KEY: 'not-a-uuid' })
    expect(await p.exited).toBe(2)
    expect(p.output()).toContain('FLOE_SUPER_API_KEY must be a UUID v4')
    const w = floe(['start'], { FLOE_DATA_DIR: join(dataDir, 'other'), PORT: '0', FLOE_BATCHING_WINDOW_SECONDS: '1.5' })
    expect(await w.exited).toBe(2)
    expect(w.output()).toContain("FLOE_BATCHING_WINDOW_SECONDS must be a whole number of seconds from 0 to 300, got '1.5'")
  })
})

describe('floe start without Java', () => {
  it('fails with a one-line message naming the missing runtime', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-nojava-'))
    try {
      const p = floe(['start'], { FLOE_DATA_DIR: dir, PORT: '0', FLOE_JAVA: join(dir, 'no-such-java') })
      expect(await p.exited).toBe(1)
      expect(p.output().trim()).toMatch(/^floe: Java 17 or later is required to run DynamoDB Local/m)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
