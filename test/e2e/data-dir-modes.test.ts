/**
 * Everything `floe start` keeps in its data directory is its user's only:
 * after a start with events enriched, loaded into the search store and
 * searched, no file or folder under FLOE_DATA_DIR (DynamoDB Local's database,
 * kinesalite's leveldb, s3rver's buckets and objects, the search store's
 * PostgreSQL data, logs, checkpoints) has a group or other permission bit,
 * whatever the umask `floe start` was started with; and a data directory left
 * readable by others (by an older version) is closed at start.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeClients } from '../../lib/aws/clients'
import { SEALED_PREFIX } from '../../lib/core/secrets-at-rest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { eventually, floe, killOrphanDynamo, type Running } from '../support/process'
import { TEST_CREDENTIALS, withAuth } from '../support/stack'

const dataDir = mkdtempSync(join(tmpdir(), 'floe-modes-'))
let proc: Running | undefined

afterAll(async () => {
  if (proc?.child.exitCode === null) {
    proc.child.kill('SIGKILL')
    await proc.exited
  }
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})

/** Every entry under `dir` whose mode has a group or other bit, as `path mode`. */
function openToOthers(dir: string): string[] {
  const found: string[] = []
  const walk = (path: string) => {
    let st
    try {
      st = lstatSync(path)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return // removed meanwhile (a leveldb compaction)
      throw err
    }
    if (!st.isSymbolicLink() && (st.mode & 0o077) !== 0) found.push(`${relative(dataDir, path) || '.'} ${(st.mode & 0o777).toString(8)}`)
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return found
}

function count(dir: string): number {
  let n = 0
  const walk = (path: string) => {
    n++
    if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return n
}

describe('the data directory of floe start', () => {
  it('holds nothing readable by group or others, after events, a search and a stop; an open one left before is closed at start', async () => {
    // what an older version left: the directory and its entries open to others
    chmodSync(dataDir, 0o755)
    mkdirSync(join(dataDir, 'logs', 'old'), { recursive: true, mode: 0o755 })
    chmodSync(join(dataDir, 'logs'), 0o755)
    chmodSync(join(dataDir, 'logs', 'old'), 0o755)
    writeFileSync(join(dataDir, 'logs', 'old', 'enrich.log.1'), 'request data\n', { mode: 0o644 })
    chmodSync(join(dataDir, 'logs', 'old', 'enrich.log.1'), 0o644)
    expect(openToOthers(dataDir).length).toBeGreaterThanOrEqual(4)

    // started with the usual umask (022): floe start keeps its files private whatever it inherits
    const previous = process.umask(0o022)
    try {
      proc = floe(['start'], {
        FLOE_DATA_DIR: dataDir, PORT: '0', FLOE_BATCHING_WINDOW_SECONDS: '1', ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '',
        FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password,
      })
    } finally {
      process.umask(previous)
    }
    await proc.waitFor('Floe is up', 120_000)
    const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
    const base = endpoints.http
    // the secrets in DynamoDB Local are sealed with the data directory's key file (0600)
    expect(statSync(join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600)
    const settings = await makeClients(endpoints).ddb.send(new GetItemCommand({ TableName: 'floe-settings', Key: { pk: { S: 'dashboard' }, sk: { S: 'credentials' } } }))
    expect(settings.Item?.hash?.S?.startsWith(SEALED_PREFIX)).toBe(true)

    // a good event and a bad one (an unknown schema), through enrich into the search store
    expect((await fetch(`${base}/i?e=pv&p=web&tv=js-3&aid=modes&url=${encodeURIComponent('https://example.com/a')}`)).status).toBe(200)
    const ue = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.example/nope/jsonschema/1-0-0', data: {} } })).toString('base64url')
    expect((await fetch(`${base}/i?e=ue&p=web&tv=js-3&aid=modes&ue_px=${ue}`)).status).toBe(200)
    await eventually(async () => {
      const all = (await (await fetch(`${base}/micro/all`, { headers: withAuth() })).json()) as { good: number; bad: number }
      return all.good >= 1 && all.bad >= 1 ? all : undefined
    }, 'the good and the bad event in the search store', 60_000)
    const search = await fetch(`${base}/search-store/good/_search?q=${encodeURIComponent('modes')}`, { headers: withAuth() })
    expect(search.status).toBe(200)
    // the archive loader writes objects to s3rver's folders
    await eventually(async () => (readdirSync(join(dataDir, 's3')).length > 0 ? true : undefined), 'the buckets in s3/', 30_000)

    expect(openToOthers(dataDir), 'entries open to others while running').toEqual([])
    proc.child.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    expect(openToOthers(dataDir), 'entries open to others after the stop').toEqual([])
    // not vacuous: every part of the stack wrote here
    for (const part of ['dynamodb', 'kinesis', 's3', 'search', 'logs']) expect(readdirSync(join(dataDir, part)).length, part).toBeGreaterThan(0)
    expect(count(dataDir)).toBeGreaterThan(100)
  }, 240_000)
})
