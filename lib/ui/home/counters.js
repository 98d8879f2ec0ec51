import { useRef, useState } from 'preact/hooks'
import { count, LAST_HOUR } from '../shared/api.js'
import { ago, counted, fmtInt } from '../shared/format.js'
import { useNow, usePoll } from '../shared/hooks.js'
import { html } from '../shared/html.js'

/**
 * Good events and bad rows of the last hour, polled from the search store
 * (`_count` with a range on each index's time field); failed events are
 * not in the good index, and are counted from their bad rows.
 */
export function LiveCounters({ every = 3000, compact = false }) {
  const [state, setState] = useState({ good: undefined, bad: undefined, failed: undefined, at: 0, error: '' })
  const [moved, setMoved] = useState({ good: false, bad: false })
  const last = useRef({ good: undefined, bad: undefined })
  const now = useNow(1000)
  usePoll(async () => {
    try {
      const [good, bad, failed] = await Promise.all([count('good', LAST_HOUR.good), count('bad', LAST_HOUR.bad), count('bad', LAST_HOUR.failed)])
      const prev = last.current
      setMoved({ good: prev.good !== undefined && good !== prev.good, bad: prev.bad !== undefined && bad !== prev.bad })
      last.current = { good, bad }
      setState({ good, bad, failed, at: Date.now(), error: '' })
    } catch (err) {
      setState((prev) => ({ ...prev, error: err.message }))
    }
  }, every)
  return html`<div class=${`counters ${compact ? 'compact' : ''}`}>
    <a class=${`stat good ${moved.good ? 'moved' : ''}`} href="/dashboard-ui#index=good&range=1h" data-count="good">
      <span class="stat-label">${compact ? 'Good events' : 'Good events · last hour'}</span>
      <span class="stat-value" data-testid="good-count">${fmtInt(state.good)}</span>
      <span class="stat-sub">enriched and valid</span>
    </a>
    <a class=${`stat bad ${moved.bad ? 'moved' : ''}`} href="/dashboard-ui#index=bad&range=1h" data-count="bad">
      <span class="stat-label">${compact ? 'Bad rows' : 'Bad rows · last hour'}</span>
      <span class="stat-value" data-testid="bad-count">${fmtInt(state.bad)}</span>
      <span class="stat-sub">${state.failed ? `incl. ${counted(state.failed, 'failed event')}` : 'failed validation or enrichment'}</span>
    </a>
    <p class="counters-meta">
      ${state.error ? html`<span class="text-error">${state.error}</span>` : html`<span class="live-dot"></span> live · updated ${ago(state.at, now)}`}
    </p>
  </div>`
}
