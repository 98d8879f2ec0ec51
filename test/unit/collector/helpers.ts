import type { HttpRequest } from '../../../lib/http/types'
import { DEFAULT_COLLECTOR_CONFIG, type CollectorConfig, type CollectorConfigInput, loadCollectorConfig } from '../../../lib/core/collector/config'
import { decodeCollectorPayload, type DecodedCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import type { CollectorOutcome } from '../../../lib/core/collector/service'

export const NOW = Date.UTC(2025, 3, 30, 10, 0, 0, 0)

export function request(over: Partial<HttpRequest> & { query?: Record<string, string> } = {}): HttpRequest {
  const rawQuery = over.rawQuery ?? ''
  const query: Record<string, string> = {}
  if (!over.query) {
    for (const part of rawQuery.split('&')) {
      if (!part) continue
      const eq = part.indexOf('=')
      const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq))
      query[k] = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '))
    }
  }
  return {
    method: 'GET',
    path: '/i',
    headers: { host: 'collector.example.com', 'user-agent': 'test-agent' },
    query: over.query ?? query,
    rawQuery,
    cookies: [],
    body: Buffer.alloc(0),
    sourceIp: '198.51.100.9',
    params: {},
    timeEpochMs: NOW,
    ...over,
  }
}

export function config(input: CollectorConfigInput = {}): CollectorConfig {
  return Object.keys(input).length === 0 ? DEFAULT_COLLECTOR_CONFIG : loadCollectorConfig(input)
}

/** Deterministic UUIDs: 00000000-0000-4000-8000-00000000000N. */
export function uuids(): () => string {
  let n = 0
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`
}

export function rawPayloads(outcome: CollectorOutcome): DecodedCollectorPayload[] {
  return outcome.records
    .filter((r) => r.stream === 'raw')
    .map((r) => {
      const d = decodeCollectorPayload(r.data)
      if (!d.ok) throw new Error(d.error)
      return d.payload
    })
}

export function badRows(outcome: CollectorOutcome): any[] {
  return outcome.records.filter((r) => r.stream === 'bad').map((r) => JSON.parse(r.data.toString('utf8')))
}

export const TP2_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
