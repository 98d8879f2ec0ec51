/**
 * `POST /micro/wait` and `GET /micro/events/{event_id}` on a running stack:
 * a wait that completes (events sent before it, and events sent while it is
 * held), one that times out, failed events, one event by id, the limits and
 * the refusal of cross-site calls; then a wait woken by a loader that writes
 * from another process, and the cap on waits held at once.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { searchApi } from '../../../lib/core/search/api'
import { searchDb } from '../../../lib/core/search/store'
import { StoreWatch, storeVersion } from '../../../lib/core/search/store-watch'
import { envVar } from '../../../lib/infra/resources'
import { projectRoot } from '../../../lib/local/handlers'
import { postgresClient } from '../../../lib/runtime/postgres'
import { batch, enricher, tp2 } from '../../unit/enrich/helpers'
import { useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

/** Sends tracker events (parameter objects) in one POST; resolves at the collector's 200. */
async function send(events: Record<string, string>[]): Promise<void> {
  const r = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events.map((e) => ({ p: 'web', tv: 'test-1', ...e })) }),
  })
  await r.arrayBuffer()
  expect(r.status).toBe(200)
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${stack.current.url}${path}`, { method, headers: withAuth({ 'content-type': 'application/json', ...headers }), ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) })
  const text = await r.text()
  return { status: r.status, headers: r.headers, text, json: () => JSON.parse(text) }
}

const wait = (body: unknown, headers?: Record<string, string>) => call('POST', '/micro/wait', body, headers)
const byApp = (app: string) => [{ column: 'app_id', values: [app] }]

describe('POST /micro/wait', () => {
  it('answers with the events once as many as asked are stored', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()]
    await send(ids.map((eid) => ({ e: 'pv', aid: 'wait-sent', eid })))
    const r = await wait({ filters: byApp('wait-sent'), count: 3, timeout: 20_000 })
    expect(r.status).toBe(200)
    const body = r.json()
    expect(body).toMatchObject({ complete: true, total: 3 })
    // the events as /micro/events shows them
    expect(body.events.map((e: { event_id: string }) => e.event_id).sort()).toEqual([...ids].sort())
    expect(body.events[0]).toMatchObject({ app_id: 'wait-sent', event: 'page_view' })
  })

  it('is woken by events that arrive while it is held', async () => {
    const t0 = Date.now()
    const held = wait({ filters: byApp('wait-later'), count: 2, timeout: 20_000 })
    await send([{ e: 'pv', aid: 'wait-later', eid: randomUUID() }])
    await send([{ e: 'pv', aid: 'wait-later', eid: randomUUID() }])
    const r = await held
    expect(r.json()).toMatchObject({ complete: true, total: 2 })
    expect(Date.now() - t0).toBeLessThan(20_000)
  })

  it('answers complete: false with what it found when the timeout passes first', async () => {
    await send([{ e: 'pv', aid: 'wait-short', eid: randomUUID() }])
    await expect.poll(async () => (await wait({ filters: byApp('wait-short'), timeout: 0 })).json().total, { timeout: 20_000 }).toBe(1)
    const t0 = Date.now()
    const r = await wait({ filters: byApp('wait-short'), count: 2, timeout: 300 })
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290)
    expect(r.json()).toMatchObject({ complete: false, total: 1 })
    expect(r.json().events).toHaveLength(1)
    expect((await wait({ filters: byApp('never-sent'), timeout: 200 })).json()).toEqual({ complete: false, total: 0, events: [] })
  })

  it('waits for failed events with "valid": false, and GET /micro/events/{id} explains them with their bad rows', async () => {
    const failedId = randomUUID()
    const goodId = randomUUID()
    const ue = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { elementId: 'no-target' } } })
    await send([
      { e: 'ue', aid: 'wait-failed', eid: failedId, ue_px: ue },
      { e: 'pv', aid: 'wait-failed', eid: goodId },
    ])
    const failed = (await wait({ filters: byApp('wait-failed'), valid: false, timeout: 20_000 })).json()
    expect(failed).toMatchObject({ complete: true, total: 1 })
    expect(failed.events[0].event_id).toBe(failedId)
    expect((await wait({ filters: byApp('wait-failed'), timeout: 20_000 })).json()).toMatchObject({ complete: true, total: 1, events: [{ event_id: goodId }] })

    // the bad row comes by its own stream: wait for it through the single-event route
    await expect.poll(async () => (await call('GET', `/micro/events/${failedId}`)).json().badRows?.length, { timeout: 20_000 }).toBe(1)
    const one = (await call('GET', `/micro/events/${failedId}`)).json()
    expect(one).toMatchObject({ eventId: failedId, valid: false, event: { event_id: failedId, app_id: 'wait-failed' } })
    expect(one.badRows[0].schema).toMatch(/^iglu:com\.snowplowanalytics\.snowplow\.badrows\/schema_violations\//)
    expect(JSON.stringify(one.badRows[0])).toContain(failedId)
    expect((await call('GET', `/micro/events/${goodId.toUpperCase()}`)).json()).toMatchObject({ eventId: goodId.toUpperCase(), valid: true, event: { event_id: goodId }, badRows: [] })
  })

  it('GET /micro/events/{id}: 404 in Micro\'s style for an unknown id, 400 for what is not an id, 405 for another method', async () => {
    const unknown = randomUUID()
    const r = await call('GET', `/micro/events/${unknown}`)
    expect(r.status).toBe(404)
    expect(r.json()).toBe(`No event with id ${unknown} (yet)`)
    expect((await call('GET', '/micro/events/not-an-id')).status).toBe(400)
    expect((await call('GET', `/micro/events/${encodeURIComponent("' OR 1=1 --")}`)).status).toBe(400)
    const m = await call('DELETE', `/micro/events/${unknown}`)
    expect(m.status).toBe(405)
    expect(m.headers.get('allow')).toBe('GET')
  })

  it('refuses what is out of bounds with a 4xx that says why', async () => {
    const r = await wait({ timeout: 60_001 })
    expect(r.status).toBe(400)
    expect(r.text).toMatch(/"timeout" must be an integer from 0 to 60000/)
    expect((await wait({ count: 0 })).status).toBe(400)
    expect((await wait({ count: 1.5 })).status).toBe(400)
    expect((await wait({ valid: 'yes' })).status).toBe(400)
    expect((await wait({ filters: 'app_id' })).status).toBe(400)
    expect((await wait({ filters: [{ column: 'app_id', values: [{}] }] })).status).toBe(400)
    expect((await wait({ validEvents: true })).text).toMatch(/unknown field "validEvents"/)
    expect((await wait('{not json')).status).toBe(400)
    expect((await wait(JSON.stringify({ filters: byApp('x'.repeat(1024 * 1024)) }))).status).toBe(413)
    const get = await call('GET', '/micro/wait')
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })

  it('is refused when a browser sends it from another site, as the other /micro routes that hold the store', async () => {
    const cross = await wait({ filters: byApp('never-sent'), timeout: 0 }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect(cross.status).toBe(403)
    expect(cross.text).toMatch(/cross-site request refused/)
    expect((await wait({ filters: byApp('never-sent'), timeout: 0 }, { 'sec-fetch-site': 'same-origin' })).status).toBe(200)
  })
})

describe('a wait in one process, the loader in another', () => {
  it('is woken by the loader\'s write, and at most maxWaits are held at once (429 beyond)', async () => {
    const conn = JSON.parse(process.env[envVar('database', 'search')]!) as { url: string; schema: string }
    const sql = postgresClient(conn.url, 4)
    const db = searchDb(sql, conn.schema)
    const watch = new StoreWatch({ read: () => storeVersion(db), intervalMs: 100 })
    const api = searchApi({ db: async () => db, version: 'test', storeWatch: watch, maxWaits: 2, lookupSchema: async () => ({ ok: false, errors: {} }) })
    const request = (body: unknown) => api({ method: 'POST', path: '/micro/wait', headers: {}, query: {}, rawQuery: '', cookies: [], body: Buffer.from(JSON.stringify(body)) } as never)
    try {
      const eventId = randomUUID()
      const held = [1, 2].map(() => request({ filters: byApp('other-process'), timeout: 30_000 }))
      // both are held: their first query found nothing and they watch the store
      await vi.waitFor(() => expect(watch.waiting).toBe(2), { timeout: 20_000 })
      const third = await request({ filters: byApp('other-process'), timeout: 0 })
      expect(third.statusCode).toBe(429)
      expect(third.headers?.['retry-after']).toBe('1')

      const o = await enricher().enrichRecord(tp2(`e=pv&p=web&tv=test-1&aid=other-process&eid=${eventId}`, { timestamp: Date.now() }), batch())
      const line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
      const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'test/support/load-search-batch.mts')], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stdin.end(JSON.stringify({ url: conn.url, schema: conn.schema, stream: 'good', lines: [line] }))
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      expect([code, out.trim()]).toEqual([0, 'writing\nloaded 1'])
      const written = Date.now()

      const answers = await Promise.all(held)
      // woken by the write (the watch reads every 100 ms here), not answered at the end of the 25 s they may be held
      expect(Date.now() - written).toBeLessThan(10_000)
      for (const r of answers) {
        expect(r.statusCode).toBe(200)
        expect(JSON.parse(String(r.body))).toMatchObject({ complete: true, total: 1, events: [{ event_id: eventId }] })
      }
      expect(watch.waiting).toBe(0)
    } finally {
      await sql.close()
    }
  }, 60_000)
})
