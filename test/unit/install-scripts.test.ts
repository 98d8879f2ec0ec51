/**
 * `npm ci` on npm 11 warns about dependencies whose install scripts
 * `allowScripts` (package.json) does not cover: every installed package with
 * an install script must be named there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'

/** Names of the installed packages with a preinstall, install or postinstall script (or a binding.gyp, which npm builds). */
function withInstallScripts(dir: string, found = new Set<string>()): Set<string> {
  if (!existsSync(dir)) return found
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue
    const names = entry.startsWith('@') ? readdirSync(join(dir, entry)).map((n) => `${entry}/${n}`) : [entry]
    for (const name of names) {
      const pkgDir = join(dir, name)
      const file = join(pkgDir, 'package.json')
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string> }
      const s = pkg.scripts ?? {}
      if (s.preinstall || s.install || s.postinstall || existsSync(join(pkgDir, 'binding.gyp'))) found.add(name)
      withInstallScripts(join(pkgDir, 'node_modules'), found)
    }
  }
  return found
}

describe('install scripts', () => {
  it('allowScripts names every installed dependency that has one', () => {
    const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }
    const allowed = Object.keys(pkg.allowScripts ?? {}).map((k) => k.replace(/(.)@.*$/, '$1'))
    const needed = [...withInstallScripts(join(projectRoot, 'node_modules'))].sort()
    expect(needed).toContain('esbuild')
    expect(needed.filter((n) => !allowed.includes(n))).toEqual([])
    // and nothing more than they need
    expect(allowed.filter((n) => !needed.includes(n))).toEqual([])
  })
})
