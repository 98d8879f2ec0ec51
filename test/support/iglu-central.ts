import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { projectRoot } from '../../lib/local/handlers'

/** The local copy of Iglu Central (a directory holding `schemas/`): `FLOE_IGLU_CENTRAL`, else `../shared/iglu-central`. */
export const igluCentral = resolve(projectRoot, process.env.FLOE_IGLU_CENTRAL ?? '../shared/iglu-central')

/**
 * Whether the Iglu Central copy is there. Tests that need it are skipped when
 * it is missing on a developer machine, but CI (`CI=true`) must have it.
 */
export function igluCentralAvailable(): boolean {
  const ok = existsSync(resolve(igluCentral, 'schemas'))
  if (!ok && process.env.CI) throw new Error(`The Iglu Central copy is missing at ${igluCentral} (set FLOE_IGLU_CENTRAL)`)
  return ok
}
