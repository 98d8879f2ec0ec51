/**
 * A stack without the licence: the health banner leads to the control plane's
 * Licence card, where the signed-in user accepts it and enrich starts.
 */
import { describe, expect, it } from 'vitest'
import { useChromium } from '../../support/chromium'
import { TEST_CREDENTIALS, useLocalStack } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: '', FLOE_IGLU_CENTRAL_URL: '' } })
const browser = useChromium()

describe('accepting the licence on /home', () => {
  it('goes from the banner to the Licence card, which records the signed-in user and starts enrich', async () => {
    const context = await browser.current.newContext({ httpCredentials: TEST_CREDENTIALS })
    const page = await context.newPage()
    await page.goto(`${stack.current.url}/home#/overview`)
    await page.getByTestId('accept-licence').click()
    const card = page.locator('#cp-license')
    await card.waitFor()
    expect(await card.getByTestId('licence-link').getAttribute('href')).toBe('https://docs.snowplow.io/limited-use-license-1.1/')
    await expect.poll(() => card.getByTestId('licence-state').innerText()).toMatch(/^not accepted/)
    await card.getByTestId('licence-accept').check()
    await card.locator('button[type=submit]').click()
    await expect.poll(() => card.getByTestId('answer').innerText()).toContain(`licence accepted by ${TEST_CREDENTIALS.username}: enrich starts processing the waiting records`)
    await expect.poll(() => card.getByTestId('licence-state').innerText()).toMatch(new RegExp(`^accepted by ${TEST_CREDENTIALS.username} on `))
    // accepted: the card says so and no longer offers to accept it, now or after a reload
    expect(await card.locator('form').count()).toBe(0)
    expect(await card.getByRole('button', { name: 'Accept the licence' }).count()).toBe(0)
    await page.reload()
    await expect.poll(() => page.locator('#cp-license').getByTestId('licence-state').innerText()).toMatch(/^accepted by /)
    expect(await page.locator('#cp-license form').count()).toBe(0)
    expect(stack.current.triggers.has('enrich-raw')).toBe(true)
    // enrich is no longer listed as off on purpose
    const health = await fetch(`${stack.current.url}/health`)
    expect([health.status, await health.text()]).toEqual([200, 'ok'])
    await context.close()
  }, 60_000)
})
