/**
 * A schema pushed to this deployment's registry is seen by the running
 * enrich from its next batch, with the default resolver cache (600 s) and no
 * restart: an event sent right after the push is good, a recovery preview
 * says the events that failed before it would be good (the preview sees the
 * registry as enrich does), and the replay makes them good.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runFloe } from '../../support/process'
import { postTp2, pushSchema, recoverRequest, warmControlPlane } from '../../support/schemas'
import { uniquePrefix, useLocalStack, withAuth } from '../../support/stack'

const SUPER = '3c9d2a4b-5e6f-4a7b-8c9d-0e1f2a3b4c5d'
// No FLOE_RESOLVER_CACHE_TTL: the default cache (600 s) keeps what it found, and what it did not.
const ENV = { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_SUPER_API_KEY: SUPER, FLOE_IGLU_CENTRAL_URL: '' }
const PREFIX = uniquePrefix('rp')
const stack = useLocalStack({ namePrefix: PREFIX, environment: ENV })

beforeAll(() => warmControlPlane(stack.current.url), 120_000)

const VENDOR = 'com.acme'
const uri = (version: string, name = 'x') => `iglu:${VENDOR}/${name}/jsonschema/${version}`
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'

const schemaDoc = (name: string, version: string, properties: Record<string, unknown>) => ({
  $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
  self: { vendor: VENDOR, name, format: 'jsonschema', version },
  description: name, type: 'object', properties, additionalProperties: false,
})

/** Puts a schema version through the registry API, as `floe registry push` does. */
async function push(version: string, properties: Record<string, unknown>) {
  const schema = schemaDoc('x', version, properties)
  const r = await fetch(`${stack.current.url}/registry-server/api/schemas/${VENDOR}/x/jsonschema/${version}`, {
    method: 'PUT', headers: { apikey: SUPER, 'content-type': 'application/json' }, body: JSON.stringify(schema),
  })
  expect(r.status, await r.text()).toBe(201)
}

/** One tp2 POST of events on `schema`; answers their event ids once enrich and the loaders are done with them. */
async function send(aid: string, schema: string, datas: unknown[]): Promise<string[]> {
  const ids = datas.map(() => randomUUID())
  const data = datas.map((d, i) => ({ e: 'ue', p: 'web', tv: 'test-0', aid, eid: ids[i]!, ue_pr: JSON.stringify({ schema: UE, data: { schema, data: d } }) }))
  await postTp2(stack.current.url, data)
  await settle()
  return ids
}

const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}

const recover = (body: unknown) => recoverRequest(stack.current.url, body)

/** `floe registry push` of one schema, as a user does. */
const pushCli = (name: string, version: string, properties: Record<string, unknown>) => pushSchema(stack.current.url, SUPER, schemaDoc(name, version, properties))

/** `floe recover … --json` against this stack (another process, as on a user's terminal). */
async function recoverCli(...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'floe-push-data-'))
  writeFileSync(join(dir, 'endpoints.json'), JSON.stringify({ http: stack.current.url, ...stack.current.endpoints, namePrefix: PREFIX, pid: process.pid }))
  const r = await runFloe(['recover', ...args, '--json'], { ...ENV, FLOE_DATA_DIR: dir })
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Record<string, any>
}

async function goodIds(aid: string): Promise<string[]> {
  const r = await fetch(`${stack.current.url}/micro/good`, { headers: withAuth() })
  return ((await r.json()) as { event: Record<string, any> }[]).filter((g) => g.event.app_id === aid).map((g) => g.event.event_id as string).sort()
}

async function badCount(q: string): Promise<number> {
  const r = await fetch(`${stack.current.url}/search-store/bad/_count?q=${encodeURIComponent(q)}`, { headers: withAuth() })
  return ((await r.json()) as { count: number }).count
}

describe("a push to this deployment's registry", () => {
  it('is seen by enrich from its next batch with the default cache, and by the recovery preview as by enrich', async () => {
    await push('1-0-0', { a: { type: 'string' } })
    const early = await send('push-early', uri('1-0-1'), [{ a: 'x', b: 1 }, { a: 'y', b: 2 }])
    expect(await badCount('push-early')).toBe(2)
    // The preview, before the push, finds the version missing too (and caches that, as enrich did).
    const before = await recover({ query: 'push-early', dryRun: true })
    expect(before.body).toMatchObject({ selected: 2, wouldBeGood: 0, stillFailing: 2 })

    await push('1-0-1', { a: { type: 'string' }, b: { type: 'integer' } })
    // Right after the push, no restart, no wait for the cache.
    const right = await send('push-right-after', uri('1-0-1'), [{ a: 'z', b: 3 }])
    expect(await goodIds('push-right-after')).toEqual(right)
    expect(await badCount('push-right-after')).toBe(0)

    const preview = await recover({ query: 'push-early', dryRun: true })
    expect(preview.body).toMatchObject({ selected: 2, wouldBeGood: 2, stillFailing: 0 })
    const run = await recover({ query: 'push-early' })
    expect(run.status).toBe(200)
    expect(run.body).toMatchObject({ selected: 2, replayed: 2 })
    await settle()
    // The replayed events are good, once each, and did not fail again.
    expect(await goodIds('push-early')).toEqual([...early].sort())
    expect(await badCount('push-early')).toBe(0)
  }, 300_000)

  it('as docs/recovery.md says: floe registry push, floe recover --dry-run, floe recover: the replayed events are good', async () => {
    await pushCli('button_click', '1-0-0', { id: { type: 'string' } })
    const early = await send('readme-flow', uri('1-0-1', 'button_click'), [{ id: 'a' }, { id: 'b' }, { id: 'c' }])
    expect(await badCount('readme-flow')).toBe(3)
    await pushCli('button_click', '1-0-1', { id: { type: 'string' } })
    expect(await recoverCli('--query', 'readme-flow', '--dry-run')).toMatchObject({ selected: 3, wouldBeGood: 3 })
    expect(await recoverCli('--query', 'readme-flow')).toMatchObject({ selected: 3, replayed: 3 })
    await settle()
    expect(await goodIds('readme-flow')).toEqual([...early].sort())
    expect(await badCount('readme-flow')).toBe(0)
  }, 300_000)
})
