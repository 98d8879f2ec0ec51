import { useState } from 'preact/hooks'
import { cellText, fmtInt, fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { columnOf, COLUMNS, FAILURE_CONTEXT } from './columns.js'
import { PAGE_SIZES } from './query.js'

/** Chooses the table's columns: the known ones, and any field path of the document. */
export function ColumnPicker({ index, chosen, onChange, onReset }) {
  const [extra, setExtra] = useState('')
  const known = COLUMNS[index]
  const custom = chosen.filter((id) => !known.some((c) => c.id === id))
  const toggle = (id, on) => onChange(on ? [...chosen, id] : chosen.filter((x) => x !== id))
  const add = (e) => {
    e.preventDefault()
    const id = extra.trim()
    if (id && !chosen.includes(id)) onChange([...chosen, id])
    setExtra('')
  }
  return html`<details class="dropdown column-picker" data-testid="column-picker">
    <summary role="button" class="secondary outline btn-sm">Columns (${chosen.length})</summary>
    <div class="picker-panel">
      <div class="picker-grid">
        ${[...known.map((c) => [c.id, c.label]), ...custom.map((id) => [id, id])].map(
          ([id, label]) => html`<label class="check" key=${id}>
            <input type="checkbox" name=${`col-${id}`} checked=${chosen.includes(id)} onChange=${(e) => toggle(id, e.currentTarget.checked)} />
            <span class="mono">${label}</span>
          </label>`,
        )}
      </div>
      <form class="inline-form" onSubmit=${add}>
        <input type="text" class="mono" placeholder=${index === 'good' ? 'any field, e.g. contexts_com_snowplowanalytics_snowplow_web_page_1.id' : 'any field, e.g. data.payload.raw.useragent'} value=${extra} onInput=${(e) => setExtra(e.currentTarget.value)} aria-label="Add a column" />
        <button type="submit" class="secondary btn-sm">Add</button>
      </form>
      <button type="button" class="secondary outline btn-sm" onClick=${onReset}>Default columns</button>
    </div>
  </details>`
}

function Cell({ col, doc, utc }) {
  const values = col.value(doc)
  if (values.length === 0) return html`<td class="empty-cell">—</td>`
  if (col.time) return html`<td class="mono nowrap">${values.map((v) => fmtTime(v, utc)).join(', ')}</td>`
  const text = values.map(cellText).join(col.id === 'message' ? ' | ' : ', ')
  if (col.badge) return html`<td>${values.map((v) => html`<span class=${`badge ev ev-${String(v)}`}>${String(v)}</span>`)}</td>`
  return html`<td class=${`mono ${col.wide ? 'wide' : ''} ${col.wrap ? 'wrap' : ''}`} title=${text.length > 40 ? text : undefined}><span class="clip">${text}</span></td>`
}

/** The page of documents, newest first (or oldest), with their chosen columns; a row opens its JSON. */
export function EventsTable({ index, hits, columns, utc, order, fresh, selectedId, stale, onOpen, onOrder }) {
  const cols = columns.map((id) => columnOf(index, id))
  return html`<div class=${`table-wrap events-wrap ${stale ? 'stale' : ''}`} data-stale=${stale ? 'true' : 'false'}>
    <table class="data selectable events" data-testid="events">
      <thead>
        <tr>
          ${index === 'good' ? html`<th class="status-col" aria-label="status"></th>` : null}
          ${cols.map(
            (c, i) => html`<th key=${c.id} class=${c.time && i === 0 ? 'sortable' : ''}>
              ${c.time && i === 0
                ? html`<button type="button" class="th-sort" onClick=${onOrder} title="Change the order">${c.label}${utc ? ' (UTC)' : ''} ${order === 'desc' ? '↓' : '↑'}</button>`
                : html`${c.label}${c.time && utc ? ' (UTC)' : ''}`}
            </th>`,
          )}
        </tr>
      </thead>
      <tbody>
        ${hits.map((h) => {
          const failed = index === 'good' && h._source?.[FAILURE_CONTEXT] !== undefined
          return html`<tr key=${h._id} data-id=${h._id} class=${`${fresh.has(h._id) ? 'fresh' : ''} ${selectedId === h._id ? 'selected' : ''}`} tabindex="0" onClick=${() => onOpen(h)} onKeyDown=${(e) => e.key === 'Enter' && onOpen(h)}>
            ${index === 'good' ? html`<td class="status-col">${failed ? html`<span class="badge err" title="a failed event (incomplete)">failed</span>` : html`<span class="ok-dot" title="valid"></span>`}</td>` : null}
            ${cols.map((c) => html`<${Cell} key=${c.id} col=${c} doc=${h._source ?? {}} utc=${utc} />`)}
          </tr>`
        })}
      </tbody>
    </table>
  </div>`
}

/** `1–50 of 1,234` and the page buttons. */
export function Pager({ page, size, total, relation, onPage, onSize }) {
  const first = total === 0 ? 0 : page * size + 1
  const last = Math.min(total, (page + 1) * size)
  const maxPage = Math.max(0, Math.ceil(Math.min(total, 10_000) / size) - 1)
  return html`<nav class="pager" aria-label="Pages" data-testid="pager">
    <span class="muted small" data-testid="page-info">${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(total)}${relation === 'gte' ? '+' : ''}</span>
    <label class="inline-field small">
      <span>per page</span>
      <select value=${size} onChange=${(e) => onSize(Number(e.currentTarget.value))} aria-label="Rows per page">
        ${PAGE_SIZES.map((n) => html`<option value=${n}>${n}</option>`)}
      </select>
    </label>
    <div role="group" class="seg seg-sm">
      <button type="button" class="secondary outline" disabled=${page === 0} onClick=${() => onPage(0)} aria-label="Newest page">«</button>
      <button type="button" class="secondary outline" disabled=${page === 0} onClick=${() => onPage(page - 1)} data-testid="prev">‹ Prev</button>
      <button type="button" class="secondary outline" disabled=${page >= maxPage} onClick=${() => onPage(page + 1)} data-testid="next">Next ›</button>
    </div>
  </nav>`
}
