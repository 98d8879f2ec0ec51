import { useEffect, useState } from 'preact/hooks'
import { getJson, getText, request } from '../shared/api.js'
import { fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { JsonView } from '../shared/json-view.js'
import { Notice } from '../shared/layout.js'

/** The control plane's names of the services (`service_name`). */
const SERVICES = [
  ['collector', 'the collector'],
  ['enrich', 'enrichment of raw events'],
  ['esLoaderGood', 'search loader of good events'],
  ['esLoaderBad', 'search loader of bad rows'],
  ['registry', 'schema registry and resolvers'],
  ['dashboard', 'these pages and the sign-in'],
  ['searchstore', 'search store and Micro API'],
]

const UUID_V4 = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}'

function uuidV4() {
  if (crypto.randomUUID) return crypto.randomUUID()
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A failed request as text: its HTTP status (when it got one) and message. */
const failureText = (err) => `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}`

/**
 * A value read from the server when the component mounts: `[{ value, error }, reload]`.
 * `value` is undefined while loading and after a failure, whose text is `error`.
 */
function useServerValue(read) {
  const [state, setState] = useState({ value: undefined, error: '' })
  const reload = async () => {
    try {
      setState({ value: await read(), error: '' })
    } catch (err) {
      setState({ value: undefined, error: failureText(err) })
    }
  }
  useEffect(() => void reload(), [])
  return [state, reload]
}

function Endpoint({ method, path }) {
  return html`<span class="endpoint"><span class=${`method m-${method.toLowerCase()}`}>${method}</span><code>${path}</code></span>`
}

/** The server's answer to a form: its text, or its error in red. */
function Answer({ result, testId = 'answer' }) {
  if (!result) return null
  if (result.ok) return html`<div class="answer ok" role="status" data-testid=${testId}><span class="badge ok">${result.status}</span><pre>${result.text || 'saved (the answer is empty)'}</pre></div>`
  return html`<div class="answer err" role="alert" data-testid=${testId}><span class="badge err">${result.status ? `HTTP ${result.status}` : 'error'}</span><pre>${result.text}</pre></div>`
}

/**
 * One endpoint's form: the fields are sent form-urlencoded (or as
 * multipart/form-data when `multipart`), and the server's answer shown.
 */
function EndpointForm({ id, title, method, path, help, intro, closed = false, submitLabel = 'Submit', initial = {}, multipart = false, check, onSuccess, children, fields }) {
  const [values, setValues] = useState(initial)
  const initialText = JSON.stringify(initial)
  useEffect(() => setValues((prev) => ({ ...prev, ...initial })), [initialText]) // the server's current values, once known
  const [result, setResult] = useState(undefined)
  const [busy, setBusy] = useState(false)
  const set = (name, value) => setValues((prev) => ({ ...prev, [name]: value }))
  const onSubmit = async (e) => {
    e.preventDefault()
    const problem = check?.(values)
    if (problem) {
      setResult({ ok: false, status: 0, text: problem })
      return
    }
    setBusy(true)
    setResult(undefined)
    try {
      let res
      if (multipart) {
        const data = new FormData()
        for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && !k.startsWith('_')) data.append(k, v)
        res = await request(path, { method, body: data })
      } else {
        const form = Object.fromEntries(Object.entries(values).filter(([k, v]) => !k.startsWith('_') && v !== undefined && v !== ''))
        res = await request(path, { method, form })
      }
      const text = (await res.text()).trim()
      setResult({ ok: true, status: res.status, text })
      onSuccess?.(text, values)
    } catch (err) {
      setResult({ ok: false, status: err.status ?? 0, text: err.message })
    } finally {
      setBusy(false)
    }
  }
  return html`<article class="card cp-form" id=${`cp-${id}`} data-form=${id}>
    <header class="card-head">
      <h4>${title}</h4>
      <${Endpoint} method=${method} path=${path} />
    </header>
    ${help ? html`<p class="muted small help">${help}</p>` : null}
    ${intro}
    ${closed
      ? null
      : html`<form onSubmit=${onSubmit}>
          ${fields?.({ values, set })}
          <div class="form-actions">
            <button type="submit" aria-busy=${busy} disabled=${busy}>${submitLabel}</button>
          </div>
        </form>`}
    <${Answer} result=${result} />
    ${children}
  </article>`
}

