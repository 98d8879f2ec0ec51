/**
 * `_count` and `_search` on the search store: the Elasticsearch 7 request
 * (query string or DSL, paging, sorting, `_source`, aggregations) translated
 * to parameterised SQL on the store's tables, and the answer shaped as
 * Elasticsearch 7 shapes it.
 *
 * Translation:
 * - A field is a dotted path in the document (`contexts_…_web_page_1.id`);
 *   it is matched with a SQL/JSON path (`jsonb_path_exists`) whose text and
 *   variables are parameters, so neither a value nor a field name ever
 *   becomes SQL text. Arrays are searched element by element, as
 *   Elasticsearch does.
 * - The fields kept in their own typed columns (`COLUMNS`) are matched on
 *   those columns instead (indexed, and much faster); both forms must give
 *   the same answers (`test/integration/search/query.test.ts` checks it).
 * - Values match whole and case-sensitively (Snowplow Mini's indices use the
 *   keyword analyser everywhere); results are not scored (`_score` is null)
 *   and, unless sorted otherwise, come newest first. On the `bad` index a
 *   bare word (no field) also finds the rows whose text has its words
 *   (`./words.ts`), as Elasticsearch's analysed text does.
 *
 * The parts live in `./request.ts` (parameters, the query), `./query-sql.ts`
 * (query tree to SQL), `./dates.ts`, `./hits.ts` (sort, `_source`) and
 * `./aggregations.ts`.
 */
import { MAX_BUCKETS, parseAggs, runAgg } from './aggregations'
import { parseDate } from './dates'
import { withNulls } from './documents'
import { filterSource, sortKeys, sourceFilter } from './hits'
import { COLUMNS, condition, jsonPath, likePattern, Statement, TIME_FIELDS, type Translation } from './query-sql'
import { esErrorBody, refuse, type EsError, type EsResult } from './query-tree'
import { checkParams, COUNT_PARAMS, guarded, integer, isObject, requestQuery, SEARCH_BODY, SEARCH_PARAMS, type SearchRequest } from './request'
import { tablesOf, TIME_COLUMNS, type SearchDb, type SearchIndex } from './store'

export { esErrorBody, type EsError, type EsResult }
export { COLUMNS, jsonPath, likePattern, MAX_BUCKETS, parseDate, TIME_FIELDS, type SearchRequest, type Translation }

/** Elasticsearch's default and largest result window (`from + size`). */
export const MAX_RESULT_WINDOW = 10_000

const SHARDS = { total: 1, successful: 1, skipped: 0, failed: 0 }

export function searchIndex(name: string): EsResult<SearchIndex> {
  if (name === 'good' || name === 'bad') return { ok: true, value: name }
  return { ok: false, error: { status: 404, type: 'index_not_found_exception', reason: `no such index [${name}]: the indices are good and bad` } }
}

/** `_count`: `{count, _shards}`. */
export function count(db: SearchDb, index: SearchIndex, req: SearchRequest, options: Translation = { columns: true }, now = Date.now()) {
  return guarded(async () => {
    checkParams(req.params, COUNT_PARAMS, `/${index}/_count`)
    const q = requestQuery(req, new Set(['query']), `/${index}/_count`)
    const st = new Statement(index, options)
    const where = condition(q, st, now)
    const r = await db.sql.query<{ n: number | string }>(`SELECT count(*)::float8 AS n FROM ${tablesOf(db)[index]} WHERE ${where}`, st.params)
    return { count: Number(r.rows[0]!.n), _shards: SHARDS }
  })
}

// ---------------------------------------------------------------------------
// _search

export interface SearchHit {
  readonly _index: SearchIndex
  readonly _type: '_doc'
  readonly _id: string
  readonly _score: null
  readonly _source?: Record<string, unknown>
  readonly sort?: unknown[]
}

