/**
 * What the pipeline observed of event specifications, from the search store's
 * indexed `spec_ids` columns (migration 5 in `../search/store.ts`): events
 * tagged with a specification (the tracker's or enrich's `event_specification`
 * entity) and bad rows whose enrichment failures name it. Every statement
 * reads the typed columns and indexes: the tagged events of a window through
 * the partial index on tagged events, one specification's through the GIN
 * index on `spec_ids`. One SQL for PGlite and Aurora (Data API): values are
 * parameters, arrays travel as JSON text.
 */
import { specOfFailure } from '../search/documents'
import { shredKey } from '../enrich/shred'
import { tablesOf, type SearchDb } from '../search/store'

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Entities whose presence is measured, at most. */
export const MAX_ENTITIES = 20
/** Newest bad rows read to name the broken rules. */
const RULE_SAMPLE = 200

const iso = (ms: number) => new Date(ms).toISOString()
const num = (v: unknown) => Number(v ?? 0)

export interface SpecCounts {
  readonly hour: number
  readonly day: number
  /** Bad rows of the last day naming the specification. */
  readonly brokenDay: number
}

/** Counts of the last hour and day for every specification seen in them (by lower-case id). */
export async function observedCounts(db: SearchDb, now: number): Promise<Map<string, SpecCounts>> {
  const t = tablesOf(db)
  const [good, bad] = await Promise.all([
    db.sql.query<{ id: string; hour: unknown; day: unknown }>(
      `SELECT s.id, count(*) FILTER (WHERE g.collector_tstamp >= $2::timestamptz) AS hour, count(*) AS day
         FROM ${t.good} g CROSS JOIN LATERAL jsonb_array_elements_text(g.spec_ids) AS s(id)
        WHERE g.spec_ids <> '[]'::jsonb AND g.collector_tstamp >= $1::timestamptz GROUP BY s.id`,
      [iso(now - DAY), iso(now - HOUR)],
    ),
    db.sql.query<{ id: string; n: unknown }>(
      `SELECT s.id, count(*) AS n FROM ${t.bad} b CROSS JOIN LATERAL jsonb_array_elements_text(b.spec_ids) AS s(id)
        WHERE b.spec_ids <> '[]'::jsonb AND b.failure_timestamp >= $1::timestamptz GROUP BY s.id`,
      [iso(now - DAY)],
    ),
  ])
  const out = new Map<string, SpecCounts>()
  for (const r of good.rows) out.set(r.id, { hour: num(r.hour), day: num(r.day), brokenDay: 0 })
  for (const r of bad.rows) out.set(r.id, { ...(out.get(r.id) ?? { hour: 0, day: 0 }), brokenDay: num(r.n) })
  return out
}

/** When an event tagged with the specification was last stored (ms), or undefined: never (within the store's retention). */
export async function lastSeen(db: SearchDb, id: string): Promise<number | undefined> {
  const r = await db.sql.query<{ t: unknown }>(`SELECT max(collector_tstamp) AS t FROM ${tablesOf(db).good} WHERE spec_ids @> $1::jsonb`, [JSON.stringify([id.toLowerCase()])])
  const v = r.rows[0]?.t
  if (v === null || v === undefined) return undefined
  const ms = v instanceof Date ? v.getTime() : Date.parse(String(v))
  return Number.isFinite(ms) ? ms : undefined
}

export interface EntityPresence {
  readonly schema: string
  /** Tagged events of the last day carrying at least one such entity. */
  readonly present: number
  /** `present / day` (0 when nothing was tagged). */
  readonly rate: number
}

export interface BrokenRule {
  readonly rule: string
  readonly version: number
  /** Among the newest bad rows read (at most 200). */
  readonly count: number
}

export interface SpecObservation extends SpecCounts {
  /** Tagged events per hour over the last 24 hours, oldest first (24 values). */
  readonly histogram: readonly number[]
  /** Start of the histogram's first hour (ms). */
  readonly histogramFrom: number
  readonly entities: readonly EntityPresence[]
  readonly brokenRules: readonly BrokenRule[]
  readonly lastSeen?: number
  /** Dashboard views (`/dashboard-ui#…`) that show what each number counts. */
  readonly links: { readonly tagged: string; readonly taggedHour: string; readonly broken: string; readonly entity: Readonly<Record<string, string>> }
}

/** The dashboard query of the events tagged with a specification. */
export const taggedQuery = (id: string) => `contexts_com_snowplowanalytics_snowplow_event_specification_1.id:"${id}"`
const dashboard = (index: 'good' | 'bad', range: '1h' | '24h', q: string) => `/dashboard-ui#${new URLSearchParams({ index, range, q }).toString()}`

