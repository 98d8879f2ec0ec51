import { fmtInt, igluName } from '../shared/format.js'
import { html } from '../shared/html.js'

/** `name version · vendor`: the part that tells schemas apart first. */
function schemaLabel(uri) {
  const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([^/]+)$/.exec(String(uri))
  return m ? html`<strong>${m[2]}</strong> ${m[3]} <span class="muted">· ${m[1]}</span>` : String(uri)
}

/** The terms aggregations of each index's breakdown. */
export const BREAKDOWN_AGGS = {
  good: {
    by_event: { terms: { field: 'event', size: 8 } },
    by_event_name: { terms: { field: 'event_name', size: 8 } },
    by_app: { terms: { field: 'app_id', size: 8 } },
  },
  bad: {
    by_type: { terms: { field: 'schema', size: 10 } },
    by_schema: { terms: { field: 'data.failure.messages.schemaKey', size: 10 } },
    by_error: { terms: { field: 'data.failure.messages.error.error_str', size: 6 } },
    by_report: { terms: { field: 'data.failure.messages.error.dataReports.message_str', size: 8 } },
    by_expectation: { terms: { field: 'data.failure.messages.expectation', size: 8 } },
    by_enrichment: { terms: { field: 'data.failure.messages.message.expectation', size: 8 } },
  },
}

function Group({ title, field, buckets, label = (k) => String(k), onPick, mono = true, testid }) {
  if (!buckets) return null
  const max = Math.max(1, ...buckets.map((b) => b.doc_count))
  return html`<div class="group" data-testid=${testid}>
    <h5>${title}</h5>
    ${buckets.length === 0
      ? html`<p class="muted small">none in this range</p>`
      : html`<ul>
          ${buckets.map(
            (b) => html`<li key=${`${field}:${b.key}`}>
              <a href="#" class="bucket" title=${`${b.field ?? field}:"${b.key}" (click to add to the query)`} onClick=${(e) => {
                e.preventDefault()
                onPick(b.field ?? field, b.key)
              }}>
                <span class="bar" style=${{ width: `${(100 * b.doc_count) / max}%` }}></span>
                <span class=${`bucket-key ${mono ? 'mono' : ''}`}>${label(b.key)}</span>
                <span class="bucket-count">${fmtInt(b.doc_count)}</span>
              </a>
            </li>`,
          )}
        </ul>`}
  </div>`
}

/**
 * What the events of the range are: for good events by event type, name and
 * app; for bad rows by failure type, failing schema, error and message.
 * Clicking a line adds it to the query.
 */
export function Breakdown({ index, aggs, error, onPick }) {
  if (!aggs && error) return html`<aside class="breakdown"><p class="notice error small" role="alert" data-testid="breakdown-error">No figures for this range: ${error}</p></aside>`
  if (!aggs) return html`<aside class="breakdown"><p class="muted small" data-testid="breakdown-loading">loading…</p></aside>`
  const b = (name) => aggs[name]?.buckets
  if (index === 'good') {
    return html`<aside class="breakdown" data-testid="breakdown">
      <${Group} title="Event type" field="event" buckets=${b('by_event')} onPick=${onPick} />
      <${Group} title="Event name" field="event_name" buckets=${b('by_event_name')} onPick=${onPick} />
      <${Group} title="App" field="app_id" buckets=${b('by_app')} onPick=${onPick} />
    </aside>`
  }
  const messages = [
    ...(b('by_report') ?? []).map((x) => ({ ...x, field: 'data.failure.messages.error.dataReports.message_str' })),
    ...(b('by_expectation') ?? []).map((x) => ({ ...x, field: 'data.failure.messages.expectation' })),
    ...(b('by_enrichment') ?? []).map((x) => ({ ...x, field: 'data.failure.messages.message.expectation' })),
  ]
    .sort((x, y) => y.doc_count - x.doc_count)
    .slice(0, 10)
  return html`<aside class="breakdown" data-testid="breakdown">
    <${Group} title="Failure type" field="schema" buckets=${b('by_type')} label=${igluName} onPick=${onPick} testid="by-type" />
    <${Group} title="Failing schema" field="data.failure.messages.schemaKey" buckets=${b('by_schema')} label=${schemaLabel} onPick=${onPick} testid="by-schema" />
    <${Group} title="Error" field="data.failure.messages.error.error_str" buckets=${b('by_error')} onPick=${onPick} />
    <${Group} title="Messages" field="message" buckets=${messages} onPick=${onPick} mono=${false} testid="by-message" />
  </aside>`
}
