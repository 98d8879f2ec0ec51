import { useEffect } from 'preact/hooks'
import { restoreUnions } from '../../core/search/unions'
import './drawer.css'
import { CopyButton } from '../shared/copy.js'
import { fmtTime, igluName } from '../shared/format.js'
import { html } from '../shared/html.js'
import { JsonView } from '../shared/json-view.js'
import { Notice } from '../shared/layout.js'
import { badRowMessages, failedEventName, failedEventOf, sanitizedNotes } from './columns.js'

/** What identifies a failed event, in this order (its enriched fields, when set). */
const EVENT_FIELDS = ['event_name', 'event', 'event_vendor', 'event_version', 'app_id', 'event_id', 'collector_tstamp', 'user_id', 'page_url']

/** A bad row as shown: its failure first, then the rest of `data` (payload, processor), then the other fields. */
function failureFirst(doc) {
  const data = doc?.data
  if (data === null || typeof data !== 'object' || !('failure' in data)) return doc
  const { failure, ...rest } = data
  const { data: _, ...others } = doc
  return { data: { failure, ...rest }, ...others }
}

/** A failed event's bad row: what failed (type, time, messages), then which event it was. */
function Failure({ doc, type, messages, utc }) {
  const event = failedEventOf(doc)
  const fields = event ? EVENT_FIELDS.filter((f) => event[f] !== undefined && event[f] !== null && event[f] !== '') : []
  return html`<section class="failure" data-testid="failure">
    <h5>Failure · <span class="badge err">${type}</span> <span class="muted small mono">${fmtTime(doc?.data?.failure?.timestamp, utc)}${utc ? ' UTC' : ''}</span></h5>
    ${messages.length > 0 ? html`<div class="messages"><ul>${messages.map((m, i) => html`<li key=${i} class="mono">${m}</li>`)}</ul></div>` : html`<p class="muted small">No message in this bad row.</p>`}
    ${fields.length > 0
      ? html`<dl class="failed-event" data-testid="failed-event">
          ${fields.map((f) => html`<div key=${f}><dt class="mono">${f}</dt><dd class="mono">${String(event[f])}</dd></div>`)}
        </dl>`
      : null}
  </section>`
}

/** A document stored in a form the store accepts, not exactly as it came: what was replaced. */
function Sanitized({ notes }) {
  return html`<section class="sanitized" data-testid="sanitized">
    <span class="badge warn" title="The search store could not take this record as it was">stored sanitized</span>
    <ul class="small">${notes.map((n, i) => html`<li key=${i}>${String(n)}</li>`)}</ul>
  </section>`
}

/** One document, whole: a panel over the right of the page (Escape closes it). */
export function Drawer({ index, hit, loading, error, utc, onClose, onQuery }) {
  useEffect(() => {
    const onKey = (e) => e.key === 'Escape' && onClose()
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  // a bad row as it came (the store renames fields whose type varies: error_str, message_str, …)
  const doc = index === 'bad' && hit?._source ? restoreUnions(hit._source) : hit?._source
  const type = igluName(doc?.schema ?? '')
  const event = index === 'bad' ? failedEventOf(doc) : undefined
  const title =
    index === 'good'
      ? `${doc?.event ?? 'event'}${doc?.event_name && doc.event_name !== doc.event ? ` · ${doc.event_name}` : ''}`
      : event
        ? `failed event · ${failedEventName(event)}`
        : `bad row · ${type}`
  const when = index === 'good' ? doc?.collector_tstamp : doc?.data?.failure?.timestamp
  const messages = index === 'bad' && doc ? badRowMessages(doc) : []
  const idQuery = index === 'good' ? `event_id:"${hit?._id}"` : undefined
  return html`<div class="drawer-backdrop" onClick=${onClose}>
    <aside class="drawer" role="dialog" aria-modal="true" aria-label="Event JSON" data-testid="drawer" onClick=${(e) => e.stopPropagation()}>
      <header class="drawer-head">
        <div>
          <h3>${title}</h3>
          <p class="muted small mono">${fmtTime(when, utc)}${utc ? ' UTC' : ''} · <span title="document id">${hit?._id}</span></p>
        </div>
        <div class="drawer-actions">
          ${hit ? html`<${CopyButton} text=${hit._id} label="Copy id" />` : null}
          ${idQuery ? html`<button type="button" class="secondary outline btn-sm" onClick=${() => onQuery(idQuery)}>Only this event</button>` : null}
          <button type="button" class="secondary btn-sm" onClick=${onClose} aria-label="Close">Close ✕</button>
        </div>
      </header>
      <${Notice}>${error}<//>
      ${sanitizedNotes(doc).length > 0 ? html`<${Sanitized} notes=${sanitizedNotes(doc)} />` : null}
      ${index === 'bad' && doc ? html`<${Failure} doc=${doc} type=${type} messages=${messages} utc=${utc} />` : null}
      ${loading && !doc
        ? html`<p aria-busy="true">loading…</p>`
        : doc
          ? html`<${JsonView} value=${index === 'bad' ? failureFirst(doc) : doc} open=${1} openPaths=${index === 'bad' ? ['data.failure'] : []} title=${index === 'good' ? 'Enriched event (shredded JSON)' : 'Bad row'} nullsToggle=${index === 'good'} />`
          : null}
    </aside>
  </div>`
}
