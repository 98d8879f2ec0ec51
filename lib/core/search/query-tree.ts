/**
 * The search store's query tree: what the query-string syntax and the query
 * DSL both parse into, and what becomes SQL. Refusals (a construct outside
 * the supported subset, a syntax error) are Elasticsearch-shaped errors.
 */

/** An Elasticsearch-shaped error: HTTP status, exception type and reason. */
export interface EsError {
  readonly status: number
  readonly type: string
  readonly reason: string
}

export type EsResult<T> = { ok: true; value: T } | { ok: false; error: EsError }

/** Thrown while parsing or translating; turned into an `EsError` answer at the edge. */
export class Refusal extends Error {
  constructor(readonly error: EsError) {
    super(error.reason)
  }
}

/** Deepest nesting of a query (DSL `bool`s, query-string groups). */
export const MAX_DEPTH = 32
/** Most clauses in one query (DSL clauses, query-string terms), as Elasticsearch's `indices.query.bool.max_clause_count`. */
export const MAX_CLAUSES = 1024

export const refuse = (reason: string, type = 'parsing_exception', status = 400) => new Refusal({ status, type, reason })

/** The Elasticsearch error body. */
export function esErrorBody(e: EsError) {
  return { error: { root_cause: [{ type: e.type, reason: e.reason }], type: e.type, reason: e.reason }, status: e.status }
}

/** A range bound as written: a number, or text (a number, a date or date math, or a string). */
export type Bound = string | number

/** `*` is any field. Field paths are dotted (`contexts_…_web_page_1.id`). */
export type Query =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /** The field has one of the values (keyword matching: whole value, case-sensitive). */
  | { readonly kind: 'eq'; readonly field: string; readonly values: readonly (string | number | boolean)[] }
  | { readonly kind: 'range'; readonly field: string; readonly gt?: Bound; readonly gte?: Bound; readonly lt?: Bound; readonly lte?: Bound }
  | { readonly kind: 'exists'; readonly field: string }
  | { readonly kind: 'prefix'; readonly field: string; readonly value: string; readonly caseInsensitive?: boolean }
  /** `wild[i]` says whether `pattern[i]` is a wildcard (`*` or `?`) rather than that character escaped. */
  | { readonly kind: 'wildcard'; readonly field: string; readonly pattern: string; readonly wild: readonly boolean[]; readonly caseInsensitive?: boolean }
  | { readonly kind: 'ids'; readonly values: readonly string[] }
  | {
      readonly kind: 'bool'
      readonly must: readonly Query[]
      readonly should: readonly Query[]
      readonly mustNot: readonly Query[]
      readonly filter: readonly Query[]
      /** How many `should` clauses must match (0: they only matter when nothing else is required). */
      readonly minimumShouldMatch: number
    }

/** Parses an Elasticsearch wildcard pattern (`*`, `?`, `\` escapes). */
export function wildcardPattern(p: string): { pattern: string; wild: boolean[] } {
  let pattern = ''
  const wild: boolean[] = []
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '\\' && i + 1 < p.length) {
      pattern += p[++i]
      wild.push(false)
      continue
    }
    pattern += p[i]
    wild.push(p[i] === '*' || p[i] === '?')
  }
  return { pattern, wild }
}
