/**
 * What a browser tracker sends, for the benchmarks that measure the collector and enrich:
 * a POST of n events (page views and self-describing events, each with a web_page context)
 * with a browser's headers and cookie.
 */
import { randomUUID } from 'node:crypto'
import type { HttpRequest } from '../../../lib/http/types'

export const PATH = '/com.snowplowanalytics.snowplow/tp2'
export const HEADERS: Record<string, string> = {
  host: 'collector.example.com',
  'content-type': 'application/json; charset=UTF-8',
  origin: 'https://shop.example.com',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  referer: 'https://shop.example.com/products/1',
}
export const COOKIE = 'sp=c5f3a09f-75f8-4309-bec5-fea560f78455'

/** A browser tracker's POST of n events: page views and self-describing events, each with a web_page context. */
export function trackerBody(n: number): string {
  const now = Date.now()
  const data = Array.from({ length: n }, (_, i) => ({
    e: i % 2 ? 'ue' : 'pv', url: `https://shop.example.com/products/${i}?utm_source=newsletter`, page: `Product ${i} – Example Shop`, refr: 'https://www.google.com/',
    eid: randomUUID(), tv: 'js-4.10.1', tna: 'sp', aid: 'shop', p: 'web', cookie: '1', cs: 'UTF-8', lang: 'en-GB', res: '1920x1080', cd: '24', tz: 'Europe/London',
    dtm: String(now - 100), vp: '1280x720', ds: '1280x3000', vid: '3', sid: randomUUID(), duid: randomUUID(), stm: String(now),
    ...(i % 2 ? { ue_px: Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { targetUrl: `https://example.com/${i}` } } })).toString('base64url') } : {}),
    cx: Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: randomUUID() } }] })).toString('base64url'),
  }))
  return JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data })
}

export function request(body: string): HttpRequest {
  return { method: 'POST', path: PATH, headers: { ...HEADERS }, query: {}, rawQuery: '', cookies: [COOKIE], body: Buffer.from(body), sourceIp: '203.0.113.9', params: {}, timeEpochMs: Date.now() }
}

