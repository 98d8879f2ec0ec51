/**
 * The enrichment stage: an ordered list of steps. The always-on steps (the
 * v_collector check, page and referrer URLs, derived timestamp, page query
 * string and `_sp`, event vendor/name/format/version) are built in; configured
 * enrichments plug in by their position in Snowplow's execution order
 * (`order`, the step number in Snowplow enrich's documented execution order) and may add derived contexts,
 * set fields, report failures or drop the event.
 */
import type { RawEvent } from './adapters'
import { parseTimestamp, formatTimestamp, toTimestamp, tsv, base64Text } from './convert'
import type { Entity, EnrichedEvent } from './event'
import { F } from './fields'
import { checkQuery, splitQuery, type NameValue } from './querystring'
import { nonEmpty, parseUri, uriParts } from './uri'
import { memo } from './memo'

/** An enrichment failure (`enrichment_failures` message). */
export interface EnrichmentFailure {
  readonly enrichment: { readonly schemaKey: string | null; readonly identifier: string } | null
  readonly message: { readonly error: string } | { readonly field: string; readonly value: string | null; readonly expectation: string }
}

export interface StepResult {
  /** Derived contexts this step adds (prepended to those of earlier steps). */
  readonly contexts?: readonly Entity[]
  readonly failures?: readonly EnrichmentFailure[]
  /** Discard the event silently. */
  readonly drop?: boolean
}

/** What steps can read besides the event. */
export interface StepInput {
  readonly raw: RawEvent
  /** The page URL's query parameters (set by the built-in step at 8.5); shared between events, not to be changed. */
  pageQuery: readonly NameValue[] | null
  /** The page URL's checked query text (set by the built-in step at 8.5); `pageQuery` splits it when first read. */
  pageQueryText?: string | null
}

/** Split page queries by text: the same landing pages recur event after event. */
const splitQueries = new Map<string, readonly NameValue[]>()

/** `splitQuery(text)`, remembered for texts up to 2,048 characters. */
function splitQueryRemembered(text: string): readonly NameValue[] {
  if (text.length > 2_048) return splitQuery(text)
  let pairs = splitQueries.get(text)
  if (pairs === undefined) {
    pairs = splitQuery(text)
    if (splitQueries.size >= 1_024) splitQueries.clear()
    splitQueries.set(text, pairs)
  }
  return pairs
}

/** A step input whose page query is split only when a step reads it. */
export class EventStepInput implements StepInput {
  private pairs: readonly NameValue[] | null | undefined = null
  private text: string | null = null
  constructor(readonly raw: RawEvent) {}

  get pageQuery(): readonly NameValue[] | null {
    if (this.pairs === undefined) this.pairs = splitQueryRemembered(this.text!)
    return this.pairs
  }
  set pageQuery(v: readonly NameValue[] | null) {
    this.pairs = v
    this.text = null
  }
  get pageQueryText(): string | null {
    return this.text
  }
  set pageQueryText(q: string | null) {
    this.text = q
    this.pairs = q === null ? null : undefined
  }
}

export interface Enrichment {
  /** Identifier used in failures, e.g. `event-fingerprint`. */
  readonly id: string
  /** Position in the execution order (step number in Snowplow enrich's execution order). */
  readonly order: number
  run(ev: EnrichedEvent, input: StepInput): StepResult | Promise<StepResult>
}

const none: StepResult = {}
const simple = (error: string): EnrichmentFailure => ({ enrichment: null, message: { error } })

const EVENT_SCHEMAS: Record<string, [string, string]> = {
  page_view: ['com.snowplowanalytics.snowplow', 'page_view'],
  page_ping: ['com.snowplowanalytics.snowplow', 'page_ping'],
  struct: ['com.google.analytics', 'event'],
  transaction: ['com.snowplowanalytics.snowplow', 'transaction'],
  transaction_item: ['com.snowplowanalytics.snowplow', 'transaction_item'],
}

export const EVENT_TYPE_EXPECTATION = (event: string | null) =>
  `trying to extract the schema of the enriched event but event type [${event}] doesn't match\n          any of page_view, page_ping, struct, transaction, transaction_item and unstruct\n          `

function setUri(ev: EnrichedEvent, start: number, u: ReturnType<typeof uriParts>): void {
  for (let i = 0; i < 6; i++) ev.f[start + i] = u[i]!
}

/** The derived timestamp (exact milliseconds). */
export function derivedTimestamp(created: string | null, sent: string | null, collector: string | null, trueTs: string | null): string | null {
  if (trueTs !== null) return trueTs
  if (created !== null && sent !== null && collector !== null) {
    const c = parseTimestamp(created)
    const s = parseTimestamp(sent)
    if (c < s) return formatTimestamp(parseTimestamp(collector) - (s - c))
  }
  return collector
}

/** vendor, name, format and version of recently seen event schemas. */
const schemaPartsCache = new Map<string, readonly [string, string, string, string] | null>()

function schemaParts(schema: string): readonly [string, string, string, string] | null {
  return memo(schemaPartsCache, schema, 1000, splitSchema)
}

function splitSchema(schema: string): readonly [string, string, string, string] | null {
  const m = /^iglu:([^/]+)\/([^/]+)\/([^/]+)\/(.+)$/.exec(schema)
  return m ? [m[1]!, m[2]!, m[3]!, m[4]!] : null
}