function Field({ label, help, children }) {
  return html`<label class="field">
    <span class="field-label">${label}</span>
    ${children}
    ${help ? html`<small class="field-help">${help}</small>` : null}
  </label>`
}

/**
 * Stored items (enrichment files, external registries) with their actions:
 * view (GET `<base>/<id>`, shown as JSON), disable or enable (POST
 * `<base>/<id>/disable|enable`) and remove (DELETE `<base>/<id>`, after a
 * confirmation). The answer of the last action is shown under the table.
 */
function ManagedTable({ testId, base, rows, idOf, head, cells, reload }) {
  const [result, setResult] = useState(undefined)
  const [viewing, setViewing] = useState(undefined)
  const [busy, setBusy] = useState('')
  const pathOf = (r, action) => `${base}/${encodeURIComponent(idOf(r))}${action ? `/${action}` : ''}`
  const act = async (r, method, action) => {
    setBusy(`${idOf(r)} ${method} ${action ?? ''}`)
    setResult(undefined)
    try {
      const res = await request(pathOf(r, action), { method })
      setResult({ ok: true, status: res.status, text: (await res.text()).trim() })
      if (viewing?.id === idOf(r)) setViewing(undefined)
      await reload()
    } catch (err) {
      setResult({ ok: false, status: err.status ?? 0, text: err.message })
    } finally {
      setBusy('')
    }
  }
  const view = async (r) => {
    if (viewing?.id === idOf(r)) return setViewing(undefined)
    try {
      setViewing({ id: idOf(r), value: await getJson(pathOf(r)) })
    } catch (err) {
      setViewing({ id: idOf(r), error: failureText(err) })
    }
  }
  const remove = (r) => {
    if (globalThis.confirm(`Remove ${idOf(r)}? This cannot be undone.`)) act(r, 'DELETE')
  }
  return html`<div data-testid=${testId}>
    ${rows.length === 0 ? html`<p class="muted small">None yet.</p>` : html`<div class="managed"><table class="data compact">
      <thead><tr>${head.map((h) => html`<th>${h}</th>`)}<th>state</th><th></th></tr></thead>
      <tbody>${rows.map((r) => {
        const id = idOf(r)
        const on = r.enabled !== false
        return html`<tr key=${id} data-item=${id}>
          ${cells(r)}
          <td><span class=${`badge ${on ? 'ok' : 'muted'}`}>${on ? 'enabled' : 'disabled'}</span></td>
          <td class="actions"><div class="row-actions">
            <button type="button" class="secondary outline btn-sm" data-action="view" aria-pressed=${viewing?.id === id} onClick=${() => view(r)}>View</button>
            <button type="button" class="secondary outline btn-sm" data-action=${on ? 'disable' : 'enable'} disabled=${busy !== ''} onClick=${() => act(r, 'POST', on ? 'disable' : 'enable')}>${on ? 'Disable' : 'Enable'}</button>
            <button type="button" class="secondary outline btn-sm" data-action="remove" disabled=${busy !== ''} onClick=${() => remove(r)}>Remove</button>
          </div></td>
        </tr>`
      })}</tbody>
    </table></div>`}
    <${Answer} result=${result} testId="action-answer" />
    ${viewing
      ? viewing.error
        ? html`<p class="notice error">${viewing.error}</p>`
        : html`<div data-testid="viewing"><${JsonView} value=${viewing.value} title=${viewing.id} open=${3} /></div>`
      : null}
  </div>`
}

