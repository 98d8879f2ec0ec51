/** Settings of the search store read from the environment, checked. */

/** Days documents are kept (`FLOE_SEARCH_RETENTION_DAYS`, default 7, a whole number from 1 to 3650). */
export function retentionDays(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.FLOE_SEARCH_RETENTION_DAYS
  if (raw === undefined || raw === '') return 7
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 3650) throw new Error(`FLOE_SEARCH_RETENTION_DAYS must be a whole number of days from 1 to 3650, not '${raw}'`)
  return n
}

/**
 * The PostgreSQL `application_name` of the search function's connections,
 * with its time budget: the local store ends a statement of theirs soon
 * after that budget, since the request was answered 504 and nobody waits
 * for it (see `lib/local/search-server.ts`).
 */
export const searchApplicationName = (budgetMs: number): string => `floe-search budget=${budgetMs}ms`

/** The budget a connection's `application_name` announces, if it is a search's. */
export function searchBudgetOf(applicationName: string | undefined): number | undefined {
  const m = /^floe-search budget=([0-9]{1,9})ms$/.exec(applicationName ?? '')
  return m ? Number(m[1]) : undefined
}

/** The default time budget of one search-store request. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 10_000

/**
 * The time budget of one search-store request (`FLOE_SEARCH_TIMEOUT_MS`,
 * default 10,000, from 100 to 25,000 ms: under the search function's 29 s
 * timeout behind API Gateway): past it the answer is a 504.
 */
export function searchTimeoutMs(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.FLOE_SEARCH_TIMEOUT_MS
  if (raw === undefined || raw === '') return DEFAULT_SEARCH_TIMEOUT_MS
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 100 || n > 25_000) throw new Error(`FLOE_SEARCH_TIMEOUT_MS must be a whole number of milliseconds from 100 to 25000, not '${raw}'`)
  return n
}
