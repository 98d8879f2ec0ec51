/**
 * The real Snowplow browser tracker, bundled into the page, sending to this
 * stack's collector (the page's own origin). What the collector accepted or
 * refused is reported to the listeners.
 */
import { newTracker, setUserId, trackPageView, trackSelfDescribingEvent, trackStructEvent } from '@snowplow/browser-tracker'
// The tracker's own core (a dependency of @snowplow/browser-tracker): the classic
// transaction events, built as the v4 ecommerce plugin builds them.
import { buildEcommerceTransaction, buildEcommerceTransactionItem } from '@snowplow/tracker-core'

export const APP_ID = 'floe-home'
const TRACKER = 'floe'

/** The collector's URL: this page's origin. */
export const collectorUrl = () => `${location.protocol}//${location.host}`

const listeners = new Set()
let tracker

/** `f({ ok, events, status })` for every request the tracker completes. */
export function onSent(f) {
  listeners.add(f)
  return () => listeners.delete(f)
}

const emit = (x) => {
  for (const f of listeners) f(x)
}

function ensureTracker() {
  tracker ??= newTracker(TRACKER, collectorUrl(), {
    appId: APP_ID,
    encodeBase64: false,
    contexts: { webPage: true },
    onRequestSuccess: (batch) => emit({ ok: true, events: batch.filter((e) => typeof e === 'object'), status: 200 }),
    onRequestFailure: (f) => emit({ ok: false, events: (f.events ?? []).filter((e) => typeof e === 'object'), status: f.status, willRetry: f.willRetry, message: f.message }),
  })
  if (!tracker) throw new Error('the browser tracker could not start')
  return tracker
}

/** Sets (or clears, when empty) the user id of the events sent from here. */
export function setTrackerUserId(id) {
  ensureTracker()
  setUserId(id ? id : null, [TRACKER])
}

const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'

/** Mini's transaction: order-123, two items, in JPY. */
export const ORDER = {
  orderId: 'order-123',
  affiliation: 'acme',
  total: 8000,
  tax: 100,
  shipping: 50,
  city: 'London',
  state: 'England',
  country: 'UK',
  currency: 'JPY',
  items: [
    { sku: '1001', name: 'Blue t-shirt', category: 'clothing', price: 2000, quantity: 2 },
    { sku: '1002', name: 'Red shoes', category: 'clothing', price: 4000, quantity: 1 },
  ],
}

function trackTransaction() {
  const t = ensureTracker()
  const { items, ...order } = ORDER
  t.core.track(buildEcommerceTransaction(order))
  for (const item of items) t.core.track(buildEcommerceTransactionItem({ orderId: order.orderId, currency: order.currency, ...item }))
}

/** The example events, as Snowplow Mini's home page sends them, and two more. */
export const EXAMPLES = [
  {
    id: 'page-view',
    label: 'Page view',
    code: 'trackPageView()',
    detail: 'A page_view of this page, with the web_page context.',
    send: () => trackPageView({}, [TRACKER]),
  },
  {
    id: 'struct-play',
    label: 'Structured event: Mixes / Play',
    code: "trackStructEvent({ category: 'Mixes', action: 'Play', label: 'MRC/fabric-0503-mix', property: '', value: 0.0 })",
    detail: 'category Mixes, action Play, label MRC/fabric-0503-mix, empty property, value 0.0',
    send: () => trackStructEvent({ category: 'Mixes', action: 'Play', label: 'MRC/fabric-0503-mix', property: '', value: 0.0 }, [TRACKER]),
  },
  {
    id: 'struct-checkout',
    label: 'Structured event: Checkout / Add',
    code: "trackStructEvent({ category: 'Checkout', action: 'Add', label: 'ASO01043', property: 'blue:xxl', value: 2.0 })",
    detail: 'category Checkout, action Add, label ASO01043, property blue:xxl, value 2.0',
    send: () => trackStructEvent({ category: 'Checkout', action: 'Add', label: 'ASO01043', property: 'blue:xxl', value: 2.0 }, [TRACKER]),
  },
  {
    id: 'transaction',
    label: 'Transaction: order-123',
    code: "buildEcommerceTransaction({ orderId: 'order-123', total: 8000, currency: 'JPY', … }) + 2 × buildEcommerceTransactionItem(…)",
    detail: 'Three events: the transaction (tr: order-123, acme, total 8000, tax 100, shipping 50, London, England, UK, JPY) and its two items (ti: 1001 Blue t-shirt 2 × 2000, 1002 Red shoes 1 × 4000). Sent as the classic tr and ti events, built with the tracker’s own core as the ecommerce plugin does.',
    send: trackTransaction,
  },
  {
    id: 'self-describing',
    label: 'Self-describing: link_click',
    code: `trackSelfDescribingEvent({ event: { schema: '${LINK_CLICK}', data: { targetUrl, elementId: 'floe-example' } } })`,
    detail: 'A link_click 1-0-1 event, validated against its Iglu Central schema.',
    send: () =>
      trackSelfDescribingEvent(
        { event: { schema: LINK_CLICK, data: { targetUrl: `${location.origin}/home#/example-events`, elementId: 'floe-example', elementClasses: ['example'], elementContent: 'Floe example link' } } },
        [TRACKER],
      ),
  },
  {
    id: 'invalid',
    label: 'Invalid on purpose: unknown schema',
    code: "trackSelfDescribingEvent({ event: { schema: 'iglu:com.example.floe/does_not_exist/jsonschema/1-0-0', … } })",
    detail: 'Its schema is in no registry: enrich writes a schema_violations bad row (and a failed event).',
    invalid: true,
    send: () => trackSelfDescribingEvent({ event: { schema: 'iglu:com.example.floe/does_not_exist/jsonschema/1-0-0', data: { sentFrom: 'floe-home' } } }, [TRACKER]),
  },
]

/** Sends one example (starting the tracker at first use). */
export function sendExample(example) {
  ensureTracker()
  example.send()
}
