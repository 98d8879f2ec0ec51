/**
 * A JavaScript enrichment tried before its configuration is stored (the
 * control plane's upload and enable, through `checkEnrichmentSet`): its
 * `process()` runs on a few sample events, under the per-event limits enrich
 * runs it with. A script that does not finish on one of them would spend its
 * time limit on every such event and fail it; one that fails on every sample
 * (throws, or returns what is not a list of self-describing JSON) would fail
 * every event: both are refused, with the reason. A trial stops at the first
 * sample that runs out of time, so it costs at most one time limit for such
 * a script.
 */
import { EnrichedEvent } from '../event'
import type { Enrichment, StepInput, StepResult } from '../steps'
import { INTERRUPTED, SCRIPT_LIMITS } from './javascript'

interface Sample {
  /** How the sample is named in a refusal. */
  readonly name: string
  readonly fields: Readonly<Record<string, string | number>>
  readonly contexts?: readonly { schema: string; data: unknown }[]
  readonly unstruct?: { schema: string; data: unknown }
}

const WEB_PAGE = { schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '0c6ae4e1-3bc2-4f9a-a1f2-0a9c1b0e7d3e' } }
const COMMON = {
  app_id: 'trial',
  platform: 'web',
  etl_tstamp: '2025-01-01 00:00:01.000',
  collector_tstamp: '2025-01-01 00:00:00.000',
  dvce_created_tstamp: '2025-01-01 00:00:00.000',
  derived_tstamp: '2025-01-01 00:00:00.000',
  event_id: 'f2a8ae3c-3a6b-4c4b-9d36-6c0e2e9f1b10',
  name_tracker: 'sp',
  v_tracker: 'js-4.0.0',
  v_collector: 'floe',
  v_etl: 'floe',
  user_id: 'user-1',
  user_ipaddress: '203.0.113.7',
  domain_userid: '6e1c3f4a-2b8d-4f0e-9a7c-5d3b1e2f4a6c',
  domain_sessionidx: 3,
  network_userid: '1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
  page_url: 'https://shop.example.com/products/1?utm_source=newsletter',
  page_title: 'Product 1',
  page_referrer: 'https://www.google.com/',
  page_urlscheme: 'https',
  page_urlhost: 'shop.example.com',
  page_urlpath: '/products/1',
  page_urlquery: 'utm_source=newsletter',
  useragent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  br_lang: 'en-GB',
  event_format: 'jsonschema',
  event_version: '1-0-0',
}

/** The events a script is tried on: a page view, a self-describing event and a structured event, with a context each. */
export const TRIAL_SAMPLES: readonly Sample[] = [
  { name: 'page view', fields: { ...COMMON, event: 'page_view', event_vendor: 'com.snowplowanalytics.snowplow', event_name: 'page_view' }, contexts: [WEB_PAGE] },
  {
    name: 'self-describing event (link_click)',
    fields: { ...COMMON, event: 'unstruct', event_vendor: 'com.snowplowanalytics.snowplow', event_name: 'link_click' },
    contexts: [WEB_PAGE],
    unstruct: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: 'https://example.com/next' } },
  },
  {
    name: 'structured event',
    fields: { ...COMMON, event: 'struct', event_vendor: 'com.google.analytics', event_name: 'event', se_category: 'shop', se_action: 'add-to-basket', se_label: 'sku-1', se_value: '2' },
    contexts: [WEB_PAGE],
  },
]

const HEADERS = ['Host: collector.example.com', 'User-Agent: Mozilla/5.0', 'Referer: https://shop.example.com/products/1']

function sampleEvent(s: Sample): EnrichedEvent {
  const ev = new EnrichedEvent()
  for (const [k, v] of Object.entries(s.fields)) ev.set(k as Parameters<EnrichedEvent['set']>[0], v)
  ev.contexts = (s.contexts ?? []).map((c) => ({ schema: c.schema, data: JSON.stringify(c.data) }))
  ev.unstruct = s.unstruct ? { schema: s.unstruct.schema, data: JSON.stringify(s.unstruct.data) } : null
  return ev
}

const input = (): StepInput => ({ raw: { payload: { headers: HEADERS } } as unknown as StepInput['raw'], pageQuery: null })

function errorOf(r: StepResult): string | undefined {
  const f = r.failures?.[0]
  if (f === undefined) return undefined
  return 'error' in f.message ? f.message.error : `${f.message.field}: ${f.message.expectation}`
}

/** Why a built JavaScript step must not be stored (it runs out of time on a sample, or fails on every one), or undefined. */
export async function tryScript(step: Enrichment, source: string, timeMs = SCRIPT_LIMITS.timeMs): Promise<string | undefined> {
  const failures: string[] = []
  for (const s of TRIAL_SAMPLES) {
    const error = errorOf(await step.run(sampleEvent(s), input()))
    if (error === undefined) continue
    if (error.includes(INTERRUPTED)) {
      return `${source}: process() did not finish within its limit of ${timeMs} ms on a sample ${s.name}; enrich would spend that limit on every such event and fail it (does process() loop forever?)`
    }
    failures.push(`on a ${s.name}: ${error}`)
  }
  if (failures.length === TRIAL_SAMPLES.length) return `${source}: process() fails on every sample event, so it would fail every event (return null for events it does not handle): ${failures.join('; ')}`
  return undefined
}
