/**
 * The explorer's state (kept in the location hash, so a view can be linked
 * and survives a reload) and the search-store requests it makes.
 */
import { TIME_FIELD } from '../shared/api.js'

export const RANGES = [
  { id: '15m', label: 'Last 15 min', ms: 15 * 60_000, interval: '15s' },
  { id: '1h', label: 'Last hour', ms: 3_600_000, interval: '1m' },
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000, interval: '30m' },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000, interval: '3h' },
  { id: 'custom', label: 'Custom…' },
]

export const PAGE_SIZES = [25, 50, 100]

const DEFAULTS = { index: 'good', range: '1h', q: '', page: 0, size: 50, order: 'desc' }

/** The state written in a hash (`index=bad&range=24h&q=…&page=2`). */
export function parseState(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ''))
  const index = p.get('index') === 'bad' ? 'bad' : 'good'
  const range = RANGES.some((r) => r.id === p.get('range')) ? p.get('range') : DEFAULTS.range
  const from = Number(p.get('from'))
  const to = Number(p.get('to'))
  const size = PAGE_SIZES.includes(Number(p.get('size'))) ? Number(p.get('size')) : DEFAULTS.size
  const state = {
    index,
    range,
    q: p.get('q') ?? '',
    page: Math.max(0, Math.floor(Number(p.get('page')) || 0)),
    size,
    order: p.get('order') === 'asc' ? 'asc' : 'desc',
  }
  if (range === 'custom') {
    const now = Date.now()
    state.from = Number.isFinite(from) && from > 0 ? from : now - 3_600_000
    state.to = Number.isFinite(to) && to > state.from ? to : Math.max(now, state.from + 60_000)
  }
  return state
}

/** The hash of a state (defaults left out). */
export function stateHash(s) {
  const p = new URLSearchParams()
  p.set('index', s.index)
  p.set('range', s.range)
  if (s.range === 'custom') {
    p.set('from', String(Math.round(s.from)))
    p.set('to', String(Math.round(s.to)))
  }
  if (s.q) p.set('q', s.q)
  if (s.page) p.set('page', String(s.page))
  if (s.size !== DEFAULTS.size) p.set('size', String(s.size))
  if (s.order !== DEFAULTS.order) p.set('order', s.order)
  return `#${p.toString()}`
}

const NICE = [
  ['1s', 1000], ['5s', 5000], ['10s', 10_000], ['15s', 15_000], ['30s', 30_000], ['1m', 60_000], ['2m', 120_000], ['5m', 300_000], ['10m', 600_000],
  ['15m', 900_000], ['30m', 1_800_000], ['1h', 3_600_000], ['2h', 7_200_000], ['3h', 10_800_000], ['6h', 21_600_000], ['12h', 43_200_000], ['1d', 86_400_000], ['7d', 604_800_000],
]

/** The histogram's interval: about 60 buckets over the range. */
export function intervalOf(s) {
  const r = RANGES.find((x) => x.id === s.range)
  if (r?.interval) return { text: r.interval, ms: NICE.find(([t]) => t === r.interval)[1] }
  const span = Math.max(1000, s.to - s.from)
  const nice = NICE.find(([, ms]) => ms >= span / 80) ?? NICE.at(-1)
  return { text: nice[0], ms: nice[1] }
}

/** The time range as search-store bounds (date math for the relative ranges: the store's clock decides). */
export function bounds(s) {
  const r = RANGES.find((x) => x.id === s.range)
  if (s.range === 'custom') return { gte: Math.round(s.from), lte: Math.round(s.to) }
  return { gte: `now-${r.id}`, lte: 'now' }
}

/** The range as epoch milliseconds now (for the chart's axis). */
export function rangeMs(s, now = Date.now()) {
  if (s.range === 'custom') return { from: s.from, to: s.to }
  const r = RANGES.find((x) => x.id === s.range)
  return { from: now - r.ms, to: now }
}

/** The query of an index: its time range and, if given, the query string. */
export function queryOf(index, s, withText) {
  const filter = [{ range: { [TIME_FIELD[index]]: bounds(s) } }]
  if (withText && s.q.trim() !== '') filter.push({ query_string: { query: s.q } })
  return { bool: { filter } }
}

/** `q` with `field:"value"` added (AND). */
export function withTerm(q, field, value) {
  const term = `${field}:"${String(value).replace(/["\\]/g, (c) => `\\${c}`)}"`
  const t = q.trim()
  if (t.includes(term)) return t
  return t === '' ? term : `(${t}) AND ${term}`
}

/** Examples of the query-string syntax for each index. */
export const EXAMPLES = {
  good: [
    ['event:page_view', 'page views'],
    ['app_id:floe-home AND event:struct', 'structured events of one app'],
    ['se_category:(Mixes OR Checkout)', 'either category'],
    ['event_name:link_click', 'one self-describing event'],
    ['page_url:*home*', 'wildcards'],
    ['user_id:*', 'the field exists'],
    ['tr_total:>=1000', 'ranges'],
    ['NOT event:page_ping', 'negation'],
  ],
  bad: [
    ['schema:*schema_violations* OR schema:*enrichment_failures*', 'failed events (their bad rows)'],
    ['schema:*schema_violations*', 'schema violations'],
    ['data.failure.messages.error.error_str:ResolutionError', 'schema not found'],
    ['data.failure.messages.error.error_str:ValidationError', 'invalid against its schema'],
    ['data.failure.messages.schemaKey:*com.example*', 'by the failing schema'],
    ['data.payload.enriched.app_id:floe-home', 'by app_id'],
    ['schema:*tracker_protocol_violations* OR schema:*adapter_failures*', 'protocol and adapter failures'],
  ],
}
