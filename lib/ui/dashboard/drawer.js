import { useEffect } from 'preact/hooks'
import { CopyButton } from '../shared/copy.js'
import { fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { JsonView } from '../shared/json-view.js'
import { Notice } from '../shared/layout.js'
import { badRowMessages } from './columns.js'

/** One document, whole: a panel over the right of the page (Escape closes it). */
export function Drawer({ index, hit, loading, error, utc, onClose, onQuery }) {
  useEffect(() => {
    const onKey = (e) => e.key === 'Escape' && onClose()
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  const doc = hit?._source
  const title = index === 'good' ? `${doc?.event ?? 'event'}${doc?.event_name && doc.event_name !== doc.event ? ` · ${doc.event_name}` : ''}` : `bad row · ${String(doc?.schema ?? '').split('/')[1] ?? ''}`
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
      ${messages.length > 0
        ? html`<div class="messages"><h5>Messages</h5><ul>${messages.map((m, i) => html`<li key=${i} class="mono">${m}</li>`)}</ul></div>`
        : null}
      ${loading && !doc ? html`<p aria-busy="true">loading…</p>` : doc ? html`<${JsonView} value=${doc} open=${index === 'good' ? 1 : 2} openPaths=${index === 'bad' ? ['data.failure'] : []} title=${index === 'good' ? 'Enriched event (shredded JSON)' : 'Bad row'} nullsToggle=${index === 'good'} />` : null}
    </aside>
  </div>`
}
