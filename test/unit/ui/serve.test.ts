import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HttpRequest } from '../../../lib/http/types'
import { applyGenerations, resetRestartState } from '../../../lib/runtime/restarts'
import { gunzipSync } from 'node:zlib'
import { acceptsGzip, assetPathOf, assetsFromDir, assetsOf, cacheControlOf, CONTENT_SECURITY_POLICY, contentTypeOf, uiAssetsLoader, uiHandler, uiSource } from '../../../lib/ui/serve'

const req = (path: string, method = 'GET'): HttpRequest => ({
  method,
  path,
  headers: {},
  query: {},
  rawQuery: '',
  cookies: [],
  body: Buffer.alloc(0),
  sourceIp: '127.0.0.1',
  params: {},
  timeEpochMs: Date.now(),
})

const FILES = [
  { path: 'home/index.html', contents: Buffer.from('<!doctype html><title>home</title>') },
  { path: 'home/app-ABCDEFGH.js', contents: Buffer.from('console.log(1)') },
  { path: 'home/app-IJKLMNOP.css', contents: Buffer.from('body{}') },
  { path: 'home/favicon.svg', contents: Buffer.from('<svg/>') },
  { path: 'home/app-ABCDEFGH.js.LEGAL.txt', contents: Buffer.from('licences') },
  { path: 'dashboard-ui/index.html', contents: Buffer.from('<!doctype html><title>dashboard</title>') },
  { path: 'dashboard-ui/app-QRSTUVWX.js', contents: Buffer.from('console.log(2)') },
]
const handler = uiHandler(async () => assetsOf(FILES))

