/**
 * Every page at a phone's width (390 px), a laptop's (1366 px) and a wide
 * screen's (1920 px), in headless Chromium against a whole local stack: the
 * page never scrolls sideways (tables scroll inside their card), and a
 * full-page screenshot of each is written to test-artifacts/screenshots/
 * (`<page>-<width>.png`).
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../../lib/local/handlers'
import { useChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../../support/stack'
import { newTenant, objectSchema, putSchema, type Tenant } from '../../integration/tracking-design/helpers'

const SHOTS = join(projectRoot, 'test-artifacts', 'screenshots')
const WIDTHS = [390, 1366, 1920] as const
const CHECKOUT = 'iglu:com.acme/checkout_step/jsonschema/1-0-0'
const MISSING = 'iglu:com.acme.e2e/missing_schema/jsonschema/1-0-0'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
const browser = useChromium()
const url = (path: string) => `${stack.current.url}${path}`
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const unstruct = (schema: string, data: unknown) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })

let t: Tenant
let specId: string

/** Waits (polling the search store) until each index holds that many documents. */
async function stored(want: Record<'good' | 'bad', number>, timeoutMs = 60_000): Promise<void> {
  const countOf = async (index: string) => ((await (await fetch(url(`/search-store/${index}/_count`), { headers: withAuth() })).json()) as { count: number }).count
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = { good: await countOf('good'), bad: await countOf('bad') }
    if (got.good === want.good && got.bad === want.bad) return
    if (Date.now() > deadline) throw new Error(`the search store holds ${JSON.stringify(got)}, not ${JSON.stringify(want)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

beforeAll(async () => {
  rmSync(SHOTS, { recursive: true, force: true })
  mkdirSync(SHOTS, { recursive: true })
  // The first request starts the authorizer and the control plane (slow on a loaded machine: the gateway may answer 500 once).
  for (let i = 0; i < 3 && (await fetch(url('/control-plane/tracking-plans'), { headers: withAuth() })).status === 500; i++);
  // a tracking plan, events that follow it, long values (a wide table), and two bad rows
  await putSchema(stack.current, CHECKOUT, objectSchema({ step: { type: 'string', maxLength: 20 } }))
  t = await newTenant(stack.current)
  const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Checkout step', event: { source: CHECKOUT } }, message: 'first plan' })
  expect(created.status, created.text).toBe(201)
  specId = created.body.data[0].id
  expect((await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [specId] })).status).toBe(202)
  const claim = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: { id: specId, version: 1 } }] })
  const tp2 = (e: Record<string, string>) => ({ p: 'web', tv: 'js-4.10.1', eid: randomUUID(), dtm: String(Date.now()), uid: `user-with-a-rather-long-identifier-${randomUUID()}`, ...e })
  const events = [
    ...Array.from({ length: 6 }, (_, i) => tp2({ e: 'pv', aid: 'e2e-widths', url: `https://shop.example.com/a/rather/long/path/to/product/${i}?utm_source=newsletter&utm_campaign=${'x'.repeat(40)}`, page: `Product ${i}` })),
    tp2({ e: 'ue', aid: 'e2e-widths', ue_pr: unstruct(CHECKOUT, { step: 'payment' }), cx: claim }),
    tp2({ e: 'ue', aid: 'e2e-widths-bad', ue_pr: unstruct(MISSING, { sku: 'x' }) }),
    tp2({ e: 'ue', aid: 'e2e-widths-bad', ue_pr: unstruct(CHECKOUT, { step: 'a step whose name is far too long for its schema' }) }),
  ]
  const r = await fetch(url('/com.snowplowanalytics.snowplow/tp2'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events }),
  })
  expect(r.status).toBe(200)
  await stack.current.drain()
  await stack.current.drain()
  await stored({ good: 7, bad: 2 })
}, 240_000)

