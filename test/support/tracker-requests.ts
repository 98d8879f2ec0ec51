/**
 * The requests Snowplow's trackers send, captured instead of sent: the
 * Node tracker (`@snowplow/node-tracker`, on the JavaScript tracker's core)
 * with a `customFetch` that keeps each request, so a test can send the very
 * same bytes to the collector and to `/micro/validate`.
 */
import { buildEcommerceTransaction, buildEcommerceTransactionItem, buildPageView, buildSelfDescribingEvent, buildStructEvent, newTracker } from '@snowplow/node-tracker'

export interface TrackerRequest {
  readonly method: string
  /** The collector path and query string (`/com.snowplowanalytics.snowplow/tp2`, `/i?e=pv&…`). */
  readonly pathAndQuery: string
  readonly headers: Record<string, string>
  readonly body?: string
}

type Tracker = ReturnType<typeof newTracker>

/** The requests a tracker (one event per request) sends for what `track` tracks. */
export async function captureRequests(track: (t: Tracker) => void, opts: { eventMethod?: 'get' | 'post'; appId?: string } = {}): Promise<TrackerRequest[]> {
  const captured: TrackerRequest[] = []
  const t = newTracker(
    { namespace: 'captured', appId: opts.appId ?? 'floe-home', encodeBase64: false },
    {
      endpoint: 'http://collector.invalid',
      eventMethod: opts.eventMethod ?? 'post',
      bufferSize: 1,
      customFetch: async (req: Request) => {
        const url = new URL(req.url)
        const headers: Record<string, string> = {}
        req.headers.forEach((v, k) => (headers[k] = v))
        const body = req.method === 'POST' ? await req.text() : undefined
        captured.push({ method: req.method, pathAndQuery: `${url.pathname}${url.search}`, headers, ...(body === undefined ? {} : { body }) })
        return new Response('ok', { status: 200 })
      },
    },
  )
  // one request per event: each event tracked, then flushed, then its request awaited
  const calls: Parameters<Tracker['track']>[] = []
  const recording = Object.create(t) as Tracker
  recording.track = (...args: Parameters<Tracker['track']>) => {
    calls.push(args)
    return undefined
  }
  track(recording)
  for (const [i, args] of calls.entries()) {
    t.track(...args)
    await t.flush()
    while (captured.length <= i) await new Promise((r) => setTimeout(r, 5))
  }
  return captured
}

const WEB_PAGE = { schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11' } }
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'

/** The example events of the home page (`lib/ui/home/tracker.js`), with the web_page entity its tracker adds: valid ones, and one with a schema in no registry. */
export function homeExamples(t: Tracker): void {
  const ctx = [WEB_PAGE]
  t.track(buildPageView({ pageUrl: 'http://127.0.0.1/home', pageTitle: 'Floe' }), ctx)
  t.track(buildStructEvent({ category: 'Mixes', action: 'Play', label: 'MRC/fabric-0503-mix', property: '', value: 0.0 }), ctx)
  t.track(buildStructEvent({ category: 'Checkout', action: 'Add', label: 'ASO01043', property: 'blue:xxl', value: 2.0 }), ctx)
  t.track(buildEcommerceTransaction({ orderId: 'order-123', affiliation: 'acme', total: 8000, tax: 100, shipping: 50, city: 'London', state: 'England', country: 'UK', currency: 'JPY' }), ctx)
  t.track(buildEcommerceTransactionItem({ orderId: 'order-123', sku: '1001', name: 'Blue t-shirt', category: 'clothing', price: 2000, quantity: 2, currency: 'JPY' }), ctx)
  t.track(buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { targetUrl: 'http://127.0.0.1/home#/example-events', elementId: 'floe-example', elementClasses: ['example'], elementContent: 'Floe example link' } } }), ctx)
  t.track(buildSelfDescribingEvent({ event: { schema: 'iglu:com.example.floe/does_not_exist/jsonschema/1-0-0', data: { sentFrom: 'floe-home' } } }), ctx)
}
