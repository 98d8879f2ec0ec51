/**
 * The Elasticsearch query DSL that people write by hand, parsed into the
 * search store's query tree: `match_all`, `match_none`, `term`, `terms`,
 * `match`, `match_phrase`, `range`, `exists`, `prefix`, `wildcard`, `ids`,
 * `query_string` and `bool` (`must`, `should`, `must_not`, `filter`,
 * `minimum_should_match`). Anything else is refused by name, never ignored.
 */
import { parseQueryString } from './lucene'
import { MAX_CLAUSES, MAX_DEPTH, refuse, wildcardPattern, type Bound, type Query } from './query-tree'

const KNOWN_UNSUPPORTED = new Set([
  'fuzzy', 'regexp', 'match_bool_prefix', 'match_phrase_prefix', 'multi_match', 'combined_fields', 'simple_query_string', 'intervals',
  'nested', 'has_child', 'has_parent', 'parent_id', 'geo_bounding_box', 'geo_distance', 'geo_polygon', 'geo_shape', 'shape',
  'more_like_this', 'script', 'script_score', 'function_score', 'boosting', 'constant_score', 'dis_max', 'distance_feature',
  'percolate', 'rank_feature', 'wrapper', 'pinned', 'span_term', 'span_near', 'span_or', 'span_not', 'span_first', 'span_multi', 'terms_set',
])

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Parses a `query` object. */
export function parseDsl(q: unknown, depth = 0, budget = { clauses: 0 }): Query {
  if (depth > MAX_DEPTH) throw refuse(`the query is nested deeper than ${MAX_DEPTH} levels`)
  if (++budget.clauses > MAX_CLAUSES) throw refuse(`the query has more than ${MAX_CLAUSES} clauses`, 'too_many_clauses')
  if (!isObject(q)) throw refuse('[query] must be an object such as {"match_all": {}}')
  const keys = Object.keys(q)
  if (keys.length !== 1) throw refuse(keys.length === 0 ? 'query malformed, empty clause found' : `[${keys[0]}] malformed query, expected [END_OBJECT] but found [FIELD_NAME] ([${keys[1]}])`)
  const type = keys[0]!
  const body = q[type]
  switch (type) {
    case 'match_all':
      return { kind: 'all' }
    case 'match_none':
      return { kind: 'none' }
    case 'term': {
      const [field, v] = single(type, body)
      const value = isObject(v) ? valueOf(type, v, 'value') : v
      return { kind: 'eq', field, values: [scalar(type, field, value)] }
    }
    case 'terms': {
      if (!isObject(body)) throw refuse('[terms] query malformed, an object {"field": [values]} was expected')
      const fields = Object.keys(body).filter((k) => k !== 'boost')
      if (fields.length !== 1) throw refuse('[terms] query requires exactly one field')
      const field = fields[0]!
      const list = body[field]
      if (!Array.isArray(list)) throw refuse(`[terms] query for [${field}] needs an array of values (terms lookup is not supported)`)
      if (list.length > MAX_CLAUSES) throw refuse(`[terms] query has more than ${MAX_CLAUSES} values`, 'too_many_clauses')
      return list.length === 0 ? { kind: 'none' } : { kind: 'eq', field, values: list.map((v) => scalar(type, field, v)) }
    }
    case 'match':
    case 'match_phrase': {
      const [field, v] = single(type, body)
      if (isObject(v)) {
        for (const k of Object.keys(v)) {
          if (!['query', 'operator', 'boost', 'analyzer', 'lenient', 'zero_terms_query', 'auto_generate_synonyms_phrase_query', 'slop'].includes(k)) throw refuse(`[${type}] query does not support [${k}]`)
        }
        if (v.fuzziness !== undefined) throw refuse(`[${type}] fuzziness is not supported by the search store`)
      }
      const value = isObject(v) ? valueOf(type, v, 'query') : v
      return { kind: 'eq', field, values: [scalar(type, field, value)] }
    }
    case 'range': {
      const [field, v] = single(type, body)
      if (!isObject(v)) throw refuse(`[range] query malformed, an object of bounds was expected for [${field}]`)
      const out: { kind: 'range'; field: string; gt?: Bound; gte?: Bound; lt?: Bound; lte?: Bound } = { kind: 'range', field }
      for (const [k, x] of Object.entries(v)) {
        if (k === 'gt' || k === 'gte' || k === 'lt' || k === 'lte') {
          if (x === null) continue
          if (typeof x !== 'string' && typeof x !== 'number') throw refuse(`[range] bound [${k}] of [${field}] must be a number or a string`)
          out[k] = x
        } else if (k === 'from' || k === 'to' || k === 'include_lower' || k === 'include_upper') {
          throw refuse(`[range] [${k}] is deprecated and not supported: use gt, gte, lt and lte`)
        } else if (k === 'format') {
          if (x !== 'strict_date_optional_time' && x !== 'date_optional_time' && x !== 'epoch_millis' && x !== 'strict_date_optional_time||epoch_millis') throw refuse(`[range] format [${String(x)}] is not supported: dates are ISO 8601 or epoch milliseconds`)
        } else if (k === 'time_zone') {
          if (!['UTC', 'Z', '+00:00', 'Etc/UTC', 'GMT'].includes(String(x))) throw refuse(`[range] time_zone [${String(x)}] is not supported: write dates with an offset, or in UTC`)
        } else if (k !== 'boost' && k !== 'relation') {
          throw refuse(`[range] query does not support [${k}]`)
        }
      }
      return out
    }
    case 'exists': {
      if (!isObject(body) || typeof body.field !== 'string' || body.field === '') throw refuse('[exists] query needs a "field"')
      return { kind: 'exists', field: body.field }
    }
    case 'prefix': {
      const [field, v] = single(type, body)
      const value = isObject(v) ? valueOf(type, v, 'value') : v
      if (typeof value !== 'string') throw refuse(`[prefix] value for [${field}] must be a string`)
      return { kind: 'prefix', field, value, caseInsensitive: isObject(v) && v.case_insensitive === true }
    }
    case 'wildcard': {
      const [field, v] = single(type, body)
      const value = isObject(v) ? (v.value ?? v.wildcard) : v
      if (typeof value !== 'string') throw refuse(`[wildcard] value for [${field}] must be a string`)
      const { pattern, wild } = wildcardPattern(value)
      return { kind: 'wildcard', field, pattern, wild, caseInsensitive: isObject(v) && v.case_insensitive === true }
    }
    case 'ids': {
      if (!isObject(body) || !Array.isArray(body.values) || !body.values.every((x) => typeof x === 'string')) throw refuse('[ids] query needs "values": an array of ids')
      return { kind: 'ids', values: body.values as string[] }
    }
    case 'query_string': {
      if (!isObject(body) || typeof body.query !== 'string') throw refuse('[query_string] needs a "query" string')
      for (const k of Object.keys(body)) {
        if (!['query', 'default_field', 'default_operator', 'analyze_wildcard', 'lenient', 'boost', 'allow_leading_wildcard'].includes(k)) throw refuse(`[query_string] does not support [${k}]`)
      }
      const op = body.default_operator === undefined ? 'OR' : String(body.default_operator).toUpperCase()
      if (op !== 'OR' && op !== 'AND') throw refuse('[query_string] default_operator must be OR or AND')
      const df = body.default_field
      if (df !== undefined && typeof df !== 'string') throw refuse('[query_string] default_field must be a string')
      return parseQueryString(body.query, { defaultField: df, defaultOperator: op })
    }
    case 'bool': {
      if (!isObject(body)) throw refuse('[bool] query malformed, an object was expected')
      const list = (k: string): Query[] => {
        const v = body[k]
        if (v === undefined) return []
        return (Array.isArray(v) ? v : [v]).map((x) => parseDsl(x, depth + 1, budget))
      }
      for (const k of Object.keys(body)) {
        if (!['must', 'should', 'must_not', 'filter', 'minimum_should_match', 'boost', 'adjust_pure_negative'].includes(k)) throw refuse(`[bool] query does not support [${k}]`)
      }
      const must = list('must')
      const filter = list('filter')
      const should = list('should')
      const mustNot = list('must_not')
      let msm = must.length + filter.length === 0 && should.length > 0 ? 1 : 0
      const m = body.minimum_should_match
      if (m !== undefined) {
        if (typeof m === 'number' && Number.isInteger(m)) msm = m < 0 ? Math.max(0, should.length + m) : m
        else if (typeof m === 'string' && /^-?[0-9]+$/.test(m)) msm = Number(m) < 0 ? Math.max(0, should.length + Number(m)) : Number(m)
        else if (typeof m === 'string' && /^-?[0-9]+%$/.test(m)) {
          const pc = Number(m.slice(0, -1))
          msm = pc < 0 ? should.length - Math.floor((should.length * -pc) / 100) : Math.floor((should.length * pc) / 100)
        } else throw refuse('[bool] minimum_should_match must be an integer or a percentage')
      }
      return { kind: 'bool', must, should, mustNot, filter, minimumShouldMatch: msm }
    }
    default:
      if (KNOWN_UNSUPPORTED.has(type)) throw refuse(`[${type}] queries are not supported by the search store; supported: match_all, match_none, term, terms, match, match_phrase, range, exists, prefix, wildcard, ids, query_string, bool`)
      throw refuse(`unknown query [${type}]`)
  }
}

