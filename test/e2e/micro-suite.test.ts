/**
 * A tracking test suite written the way Snowplow Micro's documentation shows
 * (send events with the tracker, wait for them, assert on `/micro/good` and
 * `/micro/bad`, `/micro/reset` between tests), run unchanged against
 * `floe start` instead of a Micro container.
 */
import { buildPageView, buildSelfDescribingEvent, buildStructEvent, newTracker, type Tracker } from '@snowplow/node-tracker'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { eventually, floe, killOrphanDynamo, type Running } from '../support/process'
import { TEST_CREDENTIALS, withAuth } from '../support/stack'

const dataDir = mkdtempSync(join(tmpdir(), 'floe-micro-suite-'))
let proc: Running
let base: string

beforeAll(async () => {
  proc = floe(['start'], { FLOE_DATA_DIR: dataDir, PORT: '0', ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password })
  await proc.waitFor('Floe is up')
  base = (JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile).http
}, 120_000)
afterAll(async () => {
  if (proc?.child.exitCode === null) {
    proc.child.kill('SIGTERM')
    await proc.exited
  }
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})

// --- what a Micro user's helper file looks like -----------------------------

const microGet = async (path: string): Promise<any> => (await fetch(`${base}/micro/${path}`, { headers: withAuth() })).json()
const microPost = async (path: string, body: unknown): Promise<any> => (await fetch(`${base}/micro/${path}`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify(body) })).json()
const reset = async () => expect(await (await fetch(`${base}/micro/reset`, { headers: withAuth() })).json()).toBe('Reset completed')
/** Waits until Micro has seen `good` good and `bad` bad events. */
const waitForEvents = async (good: number, bad = 0) => {
  let last: unknown
  return eventually(async () => {
    const all = (await microGet('all')) as { good: number; bad: number }
    last = all
    return all.good >= good && all.bad >= bad ? all : undefined
  }, `${good} good and ${bad} bad events in /micro/all (last seen: ${JSON.stringify(last)})`, 20_000).catch((err: Error) => {
    throw new Error(`${err.message}; last seen ${JSON.stringify(last)}`)
  })
}

function tracker(): { t: Tracker; flushed: () => Promise<void> } {
  const url = new URL(base)
  let pending = 0
  let waiting: (() => void) | undefined
  const t = newTracker(
    { namespace: 'suite', appId: 'my-web-app', encodeBase64: true },
    {
      endpoint: url.hostname, port: Number(url.port), protocol: 'http', eventMethod: 'post', bufferSize: 1,
      onRequestSuccess: (sent) => void ((pending -= sent.length) === 0 && waiting?.()),
      onRequestFailure: (e) => { throw new Error(`the collector refused a request: ${String(e)}`) },
    },
  )
  const track = t.track.bind(t)
  t.track = ((...args: Parameters<Tracker['track']>) => {
    pending++
    return track(...args)
  }) as Tracker['track']
  return { t, flushed: () => (pending === 0 ? Promise.resolve() : new Promise<void>((r) => (waiting = r))) }
}

// --- the suite ---------------------------------------------------------------

describe('tracking plan (Micro-style suite)', () => {
  beforeEach(reset)

  it('a page view arrives with its page context', async () => {
    const { t, flushed } = tracker()
    t.track(buildPageView({ pageUrl: 'https://shop.example.com/basket', pageTitle: 'Basket' }), [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '0b3f5a8e-7a7e-4a51-8a36-2c1a2b8e9d01' } }])
    await flushed()
    await waitForEvents(1)
    const pageViews = await microPost('good', { event_type: 'page_view' })
    expect(pageViews).toHaveLength(1)
    expect(pageViews[0].event).toMatchObject({ app_id: 'my-web-app', page_url: 'https://shop.example.com/basket', page_title: 'Basket' })
    expect(pageViews[0].contexts).toContain('iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0')
    expect(await microGet('bad')).toEqual([])
  })

  it('add-to-basket and link clicks are tracked as specified', async () => {
    const { t, flushed } = tracker()
    t.track(buildStructEvent({ category: 'basket', action: 'add', label: 'sku-42', value: 3 }))
    t.track(buildSelfDescribingEvent({ event: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: 'https://partner.example.com' } } }))
    await flushed()
    await waitForEvents(2)
    const [add] = await microPost('good', { event_type: 'struct' })
    expect(add.event).toMatchObject({ se_category: 'basket', se_action: 'add', se_label: 'sku-42', se_value: 3 })
    const clicks = await microPost('good', { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1' })
    expect(clicks).toHaveLength(1)
    expect(clicks[0].event.unstruct_event.data.data.targetUrl).toBe('https://partner.example.com')
    expect(await microGet('all')).toEqual({ total: 2, good: 2, bad: 0 })
  })

  it('an event that breaks its schema is caught in /micro/bad, not in /micro/good', async () => {
    const { t, flushed } = tracker()
    t.track(buildSelfDescribingEvent({ event: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { elementId: 'cta' } } }))
    await flushed()
    await waitForEvents(0, 1)
    const bad = await microGet('bad')
    expect(bad).toHaveLength(1)
    expect(bad[0].errors.join('\n')).toMatch(/targetUrl/)
    expect(await microGet('good')).toEqual([])
  })

  it('starts from an empty store after reset', async () => {
    expect(await microGet('all')).toEqual({ total: 0, good: 0, bad: 0 })
  })
})
