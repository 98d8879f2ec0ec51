import { useState } from 'preact/hooks'
import { html } from './html.js'
import { CopyButton } from './copy.js'
import { counted } from './format.js'

const isContainer = (v) => v !== null && typeof v === 'object'

/** A string holding a JSON object or list (bad rows keep some objects as text), parsed; else undefined. */
function embeddedJson(s) {
  if (s.length < 2 || (s[0] !== '{' && s[0] !== '[')) return undefined
  try {
    const v = JSON.parse(s)
    return isContainer(v) ? v : undefined
  } catch {
    return undefined
  }
}

function Scalar({ v }) {
  if (v === null) return html`<span class="j-null">null</span>`
  if (typeof v === 'string') {
    const inner = embeddedJson(v)
    if (inner !== undefined) {
      return html`<span class="j-str">"${v.length > 80 ? `${v.slice(0, 80)}…` : v}"</span>
        <details class="j-embedded"><summary>parsed JSON</summary><${Tree} value=${inner} depth=${1} open=${2} /></details>`
    }
    return html`<span class="j-str">"${v}"</span>`
  }
  if (typeof v === 'number') return html`<span class="j-num">${String(v)}</span>`
  if (typeof v === 'boolean') return html`<span class="j-bool">${String(v)}</span>`
  return html`<span>${String(v)}</span>`
}

/** Whether a node is open at first: within the first `open` levels, or on or under one of `paths` (dotted, list indices included), or above one. */
function isOpen(path, depth, open, paths) {
  if (depth < open) return true
  return paths.some((p) => path === p || path.startsWith(`${p}.`) || p.startsWith(`${path}.`))
}

function Entry({ k, v, depth, open, path, paths }) {
  const key = k === undefined ? null : html`<span class="j-key">${typeof k === 'number' ? k : `"${k}"`}</span><span class="j-punct">: </span>`
  if (!isContainer(v)) return html`<div class="j-line">${key}<${Scalar} v=${v} /></div>`
  const list = Array.isArray(v)
  const n = list ? v.length : Object.keys(v).length
  if (n === 0) return html`<div class="j-line">${key}<span class="j-punct">${list ? '[]' : '{}'}</span></div>`
  return html`<details class="j-node" open=${isOpen(path, depth, open, paths)}>
    <summary>${key}<span class="j-punct">${list ? '[' : '{'}</span><span class="j-count">${counted(n, list ? 'item' : 'key')}</span></summary>
    <${Tree} value=${v} depth=${depth + 1} open=${open} path=${path} paths=${paths} />
  </details>`
}

function Tree({ value, depth, open, path = '', paths = [] }) {
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value)
  return html`<div class="j-children">${entries.map(([k, v]) => html`<${Entry} key=${k} k=${k} v=${v} depth=${depth} open=${open} path=${path === '' ? String(k) : `${path}.${k}`} paths=${paths} />`)}</div>`
}

/**
 * A JSON document: a collapsible tree (the first `open` levels expanded, and
 * everything on the `openPaths`), or the raw pretty-printed text; copied as
 * pretty JSON.
 */
export function JsonView({ value, open = 2, openPaths = [], title, nullsToggle = false }) {
  const [raw, setRaw] = useState(false)
  const [hideNulls, setHideNulls] = useState(nullsToggle)
  const text = JSON.stringify(value, null, 2)
  const shown = hideNulls && isContainer(value) && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) : value
  return html`<div class="json-view">
    <div class="json-toolbar">
      ${title ? html`<strong class="json-title">${title}</strong>` : null}
      <div role="group" class="seg seg-sm">
        <button type="button" class=${raw ? 'secondary outline' : 'secondary'} aria-pressed=${!raw} onClick=${() => setRaw(false)}>Tree</button>
        <button type="button" class=${raw ? 'secondary' : 'secondary outline'} aria-pressed=${raw} onClick=${() => setRaw(true)}>Raw</button>
      </div>
      ${nullsToggle ? html`<label class="check small"><input type="checkbox" checked=${hideNulls} onChange=${(e) => setHideNulls(e.currentTarget.checked)} /> hide null fields</label>` : null}
      <${CopyButton} text=${text} label="Copy JSON" />
    </div>
    <div class="json-body">
      ${raw ? html`<pre class="json-raw">${hideNulls ? JSON.stringify(shown, null, 2) : text}</pre>` : isContainer(shown) ? html`<div class="j-root"><${Tree} value=${shown} depth=${0} open=${open} paths=${openPaths} /></div>` : html`<${Scalar} v=${shown} />`}
    </div>
  </div>`
}
