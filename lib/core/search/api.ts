/**
 * The search store's HTTP APIs, transport-neutral: `/search-store`
 * (Elasticsearch 7-shaped: `_count`, `_search`, deleting an index) and
 * `/micro/*` (Snowplow Micro's API). The store is reached through `db()`,
 * called per request, so a store that is down is a 503 for that request and
 * the next one tries again. Every request has a time budget (`timeoutMs`):
 * past it the answer is a 504 (the statement is abandoned; the local store
 * ends one that runs far longer, see `lib/local/search-server.ts`).
 */
import type { HttpHandler, HttpRequest, HttpResponse } from '../../http/types'
import { json, text } from '../../http/types'
import { unavailableReason, unavailableResponse } from '../../http/unavailable'
import { micro, type MicroDeps } from './micro'
import { DEFAULT_HOLD_MS, isMicroWaitRoute, microWaitRoutes } from './micro-wait'
import { DEFAULT_WATCH_INTERVAL_MS, StoreWatch, storeVersion } from './store-watch'
import { count, esErrorBody, search, searchIndex, type EsError, type SearchRequest } from './query'
import { DEFAULT_SEARCH_TIMEOUT_MS } from './settings'
import { deleteIndex, type SearchDb } from './store'

export interface SearchApiDeps extends MicroDeps {
  db(): Promise<SearchDb>
  /** The product version shown by `GET /search-store`. */
  readonly version: string
  /** The time budget of one request (default 10 s): past it, a 504. */
  readonly timeoutMs?: number
  /** What `/micro/wait` watches (default: the store's change counter read every 250 ms while someone waits). */
  readonly storeWatch?: StoreWatch
  /** The longest a `/micro/wait` is held (default 25 s). */
  readonly waitHoldMs?: number
  /** Waits held at once (default 64; beyond, 429). */
  readonly maxWaits?: number
  /** The clock of `/micro/wait`'s deadlines (default `Date.now`). */
  readonly now?: () => number
}

/** Largest request body accepted (a query is small; this bounds parsing work). */
export const MAX_SEARCH_BODY_BYTES = 1024 * 1024

const fail = (e: EsError): HttpResponse => json(e.status, esErrorBody(e))

/**
 * The Elasticsearch version `GET /search-store` presents: the Elasticsearch
 * clients refuse a server whose version they do not know (the 7.x JavaScript
 * client wants a 6.x or 7.x number and, from 7.14, the product header on the
 * root's answer), and Floe answers the 7.x API. Floe's own version is in
 * `version.floe`, which no client reads.
 */
export const ES_VERSION = {
  number: '7.17.0',
  build_flavor: 'default',
  build_type: 'tar',
  build_snapshot: false,
  lucene_version: '8.11.1',
  minimum_wire_compatibility_version: '6.8.0',
  minimum_index_compatibility_version: '6.0.0-beta1',
} as const

/** Every answer under `/search-store` carries it: the Elasticsearch clients from 7.14 check it. */
export const PRODUCT_HEADER = { 'x-elastic-product': 'Elasticsearch' } as const

const withProduct = (r: HttpResponse): HttpResponse => ({ ...r, headers: { ...r.headers, ...PRODUCT_HEADER } })

/** A refusal in the shape of the API of the path: Elasticsearch's error under `/search-store`, Micro's plain text under `/micro`. */
export function searchApiRefusal(req: HttpRequest, status: number, reason: string): HttpResponse {
  if (req.path.split('/').find((s) => s.length > 0) === 'search-store') return withProduct(fail({ status, type: 'security_exception', reason }))
  return text(status, `${reason}\n`)
}

