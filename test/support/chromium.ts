/** Debian's Chromium for the browser tests, started headless the same way by each of them. */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'

export const CHROMIUM = '/usr/bin/chromium'
/** No sandbox (containers), nothing that reaches the network by itself. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian's Chromium is needed at ${CHROMIUM} for the browser tests: apt-get install chromium (.ci/run installs it)`)
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
}

/** A browser for the file's tests: launched before them, closed after. */
export function useChromium(): { readonly current: Browser } {
  const holder: { current?: Browser } = {}
  beforeAll(async () => {
    holder.current = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await holder.current?.close()
  })
  return {
    get current() {
      if (!holder.current) throw new Error('the browser is not started yet (use it inside tests or hooks)')
      return holder.current
    },
  }
}
