/**
 * One event specification in the Tracking plans tab: its rules rendered
 * readably, compatibility with its source data structure (with the witness
 * the checker found), registry links, history, what the search store
 * observed, and a draft tried against the newest stored events.
 */
import { useEffect, useState } from 'preact/hooks'
import { getJson, request } from '../shared/api.js'
import { fmtInt, fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { JsonView } from '../shared/json-view.js'
import { Notice } from '../shared/layout.js'

const BASE = '/control-plane/tracking-plans'

/** What a property allows, in words. */
function allowed(p) {
  const out = []
  if (Array.isArray(p.enum)) out.push(`one of ${p.enum.map((v) => JSON.stringify(v)).join(', ')}`)
  if (p.const !== undefined) out.push(`exactly ${JSON.stringify(p.const)}`)
  if (p.pattern) out.push(`matches /${p.pattern}/`)
  if (p.format) out.push(`format ${p.format}`)
  if (p.minLength !== undefined) out.push(`at least ${p.minLength} characters`)
  if (p.maxLength !== undefined) out.push(`at most ${p.maxLength} characters`)
  if (p.minimum !== undefined) out.push(`≥ ${p.minimum}`)
  if (p.maximum !== undefined) out.push(`≤ ${p.maximum}`)
  if (p.minItems !== undefined) out.push(`at least ${p.minItems} items`)
  if (p.maxItems !== undefined) out.push(`at most ${p.maxItems} items`)
  return out.join('; ')
}

const typeOf = (p) => (Array.isArray(p.type) ? p.type.join(' | ') : p.type ?? (p.enum ? 'enum' : p.const !== undefined ? 'const' : 'any'))

function propertyRows(schema, prefix, rows) {
  const props = schema && typeof schema === 'object' && schema.properties && typeof schema.properties === 'object' ? schema.properties : {}
  const required = new Set(Array.isArray(schema?.required) ? schema.required : [])
  for (const [name, p] of Object.entries(props)) {
    if (!p || typeof p !== 'object') continue
    rows.push({ path: `${prefix}${name}`, type: typeOf(p), required: required.has(name), allowed: allowed(p), description: p.description ?? '' })
    if (p.properties && rows.length < 200) propertyRows(p, `${prefix}${name}.`, rows)
    if (p.items && typeof p.items === 'object' && p.items.properties && rows.length < 200) propertyRows(p.items, `${prefix}${name}[].`, rows)
  }
  return rows
}

/** A JSON Schema as a table: each property, its type, whether it is required and what it allows. */
export function SchemaTable({ schema, label }) {
  const rows = propertyRows(schema, '', [])
  if (rows.length === 0) return html`<p class="muted small">${label}: no property rules${schema?.additionalProperties === false ? ' (no other property allowed)' : ''}</p>`
  return html`<div class="table-wrap"><table class="data compact schema-table" aria-label=${label}>
    <thead><tr><th>property</th><th>type</th><th>required</th><th>allowed values</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr data-property=${r.path}>
      <td class="mono">${r.path}</td><td class="mono">${r.type}</td>
      <td>${r.required ? html`<span class="badge warn">required</span>` : html`<span class="muted">optional</span>`}</td>
      <td>${r.allowed || html`<span class="muted">any</span>`}${r.description ? html`<div class="muted small">${r.description}</div>` : null}</td>
    </tr>`)}</tbody>
  </table></div>
  ${schema?.additionalProperties === false ? html`<p class="muted small">No other property is allowed.</p>` : null}`
}

function RegistryLink({ uri, links }) {
  const l = links?.[uri]
  return l ? html`<a class="mono small" href=${l} target="_blank" rel="noopener" data-registry-link=${uri}>${uri}</a>` : html`<span class="mono small">${uri}</span>`
}

function Rules({ d }) {
  const spec = d.spec
  const event = spec.event ?? {}
  const tracked = spec.entities?.tracked ?? []
  return html`<article class="card" data-section="rules">
    <header class="card-head"><h3>Event</h3>${event.source ? html`<${RegistryLink} uri=${event.source} links=${d.registryLinks} />` : null}</header>
    ${event.schema ? html`<${SchemaTable} schema=${event.schema} label="event rules" />` : d.sourceSchema ? html`<p class="muted small">No rules of its own: the data structure's schema applies.</p><${SchemaTable} schema=${d.sourceSchema} label="data structure" />` : html`<p class="muted">No event schema.</p>`}
    <h4>Entities</h4>
    ${tracked.length === 0 ? html`<p class="muted small">No entities.</p>` : tracked.map((e) => html`<div class="entity" data-entity=${e.source}>
      <p><${RegistryLink} uri=${e.source} links=${d.registryLinks} /> ·
        ${(e.minCardinality ?? 0) >= 1 ? html`<span class="badge warn">required</span>` : html`<span class="badge muted">optional</span>`}
        <span class="muted small"> at least ${e.minCardinality ?? 0}, at most ${e.maxCardinality ?? '∞'}</span></p>
      ${e.schema ? html`<${SchemaTable} schema=${e.schema} label=${`rules of ${e.source}`} />` : null}
    </div>`)}
  </article>`
}

function Compatibility({ d }) {
  const items = [
    ...d.compatibility.map((c) => ({ kind: c.type === 'Error' ? 'err' : 'warn', title: c.title, witness: c.witness, reason: c.reason, hasWitness: 'witness' in c })),
    ...d.sources.filter((s) => s.status === 'incompatible' && !d.compatibility.some((c) => 'witness' in c && JSON.stringify(c.witness) === JSON.stringify(s.witness)))
      .map((s) => ({ kind: 'warn', title: s.message ?? `incompatible with ${s.source}`, witness: s.witness, reason: s.reason, hasWitness: 'witness' in s })),
  ]
  return html`<article class="card" data-section="compatibility">
    <header class="card-head"><h3>Compatibility with the data structures</h3></header>
    ${items.length === 0 ? html`<p class="muted">No warning: the rules accept only what the data structures accept.</p>` : items.map((c) => html`<div class="compat" data-compat=${c.kind}>
      <p><span class=${`badge ${c.kind}`}>${c.kind === 'err' ? 'error' : 'warning'}</span> ${c.title}</p>
      ${c.reason ? html`<p class="small">Why: <span data-reason>${c.reason}</span></p>` : null}
      ${c.hasWitness ? html`<div data-witness><p class="small muted">An instance the specification accepts and the data structure rejects:</p><pre class="mono small">${JSON.stringify(c.witness, null, 2)}</pre></div>` : null}
    </div>`)}
  </article>`
}

function History({ d }) {
  return html`<article class="card" data-section="history">
    <header class="card-head"><h3>History</h3><span class="muted small">versions as the API keeps them (drafts published together are squashed)</span></header>
    <div class="table-wrap"><table class="data compact"><thead><tr><th>version</th><th>status</th><th>author</th><th>message</th><th>date</th></tr></thead>
    <tbody>${d.history.map((h) => html`<tr><td>${h.version}</td><td>${h.status}</td><td class="mono small">${h.author}</td><td>${h.message}</td><td class="nowrap">${fmtTime(h.date)}</td></tr>`)}</tbody></table></div>
  </article>`
}

function Histogram({ values, from }) {
  const max = Math.max(1, ...values)
  const w = 8
  return html`<figure class="plan-histogram-wrap"><svg class="plan-histogram" viewBox=${`0 0 ${values.length * w} 40`} preserveAspectRatio="none" role="img" aria-label="tagged events per hour, last 24 hours">
    ${values.map((v, i) => html`<rect x=${i * w + 1} y=${40 - (v / max) * 38} width=${w - 2} height=${(v / max) * 38} fill="#38bdf8"><title>${`${fmtTime(new Date(from + i * 3_600_000).toISOString())}: ${v}`}</title></rect>`)}
  </svg><figcaption class="muted small">tagged events per hour, last 24 hours (most: ${max === 1 && values.every((v) => v === 0) ? 0 : max})</figcaption></figure>`
}

function Observed({ d }) {
  if (!d.observed.available) return html`<article class="card" data-section="observed"><header class="card-head"><h3>Observed</h3></header><${Notice} kind="info">${d.observed.reason}<//></article>`
  const o = d.observation
  const off = !d.enrichment.on
  return html`<article class="card" data-section="observed">
    <header class="card-head"><h3>Observed</h3><span class="muted small">from the search store; each number opens the dashboard on what it counts</span></header>
    ${off ? html`<${Notice} kind="info">Nothing is tagged: ${d.enrichment.reason}<//>` : null}
    ${o.day === 0 && d.spec.status === 'published' && o.lastSeen === undefined ? html`<p><span class="badge warn" data-never-seen>never seen</span> no stored event follows this published specification</p>` : null}
    <div class="observed-numbers">
      <a href=${o.links.taggedHour} data-count="hour"><strong>${fmtInt(o.hour)}</strong> tagged in the last hour</a>
      <a href=${o.links.tagged} data-count="day"><strong>${fmtInt(o.day)}</strong> tagged in the last day</a>
      <a href=${o.links.broken} data-count="broken" class=${o.brokenDay > 0 ? 'text-error' : ''}><strong>${fmtInt(o.brokenDay)}</strong> claimed it and broke its rules (bad rows, last day)</a>
    </div>
    <${Histogram} values=${o.histogram} from=${o.histogramFrom} />
    ${o.brokenRules.length > 0 ? html`<h4>Broken rules</h4><ul class="broken-rules">${o.brokenRules.map((r) => html`<li data-broken-rule><span class="mono small">${r.rule}</span> <span class="muted small">(version ${r.version}, ${r.count}×)</span></li>`)}</ul>` : null}
    ${o.entities.length > 0 ? html`<h4>Entities present</h4><ul>${o.entities.map((e) => html`<li><a href=${o.links.entity[e.schema] ?? o.links.tagged} data-entity-rate=${e.schema}>${Math.round(e.rate * 100)}%</a> <span class="mono small">${e.schema}</span> <span class="muted small">(${e.present} of ${o.day})</span></li>`)}</ul>` : null}
  </article>`
}

function TryDraft({ d, org }) {
  const [text, setText] = useState(() => JSON.stringify(d.spec, null, 2))
  const [events, setEvents] = useState(200)
  const [state, setState] = useState({})
  if (!d.observed.available) return null
  const run = async (e) => {
    e.preventDefault()
    let spec
    try {
      spec = JSON.parse(text)
    } catch (err) {
      setState({ error: `the draft is not JSON: ${err.message}` })
      return
    }
    setState({ busy: true })
    try {
      const res = await request(`${BASE}/${org}/specs/${d.spec.id}/try`, { method: 'POST', json: { spec, events: Number(events) } })
      setState({ report: await res.json() })
    } catch (err) {
      setState({ error: err.message })
    }
  }
  const r = state.report
  return html`<article class="card" data-section="try">
    <header class="card-head"><h3>Try a draft against live traffic</h3><span class="muted small">its rules over the newest stored events of its event schema, before publishing</span></header>
    <form onSubmit=${run}>
      <textarea class="mono small" rows="12" aria-label="draft" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
      <label class="inline-field"><span>newest events</span><input type="number" min="1" max="1000" value=${events} onInput=${(e) => setEvents(e.currentTarget.value)} aria-label="events" /></label>
      <button type="submit" aria-busy=${state.busy === true}>Try against live traffic</button>
    </form>
    <${Notice}>${state.error}<//>
    ${r ? html`<div data-try-report>
      <p><strong data-examined>${r.examined}</strong> events of <span class="mono small">${r.source}</span>: <strong data-matched>${r.matched}</strong> would match, <strong data-violated class=${r.violated ? 'text-error' : ''}>${r.violated}</strong> would violate.</p>
      ${r.violators.length > 0 ? html`<div class="table-wrap"><table class="data compact"><thead><tr><th>event</th><th>time</th><th>why</th></tr></thead>
        <tbody>${r.violators.map((v) => html`<tr data-violator=${v.eventId}><td class="mono small">${v.eventId}</td><td class="nowrap small">${v.collectorTstamp}</td><td>${v.reasons.map((m) => html`<div class="small">${m}</div>`)}</td></tr>`)}</tbody></table></div>` : null}
    </div>` : null}
  </article>`
}

/** The detail of `/control-plane/tracking-plans/{org}/specs/{id}`. */
export function PlanDetail({ org, id }) {
  const [d, setD] = useState(undefined)
  const [error, setError] = useState('')
  useEffect(() => {
    let live = true
    setD(undefined)
    getJson(`${BASE}/${org}/specs/${id}`).then((x) => live && setD(x), (err) => live && setError(err.message))
    return () => (live = false)
  }, [org, id])
  if (error) return html`<${Notice}>${error}<//>`
  if (!d) return html`<p aria-busy="true">Loading the specification…</p>`
  const s = d.spec
  return html`<div class="stack plan-detail" data-spec=${s.id}>
    <p><a href=${`#/tracking-plans/${org}`}>← all specifications</a></p>
    <h2>${s.name ?? s.id} <span class="badge muted">${s.status}</span> <span class="muted small">version ${s.version}</span></h2>
    ${d.dataProduct ? html`<p class="muted">Data product: ${d.dataProduct.name}</p>` : null}
    <${Observed} d=${d} />
    <${Rules} d=${d} />
    <${Compatibility} d=${d} />
    <${TryDraft} d=${d} org=${org} />
    <${History} d=${d} />
    <details><summary>The specification as stored</summary><${JsonView} value=${s} open=${2} /></details>
  </div>`
}
