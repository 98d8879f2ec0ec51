/**
 * The examples of docs/testing-with-floe.md, run as they are written there:
 * each code block after an `<!-- example: … -->` marker is read from the
 * page, compiled (esbuild) and run against a local stack, with its imports
 * given: `node:crypto` and `@snowplow/node-tracker` themselves, `vitest`'s
 * `expect`, and for the Playwright examples a `test` whose `page` is a
 * headless Chromium page (playwright-core) of a shop page whose browser
 * tracker sends to the stack's collector.
 */
import * as crypto from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { join } from 'node:path'
import * as nodeTracker from '@snowplow/node-tracker'
import { build, transform } from 'esbuild'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'
import { launchPersistentChromium, servePage } from '../support/chromium'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
const PAGE = readFileSync(join(projectRoot, 'docs/testing-with-floe.md'), 'utf8')

/** The code block after `<!-- example: name -->`. */
function example(name: string): string {
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`ts\\n([\\s\\S]*?)\\n\`\`\``).exec(PAGE)
  if (!m) throw new Error(`docs/testing-with-floe.md has no example '${name}'`)
  return m[1]!
}

type Body = (fixtures: { page: Page }) => Promise<void>

/** Runs an example's module with `modules` as its imports and `env` as its environment; answers the tests it declared. */
async function load(code: string, modules: Record<string, unknown>, env: Record<string, string>): Promise<{ name: string; body: Body }[]> {
  const js = (await transform(code, { loader: 'ts', format: 'cjs', target: 'node20' })).code
  const declared: { name: string; body: Body }[] = []
  const declare = (name: string, body: Body) => void declared.push({ name, body })
  const req = (id: string) => {
    if (!(id in modules)) throw new Error(`the example imports ${id}, which this test does not give`)
    const m = modules[id]
    return typeof m === 'function' ? m(declare) : m
  }
  new Function('require', 'process', 'module', 'exports', js)(req, { env }, { exports: {} }, {})
  return declared
}

const ENV = () => ({ FLOE_URL: stack.current.url, FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password })

/** The shop page: its browser tracker sends a page view to the stack's collector, and a structured event on "Add to cart". */
const SHOP = `
import { newTracker, trackPageView, trackStructEvent } from '@snowplow/browser-tracker'
window.shop = (collector) => {
  newTracker('shop', collector, { appId: 'shop', eventMethod: 'post', encodeBase64: false, bufferSize: 1 })
  trackPageView()
  document.getElementById('add').onclick = () => trackStructEvent({ category: 'cart', action: 'add', label: 'sku-1' })
}
`

let pageServer: Server | undefined
let context: BrowserContext | undefined
let userDataDir: string | undefined
let appUrl = ''

beforeAll(async () => {
  const bundle = await build({ stdin: { contents: SHOP, resolveDir: projectRoot, loader: 'js' }, bundle: true, format: 'iife', platform: 'browser', target: 'es2020', write: false, logLevel: 'silent' })
  const served = await servePage(
    bundle.outputFiles[0]!.contents,
    `<!doctype html><html><head><title>Shop</title><script src="/tracker.js"></script></head><body><button id="add">Add to cart</button><script>shop(${JSON.stringify(stack.current.url)})</script></body></html>`,
  )
  pageServer = served.server
  appUrl = served.origin
  ;({ context, userDataDir } = await launchPersistentChromium())
  // the stack is ready once /micro/validate answers (its worker builds enrich as the stack starts)
  const warm = await fetch(`${stack.current.url}/micro/validate/i?e=pv&p=web&tv=warm-up`, { headers: withAuth() })
  expect(warm.status).toBe(200)
}, 120_000)

afterAll(async () => {
  await context?.close()
  await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()))
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true })
})

/** A Node tracker example's tests, run one after the other; answers their names. */
async function runVitest(name: string): Promise<string[]> {
  const tests = await load(example(name), { 'node:crypto': crypto, '@snowplow/node-tracker': nodeTracker, vitest: (declare: (n: string, b: Body) => void) => ({ it: declare, expect }) }, ENV())
  for (const t of tests) await t.body({} as { page: Page })
  return tests.map((t) => t.name)
}

/** A Playwright example's tests, each on a new page of the shop; answers their names. */
async function runPlaywright(name: string): Promise<string[]> {
  // Playwright's expect.poll waits 5 s by default (vitest's 1 s)
  const playwrightExpect = Object.assign((v: unknown, m?: string) => expect(v, m), expect, { poll: (f: () => unknown, o: object = {}) => expect.poll(f, { timeout: 5_000, ...o }) })
  const tests = await load(example(name), { 'node:crypto': crypto, '@playwright/test': (declare: (n: string, b: Body) => void) => ({ test: declare, expect: playwrightExpect }) }, { ...ENV(), APP_URL: appUrl })
  for (const t of tests) {
    const page = await context!.newPage()
    try {
      await t.body({ page })
    } finally {
      await page.close()
    }
  }
  return tests.map((t) => t.name)
}

describe('docs/testing-with-floe.md', () => {
  it('the Vitest example through the pipeline (/micro/wait, /micro/events/<id>) passes against the stack', async () => {
    expect(await runVitest('vitest-pipeline')).toEqual(['a checkout is stored as a page view, and a click with an unknown schema fails'])
  }, 120_000)

  it('the Playwright example through the pipeline (/micro/wait) passes against the stack, in Chromium', async () => {
    expect(await runPlaywright('playwright-pipeline')).toEqual(['the shop page stores a page view and the add to cart'])
  }, 180_000)

  it('the Vitest example with /micro/validate passes against the stack', async () => {
    expect(await runVitest('vitest')).toEqual(['a page view is valid, and a checkout with the wrong type is not'])
  }, 120_000)

  it('the Playwright example with /micro/validate passes against the stack, in Chromium', async () => {
    expect(await runPlaywright('playwright')).toEqual(['the shop page sends valid events'])
  }, 180_000)
})
