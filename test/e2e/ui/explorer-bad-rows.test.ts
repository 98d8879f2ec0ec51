/**
 * The event explorer in headless Chromium against a whole local stack: the
 * "Over time" chart takes its card's width, a bad-row column is searchable
 * by the name its header shows, and a failed event's panel shows the bad row
 * as it came (as `/micro/bad` does), not as the store renamed its fields.
 */
import { randomUUID } from 'node:crypto'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
const browser = useChromium()
const MISSING = 'iglu:com.acme.e2e/missing_schema/jsonschema/1-0-0'
const url = (path: string) => `${stack.current.url}${path}`
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
const unstruct = (schema: string, data: unknown) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })
const tp2 = (e: Record<string, string>) => ({ p: 'web', tv: 'js-4.10.1', eid: randomUUID(), dtm: String(Date.now()), ...e })

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

let context: BrowserContext
let page: Page
const pageErrors: string[] = []

beforeAll(async () => {
  const events = [
    ...Array.from({ length: 5 }, (_, i) => tp2({ e: 'pv', aid: 'e2e-good', url: `https://shop.example.com/p/${i}` })),
    tp2({ e: 'ue', aid: 'e2e-missing', ue_pr: unstruct(MISSING, { sku: 'x' }) }), // schema not found
    tp2({ e: 'ue', aid: 'e2e-invalid', ue_pr: unstruct('iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', { targetUrl: 5 }) }), // invalid against it
  ]
  const r = await fetch(url('/com.snowplowanalytics.snowplow/tp2'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events }),
  })
  expect(r.status).toBe(200)
  await stack.current.drain()
  await stack.current.drain()
  await stored({ good: 5, bad: 2 })
  context = await browser.current.newContext({ viewport: { width: 1366, height: 900 }, httpCredentials: TEST_CREDENTIALS, reducedMotion: 'reduce' })
  context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(`${p.url()}: ${e.message}`)))
  page = await context.newPage()
}, 180_000)

afterAll(async () => {
  await context?.close()
})

describe('/dashboard-ui', () => {
  it('draws "Over time" across its card, however wide the screen', async () => {
    for (const width of [1366, 1920]) {
      await page.setViewportSize({ width, height: 900 })
      await page.goto(url('/dashboard-ui#index=good&range=1h'))
      const chart = page.getByTestId('histogram')
      await chart.locator('.u-over').waitFor()
      const card = page.locator('.chart-card')
      // the chart fills its card (less the card's padding), and uPlot draws at that width
      await until(async () => (await chart.boundingBox())!.width).toBeGreaterThan((await card.boundingBox())!.width - 80)
      expect((await chart.boundingBox())!.width).toBeGreaterThan(width / 2)
      expect((await chart.boundingBox())!.height).toBeGreaterThanOrEqual(220)
      await until(async () => (await chart.locator('canvas').boundingBox())!.width).toBeGreaterThan(width / 2)
    }
  }, 90_000)

  it('on the bad index, every column shown is searchable by the name its header shows', async () => {
    await page.goto(url('/dashboard-ui#index=bad&range=1h'))
    const rows = page.getByTestId('events').locator('tbody tr')
    await until(() => rows.count()).toBe(2)
    const headers = (await page.getByTestId('events').locator('thead th').allInnerTexts()).map((h) => h.replace(/\s*\(UTC\)|\s*[↓↑]\s*$/g, '').trim())
    expect(headers).toEqual(['failure_timestamp', 'failure_type', 'failing_schema', 'message', 'app_id'])
    const search = async (q: string) => {
      await page.getByTestId('query').fill(q)
      await page.getByTestId('query').press('Enter')
    }
    await search('app_id:e2e-missing')
    await until(() => rows.count()).toBe(1)
    expect(await rows.first().innerText()).toContain('e2e-missing')
    await until(() => page.getByTestId('query-error').count()).toBe(0)
    // each column by its name, with a value the column shows; and a field by the name the row's panel shows
    for (const [q, n] of [['failure_type:schema_violations', 2], [`failing_schema:"${MISSING}"`, 1], ['message:ResolutionError', 1], ['app_id:e2e-*', 2], ['failure_timestamp:[now-1h TO now]', 2], ['event:unstruct', 2], ['data.failure.messages.error.error:ValidationError', 1]] as const) {
      await search(q)
      await until(() => page.locator('.events-wrap').getAttribute('data-stale')).toBe('false')
      await until(() => rows.count(), 30_000).toBe(n)
      expect(await page.getByTestId('query-error').count(), q).toBe(0)
    }
  }, 90_000)

  it('shows a failed event’s bad row as it came, as /micro/bad does', async () => {
    const micro = (await (await fetch(url('/micro/bad'), { headers: withAuth() })).json()) as { errors: string[] }[]
    const asItCame = micro.map((b) => JSON.parse(b.errors.at(-1)!)).find((row) => row.data.payload.enriched.app_id === 'e2e-invalid')
    expect(asItCame.data.failure.messages[0].error.error).toBe('ValidationError')

    await page.goto(url('/dashboard-ui#index=bad&range=1h&q=e2e-invalid'))
    const rows = page.getByTestId('events').locator('tbody tr')
    await until(() => rows.count()).toBe(1)
    await rows.first().click()
    const drawer = page.getByTestId('drawer')
    await until(() => drawer.locator('h3').innerText()).toBe('failed event · link_click')
    await until(() => drawer.locator('.messages').innerText()).toMatch(/^ValidationError: \$\.targetUrl/)
    const tree = await drawer.locator('.json-view').innerText()
    expect(tree).toContain('"error": "ValidationError"')
    expect(tree).not.toMatch(/_str"|_list"/)
    await drawer.getByRole('button', { name: 'Raw' }).click()
    const raw = JSON.parse(await drawer.locator('pre.json-raw').innerText())
    expect(raw).toEqual(asItCame)
    expect(pageErrors).toEqual([])
  }, 90_000)
})
