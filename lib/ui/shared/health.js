/**
 * The banner of /home's overview and of the dashboard: what /health reports
 * while it answers 503 (e.g. enrich is off until the licence is accepted).
 */
import { useEffect, useState } from 'preact/hooks'
import { html } from './html.js'

/** How often a page asks `/health` what is down. */
export const HEALTH_POLL_MS = 10_000

/** `/health`'s causes, one line each, while it answers 503 (e.g. enrich is off until the licence is accepted). */
export function HealthBanner() {
  const [causes, setCauses] = useState([])
  useEffect(() => {
    let stopped = false
    const check = async () => {
      try {
        const r = await fetch('/health', { cache: 'no-store' })
        const text = r.status === 503 ? await r.text() : ''
        if (!stopped) setCauses(text.split('\n').slice(1).filter((l) => l.trim() !== ''))
      } catch {
        if (!stopped) setCauses(['/health does not answer'])
      }
    }
    void check()
    const timer = setInterval(check, HEALTH_POLL_MS)
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [])
  if (causes.length === 0) return null
  return html`<div class="notice error health-causes" role="alert" data-testid="health-causes">
    <strong>The stack is not healthy (GET /health answers 503):</strong>
    <ul>${causes.map((c) => html`<li class="mono">${c}</li>`)}</ul>
    ${causes.some((c) => /off until the licence is accepted/.test(c)) ? html`<p><a href="/home#/control-plane/license" role="button" data-testid="accept-licence">Accept the licence on the control plane</a></p>` : null}
  </div>`
}