describe('the pages handler', () => {
  it('answers each page’s index.html at /home and /dashboard-ui (with or without a trailing slash), never cached without revalidation', async () => {
    for (const [path, title] of [['/home', 'home'], ['/home/', 'home'], ['/home/index.html', 'home'], ['/dashboard-ui', 'dashboard'], ['/dashboard-ui/', 'dashboard']]) {
      const r = await handler(req(path!))
      expect(r.statusCode, path).toBe(200)
      expect(r.headers?.['content-type']).toBe('text/html; charset=utf-8')
      expect(r.headers?.['cache-control']).toBe('no-cache')
      expect(String(r.body)).toContain(`<title>${title}</title>`)
    }
  })

  it('answers the assets with their content type; hashed ones are immutable', async () => {
    const expected: [string, string, string][] = [
      ['/home/app-ABCDEFGH.js', 'text/javascript; charset=utf-8', 'private, max-age=31536000, immutable'],
      ['/home/app-IJKLMNOP.css', 'text/css; charset=utf-8', 'private, max-age=31536000, immutable'],
      ['/home/favicon.svg', 'image/svg+xml', 'private, max-age=3600'],
      ['/home/app-ABCDEFGH.js.LEGAL.txt', 'text/plain; charset=utf-8', 'private, max-age=3600'],
      ['/dashboard-ui/app-QRSTUVWX.js', 'text/javascript; charset=utf-8', 'private, max-age=31536000, immutable'],
    ]
    for (const [path, type, cache] of expected) {
      const r = await handler(req(path))
      expect(r.statusCode, path).toBe(200)
      expect(r.headers?.['content-type'], path).toBe(type)
      expect(r.headers?.['cache-control'], path).toBe(cache)
    }
    expect((await handler(req('/home/app-ABCDEFGH.js'))).body).toBe('console.log(1)')
  })

  it('sends text files of some size gzip-compressed to clients that accept gzip, with Vary', async () => {
    const big = 'console.log("a fairly repetitive script");\n'.repeat(200)
    const h = uiHandler(async () => assetsOf([...FILES, { path: 'home/app-BIGBIGBI.js', contents: Buffer.from(big) }]))
    const gz = await h({ ...req('/home/app-BIGBIGBI.js'), headers: { 'accept-encoding': 'gzip, deflate, br' } })
    expect(gz.headers?.['content-encoding']).toBe('gzip')
    expect(gz.headers?.vary).toBe('accept-encoding')
    expect(Buffer.isBuffer(gz.body)).toBe(true)
    expect(gunzipSync(gz.body as Buffer).toString('utf8')).toBe(big)
    expect((gz.body as Buffer).length).toBeLessThan(big.length / 10)
    const plainAnswer = await h(req('/home/app-BIGBIGBI.js'))
    expect(plainAnswer.headers?.['content-encoding']).toBeUndefined()
    expect(plainAnswer.headers?.vary).toBe('accept-encoding')
    expect(plainAnswer.body).toBe(big)
    // small files are not worth it
    expect((await h({ ...req('/home/app-ABCDEFGH.js'), headers: { 'accept-encoding': 'gzip' } })).headers?.['content-encoding']).toBeUndefined()
    expect(acceptsGzip('gzip;q=0, identity')).toBe(false)
    expect(acceptsGzip('br;q=1, *;q=0.1')).toBe(true)
    expect(acceptsGzip(undefined)).toBe(false)
  })

  it('sends nosniff and a strict Content-Security-Policy (this origin only, no inline script or style) on every answer, errors included', async () => {
    for (const path of ['/home', '/home/app-ABCDEFGH.js', '/home/nothing.js', '/home/..%2f..%2fetc%2fpasswd']) {
      const r = await handler(req(path))
      expect(r.headers?.['x-content-type-options'], path).toBe('nosniff')
      expect(r.headers?.['content-security-policy'], path).toBe(CONTENT_SECURITY_POLICY)
    }
    const directives = Object.fromEntries(CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]))
    expect(directives['default-src']).toEqual(["'none'"])
    expect(directives['script-src']).toEqual(["'self'"])
    expect(directives['style-src']).toEqual(["'self'"])
    expect(directives['connect-src']).toEqual(["'self'"])
    expect(directives['frame-ancestors']).toEqual(["'none'"])
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline')
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval')
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:/)
  })

  it('answers 404 for anything that is not a file of the build', async () => {
    for (const path of ['/home/nothing.js', '/home/app.js', '/homes', '/home-x/app-ABCDEFGH.js', '/dashboard-ui/app-ABCDEFGH.js', '/home/sub/app-ABCDEFGH.js', '/', '/other', '/home//app-ABCDEFGH.js', '/home/app-ABCDEFGH.js/']) {
      const r = await handler(req(path))
      expect(r.statusCode, path).toBe(404)
      expect(r.headers?.['content-type']).toBe('text/plain; charset=utf-8')
    }
  })

  it('refuses path traversal in every spelling', async () => {
    for (const path of [
      '/home/../dashboard-ui/index.html',
      '/home/%2e%2e/dashboard-ui/index.html',
      '/home/..%2fdashboard-ui%2findex.html',
      '/home/..%2f..%2f..%2fetc%2fpasswd',
      '/home/%2e%2e%2f%2e%2e%2fpackage.json',
      '/home/..%5c..%5cpackage.json',
      '/home/.%2fapp-ABCDEFGH.js',
      '/home/%00app-ABCDEFGH.js',
      '/home/app-ABCDEFGH.js%00.html',
      '/home/%E0%A4%A',
      '/%2e%2e/home/index.html',
      '/home/./index.html',
    ]) {
      const r = await handler(req(path))
      expect(r.statusCode, path).toBe(404)
      expect(String(r.body), path).toBe('Not Found\n')
    }
  })

  it('answers HEAD like GET without a body, and refuses other methods with 405', async () => {
    const head = await handler(req('/home', 'HEAD'))
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
    const post = await handler(req('/home', 'POST'))
    expect(post.statusCode).toBe(405)
    expect(post.headers?.allow).toBe('GET, HEAD')
  })
})

