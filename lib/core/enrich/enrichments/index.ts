/**
 * Every configurable enrichment, by configuration schema. One module each in
 * this directory; see `module.ts` for what a module provides.
 */
import { eventFingerprint } from './event-fingerprint'
import type { EnrichmentModule } from './module'

export const MODULES: readonly EnrichmentModule[] = [
  eventFingerprint,
]
