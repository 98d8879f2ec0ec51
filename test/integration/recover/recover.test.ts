/**
 * Recovery end to end on the local stack: events on a schema the registry
 * does not have become bad rows; once the schema is pushed, a preview says
 * they would be good, a replay makes them good events (keeping their
 * event ids, one copy each), marks their bad rows and leaves them out of
 * the bad index; a second replay finds nothing. The same with a version
 * rename, from the archive bucket, and with two runs at once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { RECOVERY_HEADER } from '../../../lib/core/recover/events'
import { runFloe } from '../../support/process'
import { objectSchema, postTp2, pushSchema, recoverRequest, warmControlPlane } from '../../support/schemas'
import { testClients, uniquePrefix, useLocalStack, withAuth } from '../../support/stack'
import { readPayloads } from '../../support/streams'

const SUPER = '7b2e4c1a-3d5f-4a6b-8c7d-9e0f1a2b3c4d'
const PREFIX = uniquePrefix('rc')
const ENV = { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_SUPER_API_KEY: SUPER, FLOE_IGLU_CENTRAL_URL: '' }
const stack = useLocalStack({ namePrefix: PREFIX, environment: ENV })

beforeAll(() => warmControlPlane(stack.current.url), 120_000)

const VENDOR = 'com.acme.recover'
const uri = (name: string, version: string) => `iglu:${VENDOR}/${name}/jsonschema/${version}`
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'

const push = (name: string, properties: Record<string, unknown>) => pushSchema(stack.current.url, SUPER, objectSchema(VENDOR, name, '1-0-0', properties))

/** Sends self-describing events in one tp2 POST (base64 `ue_px` when asked); answers their event ids. */
async function send(aid: string, schema: string, datas: unknown[], base64 = false): Promise<string[]> {
  const ids = datas.map(() => randomUUID())
  const data = datas.map((d, i) => {
    const ue = JSON.stringify({ schema: UE, data: { schema, data: d } })
    return { e: 'ue', p: 'web', tv: 'test-0', aid, eid: ids[i]!, dtm: String(Date.now()), ...(base64 ? { ue_px: Buffer.from(ue).toString('base64url') } : { ue_pr: ue }) }
  })
  await postTp2(stack.current.url, data)
  await settle()
  return ids
}

const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}

const recoverApi = (body: unknown) => recoverRequest(stack.current.url, body)

/** `floe recover …` against this stack (an endpoints.json naming its emulators). */
async function recoverCli(...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'floe-recover-data-'))
  writeFileSync(join(dir, 'endpoints.json'), JSON.stringify({ http: stack.current.url, ...stack.current.endpoints, namePrefix: PREFIX, pid: process.pid }))
  const r = await runFloe(['recover', ...args, '--json'], { ...ENV, FLOE_DATA_DIR: dir })
  return { code: r.code, stderr: r.stderr, report: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : undefined }
}

async function microGood(): Promise<{ event: Record<string, any> }[]> {
  const r = await fetch(`${stack.current.url}/micro/good`, { headers: withAuth() })
  return (await r.json()) as { event: Record<string, any> }[]
}
async function badCount(q: string): Promise<number> {
  const r = await fetch(`${stack.current.url}/search-store/bad/_count?q=${encodeURIComponent(q)}`, { headers: withAuth() })
  const body = (await r.json()) as { count: number }
  if (body.count === undefined) throw new Error(`count of ${q}: ${r.status} ${JSON.stringify(body)}`)
  return body.count
}
async function microBadMentioning(text: string): Promise<number> {
  const r = await fetch(`${stack.current.url}/micro/bad`, { headers: withAuth() })
  return ((await r.json()) as { errors: string[] }[]).filter((b) => b.errors.join('').includes(text)).length
}

