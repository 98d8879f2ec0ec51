import { collectorPayloadToString, encodeCollectorPayload } from '../thrift/collector-payload'
import type { CollectorPayload } from '../thrift/types'
import { COLLECTOR_ARTIFACT, COLLECTOR_VERSION } from './config'

export const SIZE_VIOLATION_SCHEMA = 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0'

export interface SizeViolation {
  readonly schema: typeof SIZE_VIOLATION_SCHEMA
  readonly data: {
    readonly processor: { readonly artifact: string; readonly version: string }
    readonly failure: {
      readonly timestamp: string
      readonly maximumAllowedSizeBytes: number
      readonly actualSizeBytes: number
      readonly expectation: string
    }
    readonly payload: string
  }
}

export interface SplitResult {
  /** Serialized payloads, each smaller than the limit. */
  readonly good: Buffer[]
  readonly bad: SizeViolation[]
}

/** `Instant.toString` style: ISO-8601 UTC, fraction omitted when zero. */
export function instantString(epochMs: number): string {
  const iso = new Date(epochMs).toISOString()
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso
}

/** A size_violation bad row for a payload (its text truncated to a tenth of the limit). */
export function sizeViolation(payload: CollectorPayload, actualSizeBytes: number, maxBytes: number, reason: string, nowMs: number): SizeViolation {
  return {
    schema: SIZE_VIOLATION_SCHEMA,
    data: {
      processor: { artifact: COLLECTOR_ARTIFACT, version: COLLECTOR_VERSION },
      failure: {
        timestamp: instantString(nowMs),
        maximumAllowedSizeBytes: maxBytes,
        actualSizeBytes,
        expectation: `oversized collector payload: ${reason}`,
      },
      payload: collectorPayloadToString(payload).slice(0, Math.floor(maxBytes / 10)),
    },
  }
}

/**
 * Serializes a payload into records smaller than `maxBytes`. A payload that is
 * too large is split when it is a POST whose body is a self-describing JSON
 * with a `data` array (each part keeps every other field and the body schema,
 * with a share of the array); events that cannot fit on their own, GET
 * payloads and bodies that cannot be split become size_violation bad rows.
 */
export function splitAndSerialize(payload: CollectorPayload, maxBytes: number, nowMs: number): SplitResult {
  const whole = encodeCollectorPayload(payload)
  if (whole.length < maxBytes) return { good: [whole], bad: [] }
  const tooBig = (reason: string): SplitResult => ({ good: [], bad: [sizeViolation(payload, whole.length, maxBytes, reason, nowMs)] })

  if (payload.body === undefined) return tooBig('GET requests cannot be split')
  let parsed: unknown
  try {
    parsed = JSON.parse(payload.body)
  } catch {
    return tooBig('cannot split POST requests which are not json')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || typeof (parsed as { schema?: unknown }).schema !== 'string') {
    return tooBig('cannot split POST requests which are not self-describing')
  }
  const { schema, data } = parsed as { schema: string; data: unknown }
  if (!Array.isArray(data)) return tooBig('cannot split POST requests whose data is not an array')

  // Size of the record with an empty data array; each event adds its JSON bytes plus a comma.
  const render = (events: string[]) => `{"schema":${JSON.stringify(schema)},"data":[${events.join(',')}]}`
  const base = encodeCollectorPayload({ ...payload, body: render([]) }).length
  if (base >= maxBytes) return tooBig('cannot split this POST request because event without "data" field is still too big')

  const good: Buffer[] = []
  const bad: SizeViolation[] = []
  let batch: string[] = []
  let batchBytes = 0
  const flush = () => {
    if (batch.length === 0) return
    good.push(encodeCollectorPayload({ ...payload, body: render(batch) }))
    batch = []
    batchBytes = 0
  }
  for (const event of data) {
    const text = JSON.stringify(event) ?? 'null'
    const bytes = Buffer.byteLength(text, 'utf8')
    if (base + bytes >= maxBytes) {
      bad.push(sizeViolation({ ...payload, body: render([text]) }, base + bytes, maxBytes, 'this POST request split is still too large', nowMs))
      continue
    }
    const added = bytes + (batch.length > 0 ? 1 : 0)
    if (base + batchBytes + added >= maxBytes) flush()
    batchBytes += bytes + (batch.length > 0 ? 1 : 0)
    batch.push(text)
  }
  flush()
  return { good, bad }
}
