import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

let found: string | undefined

/**
 * The project's `schemas/` directory (Iglu static layout): `FLOE_SCHEMAS_DIR`
 * when set, else the nearest `schemas/` above this module or the working
 * directory. Lambda bundles ship it next to the handler (see `lib/infra/function.ts`).
 */
export function schemasDir(): string {
  const fromEnv = process.env.FLOE_SCHEMAS_DIR
  if (fromEnv) return fromEnv
  if (found) return found
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    let dir = resolve(start)
    for (;;) {
      const candidate = join(dir, 'schemas')
      if (existsSync(join(candidate, 'io.floe'))) return (found = candidate)
      const parent = dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  throw new Error('Cannot find the schemas/ directory (set FLOE_SCHEMAS_DIR)')
}