describe('recovering failed events', () => {
  it('(1) events on an unpushed schema: bad rows → push → preview says N would be good → replay → N good events once each, bad rows marked; (4) a second replay is a no-op', async () => {
    const ids = await send('recover-one', uri('click', '1-0-0'), [{ label: 'a' }, { label: 'b' }, { label: 'c' }])
    expect(await badCount('recover-one')).toBe(3)

    // before the push: still failing, with the reason
    const early = await recoverApi({ query: 'recover-one', dryRun: true })
    expect(early.status).toBe(200)
    expect(early.body).toMatchObject({ selected: 3, wouldBeGood: 0, stillFailing: 3, replayed: 0 })
    expect(early.body.reasons[0].reason).toContain(uri('click', '1-0-0'))

    await push('click', { label: { type: 'string' } })
    const preview = await recoverApi({ query: 'recover-one', failureType: 'schema_violations', dryRun: true })
    expect(preview.status).toBe(200)
    expect(preview.body).toMatchObject({ dryRun: true, selected: 3, fixed: 3, wouldBeGood: 3, stillFailing: 0, replayed: 0 })
    // a preview writes nothing
    expect(await badCount('recover-one')).toBe(3)

    const run = await recoverCli('--query', 'recover-one')
    expect(run.code, run.stderr).toBe(0)
    expect(run.report).toMatchObject({ dryRun: false, selected: 3, replayed: 3, wouldBeGood: 3, stillFailing: 0 })
    await settle()

    const good = (await microGood()).filter((g) => g.event.app_id === 'recover-one')
    expect(good.map((g) => g.event.event_id).sort()).toEqual([...ids].sort())
    expect(good.map((g) => g.event.unstruct_event.data.data.label).sort()).toEqual(['a', 'b', 'c'])
    // the bad rows are marked (time and run) and left out of the bad index and /micro/bad
    expect(await badCount('recover-one')).toBe(0)
    expect(await microBadMentioning('recover-one')).toBe(0)

    // (4) a second replay finds nothing and writes nothing
    const again = await recoverCli('--query', 'recover-one')
    expect(again.code).toBe(1)
    expect(again.report).toMatchObject({ selected: 0, replayed: 0 })
    expect(again.stderr).toContain('matches no bad row')
    const api = await recoverApi({ query: 'recover-one' })
    expect(api.status).toBe(404)
    await settle()
    expect((await microGood()).filter((g) => g.event.app_id === 'recover-one')).toHaveLength(3)
  }, 300_000)

  it('(2) a version rename step (base64 ue_px); an event the steps break becomes a recovery_error bad row of the run; a replayed event failing again is a new bad row naming the run', async () => {
    await push('order', { total: { type: 'integer' } })
    const ids = await send('recover-two', uri('order', '1-0-1'), [{ total: '10' }, { total: '20' }, { total: 'lots' }, { total: '1.5' }], true)
    expect(await badCount('recover-two')).toBe(4)
    const steps = {
      name: 'order 1-0-1 was never published',
      steps: [
        { op: 'renameSchema', from: uri('order', '1-0-1'), to: '1-0-0' },
        { op: 'cast', field: 'ue_px', path: '$.data.data.total', to: 'number' },
      ],
    }
    const refused = await recoverApi({ query: 'recover-two', steps: { steps: [{ op: 'rename', from: 'x' }] }, dryRun: true })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain('recovery_steps')

    const preview = await recoverApi({ query: 'recover-two', steps, dryRun: true })
    expect(preview.body).toMatchObject({ selected: 4, fixed: 3, broken: 1, wouldBeGood: 2, stillFailing: 1 })
    const run = await recoverApi({ query: 'recover-two', steps })
    expect(run.status).toBe(200)
    expect(run.body).toMatchObject({ selected: 4, replayed: 3, broken: 1, wouldBeGood: 2, stillFailing: 1 })
    await settle()

    const good = (await microGood()).filter((g) => g.event.app_id === 'recover-two')
    expect(good.map((g) => g.event.event_id).sort()).toEqual([ids[0], ids[1]].sort())
    expect(good.map((g) => g.event.unstruct_event.data)).toContainEqual({ schema: uri('order', '1-0-0'), data: { total: 10 } })
    // 'lots' cannot be cast: a recovery_error bad row names the run and the reason
    const broken = await fetch(`${stack.current.url}/search-store/bad/_search?q=${encodeURIComponent('data.failure.run:"' + run.body.runId + '"')}`, { headers: withAuth() })
    const hits = ((await broken.json()) as { hits: { hits: { _source: any }[] } }).hits.hits
    expect(hits).toHaveLength(1)
    expect(hits[0]!._source.schema).toBe('iglu:io.floe/recovery_error/jsonschema/1-0-0')
    expect(hits[0]!._source.data.failure.error_str).toContain('cannot cast lots to number')
    // 1.5 is no integer: replayed, failed again, a new bad row carrying the run in its headers
    const again = await fetch(`${stack.current.url}/search-store/bad/_search?q=${encodeURIComponent('recover-two AND schema:"iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1"')}`, { headers: withAuth() })
    const rows = ((await again.json()) as { hits: { hits: { _source: any }[] } }).hits.hits
    expect(rows).toHaveLength(1)
    expect(rows[0]!._source.data.payload.raw.headers).toContain(`${RECOVERY_HEADER}: ${run.body.runId}`)
  }, 300_000)

  it('(3) replays archived bad rows from the archive bucket into the raw stream, once', async () => {
    // what earlier tests left in the streams lands first, so that the window holds only this test's bad rows
    await settle()
    const since = new Date().toISOString()
    const ids = await send('recover-three', uri('view', '1-0-0'), [{ n: 1 }, { n: 2 }])
    await push('view', { n: { type: 'integer' } })
    // the search store no longer holds them: only the archive does
    const reset = await fetch(`${stack.current.url}/control-plane/reset-service`, { method: 'POST', headers: withAuth({ 'content-type': 'application/x-www-form-urlencoded' }), body: 'service_name=searchstore' })
    expect(reset.status).toBe(200)
    expect(await badCount('recover-three')).toBe(0)

    const run = await recoverCli('--archive', '--failure-type', 'schema_violations', '--since', since)
    expect(run.code, run.stderr).toBe(0)
    expect(run.report).toMatchObject({ selected: 2, replayed: 2, wouldBeGood: 2 })
    const raw = (await readPayloads(testClients().kinesis, stack.current.names.streams.raw)).filter((p) => p.headers?.includes(`${RECOVERY_HEADER}: ${run.report!.runId}`))
    expect(raw.map((p) => JSON.parse(p.body!).data[0].eid).sort()).toEqual([...ids].sort())
    await settle()
    expect((await microGood()).filter((g) => g.event.app_id === 'recover-three').map((g) => g.event.event_id).sort()).toEqual([...ids].sort())

    const again = await recoverCli('--archive', '--failure-type', 'schema_violations', '--since', since)
    expect(again.report).toMatchObject({ selected: 0, replayed: 0 })
  }, 300_000)

  it('two runs at once on one selection replay each bad row once', async () => {
    const ids = await send('recover-four', uri('tap', '1-0-0'), Array.from({ length: 6 }, (_, i) => ({ i })))
    await push('tap', { i: { type: 'integer' } })
    const [a, b] = await Promise.all([recoverApi({ query: 'recover-four' }), recoverApi({ query: 'recover-four' })])
    const replayed = [a, b].map((r) => (r.status === 200 ? r.body.replayed : 0))
    expect(replayed[0] + replayed[1]).toBe(6)
    await settle()
    const raw = (await readPayloads(testClients().kinesis, stack.current.names.streams.raw)).filter((p) => p.body?.includes('recover-four') && p.headers?.some((h) => h.startsWith(RECOVERY_HEADER)))
    expect(raw).toHaveLength(6)
    expect((await microGood()).filter((g) => g.event.app_id === 'recover-four').map((g) => g.event.event_id).sort()).toEqual([...ids].sort())
  }, 300_000)

  it('refuses what it cannot use with a 4xx', async () => {
    expect((await recoverApi({ query: 'x', bogus: 1 })).status).toBe(400)
    expect((await recoverApi({ since: 'yesterday' })).status).toBe(400)
    expect((await recoverApi({ source: 'archive', query: 'x' })).status).toBe(400)
    expect((await recoverApi({ query: 'a:(' })).status).toBe(400)
    const r = await fetch(`${stack.current.url}/control-plane/recover`, { method: 'POST', headers: withAuth({ 'content-type': 'text/plain' }), body: '{}' })
    expect(r.status).toBe(415)
    const big = await fetch(`${stack.current.url}/control-plane/recover`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify({ query: 'x'.repeat(100_000) }) })
    expect(big.status).toBe(413)
    const get = await fetch(`${stack.current.url}/control-plane/recover`, { headers: withAuth() })
    expect(get.status).toBe(405)
    // cross-site: a page elsewhere cannot start a replay with the user's credentials
    const cross = await fetch(`${stack.current.url}/control-plane/recover`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json', origin: 'https://evil.example' }), body: '{}' })
    expect(cross.status).toBe(403)
  }, 300_000)
})
