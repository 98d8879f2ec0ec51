import { plural } from '../../core/plural'

const INT = new Intl.NumberFormat('en-US')

/** `1,234`, or a dash when unknown. */
export const fmtInt = (n) => (n === null || n === undefined || Number.isNaN(n) ? '—' : INT.format(n))

const pad = (n, w = 2) => String(n).padStart(w, '0')

/** `2025-04-30 10:05:00.123` in UTC or local time. */
export function fmtTime(v, utc = true) {
  if (v === null || v === undefined || v === '') return ''
  const d = v instanceof Date ? v : new Date(typeof v === 'number' ? v : String(v))
  if (Number.isNaN(d.getTime())) return String(v)
  const [y, mo, da, h, mi, s, ms] = utc
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds()]
  return `${y}-${pad(mo)}-${pad(da)} ${pad(h)}:${pad(mi)}:${pad(s)}.${pad(ms, 3)}`
}

/** `12 s ago`, `3 min ago`, … */
export function ago(t, now = Date.now()) {
  if (!t) return 'never'
  const s = Math.max(0, Math.round((now - t) / 1000))
  if (s < 2) return 'just now'
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  return `${Math.floor(s / 3600)} h ago`
}

/** The values at a dotted path; lists are searched element by element (as the search store does). */
export function valuesAt(obj, path) {
  let cur = [obj]
  for (const seg of path.split('.')) {
    const next = []
    for (const c of cur) {
      if (c === null || c === undefined) continue
      const v = Array.isArray(c) ? c.flatMap((x) => (x && typeof x === 'object' ? [x[seg]] : [])) : c[seg]
      if (Array.isArray(v)) next.push(...v)
      else if (v !== undefined) next.push(v)
    }
    cur = next
  }
  return cur.filter((v) => v !== undefined && v !== null)
}

/** A value as one line of text. */
export function cellText(v) {
  if (v === null || v === undefined) return ''
  if (Array.isArray(v)) return v.map(cellText).join(', ')
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** The name part of an Iglu URI (`iglu:vendor/name/format/version` → `name`). */
export function igluName(uri) {
  const m = /^iglu:[^/]+\/([^/]+)\//.exec(String(uri ?? ''))
  return m ? m[1] : String(uri ?? '')
}

/** `vendor/name 1-0-0` from an Iglu URI, for labels. */
export function igluShort(uri) {
  const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([^/]+)$/.exec(String(uri ?? ''))
  return m ? `${m[1]}/${m[2]} ${m[3]}` : String(uri ?? '')
}

/** A query-string term for a value: quoted and escaped. */
export function quoteTerm(v) {
  return `"${String(v).replace(/["\\]/g, (c) => `\\${c}`)}"`
}

/** A count and its noun, the number as `fmtInt` writes it: `1 schema`, `1,234 events`, `0 bad rows`. */
export const counted = (n, one, many) => plural(n, one, many, fmtInt)