/** Each page, opened and ready, as someone reaches it. */
const PAGES: [string, (p: Page) => Promise<void>][] = [
  ['home-overview', async (p) => {
    await p.goto(url('/home#/overview'))
    await until(() => p.getByTestId('collector-url').inputValue()).toBe(stack.current.url)
    await until(() => p.getByTestId('good-count').innerText()).toBe('7')
  }],
  ['home-example-events', async (p) => {
    await p.goto(url('/home#/example-events'))
    await p.locator('button[data-example=page-view]').waitFor()
  }],
  ['home-registry', async (p) => {
    await p.goto(url('/home#/registry'))
    await until(() => p.getByTestId('schemas').locator('tbody tr').count()).toBeGreaterThan(0)
  }],
  ['home-tracking-plans', async (p) => {
    await p.goto(url(`/home#/tracking-plans/${t.orgId}`))
    await until(() => p.locator(`[data-spec-row="${specId}"] [data-col=hour]`).innerText()).toBe('1')
  }],
  ['home-tracking-plan', async (p) => {
    await p.goto(url(`/home#/tracking-plans/${t.orgId}/${specId}`))
    await until(() => p.locator('[data-section=observed] [data-count=hour] strong').innerText()).toBe('1')
  }],
  ['home-control-plane', async (p) => {
    await p.goto(url('/home#/control-plane'))
    await until(() => p.locator('#cp-license').getByTestId('licence-state').innerText()).toMatch(/^accepted/)
  }],
  ['dashboard-good', async (p) => {
    await p.goto(url('/dashboard-ui#index=good&range=1h'))
    await until(() => p.getByTestId('events').locator('tbody tr').count()).toBe(7)
    await p.locator('[data-testid=histogram] .u-over').waitFor()
  }],
  ['dashboard-bad', async (p) => {
    await p.goto(url('/dashboard-ui#index=bad&range=1h'))
    await until(() => p.getByTestId('events').locator('tbody tr').count()).toBe(2)
  }],
  ['dashboard-failed-event', async (p) => {
    await p.goto(url('/dashboard-ui#index=bad&range=1h'))
    await until(() => p.getByTestId('events').locator('tbody tr').count()).toBe(2)
    await p.getByTestId('events').locator('tbody tr').first().click()
    await until(() => p.getByTestId('drawer').locator('h3').innerText()).toMatch(/^failed event · /)
  }],
  ['dashboard-recover', async (p) => {
    await p.goto(url('/dashboard-ui#index=bad&range=1h'))
    await until(() => p.getByTestId('events').locator('tbody tr').count()).toBe(2)
    await p.getByTestId('recover').locator('summary').click()
    await p.getByTestId('recover-preview-btn').click()
    await p.getByTestId('recover-preview').waitFor()
  }],
]

const scrollWidth = (p: Page) => p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)
/** The outermost elements that reach past the viewport's right edge (for the failure's message). */
const overflowing = (p: Page) =>
  p.evaluate(() => {
    const g = globalThis as any
    const out: string[] = []
    for (const el of g.document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect()
      if (r.right <= g.innerWidth + 0.5 || r.width === 0) continue
      let clipped = false // inside something that scrolls or clips sideways
      for (let a = el.parentElement; a && a !== g.document.body; a = a.parentElement) if (['auto', 'scroll', 'hidden', 'clip'].includes(g.getComputedStyle(a).overflowX)) clipped = true
      if (!clipped && !(el.parentElement && el.parentElement.getBoundingClientRect().right > g.innerWidth + 0.5)) out.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} → ${Math.round(r.right)} px`)
    }
    return out.slice(0, 8)
  })

async function shot(p: Page, name: string): Promise<void> {
  const file = join(SHOTS, `${name}.png`)
  await p.evaluate(() => (globalThis as any).scrollTo(0, 0))
  await p.screenshot({ path: file, fullPage: true })
  expect(statSync(file).size, file).toBeGreaterThan(1000)
}

describe('every page at 390, 1366 and 1920 px', () => {
  for (const width of WIDTHS) {
    it(`lays out within ${width} px (no sideways scroll of the page), screenshots written`, async () => {
      const context = await browser.current.newContext({ viewport: { width, height: 900 }, httpCredentials: TEST_CREDENTIALS, reducedMotion: 'reduce' })
      const errors: string[] = []
      context.on('page', (p) => p.on('pageerror', (e) => errors.push(`${p.url()}: ${e.message}`)))
      const page = await context.newPage()
      const wide: string[] = []
      for (const [name, open] of PAGES) {
        await page.goto('about:blank') // a fresh load, even where only the hash differs
        await open(page)
        const w = await scrollWidth(page)
        if (w > width) wide.push(`${name}: ${w} px (${(await overflowing(page)).join('; ')})`)
        await shot(page, `${name}-${width}`)
      }
      // the event table is wider than a phone: it scrolls inside its card
      if (width === 390) {
        await page.goto('about:blank')
        await PAGES.find(([n]) => n === 'dashboard-good')![1](page)
        const wrap = page.locator('.events-wrap')
        expect(await wrap.evaluate((el: any) => [el.scrollWidth > el.clientWidth, (globalThis as any).getComputedStyle(el).overflowX])).toEqual([true, 'auto'])
      }
      expect(wide).toEqual([])
      expect(errors).toEqual([])
      await context.close()

      // signing in: the answer to a browser with wrong credentials
      const anonymous = await browser.current.newContext({ viewport: { width, height: 900 }, httpCredentials: { username: 'someone-else', password: 'NotThePassword2024' } })
      const p = await anonymous.newPage()
      const answer = await p.goto(url('/home'))
      expect(answer?.status()).toBe(401)
      expect(await scrollWidth(p)).toBeLessThanOrEqual(width)
      await shot(p, `sign-in-${width}`)
      await anonymous.close()
    }, 240_000)
  }
})