/** A list read from the server, its heading, and what to show while loading or after a failure. */
function Listed({ title, path, state, reload, children }) {
  return html`<div class="subtable">
    <div class="subtable-head"><span class="small"><strong>${title}</strong> <${Endpoint} method="GET" path=${path} /></span><button type="button" class="secondary outline btn-sm" onClick=${reload}>Refresh</button></div>
    ${state.error
      ? html`<p class="notice error">${state.error}</p>`
      : state.value === undefined
        ? html`<p class="muted small">loading…</p>`
        : children}
  </div>`
}

function CredentialsForm() {
  const [changed, setChanged] = useState(false)
  return html`<${EndpointForm}
    id="credentials"
    title="Change the sign-in credentials"
    method="POST"
    path="/control-plane/credentials"
    help="The username and password of these pages and of /search-store, /micro, /control-plane and /metrics (HTTP basic authentication). The current password is required."
    submitLabel="Change credentials"
    initial=${{ current_password: '', new_username: '', new_password: '', _confirm: '' }}
    check=${(v) => (v.new_password !== v._confirm ? 'The two passwords differ.' : !/^[A-Za-z0-9]{12,}$/.test(v.new_password) ? 'The password must be at least 12 letters and digits (A-Z, a-z, 0-9), nothing else.' : undefined)}
    onSuccess=${() => setChanged(true)}
    fields=${({ values, set }) => html`
      <div class="grid-fields">
        <${Field} label="current_password" help="the password you signed in with"><input name="current_password" type="password" required autocomplete="current-password" value=${values.current_password} onInput=${(e) => set('current_password', e.currentTarget.value)} /><//>
        <${Field} label="new_username"><input name="new_username" required autocomplete="username" value=${values.new_username} onInput=${(e) => set('new_username', e.currentTarget.value)} /><//>
        <${Field} label="new_password" help="12 or more letters and digits"><input name="new_password" type="password" required minlength="12" pattern="[A-Za-z0-9]{12,}" autocomplete="new-password" value=${values.new_password} onInput=${(e) => set('new_password', e.currentTarget.value)} /><//>
        <${Field} label="repeat the password"><input name="confirm_password" type="password" required autocomplete="new-password" value=${values._confirm} onInput=${(e) => set('_confirm', e.currentTarget.value)} /><//>
      </div>`}
  >
    ${changed
      ? html`<div class="notice info" data-testid="credentials-changed">
          Your browser still sends the old credentials: it will ask for the new ones at the next request.
          <button type="button" class="btn-sm" onClick=${() => location.reload()}>Reload and sign in</button>
        </div>`
      : null}
  <//>`
}

function ExternalIglu() {
  const [list, load] = useServerValue(() => getJson('/control-plane/external-iglu'))
  return html`<${EndpointForm}
    id="external-iglu"
    title="Add an external Iglu registry"
    method="POST"
    path="/control-plane/external-iglu"
    help="Every resolver of the deployment (enrich, the search store, the tracking-design API) also looks schemas of the given vendor prefixes up there, by priority (lower first). The URL must answer."
    submitLabel="Add registry"
    initial=${{ vendor_prefix: '', uri: '', name: '', priority: '5', apikey: '' }}
    onSuccess=${load}
    fields=${({ values, set }) => html`
      <div class="grid-fields">
        <${Field} label="name"><input required value=${values.name} placeholder="Acme registry" onInput=${(e) => set('name', e.currentTarget.value)} /><//>
        <${Field} label="uri" help="the registry's /api URL"><input required class="mono" value=${values.uri} placeholder="https:// … /api" onInput=${(e) => set('uri', e.currentTarget.value)} /><//>
        <${Field} label="vendor_prefix" help="one or more, separated by commas"><input required class="mono" value=${values.vendor_prefix} placeholder="com.acme" onInput=${(e) => set('vendor_prefix', e.currentTarget.value)} /><//>
        <${Field} label="priority" help="an integer; lower is tried first"><input required type="number" step="1" value=${values.priority} onInput=${(e) => set('priority', e.currentTarget.value)} /><//>
        <${Field} label="apikey" help="optional: a read key (UUID) of that registry"><input class="mono" type="password" autocomplete="off" value=${values.apikey} onInput=${(e) => set('apikey', e.currentTarget.value)} /><//>
      </div>`}
  >
    <${Listed} title="Registered" path="/control-plane/external-iglu" state=${list} reload=${load}>
      <${ManagedTable}
        testId="external-iglu"
        base="/control-plane/external-iglu"
        rows=${list.value ?? []}
        idOf=${(r) => r.name}
        head=${['name', 'uri', 'priority', 'vendor prefixes', 'key']}
        cells=${(r) => html`<td>${r.name}</td><td class="mono">${r.uri}</td><td class="mono">${r.priority}</td><td class="mono">${(r.vendorPrefixes ?? []).join(', ')}</td><td>${r.hasApiKey ? 'yes' : 'no'}</td>`}
        reload=${load}
      />
    <//>
  <//>`
}

