/**
 * What `/health` reports, shown on /home's overview and on the dashboard.
 * `/health` means "this instance takes events": `200` lists the components
 * off on purpose (deliberate: e.g. enrich until the licence is accepted; the
 * events wait), `503` the faults (a component that should work and does not)
 * first. Each line is `<component> is down since …: …` (a fault) or
 * `<component> is off on purpose since …: …` (deliberate).
 */
import { useEffect, useState } from 'preact/hooks'
import { html } from './html.js'

/** How often a page asks `/health` what is down. */
export const HEALTH_POLL_MS = 10_000

/** `/health`'s answer as lines: `{ status, faults, deliberate }` (the status word of the first line left out). */
export function healthLines(status, text) {
  const lines = text.split('\n').slice(1).filter((l) => l.trim() !== '')
  return { status, faults: lines.filter((l) => !/ is off on purpose since /.test(l)), deliberate: lines.filter((l) => / is off on purpose since /.test(l)) }
}

/** `/health`'s lines, polled: `undefined` until the first answer. */
export function useHealth() {
  const [health, setHealth] = useState(undefined)
  useEffect(() => {
    let stopped = false
    const check = async () => {
      try {
        const r = await fetch('/health', { cache: 'no-store' })
        const h = healthLines(r.status, await r.text())
        if (!stopped) setHealth(h)
      } catch {
        if (!stopped) setHealth({ status: 0, faults: ['/health does not answer'], deliberate: [] })
      }
    }
    void check()
    const timer = setInterval(check, HEALTH_POLL_MS)
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [])
  return health
}

/** The lines of `/health`: faults (503) in an error banner, deliberate states (200: events are taken and wait) in a notice. */
export function HealthBanner() {
  const health = useHealth()
  if (health === undefined) return null
  const { faults, deliberate } = health
  if (faults.length === 0 && deliberate.length === 0) return null
  const licence = [...faults, ...deliberate].some((c) => /off until the licence is accepted/.test(c))
  const title = faults.length > 0 ? 'The stack is not healthy (GET /health answers 503):' : 'Off on purpose (GET /health answers 200: this instance takes events, and they wait):'
  return html`<div class=${`notice ${faults.length > 0 ? 'error' : 'info'} health-causes`} role=${faults.length > 0 ? 'alert' : 'status'} data-testid="health-causes">
    <strong>${title}</strong>
    <ul>${[...faults.map((c) => ({ c, k: 'fault' })), ...deliberate.map((c) => ({ c, k: 'deliberate' }))].map(({ c, k }) => html`<li class=${`mono ${k}`}>${c}</li>`)}</ul>
    ${licence ? html`<p><a href="/home#/control-plane/license" role="button" data-testid="accept-licence">Accept the licence on the control plane</a></p>` : null}
  </div>`
}
