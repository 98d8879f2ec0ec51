/**
 * What the signed-in administrator sees without extra steps, in headless
 * Chromium against a whole local stack: the registry's private schemas
 * without an API key, a failed event's failure and name first in its panel,
 * the dashboard's side figures leaving "loading…" when the store refuses
 * the query, and the mark of a bad row stored sanitized. Counts are written with their plural right.
 */
import { randomUUID } from 'node:crypto'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../../support/stack'

const SUPER_KEY = randomUUID()
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER_KEY } })

let browser: Browser
let context: BrowserContext
let page: Page
const pageErrors: string[] = []
const registryCalls: string[] = []

const url = (path: string) => `${stack.current.url}${path}`
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
const textOf = (l: Locator) => l.innerText()
const MISSING = 'iglu:com.acme.admin/missing_schema/jsonschema/1-0-0'

beforeAll(async () => {
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1440, height: 900 }, httpCredentials: TEST_CREDENTIALS, reducedMotion: 'reduce' })
  context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)))
  context.on('request', (r) => r.url().includes('/registry-server/') && registryCalls.push(`${r.url()} ${JSON.stringify(r.headers())}`))
  page = await context.newPage()
  page.setDefaultNavigationTimeout(120_000) // the first request builds the pages
}, 60_000)

afterAll(async () => {
  await browser?.close()
})

describe('the Registry tab', () => {
  it('lists a private schema to the signed-in administrator without a key, and counts it as 1 schema', async () => {
    const schema = {
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      description: 'Private: only with a key, or signed in',
      self: { vendor: 'com.acme.admin', name: 'internal_audit', format: 'jsonschema', version: '1-0-0' },
      type: 'object',
      properties: { sku: { type: 'string', maxLength: 64 } },
      additionalProperties: false,
    }
    const r = await fetch(url('/registry-server/api/schemas/com.acme.admin/internal_audit/jsonschema/1-0-0?isPublic=false'), { method: 'PUT', headers: { apikey: SUPER_KEY, 'content-type': 'application/json' }, body: JSON.stringify(schema) })
    expect(r.status, await r.text()).toBe(201)
    // anonymous, the registry does not list it
    expect(await (await fetch(url('/registry-server/api/schemas'))).json()).toEqual([])

    await page.goto(url('/home#/registry'))
    const rows = page.getByTestId('schemas').locator('tbody tr')
    await until(() => rows.count()).toBe(1)
    expect(await textOf(rows.first())).toMatch(/com\.acme\.admin[\s\S]*internal_audit[\s\S]*private/)
    await until(() => textOf(page.getByTestId('schema-count'))).toBe('1 schema · 0 public · 1 private')
    await rows.first().click()
    await until(() => textOf(page.locator('.registry-detail'))).toContain('iglu:com.acme.admin/internal_audit/jsonschema/1-0-0')
    // no key was asked for, and none was sent from the browser
    expect(await page.getByLabel('Registry API key').count()).toBe(0)
    expect(registryCalls.filter((c) => c.includes(SUPER_KEY))).toEqual([])
  }, 180_000)
})

describe('/dashboard-ui', () => {
  it("opens a failed event's panel with its failure first and its event_name", async () => {
    const r = await fetch(url('/com.snowplowanalytics.snowplow/tp2'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4',
        data: [{ e: 'ue', p: 'web', tv: 'js-4.10.1', aid: 'admin-failed', eid: randomUUID(), dtm: String(Date.now()), ue_pr: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: MISSING, data: { sku: 'x' } } }) }],
      }),
    })
    expect(r.status).toBe(200)
    // through enrich to the search store first (the pipeline's pace is not the page's)
    const badRows = async () => ((await (await fetch(url('/search-store/bad/_count'), { headers: withAuth() })).json()) as { count: number }).count
    await until(badRows, 150_000).toBe(1)
    await page.goto(url('/dashboard-ui#index=bad&range=1h'))
    const rows = page.getByTestId('events').locator('tbody tr')
    await until(() => rows.count()).toBe(1)
    await rows.first().click()
    const drawer = page.getByTestId('drawer')
    await until(() => textOf(drawer.locator('h3'))).toBe('failed event · missing_schema')
    // the failure comes first, right under the panel's header: its type and message, then which event failed
    const first = drawer.locator(':scope > :nth-child(2)')
    await until(() => first.getAttribute('data-testid')).toBe('failure')
    expect(await textOf(first)).toMatch(/Failure · schema_violations/i) // h5 is set in capitals
    expect(await textOf(first.locator('.messages'))).toContain(`ResolutionError: not found in`)
    await until(() => textOf(drawer.getByTestId('failed-event'))).toMatch(/event_name\s+missing_schema[\s\S]*event\s+unstruct[\s\S]*app_id\s+admin-failed/)
    // in the JSON too, the failure leads and is unfolded; the payload waits folded
    const tree = drawer.locator('.json-view .j-root > .j-children > details.j-node').first()
    expect(await tree.locator(':scope > .j-children > :first-child > summary').innerText()).toMatch(/^"failure"/)
    expect(await drawer.locator('.json-view').innerText()).toContain(`"schemaKey": "${MISSING}"`)
    await page.keyboard.press('Escape')
    await until(() => drawer.count()).toBe(0)
  }, 240_000)

  it('shows why "In this range" has no figures when the store refuses the query', async () => {
    await page.goto(url('/dashboard-ui#index=good&range=1h'))
    await until(() => page.getByTestId('breakdown').count()).toBe(1)
    await page.getByTestId('query').fill('app_id:(unclosed')
    await page.getByTestId('search').click()
    await until(() => textOf(page.getByTestId('query-error'))).toMatch(/refused the query: Failed to parse query/)
    const side = page.locator('.dash-side')
    await until(() => textOf(side.getByTestId('breakdown-error'))).toMatch(/^No figures for this range: Failed to parse query/)
    expect(await textOf(side)).not.toContain('loading…')
    // a query that works brings the figures back
    await page.getByTestId('query').fill('')
    await page.getByTestId('search').click()
    await until(() => side.getByTestId('breakdown').count()).toBe(1)
    expect(await side.getByTestId('breakdown-error').count()).toBe(0)
  }, 60_000)

  it('marks a bad row the store took only sanitized, and says what was replaced', async () => {
    // an anonymous request with NUL bytes: its bad row holds \u0000, which the store's jsonb refuses as it is
    const r = await fetch(url('/com.snowplowanalytics.snowplow/tp2'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('garbage\x00\x01binary', 'latin1') })
    expect(r.status).toBe(200)
    const sanitized = async () => ((await (await fetch(url('/search-store/bad/_count?q=_exists_:floe_sanitized'), { headers: withAuth() })).json()) as { count: number }).count
    await until(sanitized, 150_000).toBe(1)
    await page.goto(url('/dashboard-ui#index=bad&range=1h'))
    await page.getByTestId('query').fill('_exists_:floe_sanitized')
    await page.getByTestId('search').click()
    const rows = page.getByTestId('events').locator('tbody tr')
    await until(() => rows.count()).toBe(1)
    await rows.first().click()
    const badge = page.getByTestId('drawer').getByTestId('sanitized')
    await until(() => textOf(badge)).toMatch(/stored sanitized[\s\S]*NUL characters \(U\+0000\) replaced by U\+FFFD/i)
    await page.keyboard.press('Escape')
  }, 240_000)

  it('raised no error in any page', () => {
    expect(pageErrors).toEqual([])
  })
})
