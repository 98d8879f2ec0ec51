/** Settings of the search store read from the environment, checked. */

/** Days documents are kept (`FLOE_SEARCH_RETENTION_DAYS`, default 7, a whole number from 1 to 3650). */
export function retentionDays(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.FLOE_SEARCH_RETENTION_DAYS
  if (raw === undefined || raw === '') return 7
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 3650) throw new Error(`FLOE_SEARCH_RETENTION_DAYS must be a whole number of days from 1 to 3650, not '${raw}'`)
  return n
}
