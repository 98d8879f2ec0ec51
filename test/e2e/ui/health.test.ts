/**
 * /home's overview shows what /health lists: here a stack without the
 * licence, whose enrich is off on purpose (/health answers 200).
 */
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: '', FLOE_IGLU_CENTRAL_URL: '' } })
const browser = useChromium()

describe('/home and an unhealthy stack', () => {
  it('shows each cause /health reports in a banner on the overview', async () => {
    const context = await browser.current.newContext({ httpCredentials: TEST_CREDENTIALS })
    const page = await context.newPage()
    await page.goto(`${stack.current.url}/home#/overview`)
    const banner = page.getByTestId('health-causes')
    await banner.waitFor()
    const items = await banner.locator('li').allInnerTexts()
    expect(items).toEqual([expect.stringMatching(/^enrich-raw is off on purpose since \S+: enrich is off until the licence is accepted/)])
    expect(await banner.locator('strong').innerText()).toContain('GET /health answers 200')
    await page.locator('.health.up.off').waitFor()
    await context.close()
  }, 60_000)
  it('shows the same banner on the dashboard', async () => {
    const context = await browser.current.newContext({ httpCredentials: TEST_CREDENTIALS })
    const page = await context.newPage()
    await page.goto(`${stack.current.url}/dashboard-ui`)
    const banner = page.getByTestId('health-causes')
    await banner.waitFor()
    expect(await banner.locator('li').allInnerTexts()).toEqual([expect.stringMatching(/enrich is off until the licence is accepted/)])
    await context.close()
  }, 60_000)
  it("shows Collector and Enrich in the Services table, enrich off for want of the licence", async () => {
    const context = await browser.current.newContext({ httpCredentials: TEST_CREDENTIALS })
    const page = await context.newPage()
    await page.goto(`${stack.current.url}/home#/overview`)
    await page.getByTestId('state-enrich').waitFor()
    expect(await page.getByTestId('state-enrich').innerText()).toMatch(/off · licence not accepted/i)
    expect(await page.getByTestId('state-collector').innerText()).toMatch(/running/i)
    await context.close()
  }, 60_000)
})
