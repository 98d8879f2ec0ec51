import { expect } from 'vitest'
import { adapt, type AdapterResult } from '../../../../lib/core/enrich/adapters'
import type { LoadedPayload } from '../../../../lib/core/enrich/payload'
import { resolver } from '../helpers'

/** A collector payload for `vendor/version` (query string pairs decoded, as the loader hands them over). */
export function webhookPayload(vendor: string, version: string, p: { qs?: [string, string | null][]; contentType?: string | null; body?: string | null } = {}): LoadedPayload {
  return {
    vendor,
    version,
    querystring: p.qs ?? [],
    contentType: p.contentType ?? null,
    body: p.body ?? null,
    collector: 'clj-tomcat',
    encoding: 'UTF-8',
    hostname: null,
    timestamp: Date.parse('2013-08-29T00:18:48.000Z'),
    ipAddress: '37.157.33.123',
    userAgent: null,
    refererUri: null,
    headers: [],
    networkUserId: null,
  }
}

export const run = (p: LoadedPayload, maxJsonDepth = 40): Promise<AdapterResult> => adapt(p, { resolver, maxJsonDepth })

/** The events' parameters as objects, `ue_pr` (and `co`) parsed. */
export function eventsOf(r: AdapterResult): Record<string, unknown>[] {
  if (!r.ok) throw new Error(`expected events, got ${JSON.stringify(r.messages)}`)
  return r.events.map((e) => {
    const o: Record<string, unknown> = {}
    for (const [k, v] of e.parameters) o[k] = (k === 'ue_pr' || k === 'co') && v !== null ? JSON.parse(v) : v
    return o
  })
}

/** The parameters of the one event. */
export function oneEvent(r: AdapterResult): Record<string, unknown> {
  const all = eventsOf(r)
  expect(all).toHaveLength(1)
  return all[0]!
}

export function failures(r: AdapterResult): unknown[] {
  if (r.ok) throw new Error(`expected failures, got ${r.events.length} events`)
  expect(r.badRow).toBe('adapter_failures')
  return r.messages
}

/** `ue_pr` of an event of `schema` holding `data`. */
export const ue = (schema: string, data: unknown) => ({
  schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0',
  data: { schema, data },
})

/** The raw `ue_pr` text of the one event. */
export function uePrText(r: AdapterResult): string {
  if (!r.ok) throw new Error(JSON.stringify(r.messages))
  return r.events[0]!.parameters.get('ue_pr')!
}
