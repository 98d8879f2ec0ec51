/**
 * The Tracking plans tab in headless Chromium against a whole local stack
 * (collector → enrich, whose event specification enrichment is on by
 * default → search store): a published specification, events that follow it
 * and one that claims it and breaks a rule; the tab shows both counts and
 * the broken rule, a compatibility warning with its witness, and a stricter
 * draft tried against the stored events lists the violators. Screenshots of
 * the tab with data are saved in test-artifacts/tracking-plans/.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../support/chromium'
import { projectRoot } from '../../../lib/local/handlers'
import { basicAuth, TEST_CREDENTIALS, useLocalStack } from '../../support/stack'
import { newTenant, objectSchema, putSchema, type Tenant } from '../../integration/tracking-design/helpers'

const SHOTS = join(projectRoot, 'test-artifacts', 'tracking-plans')
const CHECKOUT = 'iglu:com.acme/checkout_step/jsonschema/1-0-0'
const CART = 'iglu:com.acme/cart/jsonschema/1-0-0'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

let browser: Browser
let page: Page
let t: Tenant
let id: string
const pageErrors: string[] = []
const url = (path: string) => `${stack.current.url}${path}`
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const RULES = { type: 'object', properties: { step: { type: 'string', maxLength: 20, enum: ['payment', 'shipping'] } }, required: ['step'], additionalProperties: false }

async function send(step: string, claim?: object) {
  const contexts = [{ schema: CART, data: { items: 2 } }, ...(claim ? [{ schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: claim }] : [])]
  const ue = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: CHECKOUT, data: { step } } })
  const cx = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1', data: contexts })
  expect((await fetch(url(`/i?e=ue&p=web&tv=js-3&aid=e2e-plans&ue_px=${ue}&cx=${cx}`))).status).toBe(200)
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  // The first request starts the authorizer and the control plane (slow on a loaded machine: the gateway may answer 500 once).
  for (let i = 0; i < 3 && (await fetch(url('/control-plane/tracking-plans'), { headers: { authorization: basicAuth() } })).status === 500; i++);
  await putSchema(stack.current, CHECKOUT, objectSchema({ step: { type: 'string', maxLength: 20 } }))
  await putSchema(stack.current, CART, objectSchema({ items: { type: 'integer' } }))
  t = await newTenant(stack.current)
  const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Checkout step', event: { source: CHECKOUT, schema: RULES }, entities: { tracked: [{ source: CART, minCardinality: 1, maxCardinality: 1 }] } }, message: 'first plan' })
  expect(created.status, created.text).toBe(201)
  id = created.body.data[0].id
  expect((await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [id] })).status).toBe(202)
  await send('payment')
  await send('shipping')
  await send('refund', { id, version: 1 }) // claims the specification and breaks its enum
  await stack.current.drain() // enrich has written everything it read
  await stack.current.drain() // and the loaders have loaded it
  // a newer version of the data structure that the rules do not fit: a compatibility warning
  await putSchema(stack.current, 'iglu:com.acme/checkout_step/jsonschema/1-0-1', objectSchema({ step: { type: 'string', maxLength: 5 } }))
  browser = await launchChromium()
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, httpCredentials: TEST_CREDENTIALS, reducedMotion: 'reduce' })
  context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)))
  page = await context.newPage()
}, 240_000)

afterAll(async () => {
  await browser?.close()
})

describe('Tracking plans tab', () => {
  it('lists the specification with what was observed: tagged events and the events that broke it', async () => {
    await page.goto(url('/home#/tracking-plans'))
    await page.getByRole('tab', { name: 'Tracking plans' }).waitFor()
    // one organization: it opens by itself
    await until(() => new URL(page.url()).hash).toBe(`#/tracking-plans/${t.orgId}`)
    const row = page.locator(`[data-spec-row="${id}"]`)
    await until(() => row.locator('[data-col=hour]').innerText()).toBe('2')
    expect(await row.locator('[data-col=broken]').innerText()).toBe('1')
    // each count opens the dashboard on what it counts
    expect(await row.locator('[data-col=broken] a').getAttribute('href')).toBe(`/dashboard-ui#index=bad&range=24h&q=%22${id}%22`)
    expect(await row.locator('[data-col=hour] a').getAttribute('href')).toMatch(/^\/dashboard-ui#index=good&range=1h&q=contexts_com_snowplowanalytics_snowplow_event_specification_1\.id/)
    expect(await row.innerText()).toMatch(/Checkout step[\s\S]*published[\s\S]*iglu:com\.acme\/checkout_step\/jsonschema 1-0-0/)
    await shot('1-list')
    await page.getByLabel('status').selectOption('draft')
    await until(() => page.locator('.empty').innerText()).toMatch(/No event specification with status draft/)
    await page.getByLabel('status').selectOption('')
    await page.getByLabel('search by name').fill('checkout')
    await until(() => page.locator('[data-spec-row]').count()).toBe(1)
  }, 120_000)

  it('shows the detail: counts, the broken rule, readable rules, the compatibility witness, the history', async () => {
    await page.locator(`[data-spec-row="${id}"] [data-spec-link]`).click()
    const observed = page.locator('[data-section=observed]')
    await until(() => observed.locator('[data-count=hour] strong').innerText()).toBe('2')
    expect(await observed.locator('[data-count=broken] strong').innerText()).toBe('1')
    expect(await observed.locator('[data-broken-rule]').innerText()).toMatch(/^event iglu:com\.acme\/checkout_step\/jsonschema\/1-0-0: \$\.step/)
    expect(await observed.locator('[data-count=day]').getAttribute('href')).toMatch(/^\/dashboard-ui#index=good&range=24h&q=contexts_com_snowplowanalytics_snowplow_event_specification_1\.id/)
    expect(await observed.locator(`[data-entity-rate="${CART}"]`).innerText()).toBe('100%')
    const step = page.locator('[data-section=rules] [data-property=step]')
    expect(await step.innerText()).toMatch(/string[\s\S]*required[\s\S]*one of "payment", "shipping"/)
    expect(await page.locator(`[data-registry-link="${CHECKOUT}"]`).getAttribute('href')).toBe('/registry-server/api/schemas/com.acme/checkout_step/jsonschema/1-0-0')
    const compat = page.locator('[data-section=compatibility] [data-compat]').first()
    expect(await compat.innerText()).toMatch(/INCOMPATIBLE[\s\S]*1-0-1/)
    expect(await compat.locator('[data-witness] pre').innerText()).toMatch(/"step"/)
    expect(await page.locator('[data-section=history]').innerText()).toMatch(/first plan/)
    await shot('2-detail')
  }, 120_000)

  it('tries a stricter draft against the stored events and lists the violators', async () => {
    const stricter = { name: 'Checkout step', event: { source: CHECKOUT, schema: { ...RULES, properties: { step: { type: 'string', enum: ['payment'] } } } }, entities: { tracked: [{ source: CART, minCardinality: 1 }] } }
    const box = page.locator('[data-section=try] textarea')
    await box.fill(JSON.stringify(stricter, null, 2))
    await page.getByRole('button', { name: 'Try against live traffic' }).click()
    const report = page.locator('[data-try-report]')
    await until(() => report.locator('[data-violated]').innerText()).toBe('1')
    expect(await report.locator('[data-examined]').innerText()).toBe('2')
    expect(await report.locator('[data-matched]').innerText()).toBe('1')
    expect(await report.locator('[data-violator]').innerText()).toMatch(/\$\.step/)
    await report.scrollIntoViewIfNeeded()
    await shot('3-try-draft')
    expect(pageErrors).toEqual([])
  }, 120_000)
})
