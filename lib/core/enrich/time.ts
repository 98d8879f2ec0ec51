/** Timestamps in the forms enrich's outputs use. */
import { formatTimestamp } from './convert'

/** Java `Instant.toString`: ISO-8601 UTC, the fraction left out when it is zero. */
export function instant(ms: number): string {
  // bad rows and failure entities of a batch all carry the batch's time
  if (ms === lastInstantMs) return lastInstant
  const s = new Date(ms).toISOString()
  const text = s.endsWith('.000Z') ? `${s.slice(0, -5)}Z` : s
  lastInstantMs = ms
  lastInstant = text
  return text
}

let lastInstantMs = Number.NaN
let lastInstant = ''

/** ISO-8601 UTC with milliseconds always (bad-row payload timestamps). */
export function isoMillis(ms: number): string {
  // years 0 to 9999: the same fields as the (cached) column format
  if (Number.isInteger(ms) && ms >= -62167219200000 && ms < 253402300800000) {
    const t = formatTimestamp(ms)
    return t.slice(0, 10) + 'T' + t.slice(11) + 'Z'
  }
  return new Date(ms).toISOString()
}