describe('file names and types', () => {
  it('maps request paths to build paths', () => {
    expect(assetPathOf('/home')).toBe('home/index.html')
    expect(assetPathOf('/dashboard-ui/')).toBe('dashboard-ui/index.html')
    expect(assetPathOf('/home/app-X.js')).toBe('home/app-X.js')
    expect(assetPathOf('/home/a%20b.js')).toBe('home/a b.js')
    expect(assetPathOf('/home/../x')).toBeUndefined()
    expect(assetPathOf('home')).toBeUndefined()
    expect(assetPathOf('/micro/all')).toBeUndefined()
  })

  it('knows the content types and caching of what the build writes', () => {
    expect(contentTypeOf('index.html')).toBe('text/html; charset=utf-8')
    expect(contentTypeOf('app-ABCDEFGH.JS')).toBe('text/javascript; charset=utf-8')
    expect(contentTypeOf('x.unknown')).toBe('application/octet-stream')
    expect(cacheControlOf('home/index.html')).toBe('no-cache')
    expect(cacheControlOf('home/app-ABCDEFGH.css')).toBe('private, max-age=31536000, immutable')
    expect(cacheControlOf('home/favicon.svg')).toBe('private, max-age=3600')
  })
})

describe('where the files come from', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'floe-ui-'))
    resetRestartState()
  })
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true })
    resetRestartState()
  })
  const writeBuild = (root: string, marker: string) => {
    for (const page of ['home', 'dashboard-ui']) {
      mkdirSync(join(root, page), { recursive: true })
      writeFileSync(join(root, page, 'index.html'), `<title>${page} ${marker}</title>`)
      writeFileSync(join(root, page, 'app-ABCDEFGH.js'), `/* ${marker} */`)
    }
  }

  it('FLOE_UI_DIR first, then ui/ next to the bundle, else a build in memory', () => {
    writeBuild(join(dir, 'bundle', 'ui'), 'bundled')
    expect(uiSource({ env: { FLOE_UI_DIR: join(dir, 'mine') }, bundledDir: join(dir, 'bundle', 'ui') })).toEqual({ kind: 'dir', dir: join(dir, 'mine') })
    expect(uiSource({ env: {}, bundledDir: join(dir, 'bundle', 'ui') })).toEqual({ kind: 'dir', dir: join(dir, 'bundle', 'ui') })
    expect(uiSource({ env: { FLOE_UI_DIR: '' }, bundledDir: join(dir, 'nothing') })).toEqual({ kind: 'memory' })
  })

  it('reads a build directory, and says what is missing from one that is not a build', async () => {
    writeBuild(dir, 'one')
    const assets = await assetsFromDir(dir)
    expect([...assets.keys()].sort()).toEqual(['dashboard-ui/app-ABCDEFGH.js', 'dashboard-ui/index.html', 'home/app-ABCDEFGH.js', 'home/index.html'])
    await expect(assetsFromDir(join(dir, 'home'))).rejects.toThrow(/home\/index\.html is missing/)
  })

  it('keeps the files until the dashboard service is restarted; a failed load is tried again', async () => {
    const load = uiAssetsLoader({ env: { FLOE_UI_DIR: dir }, bundledDir: join(dir, 'none'), log: () => {} })
    await expect(load()).rejects.toThrow(/is missing/)
    writeBuild(dir, 'one')
    const h = uiHandler(load)
    expect(String((await h(req('/home'))).body)).toContain('home one')
    writeBuild(dir, 'two')
    expect(String((await h(req('/home'))).body)).toContain('home one')
    applyGenerations({ dashboard: 1, enrich: 1 })
    applyGenerations({ dashboard: 1, enrich: 2 }) // another service: nothing to do here
    expect(String((await h(req('/home'))).body)).toContain('home one')
    applyGenerations({ dashboard: 2, enrich: 2 })
    expect(String((await h(req('/home'))).body)).toContain('home two')
  })
})
