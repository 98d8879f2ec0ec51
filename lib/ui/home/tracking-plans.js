/**
 * The Tracking plans tab (`#/tracking-plans[/{org}[/{spec}]]`): organizations,
 * their event specifications with what the pipeline observed of each, and a
 * specification's detail (./plan-detail.js). Read from
 * `/control-plane/tracking-plans`, which uses the tracking-design API's stores
 * and checks.
 */
import { useEffect, useState } from 'preact/hooks'
import { getJson } from '../shared/api.js'
import { fmtInt, fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { useHash } from '../shared/hooks.js'
import { Notice } from '../shared/layout.js'
import { PlanDetail } from './plan-detail.js'

const BASE = '/control-plane/tracking-plans'
const STATUSES = ['', 'draft', 'published', 'deprecated']

function Banner({ state }) {
  if (!state) return null
  return html`${state.enrichment && !state.enrichment.on ? html`<${Notice} kind="info"><span data-why-empty="enrichment">Nothing is observed: ${state.enrichment.reason}</span><//>` : null}
    ${state.observed && !state.observed.available ? html`<${Notice} kind="info"><span data-why-empty="search">Nothing is observed: ${state.observed.reason}</span><//>` : null}`
}

/** The dashboard's view of what a number counts (the same queries as the detail's links). */
const dashboard = (index, range, q) => `/dashboard-ui#${new URLSearchParams({ index, range, q })}`
const tagged = (id) => `contexts_com_snowplowanalytics_snowplow_event_specification_1.id:"${id}"`

function Observed({ o, id }) {
  if (!o) return html`<td class="muted">—</td><td class="muted">—</td><td class="muted">—</td>`
  return html`<td data-col="hour"><a href=${dashboard('good', '1h', tagged(id))}>${fmtInt(o.hour)}</a></td>
    <td data-col="day">${o.neverSeen ? html`<span class="badge warn" data-never-seen>never seen</span>` : html`<a href=${dashboard('good', '24h', tagged(id))}>${fmtInt(o.day)}</a>`}</td>
    <td data-col="broken"><a class=${o.brokenDay > 0 ? 'text-error' : ''} href=${dashboard('bad', '24h', `"${id}"`)}>${fmtInt(o.brokenDay)}</a></td>`
}

function SpecList({ org }) {
  const [status, setStatus] = useState('')
  const [q, setQ] = useState('')
  const [data, setData] = useState(undefined)
  const [error, setError] = useState('')
  useEffect(() => {
    let live = true
    const t = setTimeout(() => {
      const p = new URLSearchParams()
      if (status) p.set('status', status)
      if (q.trim()) p.set('q', q.trim())
      getJson(`${BASE}/${org}/specs?${p}`).then((x) => live && (setData(x), setError('')), (err) => live && setError(err.message))
    }, 150)
    return () => {
      live = false
      clearTimeout(t)
    }
  }, [org, status, q])
  return html`<div class="stack">
    <${Banner} state=${data} />
    <form class="inline-form" onSubmit=${(e) => e.preventDefault()}>
      <select aria-label="status" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
        ${STATUSES.map((s) => html`<option value=${s}>${s === '' ? 'every status' : s}</option>`)}
      </select>
      <input type="search" aria-label="search by name" placeholder="search by name" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} />
    </form>
    <${Notice}>${error}<//>
    ${data === undefined ? html`<p aria-busy="true">Loading…</p>` : data.specs.length === 0 ? html`<p class="empty">No event specification${status ? ` with status ${status}` : ''}${q ? ` named like “${q}”` : ''}.</p>` : html`<div class="table-wrap"><table class="data" aria-label="event specifications">
      <thead><tr><th>name</th><th>status</th><th>version</th><th>source data structure</th><th>data product</th><th>last hour</th><th>last day</th><th>broke rules</th><th>updated</th></tr></thead>
      <tbody>${data.specs.map((s) => html`<tr data-spec-row=${s.id}>
        <td><a href=${`#/tracking-plans/${org}/${s.id}`} data-spec-link>${s.name ?? s.id}</a></td>
        <td><span class=${`badge ${s.status === 'published' ? 'ok' : 'muted'}`}>${s.status}</span></td>
        <td>${s.version}</td>
        <td class="mono small">${s.source ?? '—'}${s.sourceVersion ? html` <span class="muted">${s.sourceVersion}</span>` : null}</td>
        <td>${s.dataProduct?.name ?? html`<span class="muted">—</span>`}</td>
        <${Observed} o=${s.observed} id=${s.id} />
        <td class="nowrap small">${fmtTime(s.updated)}</td>
      </tr>`)}</tbody>
    </table></div>`}
  </div>`
}

export function TrackingPlans() {
  const hash = useHash()
  const [, org, spec] = hash.replace(/^\/?/, '').split('/')
  const [orgs, setOrgs] = useState(undefined)
  const [error, setError] = useState('')
  useEffect(() => {
    getJson(BASE).then(setOrgs, (err) => setError(err.message))
  }, [])
  useEffect(() => {
    // One organization: open it.
    if (!org && orgs?.organizations.length === 1) location.replace(`#/tracking-plans/${orgs.organizations[0].id}`)
  }, [orgs, org])
  if (error) return html`<${Notice}>${error}<//>`
  if (!orgs) return html`<p aria-busy="true">Loading the organizations…</p>`
  return html`<div class="stack tracking-plans">
    <p class="lead">Event specifications of this deployment's tracking-design API, with what the pipeline observed of each.</p>
    ${orgs.organizations.length === 0 ? html`<${Banner} state=${orgs} /><p class="empty">No organization yet: create one with <span class="mono">floe org create</span>, then specifications through <span class="mono">/api/msc/v1</span>.</p>` : html`<nav class="seg" aria-label="organizations">
      ${orgs.organizations.map((o) => html`<a href=${`#/tracking-plans/${o.id}`} role="button" class=${`btn-sm ${o.id === org ? '' : 'outline'}`} data-org=${o.id}>${o.name || o.id}</a>`)}
    </nav>`}
    ${org && spec ? html`<${PlanDetail} org=${org} id=${spec} />` : org ? html`<${SpecList} org=${org} />` : null}
  </div>`
}
