/**
 * Bad rows enrich emits, as compact self-describing JSON (snowplow-badrows
 * shapes: field order as documented, nulls explicit, variants without a
 * discriminator).
 */
import type { NameValue } from './querystring'
import type { Params } from './adapters'
import { needsEscape, quote, Raw, stringify } from './json'
import type { LoadedPayload, CPFormatMessage } from './payload'
import { instant, isoMillis } from './time'

export interface Processor {
  readonly artifact: string
  readonly version: string
}

const BADROWS = 'iglu:com.snowplowanalytics.snowplow.badrows'

export const BAD_ROW_SCHEMAS = {
  collector_payload_format_violation: `${BADROWS}/collector_payload_format_violation/jsonschema/1-0-0`,
  adapter_failures: `${BADROWS}/adapter_failures/jsonschema/1-0-0`,
  tracker_protocol_violations: `${BADROWS}/tracker_protocol_violations/jsonschema/1-0-1`,
  schema_violations: `${BADROWS}/schema_violations/jsonschema/2-0-1`,
  enrichment_failures: `${BADROWS}/enrichment_failures/jsonschema/2-0-1`,
  size_violation: `${BADROWS}/size_violation/jsonschema/1-0-0`,
} as const

export type BadRowType = keyof typeof BAD_ROW_SCHEMAS

function envelope(type: BadRowType, processor: Processor, failure: unknown, payload: unknown): string {
  return `{"schema":"${BAD_ROW_SCHEMAS[type]}","data":{"processor":${stringify(processor)},"failure":${stringify(failure)},"payload":${stringify(payload)}}}`
}

export function cpFormatViolation(processor: Processor, at: number, loader: string, message: CPFormatMessage, record: Uint8Array): string {
  return envelope('collector_payload_format_violation', processor, { timestamp: instant(at), loader, message }, Buffer.from(record).toString('base64'))
}

export function sizeViolation(processor: Processor, at: number, max: number, actual: number, expectation: string, payload: string): string {
  return envelope('size_violation', processor, { timestamp: instant(at), maximumAllowedSizeBytes: max, actualSizeBytes: actual, expectation }, payload)
}

const pairs = (list: Iterable<NameValue>) => [...list].map(([name, value]) => ({ name, value }))

/** The collector payload object of adapter and tracker-protocol bad rows. */
export function collectorPayloadJson(p: LoadedPayload): unknown {
  return {
    vendor: p.vendor,
    version: p.version,
    querystring: pairs(p.querystring),
    contentType: p.contentType,
    body: p.body,
    collector: p.collector,
    encoding: p.encoding,
    hostname: p.hostname,
    timestamp: isoMillis(p.timestamp),
    ipAddress: p.ipAddress,
    useragent: p.userAgent,
    refererUri: p.refererUri,
    headers: p.headers,
    networkUserId: p.networkUserId,
  }
}

export function adapterBadRow(type: 'adapter_failures' | 'tracker_protocol_violations', processor: Processor, at: number, p: LoadedPayload, messages: readonly unknown[]): string {
  return envelope(type, processor, { timestamp: instant(at), vendor: p.vendor, version: p.version, messages }, collectorPayloadJson(p))
}

/** A JSON string, or null. */
function str(v: string | null): string {
  return v === null ? 'null' : quote(v)
}

/** The raw event of enrichment payloads (written directly: it is in every enrichment bad row); `params` as a map or as the tracker's object of strings. */
export function rawEventJson(p: LoadedPayload, params: Params | Readonly<Record<string, string>>): Raw {
  let parameters = '['
  let first = true
  if (params instanceof Map) {
    for (const [name, value] of params) {
      parameters += (first ? '{"name":' : ',{"name":') + quote(name) + ',"value":' + str(value) + '}'
      first = false
    }
  } else {
    // Names and values checked for escapes once each, not one by one; the
    // values that carry JSON (`ue_pr`, `co`) nearly always need it and are quoted on their own.
    let names = ''
    let values = ''
    for (const name in params) {
      names += name
      if (name !== 'ue_pr' && name !== 'co') values += params[name]!
    }
    const plainNames = !needsEscape(names)
    const plainValues = !needsEscape(values)
    for (const name in params) {
      const v = params[name]!
      const value = plainValues && name !== 'ue_pr' && name !== 'co' ? '"' + v + '"' : quote(v)
      parameters += (first ? '{"name":' : ',{"name":') + (plainNames ? '"' + name + '"' : quote(name)) + ',"value":' + value + '}'
      first = false
    }
  }
  parameters += ']'
  let headers = '['
  for (let i = 0; i < p.headers.length; i++) headers += (i ? ',' : '') + quote(p.headers[i]!)
  headers += ']'
  return new Raw(
    '{"vendor":' + quote(p.vendor) +
      ',"version":' + quote(p.version) +
      ',"parameters":' + parameters +
      ',"contentType":' + str(p.contentType) +
      ',"loaderName":' + str(p.collector) +
      ',"encoding":' + quote(p.encoding) +
      ',"hostname":' + str(p.hostname) +
      ',"timestamp":' + quote(isoMillis(p.timestamp)) +
      ',"ipAddress":' + str(p.ipAddress) +
      ',"useragent":' + str(p.userAgent) +
      ',"refererUri":' + str(p.refererUri) +
      ',"headers":' + headers +
      ',"userId":' + str(p.networkUserId) +
      '}',
  )
}

export function enrichmentBadRow(
  type: 'schema_violations' | 'enrichment_failures',
  processor: Processor,
  at: number,
  messages: readonly unknown[],
  enrichedJson: string,
  raw: unknown,
): string {
  return envelope(type, processor, { timestamp: instant(at), messages }, { enriched: new Raw(enrichedJson), raw })
}

export { quote }
