/**
 * "Try a draft against live traffic": the rules of a specification as it is
 * being written, run by the event specification enrichment's own matcher
 * (`compileSpec`, `brokenRules`) over the newest stored events of its event
 * schema, before anything is published.
 */
import { brokenRules, compileSpec } from '../enrich/enrichments/event-spec'
import { EnrichedEvent, type Entity } from '../enrich/event'
import { FIELD_COUNT, FIELD_KINDS, FIELDS } from '../enrich/fields'
import { isObject } from '../iglu/selfdesc'
import { tablesOf, type SearchDb } from '../search/store'

export const DEFAULT_TRY_EVENTS = 200
export const MAX_TRY_EVENTS = 1000
/** Violating events reported, at most. */
export const MAX_VIOLATORS = 20

export interface Violator {
  readonly eventId: string
  readonly collectorTstamp: string
  readonly appId: string | null
  /** Each rule the event breaks, in the enrichment's words. */
  readonly reasons: readonly string[]
}

export type TryReport =
  | {
      readonly ok: true
      readonly source: string
      /** Stored events of the source examined (the newest first). */
      readonly examined: number
      readonly matched: number
      readonly violated: number
      readonly violators: readonly Violator[]
    }
  | { readonly ok: false; readonly message: string }

/** An enriched TSV line back into the event the enrichment sees: its fields, the tracker's contexts and the self-describing event. */
export function eventFromTsv(line: string): EnrichedEvent | undefined {
  const cols = line.split('\t')
  if (cols.length !== FIELD_COUNT) return undefined
  const ev = new EnrichedEvent()
  for (let i = 0; i < FIELD_COUNT; i++) {
    const v = cols[i]!
    if (v === '' || FIELD_KINDS[i] === 'json') continue
    ev.f[i] = FIELD_KINDS[i] === 'int' || FIELD_KINDS[i] === 'float' || FIELD_KINDS[i] === 'dec' ? Number(v) : v
  }
  const json = (name: string): unknown => {
    const v = cols[FIELDS.indexOf(name as (typeof FIELDS)[number])]
    if (v === undefined || v === '') return undefined
    try {
      return JSON.parse(v)
    } catch {
      return undefined
    }
  }
  const entity = (e: unknown): Entity | undefined => (isObject(e) && typeof e.schema === 'string' ? { schema: e.schema, data: JSON.stringify(e.data ?? null) } : undefined)
  const ctx = json('contexts')
  if (isObject(ctx) && Array.isArray(ctx.data)) for (const c of ctx.data) {
    const e = entity(c)
    if (e) ev.contexts.push(e)
  }
  const ue = json('unstruct_event')
  if (isObject(ue)) ev.unstruct = entity(ue.data) ?? null
  return ev
}

/** The store's `schema_uri` / `event_type` condition for an event schema. */
function sourceFilter(source: string): { where: string; value: string } {
  if (source === 'iglu:com.snowplowanalytics.snowplow/page_view/jsonschema/1-0-0') return { where: 'event_type = $1', value: 'page_view' }
  if (source === 'iglu:com.snowplowanalytics.snowplow/page_ping/jsonschema/1-0-0') return { where: 'event_type = $1', value: 'page_ping' }
  return { where: 'schema_uri = $1', value: source }
}

/**
 * Runs `snapshot`'s rules over the newest `limit` stored events of its event
 * schema. A draft that cannot be compiled (no event schema, a rule that is
 * not a schema) is reported, not thrown.
 */
export async function tryDraft(db: SearchDb, id: string, snapshot: Record<string, unknown>, limit: number): Promise<TryReport> {
  let spec
  try {
    spec = compileSpec({ id, version: 0, status: 'draft', snapshot })
  } catch (err) {
    return { ok: false, message: `the draft cannot be tried: ${(err as Error).message}` }
  }
  const n = Math.max(1, Math.min(MAX_TRY_EVENTS, Math.floor(limit)))
  const f = sourceFilter(spec.event)
  const r = await db.sql.query<{ line: string }>(`SELECT line FROM ${tablesOf(db).good} WHERE ${f.where} ORDER BY collector_tstamp DESC, seq DESC LIMIT ${n}`, [f.value])
  let matched = 0
  let violated = 0
  const violators: Violator[] = []
  for (const row of r.rows) {
    const ev = eventFromTsv(row.line)
    if (ev === undefined) continue
    const reasons = brokenRules(spec, ev)
    if (reasons.length === 0) {
      matched++
      continue
    }
    violated++
    if (violators.length < MAX_VIOLATORS) {
      violators.push({ eventId: String(ev.get('event_id') ?? ''), collectorTstamp: String(ev.get('collector_tstamp') ?? ''), appId: (ev.get('app_id') as string | null) ?? null, reasons })
    }
  }
  return { ok: true, source: spec.event, examined: matched + violated, matched, violated, violators }
}
