import { useEffect, useState } from 'preact/hooks'
import { version as trackerVersion } from '@snowplow/browser-tracker'
import { getJson, getText } from '../shared/api.js'
import { CopyButton } from '../shared/copy.js'
import { HealthBanner, healthLines } from '../shared/health.js'
import { html } from '../shared/html.js'
import { LiveCounters } from './counters.js'
import { collectorUrl } from './tracker.js'

/** The services of the stack; `probe` ones are checked with a GET. */
const SERVICES = [
  { name: 'Collector', path: '/com.snowplowanalytics.snowplow/tp2', about: 'Receives tracker events (POST tp2, GET /i); writes them to the raw stream', fromHealth: 'collector' },
  { name: 'Enrich', path: null, about: 'Validates and enriches raw events into good, bad and failed events', fromHealth: 'enrich' },
  { name: 'Event explorer', path: '/dashboard-ui', about: 'Recent good events and bad rows, histogram, bad rows grouped by failure' },
  { name: 'Search store', path: '/search-store', about: 'Elasticsearch-style _count and _search over the good and bad indices', probe: true },
  { name: 'Micro API', path: '/micro/all', about: "Snowplow Micro's API: /micro/all, /good, /bad, /reset, /iglu", probe: true },
  { name: 'Schema registry', path: '/registry-server/api/meta/health', about: 'Iglu-compatible registry under /registry-server/api', probe: true },
  { name: 'Metrics', path: '/metrics', about: 'Runtime metrics of every service: JSON, or Prometheus text', probe: true },
  { name: 'Health', path: '/health', about: '200 while this instance takes events (listing what is off on purpose), 503 on a fault', probe: true },
  { name: 'Tracking-design API', path: '/api/msc/v1', about: 'Event specifications, data products, source applications (bearer token)' },
]

function ServiceStatus({ status }) {
  if (status === undefined) return html`<span class="badge muted">—</span>`
  if (status === 'checking') return html`<span class="badge muted">checking…</span>`
  if (status >= 200 && status < 300) return html`<span class="badge ok">up · ${status}</span>`
  if (status === 501) return html`<span class="badge warn">not implemented · 501</span>`
  return html`<span class="badge err">${status === 0 ? 'no answer' : `HTTP ${status}`}</span>`
}

/** A component's state from /health's lines naming it: down (a fault), off on purpose (e.g. until the licence is accepted), or running. */
function StateFromHealth({ component, causes }) {
  if (causes === undefined) return html`<span class="badge muted">—</span>`
  const names = (c) => c.startsWith(component) || c.includes(` ${component} `)
  const faults = causes.faults.filter(names)
  const off = causes.deliberate.filter(names)
  if (faults.length === 0 && off.length === 0) return html`<span class="badge ok" data-testid=${`state-${component}`}>running</span>`
  if (faults.length > 0) return html`<span class="badge err" data-testid=${`state-${component}`} title=${faults.join('\n')}>down</span>`
  const licence = off.some((c) => /licen[cs]e/.test(c))
  return html`<span class="badge warn" data-testid=${`state-${component}`} title=${off.join('\n')}>${licence ? 'off · licence not accepted' : 'off on purpose'}</span>`
}

