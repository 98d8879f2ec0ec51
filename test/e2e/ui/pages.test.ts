/**
 * The pages in headless Chromium against a whole local stack (events flow
 * collector → enrich → search store): /home's four tabs and /dashboard-ui,
 * driven as a person would, behind basic authentication. Screenshots of
 * every page and tab are saved in test-artifacts/ui/.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../../lib/local/handlers'
import { launchChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../../support/stack'

const SHOTS = join(projectRoot, 'test-artifacts', 'ui')
const SUPER_KEY = randomUUID()
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER_KEY, FLOE_DNS_SERVERS: '127.0.0.1:1' } })

let browser: Browser
let context: BrowserContext
let page: Page
const pageErrors: string[] = []

const url = (path: string) => `${stack.current.url}${path}`
async function shot(name: string, p: Page = page): Promise<void> {
  await p.evaluate(() => (globalThis as any).scrollTo(0, 0)) // the sticky top bar where it belongs
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}
/** Waits (polling) until `f` answers `expected`. */
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
const textOf = (l: Locator) => l.innerText()
const numberIn = async (l: Locator) => Number((await l.innerText()).replace(/[^0-9]/g, '') || NaN)

async function newContext(credentials: { username: string; password: string } | undefined = TEST_CREDENTIALS, width = 1440): Promise<BrowserContext> {
  const c = await browser.newContext({ viewport: { width, height: 900 }, httpCredentials: credentials, reducedMotion: 'reduce' })
  c.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)))
  return c
}

/** Sends tracker-protocol events straight to the collector, as a tracker would. */
async function collect(events: Record<string, string>[]): Promise<void> {
  const r = await fetch(url('/com.snowplowanalytics.snowplow/tp2'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events }),
  })
  expect(r.status).toBe(200)
}
const tp2 = (e: Record<string, string>) => ({ p: 'web', tv: 'js-4.10.1', eid: randomUUID(), dtm: String(Date.now()), ...e })
const MISSING = 'iglu:com.acme.e2e/missing_schema/jsonschema/1-0-0'
const unstruct = (schema: string, data: unknown) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  browser = await launchChromium()
  context = await newContext()
  page = await context.newPage()
}, 60_000)

afterAll(async () => {
  await browser?.close()
})

