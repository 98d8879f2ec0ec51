/**
 * Every configurable enrichment, by configuration schema. One module each in
 * this directory; see `module.ts` for what a module provides.
 */
import { anonIp } from './anon-ip'
import { asnLookups } from './asn-lookups'
import { botDetection } from './bot-detection'
import { campaignAttribution } from './campaign-attribution'
import { crossNavigationEnrichment } from './cross-navigation'
import { eventFingerprint } from './event-fingerprint'
import { eventSpec } from './event-spec'
import { cookieExtractor, httpHeaderExtractor } from './extractors'
import { iabSpidersAndRobots } from './iab'
import { ipLookups } from './ip-lookups'
import { javascriptScript } from './javascript'
import type { EnrichmentModule } from './module'
import { piiPseudonymizer } from './pii'
import { refererParser } from './referer-parser'
import { uaParser } from './ua-parser'
import { yauaa } from './yauaa'

export const MODULES: readonly EnrichmentModule[] = [
  anonIp,
  asnLookups,
  botDetection,
  campaignAttribution,
  cookieExtractor,
  crossNavigationEnrichment,
  eventFingerprint,
  eventSpec,
  httpHeaderExtractor,
  iabSpidersAndRobots,
  ipLookups,
  javascriptScript,
  piiPseudonymizer,
  refererParser,
  uaParser,
  yauaa,
]
