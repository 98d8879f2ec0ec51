/**
 * The explorer's columns: for good events, fields of the shredded enriched
 * event; for bad rows, what people look for (when, which failure, which
 * schema, the message) read from the bad row's document.
 */
import { restoreUnions } from '../../core/search/unions'
import { cellText, igluName, valuesAt } from '../shared/format.js'

const field = (path, extra = {}) => ({ id: path, label: path, source: [path], value: (d) => valuesAt(d, path), ...extra })

export const FAILURE_CONTEXT = 'contexts_com_snowplowanalytics_snowplow_failure_1'

export const GOOD_COLUMNS = [
  field('collector_tstamp', { time: true }),
  field('app_id'),
  field('event', { badge: true }),
  field('event_name'),
  {
    id: 'schema',
    label: 'schema',
    source: ['event_vendor', 'event_name', 'event_format', 'event_version'],
    value: (d) => (d.event_vendor ? [`iglu:${d.event_vendor}/${d.event_name}/${d.event_format}/${d.event_version}`] : []),
  },
  field('platform'),
  field('page_url', { wide: true }),
  field('page_title'),
  field('user_id'),
  field('domain_userid'),
  field('network_userid'),
  field('domain_sessionid'),
  field('event_id'),
  field('se_category'),
  field('se_action'),
  field('se_label'),
  field('se_property'),
  field('se_value'),
  field('tr_orderid'),
  field('tr_total'),
  field('ti_sku'),
  field('refr_urlhost'),
  field('useragent', { wide: true }),
  field('user_ipaddress'),
  field('geo_country'),
  field('v_tracker'),
  field('dvce_created_tstamp', { time: true }),
  field('derived_tstamp', { time: true }),
  field('etl_tstamp', { time: true }),
]

export const GOOD_DEFAULT = ['collector_tstamp', 'app_id', 'event', 'event_name', 'platform', 'page_url', 'user_id', 'domain_userid']

function short(v, n = 120) {
  const s = cellText(v)
  return s.length > n ? `${s.slice(0, n)}…` : s
}

const text = (v) => (typeof v === 'string' ? v : undefined)

/** The messages of a bad row, one line each, whatever its type (read from the row as it came). */
export function badRowMessages(stored) {
  const doc = restoreUnions(stored)
  const f = doc?.data?.failure ?? {}
  const out = []
  const msgs = Array.isArray(f.messages) ? f.messages : []
  for (const m of msgs) {
    if (m === null || typeof m !== 'object') {
      out.push(String(m))
      continue
    }
    if (m.schemaKey !== undefined && m.error && typeof m.error === 'object') {
      const e = m.error
      const kind = text(e.error) ?? ''
      const reports = Array.isArray(e.dataReports)
        ? e.dataReports.map((r) => {
            const t = text(r.message) ?? r.keyword ?? ''
            return r.path && !String(t).startsWith(r.path) ? `${r.path}: ${t}` : String(t)
          })
        : []
      const repos = Array.isArray(e.lookupHistory) ? e.lookupHistory.map((l) => l.repository).filter(Boolean) : []
      const why = reports.length ? reports.join('; ') : kind === 'ResolutionError' && repos.length ? `not found in ${repos.join(', ')}` : Array.isArray(e.schemaIssues) ? e.schemaIssues.map((x) => x.message).join('; ') : ''
      out.push(`${kind || 'error'}${why ? `: ${why}` : ''} (${m.schemaKey})`)
      continue
    }
    if (m.message && typeof m.message === 'object') {
      const x = m.message
      const who = m.enrichment?.identifier ?? m.enrichment?.schemaKey ?? ''
      const what = text(x.error) ?? (x.expectation ? `${x.field ?? ''}: ${x.expectation}${x.value !== undefined && x.value !== null ? ` (value ${short(x.value, 60)})` : ''}` : short(x))
      out.push(`${who ? `${who}: ` : ''}${what}`)
      continue
    }
    if (m.expectation !== undefined) {
      out.push(`${m.field ?? m.payloadField ?? ''}${m.field || m.payloadField ? ': ' : ''}${m.expectation}${m.value !== undefined && m.value !== null ? ` (value ${short(m.value, 60)})` : ''}`)
      continue
    }
    if (text(m.message)) out.push(m.message)
    else if (text(m.error)) out.push(m.error)
    else out.push(short(m))
  }
  if (out.length === 0) {
    if (f.expectation) out.push(`${f.expectation}${f.actualSizeBytes ? ` (${f.actualSizeBytes} bytes, at most ${f.maximumAllowedSizeBytes})` : ''}`)
    else if (f.message && typeof f.message === 'object') out.push(text(f.message.error) ?? `${f.message.payloadField ?? ''}: ${f.message.expectation ?? short(f.message)}`)
    else if (text(f.message)) out.push(f.message)
    else if (text(f.failure)) out.push(f.failure)
    else if (Array.isArray(f.errors)) out.push(...f.errors.map((x) => short(x)))
    else if (text(f.error)) out.push(f.error)
  }
  return out
}

