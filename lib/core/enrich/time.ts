/** Timestamps in the forms enrich's outputs use. */

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
  return new Date(ms).toISOString()
}
