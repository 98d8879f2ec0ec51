/**
 * Searches cannot take the loader down, and a loader that cannot write
 * waits and says so. Heavy searches (1,023 wildcard terms over every field
 * of thousands of bad rows) run beside loading: each is answered 504 at its
 * budget and ended soon after (the store is started again under the
 * loader), and every acknowledged event still reaches `good`. Then the
 * store is stopped: `/health` answers 503 naming the loader that cannot
 * write and the records that wait, the collector keeps acknowledging, and
 * once the store is back every acknowledged event is in `good`.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { streamTriggerFailureBucket, streamTriggerFailurePrefix } from '../../../lib/infra/functions'
import { migrate, schemaForPrefix, searchDb } from '../../../lib/core/search/store'
import { newPostgresPassword } from '../../../lib/local/postgres-server'
import { startSearchServer, type SearchServer } from '../../../lib/local/search-server'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { postgresClient } from '../../../lib/runtime/postgres'
import { sharedEndpoints, TEST_CREDENTIALS, testClients, uniquePrefix, withAuth } from '../../support/stack'

const BAD_ROWS = 3_000
const BUDGET_MS = 1_000
const dir = mkdtempSync(join(tmpdir(), 'floe-outage-'))
const password = newPostgresPassword()
let store: SearchServer
let stack: LocalStack
const restartLog: string[] = []

const badRow = (i: number) =>
  JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: { timestamp: new Date().toISOString(), messages: [{ error: `row ${i} has an error somewhere`, path: '$.x' }] }, payload: { raw: { parameters: [{ name: 'e', value: 'ue' }, { name: 'aid', value: `app${i}` }] } } } })

beforeAll(async () => {
  store = await startSearchServer({ dir, password, log: (l) => restartLog.push(l) })
  const prefix = uniquePrefix('outage')
  // rows for the searches to be heavy on, straight into this stack's schema
  const sql = postgresClient(store.url)
  const db = searchDb(sql, schemaForPrefix(prefix))
  await migrate(db)
  for (let start = 0; start < BAD_ROWS; start += 500) await loadBatch(db, 'bad', Array.from({ length: 500 }, (_, j) => ({ id: String(start + j), text: badRow(start + j) })), Date.now())
  await sql.close()
  stack = await startLocalStack({
    endpoints: { ...sharedEndpoints(), postgres: store.url },
    namePrefix: prefix,
    pollIntervalMs: 50,
    retryDelayMs: 10,
    triggerOverrides: { maxBatchingWindowSeconds: 0 },
    environment: { FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password, ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SEARCH_TIMEOUT_MS: String(BUDGET_MS) },
  })
}, 240_000)

afterAll(async () => {
  await stack?.stop()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
}, 120_000)

/** Sends page views one request each; returns how many the collector acknowledged. */
async function send(appId: string, n: number): Promise<number> {
  let acknowledged = 0
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${stack.url}/i?e=pv&p=web&tv=js-3&aid=${appId}&eid=${randomUUID()}&url=${encodeURIComponent(`https://a.test/${i}`)}`)
    await r.arrayBuffer()
    if (r.status === 200) acknowledged++
  }
  return acknowledged
}

const goodCount = async (appId: string) => {
  const r = await fetch(`${stack.url}/search-store/good/_count?q=app_id:${appId}`, { headers: withAuth() })
  expect(r.status).toBe(200)
  return ((await r.json()) as { count: number }).count
}

const heavySearch = async () => {
  const query = Array.from({ length: 1_023 }, (_, i) => `*a*b*c*d${i}*`).join(' OR ')
  const r = await fetch(`${stack.url}/search-store/bad/_search`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify({ size: 10_000, query: { query_string: { query } } }) })
  await r.arrayBuffer()
  return r.status
}

describe('heavy searches beside loading', () => {
  it('are answered 504 and ended; every acknowledged event reaches good', async () => {
    const searches = Promise.all([heavySearch(), heavySearch(), heavySearch()])
    const acknowledged = await send('heavy', 300)
    expect(await searches).toEqual([504, 504, 504])
    await stack.drain()
    await stack.drain()
    expect(acknowledged).toBe(300)
    expect(await goodCount('heavy')).toBe(acknowledged)
    // the searches did not run on for the store's 60 s: each was ended soon after its budget
    expect(restartLog.filter((l) => /a search ran .* past its budget/.test(l)).length).toBeGreaterThanOrEqual(1)
  }, 300_000)
})

describe('a store that is down', () => {
  it('makes the loader wait and /health say so; once it is back, every acknowledged event is stored', async () => {
    const port = store.port
    await store.close()
    const acknowledged = await send('outage', 50)
    expect(acknowledged).toBe(50)
    // the loader tries, cannot write, and /health names it
    let health = { status: 0, body: '' }
    for (let i = 0; i < 600; i++) {
      const r = await fetch(`${stack.url}/health`)
      health = { status: r.status, body: await r.text() }
      if (/searchLoader-good .*cannot write to the search store/.test(health.body)) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(health.status).toBe(503)
    expect(health.body).toMatch(/searchLoader-good \(shardId-[0-9-]+\) is down since [^:]+:\d\d:[^:]+: searchLoader cannot write to the search store: .*ECONNREFUSED.*; \d+ record\(s\) read so far wait in the stream/)
    store = await startSearchServer({ dir, password, port, log: (l) => restartLog.push(l) })
    await stack.drain()
    await stack.drain()
    expect(await goodCount('outage')).toBe(acknowledged)
    const after = await fetch(`${stack.url}/health`)
    expect(await after.text()).not.toMatch(/searchLoader/)
    // nothing was given up on: no batch of the search loader in the on-failure location
    const failed = await testClients().s3.send(new ListObjectsV2Command({ Bucket: stack.names.buckets[streamTriggerFailureBucket], Prefix: `${streamTriggerFailurePrefix}searchLoader-` }))
    expect(failed.Contents ?? []).toEqual([])
  }, 300_000)
})
