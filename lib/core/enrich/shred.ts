/**
 * Enriched TSV → JSON, as the Snowplow analytics SDKs shred it (lossy form):
 * every atomic column by name (null when empty) with its type, each context
 * type as `contexts_<vendor>_<name>_<model>` (an array of the entities' data,
 * derived contexts after the tracker's), the self-describing event as
 * `unstruct_event_<vendor>_<name>_<model>` (its data), and `geo_location`
 * (`"<lat>,<lon>"`) when both coordinates are set. No `_schema_version` is added.
 */
import { parseTimestamp } from './convert'
import { FIELD_COUNT, FIELD_KINDS, FIELDS } from './fields'
import { instant } from './time'

export type ShredResult = { ok: true; json: Record<string, unknown> } | { ok: false; error: string }

const INT_LIKE = new Set(['int'])
const DOUBLE_LIKE = new Set(['float', 'dec'])

/** `vendor/name/model` → the key suffix (`com_acme_link_click_1`). */
export function shredKey(vendor: string, name: string, model: string): string {
  const v = vendor.replace(/[.-]/g, '_').toLowerCase()
  const n = name.replace(/[.-]/g, '_').replace(/([^A-Z_])([A-Z])/g, '$1_$2').toLowerCase()
  return `${v}_${n}_${model}`
}

function keyOf(uri: string): string | undefined {
  const m = /^iglu:([^/]+)\/([^/]+)\/[^/]+\/([0-9]+)-[0-9]+-[0-9]+$/.exec(uri)
  return m ? shredKey(m[1]!, m[2]!, m[3]!) : undefined
}

function timestamp(v: string): string {
  return instant(parseTimestamp(v.length === 19 ? `${v}.000` : v))
}

/** Shreds one TSV line; errors are returned, not thrown. */
export function tryShred(line: string): ShredResult {
  const cols = line.split('\t')
  if (cols.length !== FIELD_COUNT) return { ok: false, error: `expected ${FIELD_COUNT} tab-separated fields, got ${cols.length}` }
  const out: Record<string, unknown> = {}
  const shredded: Record<string, unknown> = {}
  try {
    for (let i = 0; i < FIELD_COUNT; i++) {
      const name = FIELDS[i]!
      const kind = FIELD_KINDS[i]!
      const v = cols[i]!
      if (kind === 'json') {
        if (v === '') continue
        const doc = JSON.parse(v) as { data: unknown }
        if (name === 'unstruct_event') {
          const inner = doc.data as { schema: string; data: unknown }
          const k = keyOf(inner.schema)
          if (k) shredded[`unstruct_event_${k}`] = inner.data
        } else {
          for (const e of doc.data as { schema: string; data: unknown }[]) {
            const k = keyOf(e.schema)
            if (!k) continue
            const key = `contexts_${k}`
            const list = (shredded[key] as unknown[] | undefined) ?? []
            list.push(e.data)
            shredded[key] = list
          }
        }
        continue
      }
      if (v === '') out[name] = null
      else if (kind === 'ts') out[name] = timestamp(v)
      else if (INT_LIKE.has(kind)) out[name] = Number.parseInt(v, 10)
      else if (DOUBLE_LIKE.has(kind)) out[name] = Number(v)
      else if (kind === 'bool') {
        if (v !== '0' && v !== '1') return { ok: false, error: `${name}: expected 0 or 1, got ${v}` }
        out[name] = v === '1'
      } else out[name] = v
    }
  } catch (err) {
    return { ok: false, error: (err as Error).message }
  }
  if (out.geo_latitude !== null && out.geo_longitude !== null) out.geo_location = `${out.geo_latitude},${out.geo_longitude}`
  return { ok: true, json: { ...out, ...shredded } }
}

/** Shreds one TSV line; throws on a line that is not an enriched event. */
export function shred(line: string): Record<string, unknown> {
  const r = tryShred(line)
  if (!r.ok) throw new Error(`Not an enriched event: ${r.error}`)
  return r.json
}