function Telemetry() {
  const [state, load] = useServerValue(async () => (await getJson('/control-plane/telemetry'))['collector.telemetry.disable'])
  return html`<${EndpointForm}
    id="telemetry"
    title="Telemetry"
    method="PUT"
    path="/control-plane/telemetry"
    help="Floe sends no telemetry, whatever this setting says. The setting is kept so that tools written for Snowplow Mini's control plane can read and write it."
    submitLabel="Save"
    initial=${{ disable: String(state.value === true) }}
    onSuccess=${load}
    fields=${({ values, set }) => html`
      <p class="small">
        Floe sends no telemetry. Stored setting: ${state.error ? html`<span class="text-error">${state.error}</span>` : state.value === undefined ? '…' : html`<strong data-testid="telemetry-state" class="mono">${state.value ? 'disable=true' : 'disable=false'}</strong>`}
        <span class="muted"> (<${Endpoint} method="GET" path="/control-plane/telemetry" />)</span>
      </p>
      <fieldset class="radios">
        <label><input type="radio" name="disable" value="false" checked=${values.disable === 'false'} onChange=${() => set('disable', 'false')} /> store <span class="mono">disable=false</span></label>
        <label><input type="radio" name="disable" value="true" checked=${values.disable === 'true'} onChange=${() => set('disable', 'true')} /> store <span class="mono">disable=true</span></label>
      </fieldset>`}
  />`
}

function Version() {
  const [version, load] = useServerValue(async () => (await getText('/control-plane/version')).trim())
  const v = version.error ? { text: version.error, ok: false } : { text: version.value ?? '…', ok: true }
  return html`<article class="card cp-form" data-form="version">
    <header class="card-head"><h4>Version</h4><${Endpoint} method="GET" path="/control-plane/version" /></header>
    <p class="muted small help">The version of this Floe deployment.</p>
    <div class=${`answer ${v.ok ? 'ok' : 'err'}`}><pre data-testid="version">${v.text}</pre></div>
    <div class="form-actions"><button type="button" class="secondary outline" onClick=${load}>Ask again</button></div>
  </article>`
}

