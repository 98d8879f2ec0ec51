/**
 * Upstream conformance data that may not be redistributed with the project
 * (the referer-parser database and its test cases are GPL data). It is read
 * from `FLOE_UPSTREAM_ASSETS`, or from the `assets` folder of a `shared`
 * directory beside the repository when there is one; tests that need it are
 * skipped, with a printed reason, when it is absent.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../lib/local/handlers'

/** Where upstream assets are looked for. */
export const UPSTREAM_ASSETS = process.env.FLOE_UPSTREAM_ASSETS || join(projectRoot, '..', 'shared', 'assets')

/** The path of an upstream asset, or undefined (with the reason printed once) when it is not there. */
export function upstreamAsset(path: string, purpose: string): string | undefined {
  const full = join(UPSTREAM_ASSETS, path)
  if (existsSync(full)) return full
  console.log(`${purpose}: skipped, ${full} is not there (set FLOE_UPSTREAM_ASSETS to a folder holding ${path})`)
  return undefined
}
