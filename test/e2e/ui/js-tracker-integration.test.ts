/**
 * The checks of Snowplow's JavaScript tracker integration suite
 * (snowplow-javascript-tracker 4.10.1, `trackers/javascript-tracker/test/integration/integration.test.ts`)
 * that read `/micro/good`'s `rawEvent`, run against a local stack in headless
 * Chromium. The page is that suite's `integration.html` set up the same way
 * (two trackers: `sp` with custom headers and the web page entity, `b64off`
 * with base64 off; the same page views), with the browser tracker 4.10.1
 * bundled instead of the `sp.js` tag; each event method (`get`, `post`,
 * `beacon`: keepalive POST) on a page load of its own, then `/micro/good`
 * read once, as the suite does.
 */
import { launchPersistentChromium, servePage } from '../../support/chromium'
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import type { Server } from 'node:http'
import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../../lib/local/handlers'
import { eventually } from '../../support/process'
import { useLocalStack, withAuth } from '../../support/stack'

const VERSION = '4.10.1'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

/** integration.html's trackers and page views, through the browser tracker's API. */
const ENTRY = `
import { newTracker, trackPageView } from '@snowplow/browser-tracker'
window.integration = (collector, eventMethod, testIdentifier) => {
  newTracker('sp', collector, {
    appId: 'sp-' + eventMethod + '-' + testIdentifier,
    platform: 'mob',
    eventMethod: eventMethod == 'beacon' ? 'post' : eventMethod,
    keepalive: eventMethod == 'beacon',
    contexts: { webPage: true },
    customHeaders: { 'Content-Language': 'de-DE, en-CA' },
  })
  newTracker('b64off', collector, {
    appId: 'no-b64-' + eventMethod + '-' + testIdentifier,
    platform: 'web',
    eventMethod: eventMethod == 'beacon' ? 'post' : eventMethod,
    keepalive: eventMethod == 'beacon',
    encodeBase64: false,
    contexts: { webPage: false },
  })
  const page = { title: 'My Title', context: [{ schema: 'iglu:org.schema/WebPage/jsonschema/1-0-0', data: { keywords: ['tester'] } }] }
  trackPageView(page, ['sp'])
  trackPageView(page, ['b64off'])
}
`

const METHODS = ['get', 'post', 'beacon'] as const
const testIdentifier = `chromium_${Math.random()}`
let pageServer: Server
let context: BrowserContext
let userDataDir: string
let log: any[] = []

/** lodash's `isMatch`: every property of `expected` (deeply, arrays element by element) is in `actual`. */
function isMatch(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(actual, expected)
  if (actual === null || typeof actual !== 'object') return false
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.every((e) => actual.some((a) => isMatch(a, e)))
  return Object.entries(expected).every(([k, v]) => isMatch((actual as Record<string, unknown>)[k], v))
}
const logContains = (ev: unknown) => log.some((e) => isMatch(e, ev))

async function good(): Promise<any[]> {
  const r = await fetch(`${stack.current.url}/micro/good`, { headers: withAuth() })
  const text = await r.text()
  if (r.status !== 200) throw new Error(`/micro/good: ${r.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as any[]
}

beforeAll(async () => {
  const bundle = await build({ stdin: { contents: ENTRY, resolveDir: projectRoot, loader: 'js' }, bundle: true, format: 'iife', platform: 'browser', target: 'es2020', write: false, logLevel: 'silent' })
  const script = bundle.outputFiles[0]!.contents
  const served = await servePage(script, '<!doctype html><html><head><title>Integration test page</title><script src="/tracker.js"></script></head><body><p id="title">Page for sending requests to Snowplow Micro</p></body></html>')
  pageServer = served.server
  const pageOrigin = served.origin
  ;({ context, userDataDir } = await launchPersistentChromium())
  const page = await context.newPage()
  for (const method of METHODS) {
    await page.goto(`${pageOrigin}/integration.html?eventMethod=${method}`)
    await page.evaluate(({ url, method, id }) => (globalThis as any).integration(url, method, id), { url: stack.current.url, method, id: testIdentifier })
    // every page view in the store (2 by sp, 1 by b64off) before the next page load
    // both 'My Title' page views (sp and b64off) in the store before the next page load
    await eventually(async () => {
      const seen = await good().catch(() => [])
      return seen.filter((e) => String(e.event.app_id).endsWith(`-${method}-${testIdentifier}`) && e.event.page_title === 'My Title').length >= 2 ? true : undefined
    }, `the ${method} page views in /micro/good`, 120_000)
  }
  log = await good()
}, 420_000)

afterAll(async () => {
  await context?.close()
  await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()))
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true })
})

describe('Snowplow Micro integration (JavaScript tracker 4.10.1 suite, rawEvent checks)', () => {
  for (const method of METHODS) {
    it(`${method}: contains correct tracker version`, () => {
      expect(logContains({ rawEvent: { parameters: { tv: `js-${VERSION}` } }, event: { app_id: `sp-${method}-${testIdentifier}`, v_tracker: `js-${VERSION}` } })).toBe(true)
    })

    it(`${method}: contains page view event with non-base64 encoded context payload`, () => {
      expect(
        logContains({
          rawEvent: {
            parameters: {
              co: '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0","data":[{"schema":"iglu:org.schema/WebPage/jsonschema/1-0-0","data":{"keywords":["tester"]}}]}',
            },
          },
          event: {
            event: 'page_view',
            platform: 'web',
            app_id: `no-b64-${method}-${testIdentifier}`,
            page_title: 'My Title',
            contexts: { data: [{ schema: 'iglu:org.schema/WebPage/jsonschema/1-0-0', data: { keywords: ['tester'] } }] },
          },
        }),
      ).toBe(true)
    })

    it(`${method}: has custom headers attached if possible`, () => {
      const results = log.filter((event) => event.rawEvent.context.headers.map((h: string) => h.toLowerCase()).includes('content-language: de-de, en-ca') && event.event.app_id === `sp-${method}-${testIdentifier}`)
      expect(results.length).toBeGreaterThanOrEqual(1)
    })

    it(`${method}: the sp tracker's contexts as sent (cx on GET, co on POST), its other parameters, the request's user agent and origin`, () => {
      const sp = log.find((e) => e.event.app_id === `sp-${method}-${testIdentifier}` && e.event.page_title === 'My Title')
      const p = sp.rawEvent.parameters
      const sent = method === 'get' ? Buffer.from(p.cx, 'base64url').toString('utf8') : p.co
      expect(typeof sent).toBe('string')
      expect(JSON.parse(sent).data).toContainEqual({ schema: 'iglu:org.schema/WebPage/jsonschema/1-0-0', data: { keywords: ['tester'] } })
      for (const p of ['res', 'vp', 'ds', 'cookie', 'cd', 'dtm', 'stm']) expect(sp.rawEvent.parameters).toHaveProperty(p)
      expect(sp.rawEvent.api.vendor).toBe('com.snowplowanalytics.snowplow')
      expect(sp.rawEvent.context.useragent).toMatch(/Chrome/)
      expect(sp.rawEvent.context.headers.some((h: string) => /^origin: http:\/\/127\.0\.0\.1:/i.test(h))).toBe(true)
      // the stack's own credentials never reach the store
      expect(sp.rawEvent.context.headers.some((h: string) => /^authorization:/i.test(h))).toBe(false)
    })
  }
})
