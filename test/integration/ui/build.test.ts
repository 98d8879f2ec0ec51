import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpRequest } from '../../../lib/http/types'
import { projectRoot } from '../../../lib/local/handlers'
import { buildUi, type UiFile } from '../../../lib/ui/build'
import { uiPages } from '../../../lib/ui/pages'
import { assetsFromDir, assetsOf, uiHandler } from '../../../lib/ui/serve'

const req = (path: string): HttpRequest => ({ method: 'GET', path, headers: {}, query: {}, rawQuery: '', cookies: [], body: Buffer.alloc(0), sourceIp: '127.0.0.1', params: {}, timeEpochMs: Date.now() })
const text = (f: UiFile) => Buffer.from(f.contents).toString('utf8')

/**
 * Absolute URLs a bundle may contain: XML namespaces (SVG, XHTML, MathML in
 * Preact's renderer and Pico's inline icons) and a documentation link in an
 * error message of a tracker dependency. None of them is loaded.
 */
const ALLOWED_URL = [/^http:\/\/www\.w3\.org\/(1998\/Math\/MathML|1999\/xhtml|2000\/svg|1999\/xlink|XML\/1998\/namespace)$/, /^https:\/\/github\.com\/uuidjs\/uuid#getrandomvalues-not-supported$/]
const URL_RE = /\b(?:https?:)?\/\/[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,}[^\s"'`)\\<>]*/g

let files: UiFile[]
beforeAll(async () => {
  files = await buildUi()
}, 120_000)

describe('the build of the pages', () => {
  it('has an index.html per page loading its hashed script and stylesheet from the page’s own path', () => {
    for (const page of uiPages) {
      const html = text(files.find((f) => f.path === `${page.name}/index.html`)!)
      const script = /<script defer src="\/([^"]+)"><\/script>/.exec(html)?.[1]
      const style = /<link rel="stylesheet" href="\/([^"]+)">/.exec(html)?.[1]
      expect(script).toMatch(new RegExp(`^${page.name}/app-[A-Z0-9]{8,}\\.js$`))
      expect(style).toMatch(new RegExp(`^${page.name}/app-[A-Z0-9]{8,}\\.css$`))
      expect(files.map((f) => f.path)).toEqual(expect.arrayContaining([script, style, `${page.name}/favicon.svg`]))
      expect(html).toContain(`<title>${page.title}</title>`)
      // no inline script or style: the Content-Security-Policy allows none
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(html).not.toMatch(/<style|\sstyle="/)
    }
  })

  it('loads nothing from anywhere else: no CDN, no remote font, no absolute URL but XML namespaces', () => {
    for (const f of files.filter((x) => /\.(html|js|css)$/.test(x.path))) {
      const t = text(f)
      const urls = t.match(URL_RE) ?? []
      const foreign = urls.filter((u) => !ALLOWED_URL.some((re) => re.test(u)))
      expect(foreign, f.path).toEqual([])
      expect(t, f.path).not.toMatch(/\b(unpkg\.com|jsdelivr\.net|cdnjs\.cloudflare\.com|googleapis\.com|gstatic\.com|esm\.sh|skypack\.dev)\b/)
      if (f.path.endsWith('.css')) {
        expect(t, f.path).not.toMatch(/@import/)
        for (const m of t.matchAll(/url\(\s*["']?([^"')]*)/g)) expect(m[1], f.path).toMatch(/^data:/)
      }
    }
  })

  it('bundles the real browser tracker, Preact, htm and uPlot, minified for ES2020 browsers', () => {
    const home = text(files.find((f) => /^home\/app-.*\.js$/.test(f.path))!)
    const dashboard = text(files.find((f) => /^dashboard-ui\/app-.*\.js$/.test(f.path))!)
    expect(home).toContain('floe-home') // the tracker's app id
    expect(home).toContain('com.snowplowanalytics.snowplow/tp2')
    expect(dashboard).toContain('u-legend') // uPlot
    for (const js of [home, dashboard]) {
      expect(js).not.toMatch(/\/\*\*|\n\s*\/\/ /) // minified: no comments left
      expect(js).not.toContain('the single-instance home') // (a doc comment of the sources)
      expect(js).not.toMatch(/\bimport\s*\(|\brequire\(/)
    }
    const css = text(files.find((f) => /^dashboard-ui\/app-.*\.css$/.test(f.path))!)
    expect(css).toContain('--pico-') // Pico
    expect(css).toContain('.u-legend') // uPlot's stylesheet
    expect(css).toContain('.topbar') // the pages' own
  })

  it('serves every file an index.html refers to, with its type', async () => {
    const h = uiHandler(async () => assetsOf(files))
    for (const page of uiPages) {
      const index = await h(req(`/${page.name}`))
      expect(index.statusCode).toBe(200)
      for (const [, ref] of String(index.body).matchAll(/(?:src|href)="(\/[^"]+)"/g)) {
        const r = await h(req(ref!))
        expect(r.statusCode, ref).toBe(200)
        expect(r.headers?.['content-type'], ref).toMatch(/^(text\/javascript|text\/css|image\/svg\+xml)/)
      }
    }
  })
})

describe('the build command', () => {
  let out: string
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'floe-ui-build-'))
  })
  afterAll(() => rmSync(out, { recursive: true, force: true }))

  it('`node node_modules/tsx/dist/cli.mjs lib/ui/build.ts <outDir>` writes the pages and says so', async () => {
    const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'lib/ui/build.ts', join(out, 'ui')], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    const code = await new Promise((r) => child.once('exit', r))
    expect(code, log).toBe(0)
    expect(log).toMatch(/ui: built \/home \(app-[A-Z0-9]+\.js [\d.]+ kB/)
    expect(log).toMatch(/ui: built \/dashboard-ui/)
    expect(log).toMatch(/ui: wrote \d+ files to /)
    for (const page of uiPages) expect(readdirSync(join(out, 'ui', page.name))).toEqual(expect.arrayContaining(['index.html', 'favicon.svg']))
    const assets = await assetsFromDir(join(out, 'ui'))
    expect(assets.get('home/index.html')?.contentType).toBe('text/html; charset=utf-8')
  }, 120_000)

  it('refuses to run without an output directory', async () => {
    const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'lib/ui/build.ts'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    expect(await new Promise((r) => child.once('exit', r))).toBe(2)
    expect(err).toContain('usage:')
    expect(existsSync(join(projectRoot, '.ui-build'))).toBe(false)
  }, 60_000)
})
