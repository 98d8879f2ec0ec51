/** Dates as Elasticsearch reads them: ISO 8601, epoch milliseconds and date math (`now-1h/h`), with rounding. */
import { refuse, type Bound } from './query-tree'

const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, H: 3_600_000, m: 60_000, s: 1000 }

export function roundDate(t: number, unit: string, up: boolean): number {
  const d = new Date(t)
  let start: number
  let next: number
  if (unit === 'y') {
    start = Date.UTC(d.getUTCFullYear(), 0, 1)
    next = Date.UTC(d.getUTCFullYear() + 1, 0, 1)
  } else if (unit === 'M') {
    start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  } else if (unit === 'w') {
    const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    start = day - ((d.getUTCDay() + 6) % 7) * 86_400_000 // weeks start on Monday
    next = start + 604_800_000
  } else {
    const ms = UNIT_MS[unit]!
    start = Math.floor(t / ms) * ms
    next = start + ms
  }
  return up ? next - 1 : start
}

function addDate(t: number, n: number, unit: string): number {
  if (unit === 'y' || unit === 'M') {
    const d = new Date(t)
    d.setUTCMonth(d.getUTCMonth() + (unit === 'y' ? 12 * n : n))
    return d.getTime()
  }
  return t + n * UNIT_MS[unit]!
}

const ISO_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/

/** A date as Elasticsearch reads it (ISO 8601, epoch milliseconds, or date math such as `now-1h/h`); `roundUp` for `gt`/`lte`. */
export function parseDate(v: Bound, now: number, roundUp: boolean): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw refuse(`failed to parse date [${v}]`)
    return Math.trunc(v)
  }
  const [anchor, math] = v.startsWith('now') ? ['now', v.slice(3)] : v.includes('||') ? [v.slice(0, v.indexOf('||')), v.slice(v.indexOf('||') + 2)] : [v, '']
  let t: number
  let coarse: string | undefined // the unit a partial date is rounded up to
  if (anchor === 'now') t = now
  else if (/^-?\d{1,16}$/.test(anchor) && !/^\d{4}$/.test(anchor)) t = Number(anchor) // epoch milliseconds (four digits are a year)
  else {
    const m = ISO_DATE.exec(anchor)
    if (!m) throw refuse(`failed to parse date field [${v}]: ISO 8601 (2025-04-30T10:05:00Z), epoch milliseconds or date math (now-1h) was expected`)
    const [, y, mo, d, h, mi, s, frac, zone] = m
    const utc = Date.UTC(Number(y), mo ? Number(mo) - 1 : 0, d ? Number(d) : 1, h ? Number(h) : 0, mi ? Number(mi) : 0, s ? Number(s) : 0, frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0)
    const offset = !zone || zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) * 60_000
    t = utc - offset
    if (!Number.isFinite(t) || (mo && (Number(mo) < 1 || Number(mo) > 12)) || (d && (Number(d) < 1 || Number(d) > 31))) throw refuse(`failed to parse date field [${v}]`)
    coarse = !mo ? 'y' : !d ? 'M' : !h ? 'd' : !mi ? 'h' : !s ? 'm' : !frac ? 's' : undefined
  }
  let rest = math
  let rounded = false
  while (rest !== '') {
    const m = /^([+-])(\d+)([yMwdhHms])|^\/([yMwdhHms])/.exec(rest)
    if (!m) throw refuse(`failed to parse date math [${v}]: operations are +N<unit>, -N<unit> and /<unit>, units y M w d h H m s`)
    if (m[4]) {
      t = roundDate(t, m[4], roundUp)
      rounded = true
    } else t = addDate(t, (m[1] === '-' ? -1 : 1) * Number(m[2]), m[3]!)
    rest = rest.slice(m[0].length)
  }
  if (!rounded && roundUp && coarse && coarse !== 's') t = roundDate(t, coarse, true)
  else if (!rounded && roundUp && coarse === 's') t += 999
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw refuse(`failed to parse date field [${v}]: out of range`)
  return t
}

export const iso = (t: number) => new Date(t).toISOString()
