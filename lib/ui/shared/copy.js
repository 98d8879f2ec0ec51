import { useState } from 'preact/hooks'
import { html } from './html.js'

/** Copies text to the clipboard (the Clipboard API, else a hidden text area). */
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text)
      return true
    }
  } catch {
    // fall back below
  }
  const area = document.createElement('textarea')
  area.value = text
  area.setAttribute('readonly', '')
  area.className = 'offscreen'
  document.body.appendChild(area)
  area.select()
  let ok = false
  try {
    ok = document.execCommand('copy')
  } catch {
    ok = false
  }
  area.remove()
  return ok
}

/** A small button that copies `text` (or what `get()` answers) and says so. */
export function CopyButton({ text, get, label = 'Copy', className = '' }) {
  const [state, setState] = useState('idle')
  const onClick = async (e) => {
    e.preventDefault()
    const ok = await copyText(get ? get() : text)
    setState(ok ? 'done' : 'failed')
    setTimeout(() => setState('idle'), 1500)
  }
  return html`<button type="button" class=${`secondary outline btn-sm copy ${className}`} onClick=${onClick} data-state=${state}>
    ${state === 'done' ? 'Copied ✓' : state === 'failed' ? 'Copy failed' : label}
  </button>`
}