/** The shredded key of an entity schema's contexts (`contexts_com_acme_cart_1`), or undefined for a URI that is not one. */
export function contextKey(uri: string): string | undefined {
  const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([0-9]+)-[0-9]+-[0-9]+$/.exec(uri)
  return m ? `contexts_${shredKey(m[1]!, m[2]!, m[3]!)}` : undefined
}

/** Everything the detail view shows of one specification; `entities` are the Iglu URIs of its tracked entities. */
export async function observeSpec(db: SearchDb, id: string, entities: readonly string[], now: number): Promise<SpecObservation> {
  const t = tablesOf(db)
  const ids = JSON.stringify([id.toLowerCase()])
  const keyed = entities.slice(0, MAX_ENTITIES).map((schema) => ({ schema, key: contextKey(schema) }))
  const params: unknown[] = [ids, iso(now - DAY), iso(now - HOUR)]
  const presence = keyed.map((e, i) => {
    if (e.key === undefined) return `0 AS e${i}`
    params.push(e.key)
    return `count(*) FILTER (WHERE doc ? $${params.length}) AS e${i}`
  })
  const histogramFrom = Math.floor(now / HOUR) * HOUR - 23 * HOUR
  const [counts, hist, bad, badCount, seen] = await Promise.all([
    db.sql.query<Record<string, unknown>>(
      `SELECT count(*) FILTER (WHERE collector_tstamp >= $3::timestamptz) AS hour, count(*) AS day${presence.map((p) => `, ${p}`).join('')}
         FROM ${t.good} WHERE spec_ids @> $1::jsonb AND collector_tstamp >= $2::timestamptz`,
      params,
    ),
    db.sql.query<{ h: unknown; n: unknown }>(
      `SELECT floor(extract(epoch FROM collector_tstamp) / 3600) AS h, count(*) AS n FROM ${t.good}
        WHERE spec_ids @> $1::jsonb AND collector_tstamp >= $2::timestamptz GROUP BY 1`,
      [ids, iso(histogramFrom)],
    ),
    db.sql.query<{ line: string }>(
      `SELECT line FROM ${t.bad} WHERE spec_ids @> $1::jsonb AND failure_timestamp >= $2::timestamptz ORDER BY failure_timestamp DESC, seq DESC LIMIT ${RULE_SAMPLE}`,
      [ids, iso(now - DAY)],
    ),
    db.sql.query<{ n: unknown }>(`SELECT count(*) AS n FROM ${t.bad} WHERE spec_ids @> $1::jsonb AND failure_timestamp >= $2::timestamptz`, [ids, iso(now - DAY)]),
    lastSeen(db, id),
  ])
  const row = counts.rows[0] ?? {}
  const day = num(row.day)
  const histogram = new Array<number>(24).fill(0)
  for (const r of hist.rows) {
    const i = Math.round((num(r.h) * HOUR - histogramFrom) / HOUR)
    if (i >= 0 && i < 24) histogram[i] = num(r.n)
  }
  const rules = new Map<string, BrokenRule>()
  for (const r of bad.rows) {
    for (const f of failuresOf(r.line)) {
      const s = specOfFailure(f)
      if (s === undefined || s.id !== id.toLowerCase()) continue
      const k = `${s.version}\u0000${s.rule}`
      const prev = rules.get(k)
      rules.set(k, { rule: s.rule, version: s.version, count: (prev?.count ?? 0) + 1 })
    }
  }
  const entityLinks: Record<string, string> = {}
  for (const e of keyed) if (e.key) entityLinks[e.schema] = dashboard('good', '24h', `${taggedQuery(id)} AND _exists_:${e.key}`)
  return {
    hour: num(row.hour),
    day,
    brokenDay: num(badCount.rows[0]?.n),
    histogram,
    histogramFrom,
    entities: keyed.map((e, i) => {
      const present = num(row[`e${i}`])
      return { schema: e.schema, present, rate: day === 0 ? 0 : present / day }
    }),
    brokenRules: [...rules.values()].sort((a, b) => b.count - a.count),
    ...(seen !== undefined ? { lastSeen: seen } : {}),
    links: { tagged: dashboard('good', '24h', taggedQuery(id)), taggedHour: dashboard('good', '1h', taggedQuery(id)), broken: dashboard('bad', '24h', `"${id}"`), entity: entityLinks },
  }
}

/** The error messages of an `enrichment_failures` bad row's text. */
function failuresOf(line: string): string[] {
  let row: unknown
  try {
    row = JSON.parse(line)
  } catch {
    return []
  }
  const messages = (row as { data?: { failure?: { messages?: unknown } } } | null)?.data?.failure?.messages
  if (!Array.isArray(messages)) return []
  return messages.map((m) => (m as { message?: { error?: unknown } } | null)?.message?.error).filter((e): e is string => typeof e === 'string')
}
