/**
 * Every configurable enrichment, by configuration schema. One module each in
 * this directory; see `module.ts` for what a module provides.
 */
import { anonIp } from './anon-ip'
import { apiRequest } from './api-request'
import { asnLookups } from './asn-lookups'
import { botDetection } from './bot-detection'
import { campaignAttribution } from './campaign-attribution'
import { crossNavigationEnrichment } from './cross-navigation'
import { currencyConversion } from './currency-conversion'
import { eventFingerprint } from './event-fingerprint'
import { eventSpec } from './event-spec'
import { cookieExtractor, httpHeaderExtractor } from './extractors'
import { iabSpidersAndRobots } from './iab'
import { ipLookups } from './ip-lookups'
import { javascriptScript } from './javascript'
import type { EnrichmentModule } from './module'
import { piiPseudonymizer } from './pii'
import { refererParser } from './referer-parser'
import { sqlQuery } from './sql-query'
import { uaParser } from './ua-parser'
import { weather } from './weather'
import { yauaa } from './yauaa'

export const MODULES: readonly EnrichmentModule[] = [
  anonIp,
  apiRequest,
  asnLookups,
  botDetection,
  campaignAttribution,
  cookieExtractor,
  crossNavigationEnrichment,
  currencyConversion,
  eventFingerprint,
  eventSpec,
  httpHeaderExtractor,
  iabSpidersAndRobots,
  ipLookups,
  javascriptScript,
  piiPseudonymizer,
  refererParser,
  sqlQuery,
  uaParser,
  weather,
  yauaa,
]
