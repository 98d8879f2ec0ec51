/**
 * `/dashboard-ui`: the event explorer. Good events and bad rows of a time
 * range, filtered with the search store's query-string syntax: a histogram
 * of both, the newest documents (chosen columns, pages), each document's
 * JSON, and what the range holds by type (bad rows by failure type, failing
 * schema and message). Live: it polls while the tab is visible.
 */
import '@picocss/pico/css/pico.min.css'
import '../shared/styles.css'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { search, TIME_FIELD } from '../shared/api.js'
import { ago, fmtInt } from '../shared/format.js'
import { useHash, useNow, usePoll, useStored } from '../shared/hooks.js'
import { HealthBanner } from '../shared/health.js'
import { html, render } from '../shared/html.js'
import { Notice, TopBar } from '../shared/layout.js'
import { Breakdown, BREAKDOWN_AGGS } from './breakdown.js'
import { Histogram } from './chart.js'
import { DEFAULT_COLUMNS, sourceOf } from './columns.js'
import { Drawer } from './drawer.js'
import { bounds, EXAMPLES, intervalOf, parseState, queryOf, RANGES, rangeMs, stateHash, withTerm } from './query.js'
import { ColumnPicker, EventsTable, Pager } from './table.js'
import { RecoverPanel } from './recover.js'

const LIVE_MS = 3000

/** `datetime-local` text of an instant, in UTC or local time. */
function inputTime(t, utc) {
  const d = new Date(utc ? t : t - new Date(t).getTimezoneOffset() * 60_000)
  return d.toISOString().slice(0, 16)
}
function parseInputTime(v, utc) {
  const t = utc ? Date.parse(`${v}:00Z`) : new Date(v).getTime()
  return Number.isFinite(t) ? t : undefined
}

function Switch({ label, checked, onChange, testid }) {
  return html`<label class="switch-label"><input type="checkbox" role="switch" checked=${checked} onChange=${(e) => onChange(e.currentTarget.checked)} data-testid=${testid} /> ${label}</label>`
}

function QueryBar({ index, value, error, onApply }) {
  const [draft, setDraft] = useState(value)
  useEffect(() => setDraft(value), [value])
  const examples = useRef(null)
  const apply = (q) => {
    setDraft(q)
    onApply(q)
    if (examples.current) examples.current.open = false
  }
  return html`<div class="querybar">
    <form role="search" class="query-form" onSubmit=${(e) => {
      e.preventDefault()
      onApply(draft)
    }}>
      <input type="search" name="q" class=${`mono ${error ? 'invalid' : ''}`} aria-invalid=${error ? 'true' : undefined} value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)}
        placeholder=${index === 'good' ? 'app_id:my-app AND event:page_view' : 'schema:*schema_violations*'} aria-label="Query" data-testid="query" spellcheck="false" autocomplete="off" />
      <button type="submit" data-testid="search">Search</button>
    </form>
    <details class="dropdown examples" ref=${examples}>
      <summary role="button" class="secondary outline">Examples</summary>
      <ul>
        ${EXAMPLES[index].map(([q, what]) => html`<li><a href="#" onClick=${(e) => {
          e.preventDefault()
          apply(q)
        }}><code>${q}</code><small>${what}</small></a></li>`)}
        <li><a href="#" onClick=${(e) => {
          e.preventDefault()
          apply('')
        }}><small>clear the query</small></a></li>
      </ul>
    </details>
    ${error
      ? html`<p class="notice error query-error" role="alert" data-testid="query-error">The search store refused the query: ${error}</p>`
      : html`<p class="muted small query-help">
          Query string as in Elasticsearch: <code>field:value</code>, <code>"a phrase"</code>, <code>*</code> and <code>?</code>, <code>[a TO b]</code>, <code>>=</code>, <code>AND</code> <code>OR</code> <code>NOT</code>, <code>( )</code>, <code>_exists_:field</code>.
          Values match whole and case-sensitively; nested fields are dotted (<code>${index === 'good' ? 'contexts_com_snowplowanalytics_snowplow_web_page_1.id' : 'data.failure.messages.schemaKey'}</code>).
        </p>`}
  </div>`
}

