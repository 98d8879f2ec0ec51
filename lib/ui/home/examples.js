import { useEffect, useState } from 'preact/hooks'
import { getJson } from '../shared/api.js'
import { ago, fmtTime, igluShort } from '../shared/format.js'
import { useNow, usePoll, useStored } from '../shared/hooks.js'
import { html } from '../shared/html.js'
import { Notice } from '../shared/layout.js'
import { LiveCounters } from './counters.js'
import { APP_ID, EXAMPLES, onSent, sendExample, setTrackerUserId } from './tracker.js'

const GOOD_FIELDS = ['event_id', 'collector_tstamp', 'event', 'event_name', 'event_vendor', 'event_version', 'user_id', 'page_url', 'se_category', 'se_action', 'se_label', 'se_property', 'se_value', 'tr_orderid', 'tr_total', 'tr_currency', 'ti_sku', 'ti_name', 'ti_quantity', 'ti_price', 'unstruct_event_com_snowplowanalytics_snowplow_link_click_1', 'contexts_com_snowplowanalytics_snowplow_failure_1']

/** What an event is, in a few words. */
function summary(e) {
  const failure = e.contexts_com_snowplowanalytics_snowplow_failure_1?.[0]
  if (failure) return `${String(failure.failureType ?? 'failed').replace(/:\s*$/, '')}${failure.schema ? ` · ${igluShort(failure.schema)}` : ''}`
  switch (e.event) {
    case 'page_view':
      return e.page_url ?? ''
    case 'struct':
      return [e.se_category, e.se_action, e.se_label, e.se_property, e.se_value].map((x) => (x === null || x === undefined ? '∅' : String(x))).join(' / ')
    case 'transaction':
      return `${e.tr_orderid} · total ${e.tr_total} ${e.tr_currency ?? ''}`
    case 'transaction_item':
      return `${e.ti_orderid ?? ''} ${e.ti_sku} ${e.ti_name ?? ''} · ${e.ti_quantity} × ${e.ti_price}`
    case 'unstruct':
      return e.event_vendor ? `${e.event_vendor}/${e.event_name} ${e.event_version ?? ''}` : (e.event_name ?? '')
    default:
      return e.event_name ?? ''
  }
}

/** What the tracker sent, in a few words (from its payload). */
function sentSummary(p) {
  const kind = { pv: 'page_view', se: 'struct', tr: 'transaction', ti: 'transaction_item', ue: 'unstruct', pp: 'page_ping' }[p.e] ?? p.e
  let what = ''
  if (p.e === 'se') what = `${p.se_ca} / ${p.se_ac}`
  else if (p.e === 'tr') what = p.tr_id
  else if (p.e === 'ti') what = `${p.ti_id} ${p.ti_sk}`
  else if (p.e === 'ue') {
    try {
      what = igluShort(JSON.parse(p.ue_pr).data.schema)
    } catch {
      what = ''
    }
  }
  return { kind, what }
}

