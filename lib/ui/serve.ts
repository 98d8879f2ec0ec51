/**
 * Serves the built pages: `/home` and `/dashboard-ui` answer their
 * `index.html`, `/home/<file>` and `/dashboard-ui/<file>` the page's assets.
 * Only files of the build are served (looked up by name in memory, never
 * by a path on disk), with their content type, `nosniff`, a strict
 * Content-Security-Policy (everything from this origin only, no inline
 * script or style), and caching: content-hashed assets are immutable, the
 * HTML is revalidated every time.
 *
 * Where the files come from (`uiFromEnvironment`): the directory in
 * `FLOE_UI_DIR`; else the `ui/` directory next to the function's bundle (on
 * Lambda, `/var/task/ui`, written by the CDK bundling); else, running from
 * the sources, they are built in memory at the first request and kept. A
 * restart of the `dashboard` service reads or builds them again.
 */
import { existsSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { readdir, readFile } from 'node:fs/promises'
import { extname, join, relative, sep } from 'node:path'
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/types'
import { restartable } from '../runtime/restarts'
import { isUiPage, uiPages } from './pages'

/** One file as it is answered. */
export interface UiAsset {
  readonly body: Buffer
  /** The body gzip-compressed, for text files worth it (sent to clients that accept gzip). */
  readonly gzipped?: Buffer
  readonly contentType: string
  readonly cacheControl: string
}

/** Whether a content type is text (sent as text through API Gateway, and worth compressing). */
const isText = (type: string) => type.startsWith('text/') || type === 'image/svg+xml' || type === 'application/json'

/** The gzip form of a text body, when it saves at least a tenth (compressed once, when the assets are loaded). */
function gzipped(body: Buffer, type: string): Buffer | undefined {
  if (!isText(type) || body.length < 1024) return undefined
  const z = gzipSync(body, { level: 9 })
  return z.length < body.length * 0.9 ? z : undefined
}

/** Whether the request accepts gzip (`Accept-Encoding`, without `gzip;q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';')
    if (coding !== 'gzip' && coding !== '*') return false
    const q = params.map((x) => x.trim()).find((x) => x.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}

/** The servable files, by their path under the build directory (`home/index.html`). */
export type UiAssets = ReadonlyMap<string, UiAsset>

/** Everything from this origin only; no inline script or style; images may also be `data:` URIs (Pico's icons). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
}

const HASHED = /-[A-Z0-9]{8,}\.(?:js|css|png|svg|woff2)$/

/** The content type of a file name (`application/octet-stream` when unknown). */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream'
}

/** How long a file may be cached: hashed assets for a year, the HTML never without revalidating. */
export function cacheControlOf(name: string): string {
  if (name.endsWith('.html')) return 'no-cache'
  if (HASHED.test(name)) return 'private, max-age=31536000, immutable'
  return 'private, max-age=3600'
}

/** The assets of a build (files by their path under the build directory). */
export function assetsOf(files: Iterable<{ readonly path: string; readonly contents: Uint8Array }>): UiAssets {
  const out = new Map<string, UiAsset>()
  for (const f of files) {
    const path = f.path.split(sep).join('/')
    const body = Buffer.from(f.contents)
    const contentType = contentTypeOf(path)
    out.set(path, { body, gzipped: gzipped(body, contentType), contentType, cacheControl: cacheControlOf(path) })
  }
  return out
}

/** The assets of a build directory; every page's `index.html` must be there. */
export async function assetsFromDir(dir: string): Promise<UiAssets> {
  const files: { path: string; contents: Uint8Array }[] = []
  for (const page of uiPages) {
    const pageDir = join(dir, page.name)
    if (!existsSync(join(pageDir, 'index.html'))) throw new Error(`${dir} is not a build of the pages: ${page.name}/index.html is missing (build it with node node_modules/tsx/dist/cli.mjs lib/ui/build.ts ${dir})`)
    for (const entry of await readdir(pageDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue
      const full = join(entry.parentPath, entry.name)
      files.push({ path: relative(dir, full), contents: await readFile(full) })
    }
  }
  return assetsOf(files)
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

function plain(statusCode: number, body: string, headers: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...SECURITY_HEADERS, ...headers }, body }
}