/** `{"field": value}` (one field, `boost` aside). */
function single(type: string, body: unknown): [string, unknown] {
  if (!isObject(body)) throw refuse(`[${type}] query malformed, an object {"field": …} was expected`)
  const fields = Object.keys(body)
  if (fields.length !== 1) throw refuse(`[${type}] query doesn't support multiple fields, found [${fields.join('] and [')}]`)
  const field = fields[0]!
  if (field === '') throw refuse(`[${type}] field name is empty`)
  return [field, body[field]]
}

function valueOf(type: string, v: Record<string, unknown>, key: string): unknown {
  for (const k of Object.keys(v)) {
    if (k !== key && k !== 'boost' && k !== 'case_insensitive' && k !== 'operator' && k !== 'analyzer' && k !== 'lenient' && k !== 'zero_terms_query' && k !== 'auto_generate_synonyms_phrase_query' && k !== 'slop' && k !== 'rewrite') {
      throw refuse(`[${type}] query does not support [${k}]`)
    }
  }
  if (!(key in v)) throw refuse(`[${type}] query needs [${key}]`)
  return v[key]
}

function scalar(type: string, field: string, v: unknown): string | number | boolean {
  if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v
  throw refuse(`[${type}] value for [${field}] must be a string, a number or a boolean`)
}