function Arrived({ sentIds }) {
  const [state, setState] = useState({ good: [], bad: [], at: 0, error: '' })
  const now = useNow(1000)
  usePoll(async () => {
    try {
      const good = await getJson(`/search-store/good/_search?q=${encodeURIComponent(`app_id:${APP_ID}`)}&size=12&sort=collector_tstamp:desc&_source=${GOOD_FIELDS.join(',')}`)
      const bad = await getJson(`/search-store/bad/_search?q=${encodeURIComponent(`data.payload.enriched.app_id:${APP_ID}`)}&size=5&sort=data.failure.timestamp:desc&_source=schema,data.failure.timestamp,data.failure.messages.schemaKey,data.payload.enriched.event_id`)
      setState({ good: good.hits.hits, bad: bad.hits.hits, goodTotal: good.hits.total.value, badTotal: bad.hits.total.value, at: Date.now(), error: '' })
    } catch (err) {
      setState((prev) => ({ ...prev, error: err.message }))
    }
  }, 2000)
  return html`<div class="arrived">
    <div class="arrived-head">
      <h4>In the search store <span class="muted">· app_id ${APP_ID}</span></h4>
      <span class="muted small"><span class="live-dot"></span> ${ago(state.at, now)} · <a href=${`/dashboard-ui#index=good&range=1h&q=${encodeURIComponent(`app_id:${APP_ID}`)}`}>open in the explorer →</a></span>
    </div>
    <${Notice}>${state.error}<//>
    ${state.good.length === 0
      ? html`<p class="empty">No events from this page yet: send one with the buttons.</p>`
      : html`<div class="table-wrap"><table class="data compact" data-testid="arrived">
          <thead><tr><th>collector_tstamp (UTC)</th><th>event</th><th>what</th><th>user_id</th><th></th></tr></thead>
          <tbody>
            ${state.good.map(({ _id, _source: e }) => {
              const failed = e.contexts_com_snowplowanalytics_snowplow_failure_1 !== undefined
              return html`<tr key=${_id} data-event=${e.event} class=${sentIds.has(_id) ? 'mine' : ''}>
                <td class="mono nowrap">${fmtTime(e.collector_tstamp)}</td>
                <td><span class=${`badge ev ev-${e.event}`}>${e.event}</span></td>
                <td class="mono ellipsis" title=${summary(e)}>${summary(e)}</td>
                <td class="mono">${e.user_id ?? ''}</td>
                <td>${failed ? html`<span class="badge err">failed</span>` : html`<span class="badge ok">valid</span>`}</td>
              </tr>`
            })}
          </tbody>
        </table></div>`}
    ${state.bad.length > 0
      ? html`<h4 class="sub">Bad rows from this page</h4>
          <ul class="bad-list" data-testid="arrived-bad">
            ${state.bad.map(({ _id, _source: b }) => html`<li key=${_id}>
              <span class="mono nowrap">${fmtTime(b?.data?.failure?.timestamp)}</span>
              <span class="badge err">${igluShort(b.schema).split(' ')[0].split('/')[1]}</span>
              <span class="mono ellipsis">${(b?.data?.failure?.messages ?? []).map((m) => m.schemaKey).filter(Boolean).join(', ')}</span>
            </li>`)}
          </ul>`
      : null}
  </div>`
}

export function ExampleEvents() {
  const [userId, setUserIdText] = useStored('floe.home.userId', 'floe-user@example.com')
  const [log, setLog] = useState([])
  const [sentIds, setSentIds] = useState(new Set())
  const [error, setError] = useState('')
  const now = useNow(1000)

  useEffect(
    () =>
      onSent((r) => {
        const at = Date.now()
        if (r.ok) setSentIds((prev) => new Set([...prev, ...r.events.map((e) => e.eid)]))
        setLog((prev) =>
          [
            ...r.events.map((p) => ({ at, ok: r.ok, status: r.status, eid: p.eid, ...sentSummary(p), retry: r.willRetry })),
            ...(r.events.length === 0 ? [{ at, ok: r.ok, status: r.status, kind: 'request', what: r.message ?? '' }] : []),
            ...prev,
          ].slice(0, 30),
        )
      }),
    [],
  )

  const send = (example) => {
    setError('')
    try {
      setTrackerUserId(userId.trim())
      sendExample(example)
    } catch (err) {
      setError(`${err.message}`)
    }
  }
  const sendAll = () => {
    for (const e of EXAMPLES) if (!e.invalid) send(e)
  }

  return html`<div class="examples">
    <div class="grid-examples">
      <article class="card">
        <header class="card-head">
          <h3>Send example events</h3>
          <button type="button" class="btn-sm" onClick=${sendAll} data-example="all">Send all valid</button>
        </header>
        <p class="muted">
          Sent by the real <span class="mono">@snowplow/browser-tracker</span> bundled into this page, to this stack’s collector
          (<span class="mono">app_id ${APP_ID}</span>, POST, not base64-encoded, with the web_page context), as Snowplow Mini’s home page sends them.
        </p>
        <label class="inline-field">
          <span>user_id</span>
          <input type="text" value=${userId} onInput=${(e) => setUserIdText(e.currentTarget.value)} placeholder="empty: no user id" class="mono" aria-label="user id" />
        </label>
        <${Notice}>${error}<//>
        <div class="example-list">
          ${EXAMPLES.map(
            (e) => html`<div class=${`example ${e.invalid ? 'invalid' : ''}`} key=${e.id}>
              <div class="example-text">
                <strong>${e.label}</strong>
                <span class="muted small">${e.detail}</span>
                <code class="example-code">${e.code}</code>
              </div>
              <button type="button" class=${e.invalid ? 'secondary' : ''} onClick=${() => send(e)} data-example=${e.id}>Send</button>
            </div>`,
          )}
        </div>
      </article>
      <div class="stack">
        <article class="card">
          <header class="card-head"><h3>Counts · last hour</h3></header>
          <${LiveCounters} every=${2000} compact=${true} />
        </article>
        <article class="card">
          <header class="card-head"><h3>Accepted by the collector</h3><span class="muted small">this page, newest first</span></header>
          ${log.length === 0
            ? html`<p class="empty">Nothing sent yet.</p>`
            : html`<ul class="sent-log" data-testid="sent-log">
                ${log.map(
                  (x, i) => html`<li key=${`${x.eid ?? 'r'}-${i}`} class=${x.ok ? 'ok' : 'err'}>
                    <span class=${`badge ${x.ok ? 'ok' : 'err'}`}>${x.ok ? '✓ 200' : `✗ ${x.status || 'failed'}${x.retry ? ' · retrying' : ''}`}</span>
                    <span class="mono">${x.kind}</span>
                    <span class="mono muted ellipsis">${x.what}</span>
                    <span class="muted small nowrap">${ago(x.at, now)}</span>
                  </li>`,
                )}
              </ul>`}
        </article>
      </div>
    </div>
    <article class="card">
      <${Arrived} sentIds=${sentIds} />
    </article>
  </div>`
}