function Dashboard() {
  const hash = useHash()
  const s = useMemo(() => parseState(hash), [hash])
  const go = (patch) => {
    const next = stateHash({ ...s, ...patch })
    if (next !== location.hash) location.hash = next
  }
  const [live, setLive] = useStored('floe.dashboard.live', true)
  const [utc, setUtc] = useStored('floe.dashboard.utc', true)
  const [columnsByIndex, setColumnsByIndex] = useStored('floe.dashboard.columns', DEFAULT_COLUMNS)
  const columns = columnsByIndex[s.index]?.length ? columnsByIndex[s.index] : DEFAULT_COLUMNS[s.index]
  const setColumns = (ids) => setColumnsByIndex((prev) => ({ ...prev, [s.index]: ids }))

  const [table, setTable] = useState({ index: undefined, hits: [], total: 0, relation: 'eq', loading: true })
  const [stats, setStats] = useState({})
  const [queryError, setQueryError] = useState('')
  const [failure, setFailure] = useState('')
  const [updated, setUpdated] = useState(0)
  const [nonce, setNonce] = useState(0)
  const [fresh, setFresh] = useState(new Set())
  const [open, setOpen] = useState(undefined)
  const seq = useRef(0)
  const seen = useRef({ key: '', ids: new Set() })
  const now = useNow(1000)

  const paramsKey = JSON.stringify([s.index, s.range, s.from, s.to, s.q, s.page, s.size, s.order, columns])
  const interval = intervalOf(s)

  const load = async () => {
    const mine = ++seq.current
    const b = bounds(s)
    const statsBody = (index) => ({
      size: 0,
      track_total_hits: true,
      query: queryOf(index, s, index === s.index),
      aggs: {
        over_time: { date_histogram: { field: TIME_FIELD[index], fixed_interval: interval.text, min_doc_count: 0, extended_bounds: { min: b.gte, max: b.lte } } },
        ...(index === s.index ? BREAKDOWN_AGGS[index] : {}),
      },
    })
    const tableBody = {
      query: queryOf(s.index, s, true),
      sort: [{ [TIME_FIELD[s.index]]: s.order }],
      from: s.page * s.size,
      size: s.size,
      _source: sourceOf(s.index, columns),
    }
    const filtered = s.q.trim() !== ''
    const [good, bad, page, unfiltered] = await Promise.allSettled([
      search('good', statsBody('good')),
      search('bad', statsBody('bad')),
      search(s.index, tableBody),
      // the index's total in the range, whatever the query
      filtered ? search(s.index, { size: 0, track_total_hits: true, query: queryOf(s.index, s, false) }) : Promise.resolve(undefined),
    ])
    if (mine !== seq.current) return // a newer request answered or will
    const current = s.index === 'good' ? good : bad
    const refused = [current, page].find((r) => r.status === 'rejected' && r.reason?.status === 400)
    setQueryError(refused ? refused.reason.message : '')
    const other = [good, bad, page].find((r) => r.status === 'rejected' && r.reason?.status !== 400)
    setFailure(other ? `${other.reason.status ? `HTTP ${other.reason.status}: ` : ''}${other.reason.message}` : '')
    const statOf = (r) => (r.status === 'fulfilled' ? { total: r.value.hits.total.value, buckets: r.value.aggregations?.over_time?.buckets ?? [], aggs: r.value.aggregations } : undefined)
    const totals = { good: statOf(good)?.total, bad: statOf(bad)?.total }
    if (filtered) totals[s.index] = unfiltered.status === 'fulfilled' ? unfiltered.value.hits.total.value : undefined
    // why an index's figures are missing (the store refused the query, or did not answer): shown instead of them
    const errorOf = (r) => (r.status === 'rejected' ? `${r.reason?.status && r.reason.status !== 400 ? `HTTP ${r.reason.status}: ` : ''}${r.reason?.message ?? r.reason}` : undefined)
    setStats({ good: statOf(good), bad: statOf(bad), totals, index: s.index, errors: { good: errorOf(good), bad: errorOf(bad) } })
    if (page.status === 'fulfilled') {
      const hits = page.value.hits.hits
      const ids = new Set(hits.map((h) => h._id))
      setFresh(seen.current.key === paramsKey ? new Set([...ids].filter((id) => !seen.current.ids.has(id))) : new Set())
      seen.current = { key: paramsKey, ids }
      setTable({ index: s.index, key: paramsKey, hits, total: page.value.hits.total.value, relation: page.value.hits.total.relation, loading: false })
    } else setTable((prev) => ({ ...prev, index: s.index, key: paramsKey, hits: refused || prev.index !== s.index ? [] : prev.hits, total: refused || prev.index !== s.index ? 0 : prev.total, loading: false }))
    setUpdated(Date.now())
  }
  usePoll(load, live ? LIVE_MS : 0, [paramsKey, nonce])
  useEffect(() => setOpen(undefined), [s.index])
  // rows of the other index are not shown while this one loads
  const rows = table.index === s.index ? table : { hits: [], total: 0, relation: 'eq', loading: true }

  const openHit = async (hit) => {
    setOpen({ hit: { _id: hit._id, _source: hit._source }, loading: true, error: '' })
    try {
      const r = await search(s.index, { query: { ids: { values: [hit._id] } }, size: 1 })
      const full = r.hits.hits[0]
      setOpen((prev) => (prev?.hit._id === hit._id ? { hit: full ?? prev.hit, loading: false, error: full ? '' : 'This document is no longer in the store.' } : prev))
    } catch (err) {
      setOpen((prev) => (prev?.hit._id === hit._id ? { ...prev, loading: false, error: err.message } : prev))
    }
  }

  const setRange = (id) => {
    if (id === 'custom') {
      const r = rangeMs(s)
      go({ range: 'custom', from: r.from, to: r.to, page: 0 })
    } else go({ range: id, page: 0 })
  }
  const range = rangeMs(s, live || !updated ? now - (now % 1000) : updated)
  const statsFor = (index) => (stats.index === s.index ? stats[index] : undefined)
  const labels = [`good${s.index === 'good' && s.q ? ' · matching' : ''}`, `bad${s.index === 'bad' && s.q ? ' · matching' : ''}`]
  const total = (index) => (stats.index === s.index ? stats.totals?.[index] : undefined)

  return html`<${TopBar} page="dashboard" />
    <main class="container-fluid dash">
      <${HealthBanner} />
      <div class="dash-toolbar">
        <div role="group" class="index-toggle" aria-label="Index">
          ${['good', 'bad'].map(
            (ix) => html`<button type="button" class=${`index-btn ${ix} ${s.index === ix ? 'active' : ''}`} aria-pressed=${s.index === ix} data-index=${ix}
              onClick=${() => s.index !== ix && go({ index: ix, q: '', page: 0 })}>
              <span>${ix === 'good' ? 'Good events' : 'Bad rows'}</span>
              <span class="index-count" data-testid=${`total-${ix}`}>${total(ix) === undefined ? '…' : fmtInt(total(ix))}</span>
            </button>`,
          )}
        </div>
        <div class="range">
          <select value=${s.range} onChange=${(e) => setRange(e.currentTarget.value)} aria-label="Time range" data-testid="range">
            ${RANGES.map((r) => html`<option value=${r.id}>${r.label}</option>`)}
          </select>
          ${s.range === 'custom'
            ? html`<div class="custom-range">
                <input type="datetime-local" aria-label="From" value=${inputTime(s.from, utc)} data-testid="from"
                  onChange=${(e) => {
                    const t = parseInputTime(e.currentTarget.value, utc)
                    if (t !== undefined && t < s.to) go({ from: t, page: 0 })
                  }} />
                <span class="muted">to</span>
                <input type="datetime-local" aria-label="To" value=${inputTime(s.to, utc)} data-testid="to"
                  onChange=${(e) => {
                    const t = parseInputTime(e.currentTarget.value, utc)
                    if (t !== undefined && t > s.from) go({ to: t, page: 0 })
                  }} />
                <span class="muted small">${utc ? 'UTC' : 'local time'}</span>
              </div>`
            : null}
        </div>
        <div class="toolbar-right">
          <${Switch} label="Live" checked=${live} onChange=${setLive} testid="live" />
          <${Switch} label="UTC" checked=${utc} onChange=${setUtc} testid="utc" />
          <button type="button" class="secondary outline btn-sm" onClick=${() => setNonce((n) => n + 1)} title="Refresh now">Refresh</button>
          <span class="muted small updated" data-testid="updated">${live ? html`<span class="live-dot"></span>` : html`<span class="paused-dot"></span>`} ${live ? 'live' : 'paused'} · ${ago(updated, now)}</span>
        </div>
      </div>
      <${QueryBar} index=${s.index} value=${s.q} error=${queryError} onApply=${(q) => go({ q, page: 0 })} />
      <${Notice}>${failure}<//>
      <div class="dash-grid">
        <div class="dash-main">
          <article class="card chart-card">
            <header class="card-head">
              <h3>Over time</h3>
              <span class="muted small">per ${interval.text} · drag across the chart to zoom${s.range === 'custom' ? html` · <a href="#" onClick=${(e) => {
                e.preventDefault()
                setRange('1h')
              }}>back to the last hour</a>` : ''}</span>
            </header>
            <${Histogram}
              good=${statsFor('good')?.buckets ?? []}
              bad=${statsFor('bad')?.buckets ?? []}
              intervalMs=${interval.ms}
              from=${range.from}
              to=${range.to}
              utc=${utc}
              labels=${labels}
              onSelect=${(from, to) => go({ range: 'custom', from, to, page: 0 })}
            />
          </article>
          <article class="card table-card">
            <header class="card-head">
              <h3>${s.index === 'good' ? 'Good events' : 'Bad rows'} <span class="muted small">${s.order === 'desc' ? 'newest first' : 'oldest first'}</span></h3>
              <div class="table-tools">
                <${ColumnPicker} index=${s.index} chosen=${columns} onChange=${setColumns} onReset=${() => setColumns(DEFAULT_COLUMNS[s.index])} />
                <${Pager} page=${s.page} size=${s.size} total=${rows.total} relation=${rows.relation} onPage=${(page) => go({ page })} onSize=${(size) => go({ size, page: 0 })} />
              </div>
            </header>
            ${rows.hits.length === 0
              ? html`<p class="empty" data-testid="no-events">${rows.loading ? 'loading…' : queryError ? 'Fix the query to see documents.' : `No ${s.index === 'good' ? 'events' : 'bad rows'} in this range${s.q ? ' match the query' : ''}.`}</p>`
              : html`<${EventsTable} stale=${table.key !== paramsKey} index=${s.index} hits=${rows.hits} columns=${columns} utc=${utc} order=${s.order} fresh=${fresh} selectedId=${open?.hit._id}
                  onOpen=${openHit} onOrder=${() => go({ order: s.order === 'desc' ? 'asc' : 'desc', page: 0 })} />`}
            ${rows.total > s.size ? html`<footer class="table-foot"><${Pager} page=${s.page} size=${s.size} total=${rows.total} relation=${rows.relation} onPage=${(page) => go({ page })} onSize=${(size) => go({ size, page: 0 })} /></footer>` : null}
          </article>
        </div>
        <article class="card dash-side">
          <header class="card-head"><h3>${s.index === 'good' ? 'In this range' : 'Bad rows by failure'}</h3></header>
          <${Breakdown} index=${s.index} aggs=${statsFor(s.index)?.aggs} error=${stats.index === s.index ? stats.errors?.[s.index] : undefined} onPick=${(field, value) => go({ q: withTerm(s.q, field, value), page: 0 })} />
          ${s.index === 'bad' ? html`<${RecoverPanel} q=${s.q} range=${range} />` : null}
        </article>
      </div>
      ${open
        ? html`<${Drawer} index=${s.index} hit=${open.hit} loading=${open.loading} error=${open.error} utc=${utc} onClose=${() => setOpen(undefined)}
            onQuery=${(q) => {
              setOpen(undefined)
              go({ q, page: 0 })
            }} />`
        : null}
    </main>`
}

if (!location.hash) history.replaceState(null, '', stateHash(parseState('')))
render(html`<${Dashboard} />`, document.getElementById('app'))
