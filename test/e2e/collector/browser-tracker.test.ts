import { launchPersistentChromium, servePage } from '../../support/chromium'
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import type { Server } from 'node:http'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../../lib/local/handlers'
import { testClients, useLocalStack } from '../../support/stack'
import { eventsOf, readPayloads } from '../../support/streams'

const stack = useLocalStack({ triggers: false })

/** The page's script: the real browser tracker, bundled, driven from the test through `window.floe`. */
const ENTRY = `
import { newTracker, trackPageView, trackSelfDescribingEvent, trackStructEvent } from '@snowplow/browser-tracker'
const sent = []
const failed = []
window.floe = {
  sent,
  failed,
  start(id, collector, options) {
    newTracker(id, collector, {
      ...options,
      contexts: { webPage: true },
      onRequestSuccess: (batch) => { for (const e of batch) sent.push(e.eid) },
      onRequestFailure: (f) => { failed.push({ status: f.status, willRetry: f.willRetry }) },
    })
  },
  trackMix(id, n) {
    for (let i = 0; i < n; i++) {
      if (i % 3 === 0) trackPageView({ title: id + ' page ' + i }, [id])
      else if (i % 3 === 1) trackStructEvent({ category: 'e2e', action: id + ' action ' + i }, [id])
      else trackSelfDescribingEvent({ event: { schema: 'iglu:com.acme/clicked/jsonschema/1-0-0', data: { n: i } }, context: [{ schema: 'iglu:com.acme/ctx/jsonschema/1-0-0', data: { id } }] }, [id])
    }
  },
}
`

let pageServer: Server
let pageOrigin: string
let context: BrowserContext
let page: Page
let userDataDir: string

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: ENTRY, resolveDir: projectRoot, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  })
  const script = bundle.outputFiles[0]!.contents
  const served = await servePage(script, '<!doctype html><html><head><title>Floe e2e</title><script src="/tracker.js"></script></head><body>e2e</body></html>')
  pageServer = served.server
  // Another port: a different origin (CORS with credentials), the same site (the cookie is first-party).
  pageOrigin = served.origin
  ;({ context, userDataDir } = await launchPersistentChromium())
  page = await context.newPage()
  await page.goto(`${pageOrigin}/index.html`)
}, 60_000)

afterAll(async () => {
  await context?.close()
  await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()))
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true })
})

async function sendAndWait(id: string, options: Record<string, unknown>, n: number): Promise<string[]> {
  await page.evaluate(({ id, url, options }) => (globalThis as any).floe.start(id, url, options), { id, url: stack.current.url, options })
  const before = await page.evaluate(() => (globalThis as any).floe.sent.length as number)
  await page.evaluate(({ id, n }) => (globalThis as any).floe.trackMix(id, n), { id, n })
  await page.waitForFunction((target) => (globalThis as any).floe.sent.length >= target, before + n)
  expect(await page.evaluate(() => (globalThis as any).floe.failed)).toEqual([])
  return page.evaluate((before) => (globalThis as any).floe.sent.slice(before) as string[], before)
}

async function eventsFor(appId: string) {
  const payloads = (await readPayloads(testClients().kinesis, stack.current.names.streams.raw)).filter((p) =>
    eventsOf([p]).some((e) => e.aid === appId),
  )
  return { payloads, events: eventsOf(payloads).filter((e) => e.aid === appId) }
}

describe('@snowplow/browser-tracker in headless Chromium, page on another origin', () => {
  it('POST: every event once on the raw stream; the sp cookie is set and sent back', async () => {
    const eids = await sendAndWait('bpost', { appId: 'browser-post', eventMethod: 'post', encodeBase64: false }, 9)
    const { payloads, events } = await eventsFor('browser-post')
    expect(events.map((e) => e.eid).sort()).toEqual([...eids].sort())
    expect(new Set(events.map((e) => e.eid)).size).toBe(events.length)

    const cookies = await context.cookies(stack.current.url)
    const sp = cookies.find((c) => c.name === 'sp')
    expect(sp).toMatchObject({ httpOnly: true, secure: true, sameSite: 'None', path: '/' })
    expect(sp!.expires * 1000).toBeGreaterThan(Date.now() + 364 * 86_400_000)
    // The first request may carry no cookie; every later one carries the id the collector set.
    const nuids = payloads.map((p) => p.networkUserId)
    expect(nuids.at(-1)).toBe(sp!.value)
    expect(payloads.filter((p) => p.headers?.includes(`Cookie: sp=${sp!.value}`)).length).toBeGreaterThanOrEqual(payloads.length - 1)
    for (const p of payloads) {
      expect(p.path).toBe('/com.snowplowanalytics.snowplow/tp2')
      expect(p.contentType).toBe('application/json; charset=utf-8')
      expect(p.headers).toContain(`Origin: ${pageOrigin}`)
      expect(p.userAgent).toMatch(/Chrome/)
      expect(p.refererUri).toBe(`${pageOrigin}/`)
    }
    for (const e of events) expect(e.tv).toMatch(/^js-4\./)
    expect(events.filter((e) => e.e === 'ue').map((e) => JSON.parse(e.ue_pr!).data.data.n)).toEqual([2, 5, 8])
  })

  it('GET with base64: every event once; the cookie set by the POSTs is read back', async () => {
    const sp = (await context.cookies(stack.current.url)).find((c) => c.name === 'sp')!
    const eids = await sendAndWait('bget', { appId: 'browser-get', eventMethod: 'get' }, 6)
    const { payloads, events } = await eventsFor('browser-get')
    expect(events.map((e) => e.eid).sort()).toEqual([...eids].sort())
    for (const p of payloads) {
      expect(p.path).toBe('/i')
      expect(p.body).toBeUndefined()
      expect(p.networkUserId).toBe(sp.value)
    }
    for (const e of events) expect(e.cx).toBeDefined()
  })

  it('server anonymisation: SP-Anonymous passes the preflight; zero nuid, no IP, the cookie expired', async () => {
    const eids = await sendAndWait('banon', { appId: 'browser-anon', eventMethod: 'post', anonymousTracking: { withServerAnonymisation: true } }, 3)
    const { payloads, events } = await eventsFor('browser-anon')
    expect(events.map((e) => e.eid).sort()).toEqual([...eids].sort())
    for (const p of payloads) {
      expect(p.networkUserId).toBe('00000000-0000-0000-0000-000000000000')
      expect(p.ipAddress).toBe('unknown')
      expect(p.headers?.some((h) => h.startsWith('Cookie:'))).toBe(false)
    }
    expect((await context.cookies(stack.current.url)).find((c) => c.name === 'sp')).toBeUndefined()
  })
})