function Enrichments() {
  const [list, load] = useServerValue(() => getJson('/control-plane/enrichments'))
  const [file, setFile] = useState(undefined)
  const [parsed, setParsed] = useState({ ok: undefined, text: '' })
  const pick = async (e) => {
    const f = e.currentTarget.files?.[0]
    setFile(f)
    if (!f) return setParsed({ ok: undefined, text: '' })
    try {
      const j = JSON.parse(await f.text())
      setParsed({ ok: true, text: `${f.name}: ${j?.schema ?? 'JSON without a schema'}${j?.data?.name ? ` · ${j.data.name}` : ''}${j?.data?.enabled === false ? ' · disabled' : ''}` })
    } catch (err) {
      setParsed({ ok: false, text: `${f.name} is not JSON: ${err.message}` })
    }
  }
  return html`<${EndpointForm}
    id="enrichments"
    title="Upload an enrichment configuration"
    method="POST"
    path="/control-plane/enrichments"
    help="A self-describing enrichment configuration (a .json file named with letters, digits, '.', '_' and '-'), sent as multipart/form-data in the field enrichmentjson; it replaces the stored file of the same name. It is checked with the other stored files as enrich would start with them (schemas, one file per enrichment, scripts compiled and run once, SQL and API inputs, assets answering); only then is it stored, and enrich restarts with it."
    submitLabel="Upload"
    multipart=${true}
    onSuccess=${load}
    check=${() => (!file ? 'Choose a JSON file first.' : parsed.ok === false ? parsed.text : undefined)}
    initial=${{}}
    fields=${({ set }) => html`
      <${Field} label="enrichmentjson">
        <input type="file" name="enrichmentjson" accept=".json,application/json" required onChange=${(e) => {
          pick(e)
          set('enrichmentjson', e.currentTarget.files?.[0])
        }} />
      <//>
      ${parsed.text ? html`<p class=${`small ${parsed.ok ? 'muted' : 'text-error'}`}>${parsed.text}</p>` : null}`}
  >
    <${Listed} title="Stored" path="/control-plane/enrichments" state=${list} reload=${load}>
      <${ManagedTable}
        testId="enrichments"
        base="/control-plane/enrichments"
        rows=${list.value ?? []}
        idOf=${(r) => r.file}
        head=${['file', 'enrichment', 'stored']}
        cells=${(r) => html`<td class="mono">${r.file}</td><td class="mono">${r.name ?? html`<span class="text-error">${r.problem}</span>`}</td><td class="mono small">${r.modifiedAt ? fmtTime(r.modifiedAt) : '—'}</td>`}
        reload=${load}
      />
    <//>
  <//>`
}

/** Enrich's licence: its state (GET), and its acceptance by the signed-in user (POST accept=yes). */
function Licence() {
  const [state, load] = useServerValue(() => getJson('/control-plane/license'))
  useEffect(() => {
    if (/\/license$/.test(location.hash)) document.getElementById('cp-license')?.scrollIntoView()
  }, [])
  const s = state.value
  const by = s?.by === 'environment' ? 'by the environment (ACCEPT_LIMITED_USE_LICENSE=yes)' : s?.by === 'configuration' ? 'in enrich’s configuration (license.accept = true)' : s?.by ? `by ${s.by}${s.at ? ` on ${s.at}` : ''}` : ''
  return html`<${EndpointForm}
    id="license"
    title="Licence"
    method="POST"
    path="/control-plane/license"
    help="Enrich runs only once the licence it is distributed under is accepted. Accepting it here is your own act, as the signed-in user, on behalf of whoever runs this deployment: it is recorded with your username and the time."
    submitLabel="Accept the licence"
    initial=${{ accept: '', _sure: false }}
    check=${(v) => (v._sure ? undefined : 'Tick the box to accept the licence.')}
    onSuccess=${load}
    closed=${s?.accepted === true}
    intro=${html`<p class="small">
      ${s ? html`<a href=${s.licence.url} target="_blank" rel="noopener noreferrer" data-testid="licence-link">${s.licence.name}</a>` : null}
      ${' '}State: ${state.error ? html`<span class="text-error">${state.error}</span>` : s === undefined ? '…' : html`<strong data-testid="licence-state">${s.accepted ? `accepted ${by}` : 'not accepted: enrich is off, events wait in the raw stream'}</strong>`}
    </p>`}
    fields=${({ values, set }) => html`
      <label class="check confirm"><input type="checkbox" data-testid="licence-accept" checked=${values._sure} onChange=${(e) => { set('_sure', e.currentTarget.checked); set('accept', e.currentTarget.checked ? 'yes' : '') }} /><span>I accept the licence (<span class="mono">accept=yes</span>)</span></label>`}
  />`
}

