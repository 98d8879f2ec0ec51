/**
 * The requests as the collector received them, kept for `/micro/good`'s
 * `rawEvent` (Snowplow Micro shows, beside each enriched event, the raw event
 * it came from: the tracker's parameters exactly as sent, and the request's
 * headers, IP, user agent, time and referer).
 *
 * The search loader reads them from the `raw` stream (the collector's Thrift
 * payloads: the same records enrich reads), so enrich's output and the good
 * stream's TSV stay as Snowplow's. One row per collector payload holds what
 * its events share (headers, IP, …); one row per tracker event holds its
 * parameters, keyed by the event id it will have once enriched (`eid`,
 * lower-cased), and the collector time, which the enriched event keeps.
 *
 * Only tracker protocol events (`tp1`, `tp2`) that carry a valid `eid` are
 * kept: the others get their event id from enrich, so nothing here could
 * name them (`/micro/good` then rebuilds their parameters from the enriched event).
 */
import { createHash } from 'node:crypto'
import { isUuid } from '../enrich/convert'
import { compression, loadThrift, unpackCompressed, type LoadedPayload } from '../enrich/payload'
import { toParamMap } from '../enrich/querystring'

/** What a collector payload's events share, as Micro's `rawEvent` shows it (everything but `parameters`), as JSON text. */
export interface RawPayloadRow {
  /** A hash of the Thrift payload. */
  readonly id: string
  /** Epoch milliseconds. */
  readonly collectorTstamp: number
  readonly context: string
}

export interface RawEventRow {
  /** The enriched event's `event_id`: the tracker's `eid`, lower-cased. */
  readonly eventId: string
  readonly collectorTstamp: number
  readonly payloadId: string
  /** The event's parameters as sent, a JSON object of strings (text: its order and values are kept as they are). */
  readonly parameters: string
}

export interface RawRows {
  readonly payloads: RawPayloadRow[]
  readonly events: RawEventRow[]
}

const SNOWPLOW = 'com.snowplowanalytics.snowplow'

/** The payloads of one `raw` stream record (a Thrift payload, or a compressed batch of them). */
function payloadsOf(record: Uint8Array): Uint8Array[] {
  const kind = compression(record)
  return kind ? unpackCompressed(record, kind).payloads : [record]
}

/** The tracker events of a payload, each as its parameters (the same split as enrich's tracker protocol adapters). */
function trackerEvents(p: LoadedPayload): Map<string, string | null>[] {
  if (p.vendor !== SNOWPLOW) return []
  if (p.version === 'tp1') return p.querystring.length > 0 ? [toParamMap(p.querystring)] : []
  if (p.version !== 'tp2') return []
  const qs = toParamMap(p.querystring)
  if (p.body === null || p.body === '') return qs.size > 0 ? [qs] : []
  let body: unknown
  try {
    body = JSON.parse(p.body)
  } catch {
    return [] // enrich makes it a bad row
  }
  const data = body !== null && typeof body === 'object' ? (body as { data?: unknown }).data : undefined
  if (!Array.isArray(data)) return []
  const out: Map<string, string | null>[] = []
  for (const item of data) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return [] // the whole payload fails in enrich
    const params = new Map<string, string | null>()
    for (const [k, v] of Object.entries(item as Record<string, unknown>)) {
      if (typeof v !== 'string') return []
      params.set(k, v)
    }
    for (const [k, v] of qs) params.set(k, v) // query string parameters are merged into every event, and win
    out.push(params)
  }
  return out
}

/** Micro's `rawEvent` without its parameters: `{api, contentType, source, context}`. */
function payloadContext(p: LoadedPayload): string {
  return JSON.stringify({
    api: { vendor: p.vendor, version: p.version },
    contentType: p.contentType,
    source: { name: p.collector, encoding: p.encoding, hostname: p.hostname },
    context: {
      timestamp: new Date(p.timestamp).toISOString(),
      ipAddress: p.ipAddress,
      useragent: p.userAgent,
      refererUri: p.refererUri,
      headers: p.headers,
      userId: p.networkUserId,
    },
  })
}

/** The rows of one `raw` stream record: payloads that are not tracker events, or not readable, give none (enrich reports them). */
export function rawRowsOf(record: Uint8Array): RawRows {
  const payloads: RawPayloadRow[] = []
  const events: RawEventRow[] = []
  for (const bytes of payloadsOf(record)) {
    const loaded = loadThrift(bytes)
    if (!loaded.ok) continue
    const p = loaded.payload
    const mine: RawEventRow[] = []
    const id = createHash('sha256').update(bytes).digest('base64url').slice(0, 24)
    for (const params of trackerEvents(p)) {
      const eid = params.get('eid')
      if (typeof eid !== 'string' || !isUuid(eid)) continue
      mine.push({ eventId: eid.toLowerCase(), collectorTstamp: p.timestamp, payloadId: id, parameters: JSON.stringify(Object.fromEntries(params)) })
    }
    if (mine.length === 0) continue
    payloads.push({ id, collectorTstamp: p.timestamp, context: payloadContext(p) })
    events.push(...mine)
  }
  return { payloads, events }
}

/** Micro's `rawEvent` from the stored rows. */
export function storedRawEvent(context: string, parameters: string): Record<string, unknown> {
  const c = JSON.parse(context) as Record<string, unknown>
  return { api: c.api, parameters: JSON.parse(parameters) as unknown, contentType: c.contentType ?? null, source: c.source, context: c.context }
}
