import { useEffect, useMemo, useState } from 'preact/hooks'
import { getJson, HttpError } from '../shared/api.js'
import { CopyButton } from '../shared/copy.js'
import { counted, fmtInt, fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'
import { JsonView } from '../shared/json-view.js'
import { Notice } from '../shared/layout.js'

const uriOf = (s) => `iglu:${s.self.vendor}/${s.self.name}/${s.self.format}/${s.self.version}`

function versionParts(v) {
  return String(v).split('-').map((x) => Number(x) || 0)
}
function compareSchemas(a, b) {
  const x = `${a.self.vendor}/${a.self.name}/${a.self.format}`
  const y = `${b.self.vendor}/${b.self.name}/${b.self.format}`
  if (x !== y) return x < y ? -1 : 1
  const [p, q] = [versionParts(a.self.version), versionParts(b.self.version)]
  for (let i = 0; i < 3; i++) if (p[i] !== q[i]) return q[i] - p[i] // newest version first
  return 0
}

/** The document of a schema without the registry's metadata: what a resolver serves. */
function schemaDocument(s) {
  const { metadata, $supersededBy, $supersedes, ...doc } = s
  return doc
}

/** Looks a schema up as enrich resolves it (this registry, the project's schemas, Iglu Central), through `/micro/iglu`. */
function Lookup() {
  const [uri, setUri] = useState('iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1')
  const [result, setResult] = useState(undefined)
  const [busy, setBusy] = useState(false)
  const onSubmit = async (e) => {
    e.preventDefault()
    const m = /^(?:iglu:)?([^/\s]+)\/([^/\s]+)\/jsonschema\/(\d+-\d+-\d+)$/.exec(uri.trim())
    if (!m) {
      setResult({ error: 'Write an Iglu URI: iglu:vendor/name/jsonschema/1-0-0' })
      return
    }
    setBusy(true)
    try {
      const [vendor, name, version] = m.slice(1).map(encodeURIComponent)
      const doc = await getJson(`/micro/iglu/${vendor}/${name}/jsonschema/${version}`)
      setResult({ doc })
    } catch (err) {
      setResult({ error: err instanceof HttpError && err.status === 404 ? `Not found: ${err.message}` : err.message })
    } finally {
      setBusy(false)
    }
  }
  return html`<article class="card">
    <header class="card-head"><h3>Resolve any schema</h3><span class="muted small">as enrich does: this registry, the project’s schemas, the Iglu Central snapshot</span></header>
    <form class="inline-form" onSubmit=${onSubmit}>
      <input type="text" class="mono" value=${uri} onInput=${(e) => setUri(e.currentTarget.value)} aria-label="Iglu URI" placeholder="iglu:vendor/name/jsonschema/1-0-0" />
      <button type="submit" aria-busy=${busy}>Resolve</button>
    </form>
    <${Notice}>${result?.error}<//>
    ${result?.doc ? html`<${JsonView} value=${result.doc} open=${3} />` : null}
  </article>`
}

/**
 * Every schema of the deployment's registry, public and private: the signed-in
 * administrator's view, read by the control plane from the registry's store
 * (no API key is asked for, and none reaches the browser).
 */
export function Registry() {
  const [schemas, setSchemas] = useState(undefined)
  const [error, setError] = useState('')
  const [filter, setFilter] = useState('')
  const [selected, setSelected] = useState(undefined)

  const [nonce, setNonce] = useState(0)

  useEffect(() => {
    let gone = false
    const load = async () => {
      try {
        const list = await getJson('/control-plane/schemas')
        if (gone) return
        setError('')
        setSchemas(Array.isArray(list) ? [...list].sort(compareSchemas) : [])
      } catch (err) {
        if (gone) return
        setSchemas((prev) => prev ?? [])
        setError(`The schemas could not be listed: ${err.status ? `HTTP ${err.status}: ` : ''}${err.message}`)
      }
    }
    void load()
    return () => {
      gone = true
    }
  }, [nonce])

  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean)
    return (schemas ?? []).filter((s) => {
      const text = `${uriOf(s)} ${s.description ?? ''} ${s.metadata?.isPublic ? 'public' : 'private'}`.toLowerCase()
      return words.every((w) => text.includes(w))
    })
  }, [schemas, filter])
  const publicCount = (schemas ?? []).filter((s) => s.metadata?.isPublic).length
  const current = selected && (schemas ?? []).find((s) => uriOf(s) === selected)

  return html`<div class="registry">
    <article class="card">
      <header class="card-head">
        <h3>Schemas of this registry</h3>
        <span class="muted small" data-testid="schema-count">${schemas === undefined ? 'loading…' : `${counted(schemas.length, 'schema')} · ${fmtInt(publicCount)} public · ${fmtInt(schemas.length - publicCount)} private`}</span>
      </header>
      <div class="registry-tools">
        <input type="search" placeholder="Filter: vendor, name, version, description…" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} aria-label="Filter schemas" data-testid="registry-filter" />
        <button type="button" class="secondary outline" onClick=${() => setNonce((n) => n + 1)}>Refresh</button>
      </div>
      <p class="muted small">
        Every schema of this registry, public and private, as you are signed in. Trackers and other clients read private schemas with an API key
        for their vendor prefix (<span class="mono">floe registry keygen</span>).
      </p>
      <${Notice}>${error}<//>
      <div class="registry-body">
        <div class="table-wrap registry-list">
          ${schemas !== undefined && shown.length === 0
            ? html`<p class="empty">${schemas.length === 0 ? (error ? '' : 'No schemas yet. Push some with floe registry push.') : 'No schema matches the filter.'}</p>`
            : html`<table class="data selectable" data-testid="schemas">
                <thead><tr><th>vendor</th><th>name</th><th>format</th><th>version</th><th>visibility</th></tr></thead>
                <tbody>
                  ${shown.map((s) => {
                    const uri = uriOf(s)
                    return html`<tr key=${uri} class=${uri === selected ? 'selected' : ''} onClick=${() => setSelected(uri)} tabindex="0" onKeyDown=${(e) => e.key === 'Enter' && setSelected(uri)}>
                      <td class="mono">${s.self.vendor}</td>
                      <td class="mono"><strong>${s.self.name}</strong></td>
                      <td class="mono">${s.self.format}</td>
                      <td class="mono">${s.self.version}</td>
                      <td>${s.metadata?.isPublic ? html`<span class="badge ok">public</span>` : html`<span class="badge muted">private</span>`}</td>
                    </tr>`
                  })}
                </tbody>
              </table>`}
        </div>
        <div class="registry-detail">
          ${current
            ? html`<div class="detail-head">
                  <code class="mono">${selected}</code>
                  <${CopyButton} text=${selected} label="Copy URI" />
                </div>
                <p class="muted small detail-meta">
                  ${current.metadata?.isPublic ? 'public' : 'private'} · created ${fmtTime(current.metadata?.createdAt).slice(0, 19)} UTC · updated ${fmtTime(current.metadata?.updatedAt).slice(0, 19)} UTC
                  ${current.$supersededBy ? html` · superseded by ${current.$supersededBy}` : null}
                </p>
                ${current.description ? html`<p class="detail-description">${current.description}</p>` : null}
                <${JsonView} value=${schemaDocument(current)} open=${3} title="Schema" />`
            : html`<p class="empty">Select a schema to see its JSON.</p>`}
        </div>
      </div>
    </article>
    <${Lookup} />
  </div>`
}
