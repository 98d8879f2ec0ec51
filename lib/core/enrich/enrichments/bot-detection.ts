/**
 * `bot_detection_enrichment_config`: one `bot_detection` context,
 * `{bot, indicators}`, from what other steps found: YAUAA's device or agent
 * class (`yauaa`), the IAB check (`iab`), the ASN bot list (`asnLookups`),
 * and, when enabled, the tracker's own `client_side_bot_detection` entity
 * (`clientSideDetection`). Indicators are listed input first, then in
 * execution order.
 */
import type { Entity } from '../event'
import type { Enrichment } from '../steps'
import { IAB_SCHEMA } from './iab'
import { ASN_SCHEMA } from './ip-lookups'
import { ORDER, type EnrichmentModule } from './module'
import { YAUAA_SCHEMA } from './yauaa'

export const BOT_DETECTION_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/bot_detection/jsonschema/1-0-1'
const CLIENT_SIDE_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/client_side_bot_detection/jsonschema/1-0-0'

const BOT_DEVICE_CLASSES = new Set(['Robot', 'Robot Mobile', 'Robot Imitator'])
const BOT_AGENT_CLASSES = new Set(['Robot', 'Robot Mobile'])

interface Indicator {
  readonly name: string
  isBot(data: any): boolean
}

const INDICATORS: Record<string, Indicator> = {
  [YAUAA_SCHEMA]: { name: 'yauaa', isBot: (d) => BOT_DEVICE_CLASSES.has(d?.deviceClass) || BOT_AGENT_CLASSES.has(d?.agentClass) },
  [IAB_SCHEMA]: { name: 'iab', isBot: (d) => d?.spiderOrRobot === true },
  [ASN_SCHEMA]: { name: 'asnLookups', isBot: (d) => d?.likelyBot === true },
  [CLIENT_SIDE_SCHEMA]: { name: 'clientSideDetection', isBot: (d) => d?.bot === true },
}

export interface BotDetectionSettings {
  readonly useYauaa: boolean
  readonly useIab: boolean
  readonly useAsnLookups: boolean
  readonly useClientSideDetection: boolean
}

/** The indicators that fired: the input entities' first, then the derived contexts' in the order their steps ran. */
export function botIndicators(s: BotDetectionSettings, derived: readonly Entity[], inputs: readonly Entity[]): string[] {
  const enabled = new Set([s.useYauaa && YAUAA_SCHEMA, s.useIab && IAB_SCHEMA, s.useAsnLookups && ASN_SCHEMA].filter(Boolean))
  const fired = (list: readonly Entity[], use: (schema: string) => boolean) => {
    const names: string[] = []
    for (const e of list) {
      const ind = use(e.schema) ? INDICATORS[e.schema] : undefined
      // each step's contexts are prepended, so the list runs newest first
      if (ind && ind.isBot(JSON.parse(e.data))) names.unshift(ind.name)
    }
    return names
  }
  return [...(s.useClientSideDetection ? fired(inputs, (x) => x === CLIENT_SIDE_SCHEMA) : []), ...fired(derived, (x) => enabled.has(x))]
}

export const botDetection: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'bot_detection_enrichment_config',
  models: [1],
  create(config): Enrichment {
    const p = config.parameters
    const s: BotDetectionSettings = { useYauaa: p.useYauaa === true, useIab: p.useIab === true, useAsnLookups: p.useAsnLookups === true, useClientSideDetection: p.useClientSideDetection === true }
    return {
      id: 'bot-detection',
      order: ORDER.botDetection,
      run(ev) {
        const indicators = botIndicators(s, ev.derived, ev.contexts)
        return { contexts: [{ schema: BOT_DETECTION_SCHEMA, data: `{"bot":${indicators.length > 0},"indicators":${JSON.stringify(indicators)}}` }] }
      },
    }
  },
}
