/**
 * What the search store keeps of each output of the pipeline: the enriched
 * event shredded to JSON as the analytics SDKs do it (keyed by `event_id`, so
 * a redelivered record updates instead of duplicating), or the bad row
 * (keyed by a hash of its text) with Snowplow Mini's renaming of fields whose
 * type varies, so every field path has one type. The columns kept apart
 * from the document are the ones searches filter and sort on.
 */
import { createHash } from 'node:crypto'
import { FIELD_KINDS, FIELDS } from '../enrich/fields'
import { tryShred } from '../enrich/shred'
import { sanitizeColumn, sanitizeDocument, sanitizeLine, sanitizeStrings } from './sanitize'
import { renameUnions } from './unions'
import { badRowWords } from './words'

export { renameUnions }

/** The atomic fields of the shredded JSON, in order (the self-describing columns are shredded into other keys). */
const ATOMIC: readonly string[] = FIELDS.filter((_, i) => FIELD_KINDS[i] !== 'json')

/** A shredded event without its null fields: most of the 128 atomic fields are empty, and a quarter of the size loads four times faster. */
export function withoutNulls(doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k in doc) if (doc[k] !== null) out[k] = doc[k]
  return out
}

/** The stored document as the analytics SDKs shred it: every atomic field, null when empty, in order, then the rest. */
export function withNulls(doc: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of ATOMIC) out[k] = doc[k] ?? null
  for (const k in doc) if (!(k in out)) out[k] = doc[k]
  return out
}

/** Whether a field is one of the enriched event's atomic fields. */
export const isAtomicField = (name: string): boolean => ATOMIC_SET.has(name)
const ATOMIC_SET = new Set(ATOMIC)

export interface GoodDocument {
  readonly id: string
  /** Epoch milliseconds. */
  readonly collectorTstamp: number
  readonly appId: string | null
  /** The enriched `event` (`page_view`, `unstruct`, `struct`, …). */
  readonly eventType: string | null
  readonly eventName: string | null
  /** `iglu:{event_vendor}/{event_name}/{event_format}/{event_version}`, when all four are set. */
  readonly schema: string | null
  /** A failed event (from `incomplete`), stored with the good ones and flagged. */
  readonly failed: boolean
  /** The shredded event without its null fields (`withNulls` restores them). */
  readonly doc: Record<string, unknown>
  /** The enriched TSV line itself (the Micro API's non-lossy event is read from it). */
  readonly line: string
  /** Ids of the event specifications it carries (`event_specification` entities, the tracker's or enrich's). */
  readonly specIds: readonly string[]
}

export interface BadDocument {
  readonly id: string
  /** Epoch milliseconds of `data.failure.timestamp` (the load time when there is none). */
  readonly timestamp: number
  /** The bad row's schema name (`schema_violations`, `enrichment_failures`, …). */
  readonly failureType: string | null
  readonly doc: Record<string, unknown>
  /** The bad row as it was on the stream (the Micro API answers with it unrenamed). */
  readonly line: string
  /** The words of its text, found by bare words in queries (`./words.ts`). */
  readonly words: readonly string[]
  /** Ids of the event specifications whose rules it reports broken (enrichment failures of the event specification enrichment). */
  readonly specIds: readonly string[]
}

/** The shredded key of the `event_specification` entities. */
export const SPEC_CONTEXT_KEY = 'contexts_com_snowplowanalytics_snowplow_event_specification_1'
/** At most this many specification ids are kept per document. */
const MAX_SPEC_IDS = 16

/** The specification ids of a shredded event (distinct, in order). */
export function specIdsOfEvent(doc: Readonly<Record<string, unknown>>): string[] {
  const list = doc[SPEC_CONTEXT_KEY]
  if (!Array.isArray(list)) return []
  const out = new Set<string>()
  for (const e of list) if (e !== null && typeof e === 'object' && typeof (e as { id?: unknown }).id === 'string') out.add((e as { id: string }).id.toLowerCase())
  return [...out].slice(0, MAX_SPEC_IDS)
}