/** A path segment decoded, or undefined when it cannot name a file of the build (`..`, separators, control characters, bad escapes). */
function segment(raw: string): string | undefined {
  let s: string
  try {
    s = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  if (s === '' || s === '.' || s === '..' || /[/\\\u0000-\u001f\u007f]/.test(s)) return undefined
  return s
}

/** The file a request path names (`home/index.html`), or undefined. */
export function assetPathOf(path: string): string | undefined {
  const raw = path.split('/')
  if (raw[0] !== '') return undefined
  // `/home` and `/home/` are the page; `/home/<file>` (one or more segments) an asset
  const parts = raw.slice(1)
  if (parts.at(-1) === '' && parts.length === 2) parts.pop()
  const decoded = parts.map(segment)
  if (decoded.some((s) => s === undefined)) return undefined
  const [page, ...rest] = decoded as string[]
  if (page === undefined || !isUiPage(page)) return undefined
  return rest.length === 0 ? `${page}/index.html` : `${page}/${rest.join('/')}`
}

/** The pages' handler over the assets `load` answers. */
export function uiHandler(load: () => Promise<UiAssets>): HttpHandler {
  return async (req: HttpRequest) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(405, 'Method Not Allowed\n', { allow: 'GET, HEAD' })
    const name = assetPathOf(req.path)
    if (name === undefined) return plain(404, 'Not Found\n')
    const asset = (await load()).get(name)
    if (!asset) return plain(404, 'Not Found\n')
    const headers: Record<string, string> = { 'content-type': asset.contentType, 'cache-control': asset.cacheControl, ...SECURITY_HEADERS }
    if (asset.gzipped) headers.vary = 'accept-encoding'
    if (asset.gzipped && acceptsGzip(req.headers['accept-encoding'])) {
      // A Buffer body goes through API Gateway base64-encoded: the compressed bytes arrive as they are.
      return { statusCode: 200, headers: { ...headers, 'content-encoding': 'gzip' }, body: req.method === 'HEAD' ? '' : asset.gzipped }
    }
    return { statusCode: 200, headers, body: req.method === 'HEAD' ? '' : isText(asset.contentType) ? asset.body.toString('utf8') : asset.body }
  }
}

export interface UiSourceOptions {
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The `ui/` directory next to the function's bundle. */
  readonly bundledDir: string
  readonly log?: (line: string) => void
}

/** Where the built files are read from, in order of preference. */
export function uiSource(opts: UiSourceOptions): { kind: 'dir'; dir: string } | { kind: 'memory' } {
  const env = opts.env ?? process.env
  const configured = env.FLOE_UI_DIR
  if (configured !== undefined && configured !== '') return { kind: 'dir', dir: configured }
  if (existsSync(join(opts.bundledDir, uiPages[0].name, 'index.html'))) return { kind: 'dir', dir: opts.bundledDir }
  return { kind: 'memory' }
}

/** Builds the pages in memory with esbuild (from the sources; never reached in a bundle, which ships `ui/`). */
async function buildInMemory(log: (line: string) => void): Promise<UiAssets> {
  const started = Date.now()
  // Not a static import: the function's bundle must not carry esbuild.
  const builder = new URL('./build.ts', import.meta.url).href
  const { buildUi } = (await import(builder)) as typeof import('./build')
  const files = await buildUi()
  log(`ui: built the pages in memory in ${Date.now() - started} ms (set FLOE_UI_DIR to serve a build instead)`)
  return assetsOf(files)
}

/**
 * The assets, loaded once (from a directory or built in memory) and again
 * after a restart of the `dashboard` service; a failed load is tried again
 * at the next request.
 */
export function uiAssetsLoader(opts: UiSourceOptions): () => Promise<UiAssets> {
  const log = opts.log ?? ((line: string) => console.log(JSON.stringify({ level: 'info', msg: line })))
  const assets = restartable(['dashboard'], () => {
    const source = uiSource(opts)
    const p = source.kind === 'dir' ? assetsFromDir(source.dir) : buildInMemory(log)
    p.catch(() => assets.drop())
    return p
  })
  return () => assets.get()
}

/** The `ui` function's handler. */
export function uiFromEnvironment(bundledDir: string): HttpHandler {
  return uiHandler(uiAssetsLoader({ bundledDir }))
}
