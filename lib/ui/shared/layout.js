import { useState } from 'preact/hooks'
import { html } from './html.js'
import { usePoll } from './hooks.js'

function Logo() {
  return html`<svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
    <path d="M6 19.5 11 11l7-2.5 8 4.5-2 7.5-8.5 3.5z" fill="#7dd3fc" />
    <path d="M11 11l7-2.5 8 4.5-9 1.5z" fill="#e0f2fe" />
    <path d="M4 23.5c4 1.6 8 1.6 12 0s8-1.6 12 0" stroke="#38bdf8" stroke-width="1.6" fill="none" stroke-linecap="round" />
  </svg>`
}

/** The stack's health (`GET /health`), polled: `200` takes events (some components may be off on purpose), `503` a fault. */
function Health() {
  const [state, setState] = useState({ ok: undefined, off: false, detail: '' })
  usePoll(async () => {
    try {
      const r = await fetch('/health', { cache: 'no-store' })
      const t = (await r.text()).trim()
      const off = r.ok && t.includes('\n')
      setState({ ok: r.ok, off, detail: r.ok && !off ? 'all components are up' : t })
    } catch (err) {
      setState({ ok: false, off: false, detail: `the stack did not answer: ${err.message}` })
    }
  }, 10_000)
  const label = state.ok === undefined ? 'checking…' : state.ok ? (state.off ? 'takes events · some off on purpose' : 'healthy') : 'degraded'
  return html`<a class=${`health ${state.ok === undefined ? '' : state.ok ? `up${state.off ? ' off' : ''}` : 'down'}`} href="/health" title=${state.detail} target="_blank" rel="noopener">
    <span class="dot"></span>${label}
  </a>`
}

// Escape closes an open dropdown (clicking outside one already does).
window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') for (const d of document.querySelectorAll('details.dropdown[open]')) d.open = false
})

/** The top bar: product name, the two pages, the stack's health. */
export function TopBar({ page }) {
  const link = (href, name, label) => html`<a href=${href} class=${page === name ? 'active' : ''} aria-current=${page === name ? 'page' : undefined}>${label}</a>`
  return html`<header class="topbar">
    <div class="topbar-inner">
      <a class="brand" href="/home#/overview"><${Logo} /><span>Floe</span></a>
      <nav class="topnav">
        ${link('/home#/overview', 'home', 'Home')}
        ${link('/dashboard-ui', 'dashboard', 'Event explorer')}
      </nav>
      <div class="topbar-right">
        <${Health} />
      </div>
    </div>
  </header>`
}

/** A message in red (an error) or muted (information). */
export function Notice({ kind = 'error', children }) {
  if (!children) return null
  return html`<p class=${`notice ${kind}`} role=${kind === 'error' ? 'alert' : 'status'}>${children}</p>`
}
