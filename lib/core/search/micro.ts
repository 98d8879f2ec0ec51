/**
 * Snowplow Micro's API (4.5.2's routes, filters and answer shapes), read from
 * the search store, so that test suites written for Micro run against Floe
 * unchanged: send events, assert on `/micro/good` and `/micro/bad`, call
 * `/micro/reset` between tests.
 *
 * Differences, all documented in docs/search-store.md: events are kept in the store
 * (not in memory) and come from every collector of the stack; `rawEvent` is
 * the request as the collector received it (./raw-events.ts), rebuilt from
 * the enriched event only for events that were not sent with a tracker
 * event id (webhooks); a bad row's `collectorPayload` is null.
 */
import { FIELD_KINDS, FIELDS, F } from '../enrich/fields'
import { isAtomicField, withNulls } from './documents'
import { storedRawEvent } from './raw-events'
import { parseDate } from './dates'
import { Refusal } from './query-tree'
import { deleteIndex, tablesOf, type SearchDb } from './store'

export interface MicroRequest {
  readonly method: string
  readonly path: string
  /** The body as text ('' when none). */
  readonly body: string
  readonly query?: Readonly<Record<string, string>>
}

export interface MicroResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Instead of `body`: the body's text as it is read, page by page (an answer over every stored event is never built whole). */
  readonly stream?: AsyncIterable<string>
}

export type SchemaLookup = { ok: true; schema: unknown } | { ok: false; errors: unknown }

export interface MicroDeps {
  /** This deployment's resolver: the schema, or why it could not be found. */
  lookupSchema(vendor: string, name: string, format: string, version: string): Promise<SchemaLookup>
}

/** Micro's routes whose GET changes state (Micro resets on GET): refused cross-site like a POST (see `lib/http/cross-site.ts`). */
export const MICRO_STATE_CHANGING_GETS = ['/micro/reset'] as const
/** Reads whose answer can hold every stored event (no `limit`): refused when a browser sends them from another site. */
export const MICRO_COSTLY_READS = ['/micro/good', '/micro/bad'] as const

/** The endpoints Micro 4.5 lists when a path is unknown, in its order (its UI, `/micro/ui`, included). */
const MICRO_SUPPORTED_ENDPOINTS = ['/micro/all', '/micro/good', '/micro/bad', '/micro/events', '/micro/reset', '/micro/columns', '/micro/columnStats', '/micro/timeline', '/micro/iglu', '/micro/ui'] as const

/** Most events `/micro/events` returns per page (Micro's limit with storage). */
export const MAX_PAGE_SIZE = 100
const DEFAULT_PAGE_SIZE = 50
const MAX_TIMELINE_BUCKETS = 1000
const MAX_COLUMNS = 200

const JSON_TYPE = { 'content-type': 'application/json' }
/** Micro answers its own messages as JSON strings. */
const message = (status: number, text: string): MicroResponse => ({ status, headers: JSON_TYPE, body: JSON.stringify(text) })
/** Micro's answer to an iglu lookup whose path or version is not a schema key. */
export const IGLU_FORMAT_MESSAGE = 'Schema lookup should be in format iglu/{vendor}/{schemaName}/jsonschema/{model}-{revision}-{addition}'
const TEXT_TYPE = { 'content-type': 'text/plain; charset=utf-8' }
const ok = (v: unknown): MicroResponse => ({ status: 200, headers: JSON_TYPE, body: JSON.stringify(v) })
const textAnswer = (status: number, body: string, headers: Record<string, string> = {}): MicroResponse => ({ status, headers: { ...TEXT_TYPE, ...headers }, body })

class BadRequest extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function parseBody(body: string): Record<string, unknown> {
  if (body.trim() === '') return {}
  let v: unknown
  try {
    v = JSON.parse(body)
  } catch (err) {
    throw new BadRequest(`The request body is not valid JSON: ${(err as Error).message}`)
  }
  if (!isObject(v)) throw new BadRequest('The request body must be a JSON object')
  return v
}

