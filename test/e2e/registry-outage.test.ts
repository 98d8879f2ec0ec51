/**
 * A schema registry outage during load: events keep flowing, the ones whose
 * schema can no longer be looked up become bad rows naming the failure, every
 * event is accounted for exactly once, and nothing is given up on (the stream
 * trigger's on-failure location stays empty).
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { F } from '../../lib/core/enrich/fields'
import { serveStatic } from '../unit/iglu/static-server'
import { testClients, useLocalStack } from '../support/stack'
import { readTexts } from '../support/streams'

const VENDOR = 'com.acme.remote'
const NAMES = ['cached', ...Array.from({ length: 8 }, (_, i) => `fresh_${i}`)]

/** A static registry (the layout Iglu Central serves) holding one schema per name. */
function registryDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'floe-remote-'))
  for (const name of NAMES) {
    const dir = join(root, 'schemas', VENDOR, name, 'jsonschema')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, '1-0-0'), JSON.stringify({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      self: { vendor: VENDOR, name, format: 'jsonschema', version: '1-0-0' },
      type: 'object', properties: { n: { type: 'integer' } }, required: ['n'],
    }))
  }
  return root
}

let remote: Awaited<ReturnType<typeof serveStatic>>
beforeAll(async () => {
  remote = await serveStatic(registryDir())
  process.env.FLOE_IGLU_CENTRAL_URL = remote.url
})
afterAll(() => remote?.close())

const stack = useLocalStack({
  environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_RESOLVER_LOOKUP_TIMEOUT: '1' },
})

let seq = 0
/** One tp2 POST of `n` events: page views and self-describing events of the given schema names, each with its own event id. */
async function post(names: string[]): Promise<string[]> {
  const ids: string[] = []
  const data = names.map((name) => {
    const eid = `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`
    ids.push(eid)
    if (name === 'pv') return { e: 'pv', p: 'web', tv: 'test-0', aid: 'outage', eid, url: 'https://shop.example/' }
    const ue = { schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: `iglu:${VENDOR}/${name}/jsonschema/1-0-0`, data: { n: seq } } }
    return { e: 'ue', p: 'web', tv: 'test-0', aid: 'outage', eid, ue_pr: JSON.stringify(ue) }
  })
  const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
  })
  expect(res.status).toBe(200)
  return ids
}

describe('a schema registry outage during load', () => {
  it('loses nothing, duplicates nothing and gives nothing up: the events that need the registry become bad rows naming the failure', async () => {
    const sent: string[] = []
    const freshDuring: string[] = []
    // Before: the registry answers; 'cached' gets into the resolver's cache.
    for (let i = 0; i < 10; i++) sent.push(...(await post(['pv', 'cached', 'pv', 'cached', 'pv'])))
    await stack.current.drain()
    await remote.close()
    // During: payloads mixing cached, never-seen and built-in schemas.
    const during = await Promise.all(Array.from({ length: 20 }, (_, i) => post(['pv', 'cached', `fresh_${i % 8}`, 'pv', 'cached', 'pv', 'pv', 'cached', 'pv', 'pv'])))
    for (const ids of during) {
      sent.push(...ids)
      freshDuring.push(ids[2]!)
    }
    await stack.current.drain()

    const names = stack.current.names
    const { kinesis, s3 } = testClients()
    const [good, incomplete, bad] = await Promise.all([readTexts(kinesis, names.streams.good), readTexts(kinesis, names.streams.incomplete), readTexts(kinesis, names.streams.bad)])
    const ids = (lines: string[]) => lines.map((l) => l.split('\t')[F.event_id]!)
    const goodIds = ids(good)
    const failedIds = ids(incomplete)
    // Every event exactly once: good, or failed (with its bad row).
    expect(new Set(goodIds).size).toBe(goodIds.length)
    expect([...goodIds, ...failedIds].sort()).toEqual([...sent].sort())
    expect(failedIds.sort()).toEqual([...freshDuring].sort())
    expect(bad).toHaveLength(freshDuring.length)
    for (const row of bad.map((l) => JSON.parse(l))) {
      expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
      const [m] = row.data.failure.messages
      expect(m.error.error).toBe('ResolutionError')
      const central = m.error.lookupHistory.find((h: { repository: string }) => h.repository === 'Iglu Central')
      expect(central.errors[0]).toMatchObject({ error: 'RepoFailure' })
    }
    // Nothing was given up on.
    const failures = await s3.send(new ListObjectsV2Command({ Bucket: names.buckets.archive, Prefix: 'aws/lambda/' }))
    expect(failures.KeyCount ?? 0).toBe(0)
  })
})