export function ControlPlane() {
  return html`<div class="control-plane">
    <p class="muted lead">
      Each form calls one endpoint of <span class="mono">/control-plane</span> and shows the server’s answer. Restarts drop a service’s caches and re-read its configuration; they take effect within seconds.
    </p>
    <h3 class="section-title">Licence</h3>
    <div class="grid-2">
      <${Licence} />
    </div>
    <h3 class="section-title">Services</h3>
    <div class="grid-2">
      <${EndpointForm} id="restart-services" title="Restart all services" method="PUT" path="/control-plane/restart-services" help="Every service drops its caches and re-reads its configuration." submitLabel="Restart all" />
      <${EndpointForm}
        id="restart-service"
        title="Restart one service"
        method="PUT"
        path="/control-plane/restart-service"
        submitLabel="Restart"
        initial=${{ service_name: 'enrich' }}
        fields=${({ values, set }) => html`<${Field} label="service_name">
          <select name="service_name" value=${values.service_name} onChange=${(e) => set('service_name', e.currentTarget.value)}>
            ${SERVICES.map(([v, label]) => html`<option value=${v}>${v} — ${label}</option>`)}
          </select>
        <//>`}
      />
      <${EndpointForm}
        id="reset-service"
        title="Reset the search store"
        method="POST"
        path="/control-plane/reset-service"
        help="Deletes every good event and bad row from the search store (the streams and the archive are untouched)."
        submitLabel="Reset search store"
        initial=${{ service_name: 'searchstore', _sure: false }}
        check=${(v) => (v._sure ? undefined : 'Tick the box to confirm the reset.')}
        fields=${({ values, set }) => html`<label class="check confirm"><input type="checkbox" checked=${values._sure} onChange=${(e) => set('_sure', e.currentTarget.checked)} /><span>I understand every event in the search store is deleted (<span class="mono">service_name=searchstore</span>)</span></label>`}
      />
      <${Version} />
    </div>
    <h3 class="section-title">Access</h3>
    <div class="grid-2">
      <${CredentialsForm} />
      <${EndpointForm}
        id="local-iglu-apikey"
        title="Set the registry’s super API key"
        method="POST"
        path="/control-plane/local-iglu-apikey"
        help="The super API key (a UUID v4) of this deployment’s registry, as Snowplow Mini sets it: it reads and writes every schema and makes keys for vendor prefixes (floe registry push, igluctl)."
        submitLabel="Set key"
        initial=${{ local_iglu_apikey: '' }}
        fields=${({ values, set }) => html`<${Field} label="local_iglu_apikey" help="a UUID v4; keep a copy: it is stored hashed">
          <div role="group">
            <input name="local_iglu_apikey" class="mono" required pattern=${UUID_V4} value=${values.local_iglu_apikey} onInput=${(e) => set('local_iglu_apikey', e.currentTarget.value)} placeholder="xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" />
            <button type="button" class="secondary" onClick=${() => set('local_iglu_apikey', uuidV4())} data-action="generate">Generate</button>
          </div>
        <//>`}
      />
      <${EndpointForm}
        id="domain-name"
        title="Domain name"
        method="POST"
        path="/control-plane/domain-name"
        help="The domain to serve this stack on over HTTPS. On a single instance the name must resolve to this server: a certificate is obtained over ACME (port 80 answers the challenge) and HTTPS starts on FLOE_HTTPS_PORT; progress and renewals show on the Overview page. On AWS the answer gives the deploy-time settings."
        submitLabel="Set domain"
        initial=${{ domain_name: '' }}
        fields=${({ values, set }) => html`<${Field} label="domain_name"><input name="domain_name" class="mono" required value=${values.domain_name} placeholder="collector.acme.com" onInput=${(e) => set('domain_name', e.currentTarget.value)} /><//>`}
      />
      <${Telemetry} />
    </div>
    <h3 class="section-title">Schemas and enrichments</h3>
    <div class="grid-2">
      <${ExternalIglu} />
      <${Enrichments} />
    </div>
  </div>`
}
