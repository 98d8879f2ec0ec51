/**
 * The dashboard's Recover panel in headless Chromium with a
 * snowplow-event-recovery configuration pasted in: it is sent as `config`,
 * and the preview counts the events it fixes.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../support/chromium'
import { runFloe } from '../../support/process'
import { TEST_CREDENTIALS, useLocalStack, withAuth } from '../../support/stack'

const SUPER = randomUUID()
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER, FLOE_RESOLVER_CACHE_TTL: '1' } })
const VENDOR = 'com.acme.e2e.rec'
const until = <T>(f: () => T | Promise<T>, timeout = 60_000) => expect.poll(f, { timeout, interval: 250 })
let browser: Browser | undefined

afterAll(async () => {
  await browser?.close()
})

describe('/dashboard-ui Recover panel', () => {
  it('takes a snowplow-event-recovery configuration, sends it as config, and previews what it fixes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-rec-panel-'))
    mkdirSync(join(dir, VENDOR, 'thing', 'jsonschema'), { recursive: true })
    writeFileSync(join(dir, VENDOR, 'thing', 'jsonschema', '1-0-0'), JSON.stringify({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      self: { vendor: VENDOR, name: 'thing', format: 'jsonschema', version: '1-0-0' }, type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false,
    }))
    const pushed = await runFloe(['registry', 'push', dir, stack.current.url, SUPER])
    expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0)
    const ue = (n: number) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: `iglu:${VENDOR}/thing/jsonschema/1-0-7`, data: { n } } })
    const r = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [1, 2].map((n) => ({ e: 'ue', p: 'web', tv: 't', aid: 'e2e-rec', eid: randomUUID(), ue_pr: ue(n) })) }),
    })
    expect(r.status).toBe(200)
    await stack.current.drain()
    await stack.current.drain()
    await until(async () => ((await (await fetch(`${stack.current.url}/search-store/bad/_count?q=e2e-rec`, { headers: withAuth() })).json()) as { count: number }).count).toBe(2)

    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, httpCredentials: TEST_CREDENTIALS, reducedMotion: 'reduce' })
    const page = await context.newPage()
    const sent: unknown[] = []
    page.on('request', (q) => {
      if (q.url().endsWith('/control-plane/recover') && q.method() === 'POST') sent.push(q.postDataJSON())
    })
    await page.goto(`${stack.current.url}/dashboard-ui`)
    await page.locator('button[data-index=bad]').click()
    await page.getByTestId('query').fill('e2e-rec')
    await page.getByTestId('query').press('Enter')
    await until(() => page.getByTestId('events').locator('tbody tr').count()).toBe(2)
    await page.getByTestId('recover').locator('summary').click()
    const config = {
      schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0',
      data: {
        'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/*-*-*': [
          { name: 'thing-version', conditions: [], steps: [{ op: 'Replace', path: '$.raw.parameters.ue_pr.data.schema', match: '1-0-7$', value: '1-0-0' }] },
        ],
      },
    }
    await page.getByTestId('recover-steps').fill(JSON.stringify(config))
    await page.getByTestId('recover-preview-btn').click()
    await until(() => page.getByTestId('recover-would-be-good').innerText()).toBe('2')
    expect(sent).toEqual([expect.objectContaining({ config, dryRun: true })])
  }, 240_000)
})
