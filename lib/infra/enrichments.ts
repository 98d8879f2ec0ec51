/**
 * Where the enrich function reads its enrichment configuration files: a
 * prefix of a declared bucket, filled on deploy (CDK) and at `npm start` from
 * the directory in `FLOE_ENRICHMENTS_DIR`.
 */
import type { BucketKey } from './resources'

export const enrichmentFiles = {
  bucket: 'assets' as BucketKey,
  prefix: 'enrichments/',
  /** The directory to deploy from: `FLOE_ENRICHMENTS_DIR`, or none. */
  sourceDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
    return env.FLOE_ENRICHMENTS_DIR?.trim() || undefined
  },
} as const