/** `event specification "Name" (<id>, version N): …`, as the enrichment writes its failures. */
const SPEC_FAILURE = /^event specification (?:"(?:[^"\\]|\\.)*" )?\(([^,()\s]+), version ([0-9]+)\): /

/** The specification id and version a failure message of the event specification enrichment names, or undefined. */
export function specOfFailure(message: string): { id: string; version: number; rule: string } | undefined {
  const m = SPEC_FAILURE.exec(message)
  return m ? { id: m[1]!.toLowerCase(), version: Number(m[2]), rule: message.slice(m[0].length) } : undefined
}

/** The ids of the specifications an `enrichment_failures` bad row reports broken. */
export function specIdsOfBadRow(row: unknown): string[] {
  const messages = (row as { data?: { failure?: { messages?: unknown } } } | null)?.data?.failure?.messages
  if (!Array.isArray(messages)) return []
  const out = new Set<string>()
  for (const m of messages) {
    const error = (m as { message?: { error?: unknown } } | null)?.message?.error
    if (typeof error !== 'string') continue
    const s = specOfFailure(error)
    if (s) out.add(s.id)
  }
  return [...out].slice(0, MAX_SPEC_IDS)
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string }

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)

/** The document of an enriched event (a TSV line from `good` or `incomplete`). */
export function goodDocument(line: string, failed: boolean): Parsed<GoodDocument> {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line
  const s = tryShred(text)
  if (!s.ok) return { ok: false, error: `not an enriched event: ${s.error}` }
  const j = s.json
  const id = str(j.event_id)
  if (id === null) return { ok: false, error: 'not an enriched event: no event_id' }
  const ts = Date.parse(String(j.collector_tstamp))
  if (!Number.isFinite(ts)) return { ok: false, error: 'not an enriched event: no collector_tstamp' }
  const [v, n, f, ver] = [str(j.event_vendor), str(j.event_name), str(j.event_format), str(j.event_version)]
  const notes = new Set<string>()
  const cleanLine = sanitizeLine(text, notes)
  const columns = { id: sanitizeColumn(id, notes)!, appId: sanitizeColumn(str(j.app_id), notes), eventType: sanitizeColumn(str(j.event), notes), eventName: sanitizeColumn(n, notes), schema: sanitizeColumn(v && n && f && ver ? `iglu:${v}/${n}/${f}/${ver}` : null, notes) }
  const { doc } = sanitizeDocument(withoutNulls(j), notes)
  return { ok: true, value: { ...columns, collectorTstamp: ts, failed, doc, line: cleanLine, specIds: sanitizeStrings(specIdsOfEvent(j)) } }
}

/** The document of a bad row (a line from `bad`); `now` stands in for a missing failure timestamp. */
export function badDocument(line: string, now: number): Parsed<BadDocument> {
  const text = line.trim()
  let row: unknown
  try {
    row = JSON.parse(text)
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` }
  }
  if (row === null || typeof row !== 'object' || Array.isArray(row) || typeof (row as { schema?: unknown }).schema !== 'string') {
    return { ok: false, error: 'not a bad row: a self-describing JSON document {"schema", "data"} was expected' }
  }
  const r = row as { schema: string; data?: { failure?: { timestamp?: unknown } } }
  const ts = Date.parse(String(r.data?.failure?.timestamp ?? ''))
  const name = /^iglu:[^/]+\/([^/]+)\//.exec(r.schema)?.[1] ?? null
  const notes = new Set<string>()
  const cleanLine = sanitizeLine(text, notes)
  const failureType = sanitizeColumn(name, notes)
  const { doc } = sanitizeDocument(renameUnions(row) as Record<string, unknown>, notes)
  return {
    ok: true,
    value: { id: createHash('sha256').update(text).digest('hex'), timestamp: Number.isFinite(ts) ? ts : now, failureType, doc, line: cleanLine, words: sanitizeStrings(badRowWords(row)), specIds: sanitizeStrings(specIdsOfBadRow(row)) },
  }
}