function parseBody(req: HttpRequest): { ok: true; body?: unknown } | { ok: false; response: HttpResponse } {
  if (req.body.length === 0) return { ok: true }
  if (req.body.length > MAX_SEARCH_BODY_BYTES) {
    return { ok: false, response: fail({ status: 413, type: 'content_too_long_exception', reason: `the request body is ${req.body.length} bytes; at most ${MAX_SEARCH_BODY_BYTES} are accepted` }) }
  }
  const raw = req.body.toString('utf8')
  if (raw.trim() === '') return { ok: true }
  try {
    return { ok: true, body: JSON.parse(raw) }
  } catch (err) {
    return { ok: false, response: fail({ status: 400, type: 'parsing_exception', reason: `the request body is not valid JSON: ${(err as Error).message}` }) }
  }
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

async function searchStore(req: HttpRequest, deps: SearchApiDeps): Promise<HttpResponse> {
  const parts = req.path.split('/').filter(Boolean).slice(1).map(decode) // after `search-store`
  const method = req.method
  if (parts.length === 0) {
    if (method !== 'GET' && method !== 'HEAD') return fail({ status: 405, type: 'illegal_argument_exception', reason: `Incorrect HTTP method for uri [/search-store] and method [${method}], allowed: [GET, HEAD]` })
    const db = await deps.db()
    await db.sql.query('SELECT 1')
    return json(200, {
      name: 'floe-search-store',
      cluster_name: 'floe',
      cluster_uuid: '_na_',
      version: { ...ES_VERSION, floe: deps.version },
      tagline: 'You Know, for Search',
    })
  }
  const index = searchIndex(parts[0]!)
  if (!index.ok) return fail(index.error)
  const action = parts.length === 1 ? '' : parts.at(-1)!
  const shapeOk = parts.length === 1 || (parts.length <= 3 && (action === '_count' || action === '_search') && (parts.length === 2 || !parts[1]!.startsWith('_')))
  if (!shapeOk) {
    return fail({ status: 400, type: 'illegal_argument_exception', reason: `no handler for [${method} ${req.path}]: supported are GET /search-store, GET|POST /search-store/{index}[/{type}]/_count and /_search, DELETE /search-store/{index}` })
  }
  if (action === '') {
    if (method === 'DELETE') {
      await deleteIndex(await deps.db(), index.value)
      return json(200, { acknowledged: true })
    }
    return fail({ status: 405, type: 'illegal_argument_exception', reason: `Incorrect HTTP method for uri [${req.path}] and method [${method}], allowed: [DELETE]` })
  }
  if (method !== 'GET' && method !== 'POST') {
    return fail({ status: 405, type: 'illegal_argument_exception', reason: `Incorrect HTTP method for uri [${req.path}] and method [${method}], allowed: [GET, POST]` })
  }
  const body = parseBody(req)
  if (!body.ok) return body.response
  const request: SearchRequest = { params: req.query, body: body.body }
  const db = await deps.db()
  const out = action === '_count' ? await count(db, index.value, request) : await search(db, index.value, request)
  return out.ok ? json(200, out.value) : fail(out.error)
}

/** `work`'s answer, or `late()` when it has not answered within `ms` (its outcome is then dropped). */
async function within<T>(ms: number, work: Promise<T>, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(late()), ms)))
  work.catch(() => {}) // an abandoned request's failure is nobody's to handle
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** The `/search-store` and `/micro` handler. */
export function searchApi(deps: SearchApiDeps): HttpHandler {
  const budget = deps.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS
  const holdMs = deps.waitHoldMs ?? DEFAULT_HOLD_MS
  const watch = deps.storeWatch ?? new StoreWatch({ read: async () => storeVersion(await deps.db()), intervalMs: DEFAULT_WATCH_INTERVAL_MS })
  const waits = microWaitRoutes({ watch, now: deps.now ?? Date.now, holdMs, maxWaits: deps.maxWaits })
  return async (req) => {
    if (req.path === '/search-store' || req.path.startsWith('/search-store/')) {
      try {
        return withProduct(await within(budget, searchStore(req, deps), () => fail({ status: 504, type: 'timeout_exception', reason: `the search took longer than its budget of ${budget} ms and was abandoned: narrow the query (fewer wildcard terms, a field instead of any field, a time range)` })))
      } catch (err) {
        const reason = unavailableReason(err)
        if (reason === undefined) throw err
        return withProduct(unavailableResponse(reason))
      }
    }
    if (req.path.startsWith('/micro/') || req.path === '/micro') {
      if (req.body.length > MAX_SEARCH_BODY_BYTES) return text(413, `The request body is ${req.body.length} bytes; at most ${MAX_SEARCH_BODY_BYTES} are accepted`)
      const own = isMicroWaitRoute(req.path)
      const work = (async (): Promise<HttpResponse> => {
        const mreq = { method: req.method, path: req.path, body: req.body.toString('utf8'), query: req.query }
        const r = own ? await waits(await deps.db(), mreq) : await micro(await deps.db(), mreq, deps)
        return { statusCode: r.status, headers: r.headers, body: r.body, ...(r.stream ? { stream: r.stream } : {}) }
      })()
      // a wait is held up to its own limit, and its last query has the usual budget
      const limit = own ? holdMs + budget : budget
      return within(limit, work, () => text(504, `The request took longer than its budget of ${limit} ms and was abandoned`))
    }
    return text(404, 'Not Found')
  }
}