function optionalString(b: Record<string, unknown>, key: string): string | undefined {
  const v = b[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw new BadRequest(`"${key}" must be a string`)
  if (v.includes('\u0000')) throw new BadRequest(`"${key}" may not contain the NUL character`)
  return v
}

function optionalInt(b: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = b[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new BadRequest(`"${key}" must be an integer from ${min} to ${max}`)
  return v
}

function stringList(v: unknown, key: string, max: number): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new BadRequest(`"${key}" must be a list of strings`)
  if (v.length > max) throw new BadRequest(`"${key}" may list at most ${max}`)
  if (v.some((x: string) => x.includes('\u0000'))) throw new BadRequest(`"${key}" may not contain the NUL character`)
  return v as string[]
}

function time(v: unknown, key: string): string {
  if (typeof v !== 'string' && typeof v !== 'number') throw new BadRequest(`"${key}" must be an ISO 8601 time or epoch milliseconds`)
  try {
    return new Date(parseDate(v, Date.now(), false)).toISOString()
  } catch (err) {
    if (err instanceof Refusal) throw new BadRequest(`"${key}": ${err.message}`)
    throw err
  }
}

// ---------------------------------------------------------------------------
// Events as Micro shows them

const TRACKER_EVENT: Record<string, string> = { page_view: 'pv', page_ping: 'pp', struct: 'se', unstruct: 'ue', transaction: 'tr', transaction_item: 'ti' }
/** Tracker protocol parameters rebuilt from enriched fields (events whose request was not kept). */
const PARAMETERS: readonly (readonly [string, string])[] = [
  ['aid', 'app_id'], ['p', 'platform'], ['tv', 'v_tracker'], ['tna', 'name_tracker'], ['eid', 'event_id'], ['uid', 'user_id'], ['duid', 'domain_userid'], ['vid', 'domain_sessionidx'],
  ['sid', 'domain_sessionid'], ['url', 'page_url'], ['page', 'page_title'], ['refr', 'page_referrer'], ['lang', 'br_lang'], ['cs', 'doc_charset'], ['tz', 'os_timezone'],
  ['se_ca', 'se_category'], ['se_ac', 'se_action'], ['se_la', 'se_label'], ['se_pr', 'se_property'], ['se_va', 'se_value'],
  ['tr_id', 'tr_orderid'], ['tr_af', 'tr_affiliation'], ['tr_tt', 'tr_total'], ['tr_tx', 'tr_tax'], ['tr_sh', 'tr_shipping'], ['tr_ci', 'tr_city'], ['tr_st', 'tr_state'], ['tr_co', 'tr_country'], ['tr_cu', 'tr_currency'],
  ['ti_id', 'ti_orderid'], ['ti_sk', 'ti_sku'], ['ti_nm', 'ti_name'], ['ti_ca', 'ti_category'], ['ti_pr', 'ti_price'], ['ti_qu', 'ti_quantity'], ['ti_cu', 'ti_currency'],
]

interface Line {
  readonly cols: string[]
}

function sdj(text: string): { schema: string; data: unknown } | null {
  if (text === '') return null
  try {
    return JSON.parse(text) as { schema: string; data: unknown }
  } catch {
    return null
  }
}

const CONTEXTS_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0'

/** The event as the Scala analytics SDK's non-lossy JSON: every field, contexts and the self-describing event as self-describing JSON. */
function nonLossy(line: Line, doc: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (let i = 0; i < FIELDS.length; i++) {
    const name = FIELDS[i]!
    if (FIELD_KINDS[i] === 'json') {
      const v = sdj(line.cols[i] ?? '')
      // the SDK's shape: contexts under the 1-0-0 contexts schema, and {} when there are none
      if (name === 'unstruct_event') out[name] = v
      else out[name] = v && Array.isArray(v.data) && v.data.length > 0 ? { schema: CONTEXTS_SCHEMA, data: v.data } : {}
    } else out[name] = doc[name] ?? null
  }
  return out
}

/** The `event` `/micro/good` shows for an enriched TSV line and its shredded document (`goodDocument`). */
export function microEvent(line: string, doc: Record<string, unknown>): Record<string, unknown> {
  return nonLossy({ cols: line.split('\t') }, doc)
}

function contextUris(line: Line): string[] {
  const c = sdj(line.cols[F.contexts] ?? '')
  return Array.isArray(c?.data) ? (c.data as { schema?: unknown }[]).map((e) => e?.schema).filter((s): s is string => typeof s === 'string') : []
}

function rawEvent(doc: Record<string, unknown>) {
  const parameters: Record<string, string> = {}
  const e = TRACKER_EVENT[String(doc.event)]
  if (e) parameters.e = e
  for (const [param, field] of PARAMETERS) {
    const v = doc[field]
    if (v !== null && v !== undefined) parameters[param] = String(v)
  }
  for (const [param, field] of [['dtm', 'dvce_created_tstamp'], ['stm', 'dvce_sent_tstamp'], ['ttm', 'true_tstamp']] as const) {
    const t = Date.parse(String(doc[field] ?? ''))
    if (Number.isFinite(t)) parameters[param] = String(t)
  }
  return {
    api: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2' },
    parameters,
    contentType: null,
    source: { name: doc.v_collector ?? null, encoding: 'UTF-8', hostname: null },
    context: { timestamp: doc.collector_tstamp ?? null, ipAddress: doc.user_ipaddress ?? null, useragent: doc.useragent ?? null, refererUri: doc.page_referrer ?? null, headers: [], userId: doc.network_userid ?? null },
  }
}

interface GoodRow {
  line: string
  doc: string
  event_type: string | null
  schema_uri: string | null
  failed: boolean
  /** What the collector received (./raw-events.ts), when it was kept. */
  raw_parameters: string | null
  raw_context: string | null
}

function goodEvent(row: GoodRow) {
  const line: Line = { cols: row.line.split('\t') }
  const doc = JSON.parse(row.doc) as Record<string, unknown>
  const raw = row.raw_parameters !== null && row.raw_context !== null ? storedRawEvent(row.raw_context, row.raw_parameters) : rawEvent(doc)
  return { rawEvent: raw, eventType: row.event_type, schema: row.schema_uri, contexts: contextUris(line), event: nonLossy(line, doc), incomplete: false }
}

/** A bad row's raw event (its `payload.raw`, where the failure has one). */
function badRawEvent(row: Record<string, unknown>) {
  const payload = isObject(row.data) && isObject(row.data.payload) ? row.data.payload : undefined
  const raw = payload && isObject(payload.raw) ? payload.raw : payload && typeof payload.vendor === 'string' ? payload : undefined
  if (!raw) return null
  const parameters: Record<string, string> = {}
  if (Array.isArray(raw.parameters)) for (const p of raw.parameters) if (isObject(p) && typeof p.name === 'string') parameters[p.name] = String(p.value ?? '')
  if (typeof raw.querystring === 'string' || Array.isArray(raw.querystring)) {
    for (const p of Array.isArray(raw.querystring) ? raw.querystring : []) if (isObject(p) && typeof p.name === 'string') parameters[p.name] = String(p.value ?? '')
  }
  return {
    api: { vendor: raw.vendor ?? null, version: raw.version ?? null },
    parameters,
    contentType: raw.contentType ?? null,
    source: { name: raw.loaderName ?? null, encoding: raw.encoding ?? null, hostname: raw.hostname ?? null },
    context: { timestamp: raw.timestamp ?? null, ipAddress: raw.ipAddress ?? null, useragent: raw.useragent ?? null, refererUri: raw.refererUri ?? null, headers: Array.isArray(raw.headers) ? raw.headers : [], userId: raw.userId ?? null },
  }
}

/** Failures of the whole collector payload (before its events are validated one by one), by bad row schema name. */
const PAYLOAD_FAILURES = new Set(['adapter_failures', 'tracker_protocol_violations'])

/** Micro's errors, as its sink writes them: a lead line saying at which step the event failed, then the bad row. */
export function badErrors(schema: unknown, line: string): string[] {
  const name = typeof schema === 'string' ? (/^iglu:[^/]+\/([^/]+)\//.exec(schema)?.[1] ?? '') : ''
  if (name === 'collector_payload_format_violation') return ["Can't deserialize Thrift bytes.", line]
  if (PAYLOAD_FAILURES.has(name)) return ['Error while extracting event(s) from collector payload and validating it/them.', line]
  return ['Error while validating the event.', line]
}

// ---------------------------------------------------------------------------
// Routes

async function counts(db: SearchDb) {
  const t = tablesOf(db)
  const g = await db.sql.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${t.good}`)
  const b = await db.sql.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${t.bad} WHERE recovered IS NULL`)
  const good = Number(g.rows[0]!.n)
  const bad = Number(b.rows[0]!.n)
  return { total: good + bad, good, bad }
}

/** Events read per statement by `/micro/good`: its answer is written page by page, never held whole. */
export const GOOD_PAGE_SIZE = 200

/**
 * `/micro/good`'s answer, a JSON array written as it is read: the request is
 * checked first (a bad one throws `BadRequest` before anything is written),
 * then the events come in pages of `pageSize`, newest first, each page read
 * after the one before (keyset on arrival order), so memory holds one page.
 */
function goodStream(db: SearchDb, body: Record<string, unknown>, pageSize = GOOD_PAGE_SIZE): AsyncIterable<string> {
  const eventType = optionalString(body, 'event_type')
  const schema = optionalString(body, 'schema')
  const limit = optionalInt(body, 'limit', 0, Number.MAX_SAFE_INTEGER)
  const contexts = body.contexts === undefined || body.contexts === null ? [] : stringList(body.contexts, 'contexts', 100)
  const params: unknown[] = []
  const p = (v: unknown) => {
    params.push(v)
    return `$${params.length}`
  }
  const where = ['TRUE']
  if (eventType !== undefined) where.push(`g.event_type = ${p(eventType)}`)
  if (schema !== undefined) where.push(`g.schema_uri = ${p(schema)}`)
  // a context's shredded key is in the document: a cheap first cut, checked exactly below
  let none = false
  for (const uri of contexts) {
    const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([0-9]+)-[0-9]+-[0-9]+$/.exec(uri)
    if (!m) none = true
    where.push(`position(${p(`"${uri}"`)} in g.line) > 0`)
  }
  const t = tablesOf(db)
  if (none) return jsonArrayByPages(0, pageSize, async () => [], () => undefined)
  return jsonArrayByPages(limit, pageSize, async (after) => {
    const ps = [...params]
    const cursor = after ? ` AND (g.collector_tstamp, g.seq) < ($${ps.push(after.ts)}::timestamptz, $${ps.push(after.seq)}::bigint)` : ''
    // each event with the request it came from, when that was kept (by event id and collector time)
    const r = await db.sql.query<GoodRow & PageCursor>(
      `SELECT g.line, g.doc::text AS doc, g.event_type, g.schema_uri, g.failed, r.parameters AS raw_parameters, rp.context AS raw_context,
              g.collector_tstamp::text AS cursor_ts, g.seq::text AS cursor_seq
         FROM ${t.good} g
         LEFT JOIN ${t.rawEvents} r ON r.event_id = g.id AND r.collector_tstamp = g.collector_tstamp
         LEFT JOIN ${t.rawPayloads} rp ON rp.id = r.payload_id
         WHERE ${where.join(' AND ')}${cursor} ORDER BY g.collector_tstamp DESC, g.seq DESC LIMIT ${pageSize}`,
      ps,
    )
    return r.rows
  }, (row) => {
    const e = goodEvent(row)
    return contexts.length > 0 && !contexts.every((c) => e.contexts.includes(c)) ? undefined : e
  })
}

/** The position of a page's last row, in the order the pages are read (newest first). */
interface PageCursor {
  readonly cursor_ts: string
  readonly cursor_seq: string
}

/**
 * A JSON array written as it is read: `page` reads the rows after a cursor
 * (at most `pageSize`), `item` makes each row an element (undefined leaves it
 * out); at most `limit` elements.
 */
function jsonArrayByPages<R extends PageCursor>(limit: number | undefined, pageSize: number, page: (after?: { ts: string; seq: string }) => Promise<readonly R[]>, item: (row: R) => unknown): AsyncIterable<string> {
  return {
    async *[Symbol.asyncIterator]() {
      yield '['
      let sent = 0
      let after: { ts: string; seq: string } | undefined
      while (limit === undefined || sent < limit) {
        const rows = await page(after)
        const out: string[] = []
        for (const row of rows) {
          const e = item(row)
          if (e === undefined) continue
          if (limit !== undefined && sent >= limit) break
          out.push(`${sent++ === 0 ? '' : ','}${JSON.stringify(e)}`)
        }
        if (out.length > 0) yield out.join('')
        if (rows.length < pageSize) break
        const last = rows.at(-1)!
        after = { ts: last.cursor_ts, seq: last.cursor_seq }
      }
      yield ']'
    },
  }
}

/** `/micro/bad`'s answer, written as it is read, page by page, as `/micro/good`'s (see `goodStream`). */
function badStream(db: SearchDb, body: Record<string, unknown>, pageSize = GOOD_PAGE_SIZE): AsyncIterable<string> {
  const vendor = optionalString(body, 'vendor')
  const version = optionalString(body, 'version')
  const limit = optionalInt(body, 'limit', 0, Number.MAX_SAFE_INTEGER)
  const table = tablesOf(db).bad
  return jsonArrayByPages(limit, pageSize, async (after) => {
    const ps: unknown[] = []
    const cursor = after ? ` AND (failure_timestamp, seq) < ($${ps.push(after.ts)}::timestamptz, $${ps.push(after.seq)}::bigint)` : ''
    const r = await db.sql.query<{ line: string } & PageCursor>(
      // the cursor's columns under names of their own: ORDER BY would take an output column named `seq` for the table's
      `SELECT line, failure_timestamp::text AS cursor_ts, seq::text AS cursor_seq FROM ${table} WHERE recovered IS NULL${cursor} ORDER BY failure_timestamp DESC, seq DESC LIMIT ${pageSize}`,
      ps,
    )
    return r.rows
  }, (row) => {
    const parsed = JSON.parse(row.line) as Record<string, unknown>
    const e = { collectorPayload: null, rawEvent: badRawEvent(parsed), errors: badErrors(parsed.schema, row.line) }
    if (vendor !== undefined && e.rawEvent?.api.vendor !== vendor) return undefined
    if (version !== undefined && e.rawEvent?.api.version !== version) return undefined
    return e
  })
}

const TYPED_SORT: Record<string, string> = { collector_tstamp: 'collector_tstamp', event_id: 'id', app_id: 'app_id', event: 'event_type', event_name: 'event_name' }
/** Newest first; events sent together (one collector time) last sent first. */
const NEWEST_FIRST = 'collector_tstamp DESC, seq DESC'

/** Valid and failed events together, as Micro's UI lists them (`failed` tells them apart). */
function allEvents(db: SearchDb): string {
  const t = tablesOf(db)
  const cols = 'id, seq, collector_tstamp, app_id, event_type, event_name, failed, doc'
  return `(SELECT ${cols} FROM ${t.good} UNION ALL SELECT ${cols} FROM ${t.incomplete}) AS e`
}

/** Entities and self-describing events: lists and objects, which Micro's filters pass over. */
export const isComplexColumn = (c: string): boolean => /^(contexts_|unstruct_event_|derived_contexts)/.test(c) || c === 'contexts' || c === 'unstruct_event'

/** Timestamp columns: sortable, not filterable, no values listed. */
const isTimestampColumn = (c: string): boolean => {
  const i = FIELDS.indexOf(c as (typeof FIELDS)[number])
  return i >= 0 && FIELD_KINDS[i] === 'ts'
}

async function events(db: SearchDb, body: Record<string, unknown>) {
  const params: unknown[] = []
  const p = (v: unknown) => {
    params.push(v)
    return `$${params.length}`
  }
  const where: string[] = []
  if (body.filters !== undefined && body.filters !== null) {
    if (!Array.isArray(body.filters) || body.filters.length > MAX_COLUMNS) throw new BadRequest(`"filters" must be a list of at most ${MAX_COLUMNS} {"column", "values"}`)
    for (const f of body.filters) {
      if (!isObject(f) || typeof f.column !== 'string') throw new BadRequest('each filter must be {"column": "...", "values": [...]}')
      const values = f.values === undefined ? [] : f.values
      if (!Array.isArray(values) || !values.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) throw new BadRequest(`filter "${f.column}": "values" must be a list of strings, numbers or booleans`)
      // Micro passes over filters on entities and self-describing events, and over empty values
      if (isComplexColumn(f.column)) continue
      const text = values.map(String).filter((v) => v !== '')
      if (text.length === 0) continue
      if ([f.column, ...text].some((s) => s.includes('\u0000'))) throw new BadRequest('filters may not contain the NUL character')
      where.push(`lower(doc ->> ${p(f.column)}) IN (${text.map((v) => `lower(${p(v)})`).join(', ')})`)
    }
  }
  if (body.validEvents === true) where.push('NOT failed')
  else if (body.validEvents === false) where.push('failed')
  else if (body.validEvents !== undefined && body.validEvents !== null) throw new BadRequest('"validEvents" must be true, false or null')
  if (body.timeRange !== undefined && body.timeRange !== null) {
    if (!isObject(body.timeRange)) throw new BadRequest('"timeRange" must be {"start"?, "end"?}')
    if (body.timeRange.start !== undefined && body.timeRange.start !== null) where.push(`collector_tstamp >= ${p(time(body.timeRange.start, 'timeRange.start'))}::timestamptz`)
    if (body.timeRange.end !== undefined && body.timeRange.end !== null) where.push(`collector_tstamp < ${p(time(body.timeRange.end, 'timeRange.end'))}::timestamptz`)
  }
  let sorting: { column: string; desc: boolean } | undefined
  if (body.sorting !== undefined && body.sorting !== null) {
    const s = body.sorting
    if (!isObject(s) || typeof s.column !== 'string') throw new BadRequest('"sorting" must be {"column": "...", "desc": true|false}')
    if (s.column.includes('\u0000')) throw new BadRequest('"sorting" may not contain the NUL character')
    sorting = { column: s.column, desc: s.desc === true }
  }
  const page = optionalInt(body, 'page', 1, 1_000_000) ?? 1
  const pageSize = optionalInt(body, 'pageSize', 1, MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE
  const table = allEvents(db)
  const cond = where.length === 0 ? 'TRUE' : where.join(' AND ')
  const total = Number((await db.sql.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${table} WHERE ${cond}`, [...params])).rows[0]!.n)
  const order = sorting ? `${TYPED_SORT[sorting.column] ?? `doc -> ${p(sorting.column)}`} ${sorting.desc ? 'DESC' : 'ASC'} NULLS LAST, ${NEWEST_FIRST}` : NEWEST_FIRST
  const r = await db.sql.query<{ doc: string }>(`SELECT doc::text AS doc FROM ${table} WHERE ${cond} ORDER BY ${order} LIMIT ${p(pageSize)} OFFSET ${p((page - 1) * pageSize)}`, params)
  return { events: r.rows.map((x) => withNulls(JSON.parse(x.doc) as Record<string, unknown>)), totalPages: Math.max(1, Math.ceil(total / pageSize)), totalItems: total }
}

async function columns(db: SearchDb) {
  const src = allEvents(db)
  const r = await db.sql.query<{ k: string }>(`SELECT DISTINCT k FROM ${src} CROSS JOIN LATERAL jsonb_object_keys(e.doc) AS k`)
  if (r.rows.length === 0) return []
  // the fields of entities (a list of objects) and of self-describing events (an object), dotted after their column
  const dotted = await db.sql.query<{ k: string }>(
    `SELECT DISTINCT c.key || '.' || f AS k FROM ${src} CROSS JOIN LATERAL jsonb_each(e.doc) AS c
       CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(c.value) = 'array' THEN c.value ELSE jsonb_build_array(c.value) END) AS x
       CROSS JOIN LATERAL jsonb_object_keys(CASE WHEN jsonb_typeof(x) = 'object' THEN x ELSE '{}'::jsonb END) AS f
     WHERE c.key LIKE 'contexts\\_%' OR c.key LIKE 'unstruct\\_event\\_%'`,
  )
  // null fields are not stored, and every event has every atomic field
  return [...new Set([...FIELDS.filter((_, i) => FIELD_KINDS[i] !== 'json'), ...r.rows.map((x) => x.k), ...dotted.rows.map((x) => x.k)])].sort()
}

async function columnStats(db: SearchDb, body: Record<string, unknown>) {
  const cols = stringList(body.columns ?? [], 'columns', MAX_COLUMNS)
  const table = allEvents(db)
  const out: Record<string, { sortable: boolean; filterable: boolean; values?: unknown[] }> = {}
  for (const c of cols) {
    if (isTimestampColumn(c)) {
      out[c] = { sortable: true, filterable: false }
      continue
    }
    const kinds = await db.sql.query<{ scalar: boolean | null }>(`SELECT bool_and(jsonb_typeof(doc -> $1) IN ('string', 'number', 'boolean')) AS scalar FROM ${table} WHERE jsonb_typeof(doc -> $1) <> 'null'`, [c])
    // an atomic field that is null in every event (not stored) is still a sortable, filterable column
    const scalar = kinds.rows[0]?.scalar === true || ((kinds.rows[0]?.scalar ?? null) === null && isAtomicField(c))
    const entry: { sortable: boolean; filterable: boolean; values?: unknown[] } = { sortable: scalar, filterable: scalar }
    if (scalar) {
      // the first 20 distinct values, however many there are
      const vals = await db.sql.query<{ v: string }>(`SELECT DISTINCT doc ->> $1 AS v FROM ${table} WHERE jsonb_typeof(doc -> $1) IN ('string', 'number', 'boolean') ORDER BY v LIMIT 20`, [c])
      entry.values = vals.rows.map((x) => x.v)
    }
    out[c] = entry
  }
  return out
}

async function timeline(db: SearchDb, body: Record<string, unknown>) {
  const buckets = body.buckets
  if (!Array.isArray(buckets) || buckets.length > MAX_TIMELINE_BUCKETS) throw new BadRequest(`"buckets" must be a list of at most ${MAX_TIMELINE_BUCKETS} {"start", "end"}`)
  if (buckets.length === 0) return { points: [] }
  const params: unknown[] = []
  const rows = buckets.map((b, i) => {
    if (!isObject(b)) throw new BadRequest('each bucket must be {"start": …, "end": …}')
    params.push(time(b.start, `buckets[${i}].start`), time(b.end, `buckets[${i}].end`))
    return `(${i}, $${params.length - 1}::timestamptz, $${params.length}::timestamptz)`
  })
  const r = await db.sql.query<{ i: number; valid: number; failed: number }>(
    `SELECT b.i, (count(g.id) FILTER (WHERE NOT g.failed))::float8 AS valid, (count(g.id) FILTER (WHERE g.failed))::float8 AS failed
     FROM (VALUES ${rows.join(', ')}) AS b(i, s, e) LEFT JOIN (SELECT id, collector_tstamp, failed FROM ${tablesOf(db).good} UNION ALL SELECT id, collector_tstamp, failed FROM ${tablesOf(db).incomplete}) AS g ON g.collector_tstamp >= b.s AND g.collector_tstamp < b.e GROUP BY b.i ORDER BY b.i`,
    params,
  )
  const byIndex = new Map(r.rows.map((x) => [Number(x.i), x]))
  return { points: buckets.map((b, i) => ({ validEvents: Number(byIndex.get(i)?.valid ?? 0), failedEvents: Number(byIndex.get(i)?.failed ?? 0), bucket: b })) }
}

/** Micro 4.5's answer to any other `/micro/…` path (a JSON string), word for word. */
export const MICRO_NOT_FOUND = `Supported endpoints: ${MICRO_SUPPORTED_ENDPOINTS.join(', ')}`
const notFound = () => message(404, MICRO_NOT_FOUND)
const methods = (req: MicroRequest, allowed: readonly string[]) => (allowed.includes(req.method) ? undefined : textAnswer(405, `${req.path} accepts ${allowed.join(', ')}`, { allow: allowed.join(', ') }))

/** The whole text of an answer (a streamed one read to its end): for callers that want it in memory. */
export async function microText(r: MicroResponse): Promise<string> {
  if (r.stream === undefined) return r.body
  const parts: string[] = []
  for await (const chunk of r.stream) parts.push(chunk)
  return parts.join('')
}

/** Answers one `/micro/*` request. */
export async function micro(db: SearchDb, req: MicroRequest, deps: MicroDeps): Promise<MicroResponse> {
  const path = req.path.replace(/\/+$/, '')
  try {
    switch (path) {
      case '/micro/all':
        return methods(req, ['GET', 'POST']) ?? ok(await counts(db))
      case '/micro/good':
        return methods(req, ['GET', 'POST']) ?? { status: 200, headers: JSON_TYPE, body: '', stream: goodStream(db, req.method === 'POST' ? parseBody(req.body) : {}) }
      case '/micro/bad':
        return methods(req, ['GET', 'POST']) ?? { status: 200, headers: JSON_TYPE, body: '', stream: badStream(db, req.method === 'POST' ? parseBody(req.body) : {}) }
      case '/micro/reset': {
        const m = methods(req, ['GET', 'POST'])
        if (m) return m
        await db.sql.transaction(async (tx) => {
          await deleteIndex({ ...db, sql: tx }, 'good')
          await deleteIndex({ ...db, sql: tx }, 'bad')
        })
        return message(200, 'Reset completed')
      }
      case '/micro/events':
        return methods(req, ['POST']) ?? ok(await events(db, parseBody(req.body)))
      case '/micro/columns':
        return methods(req, ['GET']) ?? ok(await columns(db))
      case '/micro/columnStats':
        return methods(req, ['POST']) ?? ok(await columnStats(db, parseBody(req.body)))
      case '/micro/timeline':
        return methods(req, ['POST']) ?? ok(await timeline(db, parseBody(req.body)))
    }
    const iglu = /^\/micro\/iglu\/([^/]+)\/([^/]+)\/jsonschema\/([^/]+)$/.exec(path)
    if (iglu) {
      const m = methods(req, ['GET'])
      if (m) return m
      const [vendor, name, version] = iglu.slice(1).map((s) => {
        try {
          return decodeURIComponent(s)
        } catch {
          return s
        }
      }) as [string, string, string]
      if (!/^[a-zA-Z0-9_.-]+$/.test(vendor) || !/^[a-zA-Z0-9_-]+$/.test(name) || !/^[0-9]+-[0-9]+-[0-9]+$/.test(version)) {
        return message(404, IGLU_FORMAT_MESSAGE)
      }
      const r = await deps.lookupSchema(vendor, name, 'jsonschema', version)
      return r.ok ? ok(r.schema) : { status: 404, headers: JSON_TYPE, body: JSON.stringify(r.errors) }
    }
    if (path === '/micro/iglu' || path.startsWith('/micro/iglu/')) return methods(req, ['GET']) ?? message(404, IGLU_FORMAT_MESSAGE)
    return notFound()
  } catch (err) {
    if (err instanceof BadRequest) return textAnswer(400, err.message)
    throw err
  }
}

/** For the routes kept in files of their own (./micro-wait.ts): the same body rules, bad requests and `/micro/events` query. */
export { BadRequest as MicroBadRequest, events as microEvents, parseBody as microBody }