/** `derivedTimestamp` of an event, with the milliseconds its timestamp columns were written from. */
function eventDerivedTimestamp(ev: EnrichedEvent): string | null {
  const created = ev.f[F.dvce_created_tstamp] as string | null
  const sent = ev.f[F.dvce_sent_tstamp] as string | null
  const collector = ev.f[F.collector_tstamp] as string | null
  const trueTs = ev.f[F.true_tstamp] as string | null
  if (trueTs !== null) return trueTs
  if (created !== null && sent !== null && collector !== null) {
    const c = created === ev.createdText ? ev.createdMs : parseTimestamp(created)
    const s = sent === ev.sentText ? ev.sentMs : parseTimestamp(sent)
    if (c < s) return formatTimestamp((collector === ev.collectorText ? ev.collectorMs : parseTimestamp(collector)) - (s - c))
  }
  return collector
}

export const BUILT_IN_STEPS: readonly Enrichment[] = [
  {
    id: 'v_collector',
    order: 1,
    run: (ev) => (ev.f[F.v_collector] === null ? { failures: [{ enrichment: null, message: { field: 'v_collector', value: null, expectation: 'should be set' } }] } : none),
  },
  {
    id: 'page-uri',
    order: 2,
    run(ev, input) {
      const fromParam = ev.f[F.page_url] as string | null
      const url = fromParam ?? (input.raw.payload.refererUri === null ? null : tsv(input.raw.payload.refererUri))
      if (url === null) return none
      const r = parseUri(url)
      if (!r.ok) return { failures: [simple(r.error)] }
      ev.f[F.page_url] = nonEmpty(r.uri.text)
      setUri(ev, F.page_urlscheme, uriParts(r.uri))
      return none
    },
  },
  {
    id: 'derived-tstamp',
    order: 3,
    run(ev) {
      try {
        ev.f[F.derived_tstamp] = eventDerivedTimestamp(ev)
        return none
      } catch (err) {
        return { failures: [simple(`Exception calculating derived timestamp: ${(err as Error).message}`)] }
      }
    },
  },
  {
    id: 'referrer-uri',
    order: 7.5,
    run(ev) {
      const refr = ev.f[F.page_referrer] as string | null
      if (refr === null) return none
      const r = parseUri(refr)
      if (!r.ok) return { failures: [simple(r.error)] }
      setUri(ev, F.refr_urlscheme, uriParts(r.uri))
      return none
    },
  },
  {
    id: 'page-query',
    order: 8.5,
    run(ev, input) {
      const q = ev.f[F.page_urlquery] as string | null
      if (q === null) return none
      const c = checkQuery(q)
      if (!c.ok) {
        return { failures: [{ enrichment: null, message: { field: 'uri', value: ev.f[F.page_url] as string, expectation: `Could not parse uri. Error: [${c.error}].` } }] }
      }
      if (input instanceof EventStepInput) input.pageQueryText = c.query
      else input.pageQuery = splitQuery(c.query)
      return none
    },
  },
  {
    id: 'cross-domain',
    order: 10.5,
    run(ev, input) {
      let sp: string | null | undefined
      // a `_sp` name is in the text as is, or percent-encoded
      const text = input instanceof EventStepInput ? input.pageQueryText : undefined
      if (text !== undefined && text !== null && text.indexOf('_sp') < 0 && text.indexOf('%') < 0) return none
      for (const [k, v] of input.pageQuery ?? []) if (k === '_sp') sp = v
      if (sp === undefined || sp === null || sp === '') return none
      const parts = sp.split('.')
      if (parts.length > 7) return none
      ev.f[F.refr_domain_userid] = tsv(parts[0] ?? '')
      const t = parts[1]
      if (t !== undefined && t !== '') {
        const c = toTimestamp(t)
        if (!c.ok) return { failures: [{ enrichment: null, message: { field: 'sp_dtm', value: t, expectation: 'Not in the expected format: ms since epoch' } }] }
        ev.f[F.refr_dvce_tstamp] = c.value
      }
      return none
    },
  },
  {
    id: 'event-schema',
    order: 16.5,
    run(ev) {
      const event = ev.f[F.event] as string | null
      if (event === 'unstruct') {
        if (ev.unstruct !== null) {
          const m = schemaParts(ev.unstruct.schema)
          if (m) {
            ev.f[F.event_vendor] = m[0]
            ev.f[F.event_name] = m[1]
            ev.f[F.event_format] = m[2]
            ev.f[F.event_version] = m[3]
          }
        }
        return none
      }
      const s = event === null ? undefined : EVENT_SCHEMAS[event]
      if (!s) return { failures: [{ enrichment: null, message: { field: 'event', value: event, expectation: EVENT_TYPE_EXPECTATION(event) } }] }
      ev.f[F.event_vendor] = s[0]
      ev.f[F.event_name] = s[1]
      ev.f[F.event_format] = 'jsonschema'
      ev.f[F.event_version] = '1-0-0'
      return none
    },
  },
]

/** Built-in steps and configured enrichments in execution order (built-ins first on a tie). */
export function stepOrder(enrichments: readonly Enrichment[]): Enrichment[] {
  const all = [...BUILT_IN_STEPS.map((s, i) => ({ s, i, b: 0 })), ...enrichments.map((s, i) => ({ s, i, b: 1 }))]
  return all.sort((a, b) => a.s.order - b.s.order || a.b - b.b || a.i - b.i).map((x) => x.s)
}

export { base64Text }
