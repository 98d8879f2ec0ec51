/** The parts of a `_search`/`_count` request common to both: parameters, the query (`q=` or DSL), integers, refusals as results. */
import { parseDsl } from './dsl'
import { parseQueryString } from './lucene'
import { Refusal, refuse, type EsResult, type Query } from './query-tree'

export interface SearchRequest {
  /** Query-string parameters (`q`, `from`, `size`, `sort`, …). */
  readonly params: Readonly<Record<string, string>>
  /** The parsed JSON body, if any. */
  readonly body?: unknown
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

const IGNORED_PARAMS = ['pretty', 'human', 'error_trace', 'timeout', 'analyze_wildcard', 'lenient', 'allow_partial_search_results', 'ignore_unavailable', 'allow_no_indices', 'expand_wildcards', 'request_cache', 'preference', 'ccs_minimize_roundtrips', 'batched_reduce_size', 'pre_filter_shard_size', 'max_concurrent_shard_requests', 'search_type', 'typed_keys', 'ignore_throttled']
export const SEARCH_PARAMS = new Set(['q', 'df', 'default_operator', 'from', 'size', 'sort', '_source', '_source_includes', '_source_excludes', 'track_total_hits', 'rest_total_hits_as_int', ...IGNORED_PARAMS])
export const COUNT_PARAMS = new Set(['q', 'df', 'default_operator', ...IGNORED_PARAMS])
export const SEARCH_BODY = new Set(['query', 'from', 'size', 'sort', '_source', 'aggs', 'aggregations', 'track_total_hits', 'timeout', 'track_scores'])

export function checkParams(params: Readonly<Record<string, string>>, allowed: Set<string>, path: string) {
  for (const k of Object.keys(params)) {
    if (!allowed.has(k)) throw refuse(`request [${path}] contains unrecognized parameter: [${k}]`, 'illegal_argument_exception')
  }
}

/** The query of a request: `q=` or the body's `query` (not both). */
export function requestQuery(req: SearchRequest, bodyKeys: Set<string>, path: string): Query {
  const body = req.body
  if (body !== undefined && !isObject(body)) throw refuse('the request body must be a JSON object')
  for (const k of Object.keys(body ?? {})) {
    if (!bodyKeys.has(k)) throw refuse(k === 'search_after' || k === 'highlight' || k === 'suggest' || k === 'collapse' || k === 'post_filter' || k === 'script_fields' || k === 'docvalue_fields' || k === 'runtime_mappings' || k === 'pit' || k === 'rescore' || k === 'fields' ? `[${k}] is not supported by the search store` : `Unknown key for a START_OBJECT in [${k}].`)
  }
  const q = req.params.q
  if (q !== undefined && body?.query !== undefined) throw refuse(`request [${path}] has both q= and a query in the body: use one`, 'illegal_argument_exception')
  if (q !== undefined) {
    const op = (req.params.default_operator ?? 'OR').toUpperCase()
    if (op !== 'OR' && op !== 'AND') throw refuse('default_operator must be OR or AND', 'illegal_argument_exception')
    return parseQueryString(q, { defaultField: req.params.df, defaultOperator: op })
  }
  return body?.query === undefined ? { kind: 'all' } : parseDsl(body.query)
}

export function integer(v: unknown, name: string, min: number, max: number): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n)) throw refuse(`[${name}] must be an integer`, 'illegal_argument_exception')
  if (n < min || n > max) throw refuse(`[${name}] must be between ${min} and ${max}, was ${n}`, 'illegal_argument_exception')
  return n
}

export async function guarded<T>(fn: () => Promise<T>): Promise<EsResult<T>> {
  try {
    return { ok: true, value: await fn() }
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, error: err.error }
    throw err
  }
}
