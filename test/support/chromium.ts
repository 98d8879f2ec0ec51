/** Debian's Chromium for the browser tests, started headless the same way by each of them. */
import { existsSync, mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext } from 'playwright-core'
import { useForFile } from './per-file'

export const CHROMIUM = '/usr/bin/chromium'
/** No sandbox (containers), nothing that reaches the network by itself. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian's Chromium is needed at ${CHROMIUM} for the browser tests: apt-get install chromium (.ci/run installs it)`)
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
}

/** A browser for the file's tests: launched before them, closed after. */
export function useChromium(): { readonly current: Browser } {
  return useForFile('the browser', launchChromium, (b) => b.close(), 60_000)
}

/** Chromium with a profile of its own (cookies persist across pages), in a new temporary directory. */
export async function launchPersistentChromium(): Promise<{ context: BrowserContext; userDataDir: string }> {
  if (!existsSync(CHROMIUM)) throw new Error(`Debian's Chromium is needed at ${CHROMIUM} for the browser tests: apt-get install chromium (.ci/run installs it)`)
  const userDataDir = mkdtempSync(join(tmpdir(), 'floe-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: ['--headless', ...CHROMIUM_ARGS] })
  return { context, userDataDir }
}

/** Serves `script` at `/tracker.js` and `html` at every other path, on a free port of 127.0.0.1; gives the server and its origin. */
export async function servePage(script: Uint8Array, html: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/tracker.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' })
      return res.end(script)
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
