/**
 * Data files of npm packages that code reads at run time (not modules, so the
 * bundler leaves them out): in a Lambda bundle they are copied to
 * `package-files/<package>/<file>` next to the handler (see
 * `FunctionDecl.packageFiles`); elsewhere they are read from node_modules.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export function packageFile(spec: string): string {
  const bundled = join(dirname(fileURLToPath(import.meta.url)), 'package-files', spec)
  if (existsSync(bundled)) return bundled
  return createRequire(import.meta.url).resolve(spec)
}