function Services() {
  const [status, setStatus] = useState({})
  const [health, setHealth] = useState(undefined)
  const probe = async () => {
    setStatus(Object.fromEntries(SERVICES.filter((s) => s.probe).map((s) => [s.path, 'checking'])))
    void fetch('/health', { cache: 'no-store' })
      .then(async (r) => setHealth(healthLines(r.status, await r.text())))
      .catch(() => setHealth(undefined))
    await Promise.all(
      SERVICES.filter((s) => s.probe).map(async (s) => {
        let code = 0
        try {
          code = (await fetch(s.path, { cache: 'no-store' })).status
        } catch {
          code = 0
        }
        setStatus((prev) => ({ ...prev, [s.path]: code }))
      }),
    )
  }
  useEffect(() => void probe(), [])
  return html`<article class="card">
    <header class="card-head">
      <h3>Services</h3>
      <button type="button" class="secondary outline btn-sm" onClick=${probe}>Check again</button>
    </header>
    <div class="table-wrap">
      <table class="data services">
        <thead><tr><th>Service</th><th>Path</th><th>What it is</th><th>Status</th></tr></thead>
        <tbody>
          ${SERVICES.map(
            (s) => html`<tr>
              <td><strong>${s.name}</strong></td>
              <td>${s.path === null ? html`<span class="muted">stream consumer (raw)</span>` : html`<a class="mono" href=${s.path} target=${s.path === '/dashboard-ui' ? undefined : '_blank'} rel="noopener">${s.path}</a>`}</td>
              <td class="muted">${s.about}</td>
              <td>${s.fromHealth ? html`<${StateFromHealth} component=${s.fromHealth} causes=${health} />` : html`<${ServiceStatus} status=${s.probe ? status[s.path] : undefined} />`}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </article>`
}

function Versions() {
  const [v, setV] = useState({})
  useEffect(() => {
    const set = (k, val) => setV((prev) => ({ ...prev, [k]: val }))
    getText('/control-plane/version')
      .then((t) => set('floe', { ok: true, text: t.trim() }))
      .catch((e) => set('floe', { ok: false, text: e.status ? `unavailable (HTTP ${e.status})` : e.message }))
    getJson('/search-store')
      .then((j) => set('store', { ok: true, text: `${j?.version?.number ?? '?'}${j?.version?.build_flavor ? ` (${j.version.build_flavor})` : ''}` }))
      .catch((e) => set('store', { ok: false, text: e.status ? `unavailable (HTTP ${e.status})` : e.message }))
    getJson('/registry-server/api/meta/server')
      .then((j) => set('registry', { ok: true, text: `${j?.version ?? '?'}${j?.database ? ` (${j.database})` : ''}` }))
      .catch((e) => set('registry', { ok: false, text: e.status ? `unavailable (HTTP ${e.status})` : e.message }))
  }, [])
  const row = (label, key, hint) => {
    const x = v[key]
    return html`<div class="kv"><dt>${label}</dt><dd class=${`mono ${x && !x.ok ? 'muted' : ''}`} data-version=${key}>${x ? x.text : '…'}</dd>${hint ? html`<dd class="hint">${hint}</dd>` : null}</div>`
  }
  return html`<article class="card">
    <header class="card-head"><h3>Versions</h3></header>
    <dl class="kvs">
      ${row('Floe', 'floe', 'GET /control-plane/version')}
      ${row('Search store', 'store', 'GET /search-store → version.number')}
      ${row('Schema registry', 'registry', 'GET /registry-server/api/meta/server')}
      <div class="kv"><dt>Browser tracker on these pages</dt><dd class="mono">@snowplow/browser-tracker ${trackerVersion}</dd></div>
    </dl>
  </article>`
}

/** HTTPS of this deployment: the domain submitted on the control plane, its certificate, renewal, progress. */
function Https() {
  const [s, setS] = useState(undefined)
  const load = () =>
    getJson('/control-plane/domain-name')
      .then((j) => setS({ ok: true, j }))
      .catch((e) => setS({ ok: false, text: e.status ? `unavailable (HTTP ${e.status})` : e.message }))
  useEffect(() => {
    void load()
    const t = setInterval(load, 5000)
    return () => clearInterval(t)
  }, [])
  const j = s?.ok ? s.j : undefined
  const kv = (label, value, key) => html`<div class="kv"><dt>${label}</dt><dd class="mono" data-https=${key}>${value}</dd></div>`
  let body
  if (!s) body = kv('State', '…', 'state')
  else if (!s.ok) body = kv('State', s.text, 'state')
  else if (j.deployment === 'aws') body = kv('Custom domain', j.domain ?? 'none (set at deploy time: -c domainName -c certificateArn)', 'domain')
  else
    body = html`
      ${kv('State', j.serving ? html`<span class="badge ok">serving ${j.url}</span>` : j.domain ? html`<span class="badge err">not serving</span>` : html`<span class="badge muted">HTTP only</span>`, 'state')}
      ${j.certificate ? kv('Certificate', `${j.domain} · ${j.certificate.issuer} · valid until ${j.certificate.notAfter}`, 'certificate') : null}
      ${j.pending ? kv('In progress', `${j.pending.domain}: ${j.pending.step} (since ${j.pending.since})`, 'pending') : null}
      ${j.lastRenewal ? kv('Last renewal', `${j.lastRenewal.ok ? 'renewed' : 'failed'} at ${j.lastRenewal.at}`, 'renewal') : null}
      ${j.lastError ? kv('Last failure', `${j.lastError.domain} at ${j.lastError.at}: ${j.lastError.reason}`, 'error') : null}
      ${j.problem ? kv('Problem', j.problem, 'problem') : null}`
  return html`<article class="card">
    <header class="card-head"><h3>HTTPS</h3><a href="#/control-plane" class="btn-link">Domain name →</a></header>
    <dl class="kvs">${body}</dl>
  </article>`
}

function Collector() {
  const url = collectorUrl()
  const snippet = `import { newTracker, trackPageView } from '@snowplow/browser-tracker'\n\nnewTracker('sp', '${url}', { appId: 'my-app' })\ntrackPageView()`
  const curl = `curl -i '${url}/i?e=pv&p=web&tv=curl-0&aid=my-app&page=Hello'`
  return html`<article class="card collector">
    <header class="card-head"><h3>Collector endpoint</h3><span class="muted">Point any Snowplow tracker here</span></header>
    <div class="collector-url" role="group">
      <input type="text" readonly value=${url} class="mono" aria-label="Collector URL" data-testid="collector-url" onFocus=${(e) => e.currentTarget.select()} />
      <${CopyButton} text=${url} label="Copy URL" />
    </div>
    <div class="snippets">
      <div class="snippet">
        <div class="snippet-head"><span>JavaScript tracker</span><${CopyButton} text=${snippet} /></div>
        <pre class="code">${snippet}</pre>
      </div>
      <div class="snippet">
        <div class="snippet-head"><span>A page view with curl</span><${CopyButton} text=${curl} /></div>
        <pre class="code">${curl}</pre>
      </div>
    </div>
  </article>`
}

export function Overview() {
  return html`<div class="overview">
    <${HealthBanner} />
    <div class="grid-2">
      <${Collector} />
      <article class="card">
        <header class="card-head"><h3>Events arriving</h3><a href="#/example-events" class="btn-link">Send example events →</a></header>
        <${LiveCounters} />
      </article>
    </div>
    <${Services} />
    <div class="grid-2">
      <${Versions} />
      <${Https} />
    </div>
  </div>`
}
