/**
 * The Recover panel of the bad-row explorer: the bad rows of the current
 * query and time range, optionally fixed with recovery steps, previewed
 * through enrich (`POST /control-plane/recover` with `dryRun`), then replayed
 * to the raw stream. Same origin, so the control plane's cross-site
 * protection lets it through and refuses pages elsewhere.
 */
import { useState } from 'preact/hooks'
import { request } from '../shared/api.js'
import { fmtInt } from '../shared/format.js'
import { html } from '../shared/html.js'

const PATH = '/control-plane/recover'
/** A snowplow-event-recovery configuration (sent as `config`; Floe's own steps as `steps`). */
const isEventRecoveryConfig = (doc) => typeof doc?.schema === 'string' && doc.schema.startsWith('iglu:com.snowplowanalytics.snowplow/recoveries/')

/** As the API (MAX_STEPS_BYTES of lib/core/recover/steps.ts). */
const MAX_STEPS_BYTES = 64 * 1024

/** The selection of the current view: query and time range (relative ranges from now). */
function selection(q, range) {
  const since = typeof range.from === 'number' ? new Date(range.from).toISOString() : undefined
  const until = typeof range.to === 'number' ? new Date(range.to + 1).toISOString() : undefined
  return { ...(q.trim() ? { query: q } : {}), ...(since ? { since } : {}), ...(until ? { until } : {}) }
}

function Counts({ r }) {
  const rows = [
    ['selected', r.selected],
    ['fixed', r.fixed],
    ['broken by the steps', r.broken],
    ['not replayable', r.unrecoverable],
    ...(r.dryRun
      ? [['would be good', r.wouldBeGood], ['still failing', r.stillFailing]]
      : [
          ['replayed', r.replayed],
          // what the search store holds for the replayed events (by event id), not the preview
          ...(r.nowGood === undefined ? [] : [['now good', r.nowGood], ['failed again', r.failedAgain], ['not settled yet', r.stillPending]]),
          ['would be good (preview)', r.wouldBeGood],
        ]),
  ]
  return html`<div data-testid=${r.dryRun ? 'recover-preview' : 'recover-result'}>
    <table class="small"><tbody>${rows.map(([k, v]) => html`<tr><td>${k}</td><td class="num" data-testid=${`recover-${k.replace(/ /g, '-')}`}>${fmtInt(v ?? 0)}</td></tr>`)}</tbody></table>
    ${r.previewError ? html`<p class="notice error small">${r.previewError}</p>` : null}
    ${r.failedAgainReasons?.length ? html`<p class="small muted">Failed again:</p><ul class="small">${r.failedAgainReasons.map((x) => html`<li>${x.count} × <code>${x.reason}</code></li>`)}</ul>` : null}
    ${r.stillPending ? html`<p class="small muted">Not every replayed event was good or failed again when the wait ended: <code>GET /control-plane/recover/${r.runId}</code> shows the run.</p>` : null}
    ${r.reasons?.length ? html`<p class="small muted">${r.dryRun ? 'First reasons:' : 'First reasons (preview):'}</p><ul class="small">${r.reasons.map((x) => html`<li>${x.count} × <code>${x.reason}</code></li>`)}</ul>` : null}
    ${r.more ? html`<p class="small muted">More bad rows match: run again, or use <code>floe recover</code>.</p>` : null}
    ${r.dryRun ? null : html`<p class="small muted">Run <code>${r.runId}</code></p>`}
  </div>`
}

export function RecoverPanel({ q, range }) {
  const [steps, setSteps] = useState('')
  const [preview, setPreview] = useState(undefined)
  const [result, setResult] = useState(undefined)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const call = async (dryRun) => {
    setError('')
    let parsed
    if (steps.trim()) {
      if (new TextEncoder().encode(steps).length > MAX_STEPS_BYTES) {
        setError(`The steps document is larger than ${MAX_STEPS_BYTES} bytes (64 KiB)`)
        return
      }
      try {
        parsed = JSON.parse(steps)
      } catch (err) {
        setError(`The steps are not JSON: ${err.message}`)
        return
      }
    }
    setBusy(true)
    try {
      const res = await request(PATH, { method: 'POST', json: { ...selection(q, range), ...(parsed ? { [isEventRecoveryConfig(parsed) ? 'config' : 'steps']: parsed } : {}), dryRun } })
      const r = await res.json()
      if (dryRun) {
        setPreview(r)
        setResult(undefined)
      } else {
        setResult(r)
        setPreview(undefined)
      }
    } catch (err) {
      const details = err.body?.errors ? `: ${err.body.errors.join('; ')}` : ''
      setError(`${err.message}${details}`)
      if (dryRun) setPreview(undefined)
    } finally {
      setBusy(false)
    }
  }
  return html`<details class="recover" data-testid="recover">
    <summary>Recover these failed events</summary>
    <p class="small muted">The bad rows of the current query and range, replayed to the raw stream once their cause is fixed (a schema pushed, or recovery steps below). Each bad row is replayed once; replayed rows leave this index.</p>
    <label class="small">Recovery steps (optional JSON: Floe's <code>{"steps": [{"op": "renameSchema", "from": "iglu:…/1-0-0", "to": "1-0-1"}]}</code>, or a snowplow-event-recovery configuration <code>{"schema": "iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0", "data": {…}}</code>)
      <textarea rows="4" class="mono small" value=${steps} onInput=${(e) => setSteps(e.currentTarget.value)} data-testid="recover-steps" spellcheck="false"></textarea>
    </label>
    <div role="group">
      <button type="button" class="secondary" disabled=${busy} onClick=${() => call(true)} data-testid="recover-preview-btn">Preview</button>
      <button type="button" disabled=${busy || !preview || preview.selected === 0} onClick=${() => call(false)} data-testid="recover-replay-btn">Replay${preview ? ` ${fmtInt(preview.selected)}` : ''}</button>
    </div>
    ${error ? html`<p class="notice error small" role="alert" data-testid="recover-error">${error}</p>` : null}
    ${preview ? html`<${Counts} r=${preview} />` : null}
    ${result ? html`<${Counts} r=${result} />` : null}
  </details>`
}
