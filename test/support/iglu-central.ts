import { resolve } from 'node:path'
import { projectRoot } from '../../lib/local/handlers'

/** Iglu Central (a directory holding `schemas/`): `FLOE_IGLU_CENTRAL`, else the repository's snapshot `schemas/iglu-central`. */
export const igluCentral = resolve(projectRoot, process.env.FLOE_IGLU_CENTRAL ?? 'schemas/iglu-central')
