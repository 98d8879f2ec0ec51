/** Timestamps in the forms enrich's outputs use. */

/** Java `Instant.toString`: ISO-8601 UTC, the fraction left out when it is zero. */
export function instant(ms: number): string {
  const s = new Date(ms).toISOString()
  return s.endsWith('.000Z') ? `${s.slice(0, -5)}Z` : s
}

/** ISO-8601 UTC with milliseconds always (bad-row payload timestamps). */
export function isoMillis(ms: number): string {
  return new Date(ms).toISOString()
}
