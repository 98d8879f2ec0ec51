/**
 * Builds the pages (`uiPages`) with esbuild: each page's module bundled and
 * minified for the browser (IIFE, ES2020) with its CSS (Pico's and the
 * pages' own), under content-hashed names, and an `index.html` that loads
 * them from the page's own path. Nothing is loaded from anywhere else, so
 * the pages work offline and under a `'self'`-only Content-Security-Policy.
 *
 * Layout of the output: `<page>/index.html`, `<page>/app-<hash>.js`,
 * `<page>/app-<hash>.css`, `<page>/favicon.svg` and the licence texts of the
 * bundled packages (`*.LEGAL.txt`).
 *
 * As a command: `node node_modules/tsx/dist/cli.mjs lib/ui/build.ts <outDir>`
 * (the CDK bundling of the `ui` function runs it into the asset's `ui/`).
 */
import { build } from 'esbuild'
import { readFileSync, realpathSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { plural } from '../core/plural'
import { uiPages, type UiPage } from './pages'

const here = dirname(fileURLToPath(import.meta.url))
const projectRoot = resolve(here, '../..')

/** One built file, by its path under the output directory (`home/index.html`). */
export interface UiFile {
  readonly path: string
  readonly contents: Uint8Array
}

export interface BuildUiOptions {
  /** Progress lines (one per page, one for the output). */
  readonly log?: (line: string) => void
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The page's HTML: its stylesheet and script by absolute path (the page itself is served at `/<page>`, without a trailing slash). */
export function indexHtml(page: Pick<UiPage, 'name' | 'title'>, script: string, stylesheet: string | undefined): string {
  const base = `/${page.name}/`
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${escapeHtml(page.title)}</title>`,
    `<link rel="icon" type="image/svg+xml" href="${base}favicon.svg">`,
    ...(stylesheet ? [`<link rel="stylesheet" href="${base}${stylesheet}">`] : []),
    `<script defer src="${base}${script}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    '<noscript><p>These pages need JavaScript.</p></noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`

async function buildPage(page: UiPage, favicon: Uint8Array): Promise<UiFile[]> {
  const outdir = join(projectRoot, '.ui-build', page.name) // names only: nothing is written by esbuild
  const result = await build({
    absWorkingDir: projectRoot,
    entryPoints: { app: join(projectRoot, page.entry) },
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    outdir,
    write: false,
    metafile: true,
    legalComments: 'linked',
    charset: 'utf8',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const files: UiFile[] = result.outputFiles.map((f) => ({ path: `${page.name}/${basename(f.path)}`, contents: f.contents }))
  const script = files.find((f) => /^app-[A-Z0-9]+\.js$/.test(basename(f.path)))
  if (!script) throw new Error(`the build of ${page.name} has no script`)
  const stylesheet = files.find((f) => /^app-[A-Z0-9]+\.css$/.test(basename(f.path)))
  files.push({ path: `${page.name}/index.html`, contents: Buffer.from(indexHtml(page, basename(script.path), stylesheet && basename(stylesheet.path))) })
  files.push({ path: `${page.name}/favicon.svg`, contents: favicon })
  return files
}

/**
 * Builds every page; writes the files under `outDir` when given (replacing
 * the pages' directories there) and answers them in any case.
 */
export async function buildUi(outDir?: string, opts: BuildUiOptions = {}): Promise<UiFile[]> {
  const log = opts.log ?? (() => {})
  const favicon = readFileSync(join(here, 'shared', 'favicon.svg'))
  const started = Date.now()
  const perPage = await Promise.all(
    uiPages.map(async (page) => {
      const files = await buildPage(page, favicon)
      const sizes = files.filter((f) => /\.(js|css)$/.test(f.path)).map((f) => `${basename(f.path)} ${kb(f.contents.byteLength)}`)
      log(`ui: built /${page.name} (${sizes.join(', ')})`)
      return files
    }),
  )
  const files = perPage.flat()
  if (outDir !== undefined) {
    const dir = resolve(outDir)
    for (const page of uiPages) await rm(join(dir, page.name), { recursive: true, force: true })
    for (const f of files) {
      const target = join(dir, f.path)
      await mkdir(dirname(target), { recursive: true })
      await writeFile(target, f.contents)
    }
    log(`ui: wrote ${plural(files.length, 'file')} to ${dir} in ${Date.now() - started} ms`)
  }
  return files
}

/** Whether `path` names this file, through symbolic links too (a checkout reached through a link ran nothing). */
function isThisFile(path: string): boolean {
  try {
    return realpathSync(path) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

const invokedDirectly = process.argv[1] !== undefined && isThisFile(resolve(process.argv[1]))
if (invokedDirectly) {
  const outDir = process.argv[2]
  if (!outDir || process.argv.length > 3) {
    console.error('usage: node node_modules/tsx/dist/cli.mjs lib/ui/build.ts <outDir>')
    process.exit(2)
  }
  buildUi(outDir, { log: (l) => console.log(l) }).catch((err: unknown) => {
    console.error(`ui: build failed: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