/** `_search`: hits (paged, sorted, `_source` filtered), the total, and aggregations. */
export function search(db: SearchDb, index: SearchIndex, req: SearchRequest, options: Translation = { columns: true }, now = Date.now()) {
  return guarded(async () => {
    const started = Date.now()
    const path = `/${index}/_search`
    checkParams(req.params, SEARCH_PARAMS, path)
    const q = requestQuery(req, SEARCH_BODY, path)
    const body = isObject(req.body) ? req.body : {}
    const from = integer(req.params.from ?? body.from ?? 0, 'from', 0, MAX_RESULT_WINDOW)
    const size = integer(req.params.size ?? body.size ?? 10, 'size', 0, MAX_RESULT_WINDOW)
    if (from + size > MAX_RESULT_WINDOW) {
      throw refuse(`Result window is too large, from + size must be less than or equal to: [${MAX_RESULT_WINDOW}] but was [${from + size}]. Page with a range on the time field instead.`, 'illegal_argument_exception')
    }
    const asInt = req.params.rest_total_hits_as_int === 'true'
    const tth: unknown = req.params.track_total_hits ?? body.track_total_hits ?? (asInt ? true : MAX_RESULT_WINDOW)
    const track: number | boolean = tth === true || tth === 'true' ? true : tth === false || tth === 'false' ? false : integer(tth, 'track_total_hits', 0, Number.MAX_SAFE_INTEGER)
    if (asInt && track !== true) throw refuse('[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate', 'illegal_argument_exception')
    const sort = sortKeys(req)
    const source = sourceFilter(req)
    const aggs = parseAggs(body.aggs ?? body.aggregations, now, index)
    if (body.aggs !== undefined && body.aggregations !== undefined) throw refuse('use one of [aggs] and [aggregations]')

    const table = tablesOf(db)[index]
    let hits: SearchHit[] = []
    if (size > 0) {
      const st = new Statement(index, options)
      const where = condition(q, st, now)
      const order: string[] = []
      const sortValues: string[] = []
      for (const k of sort ?? []) {
        const col = k.field === '_doc' ? { column: 'id', type: 'text' as const } : st.column(k.field)
        const expr = col ? col.column : `jsonb_path_query_first(doc, ${st.p(jsonPath(k.field, ''))}::jsonpath, '{}'::jsonb, true)`
        // the time columns and id are never null: no NULLS clause, so their indexes serve the order
        const notNull = col !== undefined && (col.type === 'time' || col.column === 'id')
        order.push(`${expr} ${k.desc ? 'DESC' : 'ASC'}${notNull ? '' : ' NULLS LAST'}`)
        sortValues.push(col?.type === 'time' ? `(extract(epoch FROM ${col.column}) * 1000)::float8` : col ? col.column : `(${expr})::text`)
      }
      if (sort === undefined) order.push(`${TIME_COLUMNS[index]} DESC`)
      order.push('id ASC')
      const r = await db.sql.query<Record<string, unknown>>(
        `SELECT id, doc::text AS doc${sortValues.map((e, i) => `, ${e} AS s${i}`).join('')} FROM ${table} WHERE ${where} ORDER BY ${order.join(', ')} LIMIT ${st.p(size)} OFFSET ${st.p(from)}`,
        st.params,
      )
      hits = r.rows.map((row) => {
        const stored = JSON.parse(String(row.doc)) as Record<string, unknown>
        const doc = index === 'good' ? withNulls(stored) : stored
        const hit: SearchHit = { _index: index, _type: '_doc', _id: String(row.id), _score: null }
        const withSource = source === false ? hit : { ...hit, _source: filterSource(doc, source) }
        if (sort === undefined || sort.length === 0) return withSource
        const values = (sort ?? []).map((k, i) => {
          const v = row[`s${i}`]
          if (v === null || v === undefined) return null
          const col = k.field === '_doc' ? { type: 'text' } : st.column(k.field)
          return col?.type === 'time' ? Number(v) : col ? v : JSON.parse(String(v))
        })
        return { ...withSource, sort: values }
      })
    }

    let total: { value: number; relation: 'eq' | 'gte' } | undefined
    if (track !== false) {
      const st = new Statement(index, options)
      const where = condition(q, st, now)
      const sql = track === true ? `SELECT count(*)::float8 AS n FROM ${table} WHERE ${where}` : `SELECT count(*)::float8 AS n FROM (SELECT 1 FROM ${table} WHERE ${where} LIMIT ${st.p(track + 1)}) AS s`
      const n = Number((await db.sql.query<{ n: number }>(sql, st.params)).rows[0]!.n)
      total = track !== true && n > track ? { value: track, relation: 'gte' } : { value: n, relation: 'eq' }
    }
    const aggregations: Record<string, unknown> = {}
    for (const a of aggs) aggregations[a.name] = await runAgg(db, index, a, q, options, now)

    return {
      took: Date.now() - started,
      timed_out: false,
      _shards: SHARDS,
      hits: { ...(total === undefined ? {} : { total: asInt ? total.value : total }), max_score: null, hits },
      ...(aggs.length > 0 ? { aggregations } : {}),
    }
  })
}