/**
 * The event of a failed event's bad row (`schema_violations`,
 * `enrichment_failures`: the enriched event as far as enrich got), or
 * undefined for other bad rows.
 */
export function failedEventOf(doc) {
  const e = doc?.data?.payload?.enriched
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return undefined
  if (e.event_name) return e
  // A self-describing event whose own schema failed has no event_name yet: it is the name in its schema's URI,
  // read from the tracker's parameters (ue_pr, or ue_px in base64url) in the bad row's raw payload.
  const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([^/]+)$/.exec(unstructSchemaOf(doc.data.payload.raw?.parameters) ?? '')
  return m ? { ...e, event_vendor: e.event_vendor ?? m[1], event_name: m[2], event_version: e.event_version ?? m[3] } : e
}

/** The schema of the self-describing event in a raw payload's parameters (`[{name, value}]`; the search store keeps them as JSON text). */
function unstructSchemaOf(raw) {
  let parameters = raw
  if (typeof raw === 'string' && raw.length <= 4_000_000) {
    try {
      parameters = JSON.parse(raw)
    } catch {
      return undefined
    }
  }
  if (!Array.isArray(parameters)) return undefined
  const param = (name) => parameters.find((p) => p?.name === name)?.value
  let text = param('ue_pr')
  const px = param('ue_px')
  if (typeof text !== 'string' && typeof px === 'string') {
    try {
      text = new TextDecoder().decode(Uint8Array.from(atob(px.replace(/-/g, '+').replace(/_/g, '/').replace(/\s/g, '')), (c) => c.charCodeAt(0)))
    } catch {
      return undefined
    }
  }
  if (typeof text !== 'string' || text.length > 1_000_000) return undefined
  try {
    const schema = JSON.parse(text)?.data?.schema
    return typeof schema === 'string' ? schema : undefined
  } catch {
    return undefined
  }
}

/** What a failed event was: its `event_name`, else its `event`. */
export const failedEventName = (e) => e?.event_name || e?.event || 'event'

/**
 * A bad row's columns, labelled with the names the search store takes for
 * them in queries (lib/core/search/shown-fields.ts): `app_id:shop` finds
 * what the app_id column shows.
 */
export const BAD_COLUMNS = [
  field('data.failure.timestamp', { label: 'failure_timestamp', time: true }),
  { id: 'failure_type', label: 'failure_type', source: ['schema'], badge: true, value: (d) => [igluName(d.schema)] },
  field('data.failure.messages.schemaKey', { label: 'failing_schema' }),
  { id: 'message', label: 'message', source: ['data.failure'], wrap: true, value: (d) => badRowMessages(d) },
  field('data.payload.enriched.app_id', { label: 'app_id' }),
  field('data.payload.enriched.event', { label: 'event' }),
  field('data.payload.enriched.event_name', { label: 'event_name' }),
  field('data.payload.enriched.event_id', { label: 'event_id' }),
  { id: 'processor', label: 'processor', source: ['data.processor'], value: (d) => (d?.data?.processor ? [`${d.data.processor.artifact} ${d.data.processor.version}`] : []) },
  field('schema'),
]

export const BAD_DEFAULT = ['data.failure.timestamp', 'failure_type', 'data.failure.messages.schemaKey', 'message', 'data.payload.enriched.app_id']

export const COLUMNS = { good: GOOD_COLUMNS, bad: BAD_COLUMNS }
export const DEFAULT_COLUMNS = { good: GOOD_DEFAULT, bad: BAD_DEFAULT }

/** A column by id; any other id is a field path of the document. */
export function columnOf(index, id) {
  return COLUMNS[index].find((c) => c.id === id) ?? field(id)
}

/** The `_source` paths the chosen columns need (and the row's identity). */
export function sourceOf(index, ids) {
  const paths = new Set(index === 'good' ? ['event_id', 'collector_tstamp', FAILURE_CONTEXT] : ['schema', 'data.failure.timestamp', 'data.payload.enriched.event', 'data.payload.enriched.event_name'])
  for (const id of ids) for (const p of columnOf(index, id).source) paths.add(p)
  return [...paths]
}

/** The key under which the search store lists what it replaced to store a document (lib/core/search/sanitize.ts). */
export const SANITIZED_KEY = 'floe_sanitized'

/** What the store replaced to store this document (empty when it was stored as it came). */
export function sanitizedNotes(doc) {
  const notes = doc?.[SANITIZED_KEY]
  return Array.isArray(notes) ? notes.map(String) : []
}