describe('/home', () => {
  it('Overview: the collector URL to copy, every service, versions, and live counts', async () => {
    await page.goto(url('/home'))
    expect(new URL(page.url()).hash).toBe('#/overview')
    await until(() => page.getByTestId('collector-url').inputValue()).toBe(stack.current.url)
    await until(() => textOf(page.getByTestId('good-count'))).toBe('0')
    await until(() => textOf(page.getByTestId('bad-count'))).toBe('0')
    for (const path of ['/dashboard-ui', '/search-store', '/micro/all', '/registry-server/api/meta/health', '/metrics', '/health', '/api/msc/v1']) {
      await page.locator(`.services a[href="${path}"]`).waitFor()
    }
    await until(() => textOf(page.locator('.services')), 30_000).toMatch(/Search store[\s\S]*up · 200/)
    const version = await (await fetch(url('/control-plane/version'), { headers: withAuth() })).text()
    await until(() => textOf(page.locator('[data-version=floe]'))).toBe(version.trim())
    await until(() => textOf(page.locator('[data-version=store]'))).toMatch(/^\d+\.\d+\.\d+/)
    await until(() => textOf(page.locator('[data-https=state]'))).toBe('HTTP only')
    await page.locator('.health.up').waitFor()
    await shot('home-overview')
  }, 90_000)

  it('Example events: each button sends with the real browser tracker; the events arrive and the counters move', async () => {
    await page.getByRole('tab', { name: 'Example events' }).click()
    expect(new URL(page.url()).hash).toBe('#/example-events')
    await page.getByLabel('user id').fill('e2e-user')
    for (const id of ['page-view', 'struct-play', 'struct-checkout', 'transaction', 'self-describing']) await page.locator(`button[data-example="${id}"]`).click()
    // 1 page view, 2 structured events, the transaction and its 2 items, 1 link_click: 7 good events
    const arrived = page.getByTestId('arrived')
    await until(() => arrived.locator('tbody tr').count()).toBe(7)
    expect(await arrived.locator('tbody tr[data-event=page_view]').count()).toBe(1)
    expect(await arrived.locator('tbody tr[data-event=struct]').count()).toBe(2)
    expect(await arrived.locator('tbody tr[data-event=transaction]').count()).toBe(1)
    expect(await arrived.locator('tbody tr[data-event=transaction_item]').count()).toBe(2)
    expect(await arrived.locator('tbody tr[data-event=unstruct]').count()).toBe(1)
    expect(await textOf(arrived)).toContain('Mixes / Play / MRC/fabric-0503-mix')
    expect(await textOf(arrived)).toContain('Checkout / Add / ASO01043 / blue:xxl / 2')
    expect(await textOf(arrived)).toContain('order-123 · total 8000 JPY')
    expect(await textOf(arrived)).toContain('com.snowplowanalytics.snowplow/link_click 1-0-1')
    expect(await arrived.locator('td', { hasText: 'e2e-user' }).count()).toBe(7)
    expect(await arrived.locator('.badge', { hasText: 'failed' }).count()).toBe(0)
    await until(() => numberIn(page.getByTestId('good-count'))).toBe(7)
    await until(() => page.getByTestId('sent-log').locator('li.ok').count()).toBe(7)

    // the invalid one: a bad row (and a failed event) for this page
    await page.locator('button[data-example="invalid"]').click()
    await until(() => numberIn(page.getByTestId('bad-count'))).toBe(1)
    await until(() => textOf(page.getByTestId('arrived-bad'))).toContain('schema_violations')
    await shot('home-example-events')
  }, 120_000)

  it('Registry: every schema to the signed-in user, found by text, a schema’s JSON on click, and resolution as enrich does it', async () => {
    const schema = (name: string, description: string) => ({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      description,
      self: { vendor: 'com.acme.e2e', name, format: 'jsonschema', version: '1-0-0' },
      type: 'object',
      properties: { sku: { type: 'string', maxLength: 64 } },
      additionalProperties: false,
    })
    for (const [name, description, isPublic] of [['checkout_started', 'A checkout starts', true], ['refund_issued', 'A refund is issued', true], ['internal_audit', 'Private: audit trail', false]] as const) {
      const r = await fetch(url(`/registry-server/api/schemas/com.acme.e2e/${name}/jsonschema/1-0-0?isPublic=${isPublic}`), { method: 'PUT', headers: { apikey: SUPER_KEY, 'content-type': 'application/json' }, body: JSON.stringify(schema(name, description)) })
      expect(r.status, await r.text()).toBe(201)
    }
    await page.getByRole('tab', { name: 'Registry' }).click()
    const rows = page.getByTestId('schemas').locator('tbody tr')
    await until(() => rows.count()).toBe(3) // signed in: the private one too, without a key
    await until(() => textOf(page.getByTestId('schema-count'))).toBe('3 schemas · 2 public · 1 private')
    await page.getByTestId('registry-filter').fill('refund')
    await until(() => rows.count()).toBe(1)
    await rows.first().click()
    await until(() => textOf(page.locator('.registry-detail'))).toContain('iglu:com.acme.e2e/refund_issued/jsonschema/1-0-0')
    expect(await textOf(page.locator('.registry-detail .json-view'))).toContain('"maxLength": 64')
    await page.getByTestId('registry-filter').fill('')
    await until(() => rows.count()).toBe(3)
    await until(() => textOf(page.getByTestId('schemas'))).toContain('internal_audit')
    await page.getByRole('button', { name: 'Resolve' }).click()
    await until(() => textOf(page.locator('.registry .json-view').last())).toContain('Schema for a link click event')
    await shot('home-registry')
  }, 90_000)

  it('Control plane: one form per endpoint, the server’s answer shown, errors in red', async () => {
    await page.getByRole('tab', { name: 'Control plane' }).click()
    const form = (id: string) => page.locator(`[data-form="${id}"]`)
    const answer = (id: string) => form(id).getByTestId('answer')
    const submit = (id: string) => form(id).locator('button[type=submit]').click()

    await until(() => textOf(form('version').getByTestId('version'))).toMatch(/^\d+\.\d+\.\d+/)

    await submit('restart-services')
    await until(() => textOf(answer('restart-services'))).toContain('OK')

    await form('restart-service').locator('select').selectOption('esLoaderBad')
    await submit('restart-service')
    await until(() => textOf(answer('restart-service'))).toContain('OK')

    await form('domain-name').locator('input').fill('not a domain')
    await submit('domain-name')
    await until(() => textOf(answer('domain-name'))).toMatch(/HTTP 400[\s\S]*not a domain name/)
    expect(await answer('domain-name').getAttribute('class')).toContain('err')
    expect(await answer('domain-name').locator('pre').evaluate((e) => (globalThis as any).getComputedStyle(e).color)).toBe('rgb(220, 38, 38)')
    // a name that cannot be resolved (this stack's DNS server does not answer): the form shows why
    await form('domain-name').locator('input').fill('collector.acme.com')
    await submit('domain-name')
    await until(() => textOf(answer('domain-name'))).toMatch(/HTTP 502[\s\S]*collector\.acme\.com could not be resolved/)

    expect(await textOf(form('telemetry'))).toContain('Floe sends no telemetry')
    await until(() => textOf(form('telemetry').getByTestId('telemetry-state'))).toBe('disable=false')
    await form('telemetry').getByLabel('disable=true').check()
    await submit('telemetry')
    await until(() => textOf(form('telemetry').getByTestId('telemetry-state'))).toBe('disable=true')

    await form('local-iglu-apikey').locator('[data-action=generate]').click()
    const key = await form('local-iglu-apikey').locator('input').inputValue()
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    await submit('local-iglu-apikey')
    await until(() => textOf(answer('local-iglu-apikey'))).toContain('added successfully')

    const ext = form('external-iglu')
    await ext.getByLabel('name').fill('Mirror of this registry')
    await ext.getByLabel('uri').fill(url('/registry-server/api'))
    await ext.getByLabel('vendor_prefix').fill('com.acme.mirror')
    await ext.getByLabel('priority').fill('7')
    await submit('external-iglu')
    await until(() => textOf(answer('external-iglu'))).toContain('added successfully')
    await until(() => textOf(ext.getByTestId('external-iglu'))).toMatch(/Mirror of this registry[\s\S]*com\.acme\.mirror/)

    const anonIp = { schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { name: 'anon_ip', vendor: 'com.snowplowanalytics.snowplow', enabled: false, parameters: { anonOctets: 1, anonSegments: 1 } } }
    await form('enrichments').locator('input[type=file]').setInputFiles({ name: 'anon_ip.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(anonIp)) })
    await submit('enrichments')
    await until(() => textOf(answer('enrichments'))).toContain('uploaded successfully')

    // the stored files: listed, viewed, enabled and removed; a refused upload's reasons in the form
    const stored = form('enrichments').getByTestId('enrichments')
    const row = stored.locator('tr[data-item="anon_ip.json"]')
    await until(() => textOf(row)).toMatch(/anon_ip\.json[\s\S]*anon_ip[\s\S]*disabled/)
    await row.locator('[data-action=view]').click()
    await until(() => textOf(stored.getByTestId('viewing'))).toContain('anonOctets')
    await row.locator('[data-action=enable]').click()
    await until(() => textOf(stored.getByTestId('action-answer'))).toContain('enabled successfully')
    await until(() => textOf(row)).toContain('enabled')
    const script = { schema: 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1', data: { name: 'javascript_script_config', vendor: 'com.snowplowanalytics.snowplow', enabled: true, parameters: { script: Buffer.from('function process(event) { return [ }').toString('base64') } } }
    await form('enrichments').locator('input[type=file]').setInputFiles({ name: 'broken_script.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(script)) })
    await submit('enrichments')
    await until(() => textOf(answer('enrichments'))).toMatch(/HTTP 400[\s\S]*broken_script\.json: Error compiling JavaScript function: \[SyntaxError/)
    expect(await stored.locator('tr[data-item="broken_script.json"]').count()).toBe(0)
    page.once('dialog', (d) => void d.accept())
    await row.locator('[data-action=remove]').click()
    await until(() => textOf(stored.getByTestId('action-answer'))).toContain('removed successfully')
    await until(() => textOf(form('enrichments'))).toContain('None yet.')

    const registry = ext.getByTestId('external-iglu').locator('tr[data-item="Mirror of this registry"]')
    await registry.locator('[data-action=disable]').click()
    await until(() => textOf(registry)).toContain('disabled')

    // a check in the page, before anything is sent
    await form('credentials').getByLabel('current_password').fill('AnyPassword2024')
    await form('credentials').getByLabel('new_username').fill('someone')
    await form('credentials').getByLabel('new_password').fill('Short1Password')
    await form('credentials').getByLabel('repeat the password').fill('Different1Password')
    await submit('credentials')
    await until(() => textOf(answer('credentials'))).toContain('The two passwords differ.')
    await shot('home-control-plane')
  }, 180_000)
})

describe('/dashboard-ui', () => {
  beforeAll(async () => {
    // a page's worth and more of good events, and a bad row to find
    await collect(Array.from({ length: 60 }, (_, i) => tp2({ e: 'pv', aid: 'e2e-bulk', url: `https://shop.example.com/p/${i}`, page: `Product ${i}` })))
    await collect([tp2({ e: 'ue', aid: 'e2e-bad', ue_pr: unstruct(MISSING, { sku: 'x' }) })])
  })

  it('shows the newest good events, pages through them, and draws both indices over time', async () => {
    await page.goto(url('/dashboard-ui'))
    expect(new URL(page.url()).hash).toContain('index=good')
    await until(() => numberIn(page.getByTestId('total-good'))).toBeGreaterThanOrEqual(67) // 60 here and the home page's 7 valid examples; failed events are not good ones
    await until(() => page.getByTestId('events').locator('tbody tr').count()).toBe(50)
    await page.locator('[data-testid=histogram] .u-over').waitFor()
    await until(() => textOf(page.getByTestId('breakdown'))).toContain('e2e-bulk')
    await shot('dashboard-good')

    await page.getByLabel('Rows per page').first().selectOption('25')
    await until(() => textOf(page.getByTestId('page-info').first())).toMatch(/^1–25 of \d+/)
    const firstPage = await page.getByTestId('events').locator('tbody tr').first().getAttribute('data-id')
    await page.getByTestId('next').first().click()
    await until(() => textOf(page.getByTestId('page-info').first())).toMatch(/^26–50 of \d+/)
    expect(new URL(page.url()).hash).toContain('page=1')
    await until(() => page.getByTestId('events').locator('tbody tr').first().getAttribute('data-id')).not.toBe(firstPage)
    await until(() => page.locator('.events-wrap').getAttribute('data-stale')).toBe('false')
    expect(await page.getByTestId('events').locator('tbody tr').count()).toBe(25)
    await page.getByTestId('prev').first().click()
    await until(() => textOf(page.getByTestId('page-info').first())).toMatch(/^1–25 of/)

    // the query narrows the table, the breakdown adds to the query
    await page.getByTestId('query').fill('app_id:floe-home AND event:struct')
    await page.getByTestId('search').click()
    await until(() => page.getByTestId('events').locator('tbody tr').count()).toBe(2)
  }, 120_000)

  it('finds a bad row by query and opens its JSON', async () => {
    await page.locator('button[data-index=bad]').click()
    await until(() => new URL(page.url()).hash).toContain('index=bad')
    await until(() => page.getByTestId('query').inputValue()).toBe('') // a query is for one index (the box follows on the next render)
    await until(() => numberIn(page.getByTestId('total-bad'))).toBe(2) // the page's invalid event and this one
    await until(() => textOf(page.getByTestId('by-type'))).toContain('schema_violations')
    await until(() => textOf(page.getByTestId('by-schema'))).toContain('missing_schema')

    await page.getByTestId('query').fill(`data.failure.messages.schemaKey:"${MISSING}"`)
    await page.getByTestId('query').press('Enter')
    const rows = page.getByTestId('events').locator('tbody tr')
    await until(() => rows.count()).toBe(1)
    expect(await textOf(rows.first())).toContain('e2e-bad')
    expect(await textOf(rows.first())).toContain('ResolutionError')
    await rows.first().click()
    const drawer = page.getByTestId('drawer')
    await until(() => textOf(drawer.locator('h3'))).toBe('failed event · missing_schema') // a failed event's bad row
    await until(() => textOf(drawer.locator('.messages'))).toContain(`ResolutionError: not found in`)
    expect(await textOf(drawer.locator('.messages'))).toContain(MISSING)
    expect(await textOf(drawer.locator('.json-view'))).toContain(`"schemaKey": "${MISSING}"`) // the failure is unfolded
    await drawer.getByRole('button', { name: 'Raw' }).click()
    const raw = JSON.parse(await drawer.locator('pre.json-raw').innerText())
    expect(raw.schema).toMatch(/^iglu:com\.snowplowanalytics\.snowplow\.badrows\/schema_violations\//)
    expect(raw.data.payload.enriched.app_id).toBe('e2e-bad')
    await drawer.getByRole('button', { name: 'Copy JSON' }).waitFor()
    await shot('dashboard-bad-row')
    await page.keyboard.press('Escape')
    await until(() => drawer.count()).toBe(0)
    await shot('dashboard-bad')
  }, 90_000)

  it('shows the store’s message when it refuses a query', async () => {
    await page.getByTestId('query').fill('data.failure.messages.schemaKey:(unclosed')
    await page.getByTestId('search').click()
    await until(() => textOf(page.getByTestId('query-error'))).toMatch(/refused the query: Failed to parse query/)
    expect(await page.getByTestId('no-events').innerText()).toContain('Fix the query')
    await shot('dashboard-query-error')
    await page.getByTestId('query').fill('')
    await page.getByTestId('search').click()
    await until(() => page.getByTestId('query-error').count()).toBe(0)
  }, 60_000)

  it('changes the time range (and a custom one), and pauses the live updates', async () => {
    for (const range of ['15m', '24h', '7d', '1h']) {
      await page.getByTestId('range').selectOption(range)
      await until(() => new URL(page.url()).hash).toContain(`range=${range}`)
      await until(() => numberIn(page.getByTestId('total-bad'))).toBe(2)
    }
    await page.getByTestId('range').selectOption('custom')
    await page.getByTestId('from').waitFor()
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1))
    expect(Number(hash.get('to')) - Number(hash.get('from'))).toBeGreaterThan(3_500_000)
    await until(() => page.getByTestId('events').locator('tbody tr').count()).toBe(2)
    await shot('dashboard-custom-range')
    // an hour before the events: nothing in it
    const earlier = new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 16)
    await page.getByTestId('from').fill(earlier)
    await page.getByTestId('to').fill(new Date(Date.now() - 2 * 3_600_000).toISOString().slice(0, 16))
    await until(() => textOf(page.getByTestId('no-events'))).toContain('No bad rows in this range')

    await page.getByTestId('live').uncheck()
    await until(() => textOf(page.getByTestId('updated'))).toContain('paused')
    await page.getByTestId('live').check()
    await until(() => textOf(page.getByTestId('updated'))).toContain('live')
  }, 90_000)

  it('is laid out for a 1024 px wide screen too', async () => {
    const narrow = await newContext(TEST_CREDENTIALS, 1024)
    const p = await narrow.newPage()
    await p.goto(url('/dashboard-ui#index=good&range=1h'))
    await until(() => p.getByTestId('events').locator('tbody tr').count()).toBeGreaterThan(0)
    expect(await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(1024)
    await shot('dashboard-1024', p)
    await p.goto(url('/home#/example-events'))
    await until(() => p.getByTestId('arrived').locator('tbody tr').count()).toBeGreaterThan(0)
    expect(await p.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number)).toBeLessThanOrEqual(1024)
    await shot('home-example-events-1024', p)
    await narrow.close()
  }, 60_000)
})

describe('the control plane’s search store reset and credentials', () => {
  it('resets the search store: the counters go back to zero', async () => {
    await page.goto(url('/home#/control-plane'))
    const form = page.locator('[data-form="reset-service"]')
    await form.locator('button[type=submit]').click()
    await until(() => textOf(form.getByTestId('answer'))).toContain('Tick the box')
    await form.locator('input[type=checkbox]').check()
    await form.locator('button[type=submit]').click()
    await until(() => textOf(form.getByTestId('answer'))).toContain('The search store is reset')
    await page.getByRole('tab', { name: 'Overview' }).click()
    await until(() => textOf(page.getByTestId('good-count'))).toBe('0')
    await until(() => textOf(page.getByTestId('bad-count'))).toBe('0')
  }, 60_000)

  it('changes the credentials: the browser is then asked for the new ones', async () => {
    const NEW = { username: 'floe-admin', password: 'ChangedPassword2025' }
    await page.goto(url('/home#/control-plane'))
    const form = page.locator('[data-form="credentials"]')
    // a wrong current password changes nothing
    await form.getByLabel('current_password').fill('WrongPassword2024')
    await form.getByLabel('new_username').fill(NEW.username)
    await form.getByLabel('new_password').fill(NEW.password)
    await form.getByLabel('repeat the password').fill(NEW.password)
    await form.locator('button[type=submit]').click()
    await until(() => textOf(form.getByTestId('answer'))).toContain('HTTP 403')
    expect(await textOf(form.getByTestId('answer'))).toContain('the current password is wrong')
    await form.getByLabel('current_password').fill(TEST_CREDENTIALS.password)
    await form.getByLabel('new_username').fill(NEW.username)
    await form.getByLabel('new_password').fill(NEW.password)
    await form.getByLabel('repeat the password').fill(NEW.password)
    await form.locator('button[type=submit]').click()
    await until(() => textOf(form.getByTestId('answer'))).toContain('changed successfully')
    await form.getByTestId('credentials-changed').waitFor()
    await shot('home-credentials-changed')

    // the old credentials are refused from now on: the reload asks again (401 with a basic challenge)
    const answer = await Promise.all([page.waitForResponse((r) => r.url() === url('/home') && r.request().method() === 'GET'), form.getByRole('button', { name: 'Reload and sign in' }).click()])
    expect(answer[0].status()).toBe(401)
    expect(answer[0].headers()['www-authenticate']).toMatch(/^Basic realm="Floe"/)
    expect(await page.locator('body').innerText()).toContain('The username or password is wrong.')

    // the new ones open the pages
    const fresh = await newContext(NEW)
    const p = await fresh.newPage()
    await p.goto(url('/home'))
    await until(() => p.getByTestId('collector-url').inputValue()).toBe(stack.current.url)
    await until(() => textOf(p.getByTestId('good-count'))).toBe('0')
    await fresh.close()
    const none = await fetch(url('/dashboard-ui'))
    expect(none.status).toBe(401)
  }, 60_000)

  it('raised no error in any page', () => {
    expect(pageErrors).toEqual([])
  })
})
