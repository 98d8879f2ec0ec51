/**
 * The enriched event being built, its TSV form and the JSON form bad rows
 * carry (`PartiallyEnrichedEvent`).
 */
import { F, FIELD_COUNT, FIELD_KINDS, FIELDS } from './fields'
import { flat, needsEscape, quote } from './json'
import { memo } from './memo'

/** A self-describing entity: its (validated) schema URI and the compact text of its data. */
export interface Entity {
  readonly schema: string
  readonly data: string
}

export const CONTEXTS_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1'
export const UNSTRUCT_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
export const ATOMIC_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/atomic/jsonschema/1-0-0'
export const FAILURE_SCHEMA = 'iglu:com.snowplowanalytics.snowplow/failure/jsonschema/1-0-0'

export type Value = string | number | null

/** 131 nulls, copied for each event (a packed array, cheaper to copy than to fill). */
const NULL_ROW: Value[] = []
for (let i = 0; i < FIELD_COUNT; i++) NULL_ROW.push(null)

/**
 * An event in the making. `f` holds the 131 columns (JSON columns are filled
 * from `contexts`, `unstruct` and `derived` by `finish`).
 */
export class EnrichedEvent {
  readonly f: Value[] = NULL_ROW.slice()
  contexts: Entity[] = []
  unstruct: Entity | null = null
  /** Contexts added by enrichments (each step's list is prepended). */
  derived: Entity[] = []
  /** `validation_info` entities for superseded schemas (distinct). */
  validationInfo: Entity[] = []
  /** A `pii_transformation` event's data, when a pii enrichment changed something. */
  pii: string | null = null
  /**
   * Timestamp columns written from epoch milliseconds (collector, device
   * created and sent times): the text and the milliseconds it reads back as,
   * so steps need not parse the text again while the column still holds it.
   */
  collectorText: string | null = null
  collectorMs = 0
  createdText: string | null = null
  createdMs = 0
  sentText: string | null = null
  sentMs = 0

  get(name: keyof typeof F): Value {
    return this.f[F[name]]!
  }
  set(name: keyof typeof F, v: Value): void {
    this.f[F[name]] = v
  }
}

function entityText(e: Entity): string {
  return `{"schema":${quotedSchema(e.schema)},"data":${e.data}}`
}

/**
 * Schema URIs as JSON strings. The same few recur (and mostly as the same
 * string objects, whose hash is kept), so a lookup is cheaper than a check for escapes.
 */
const quotedSchemas = new Map<string, string>()
function quotedSchema(schema: string): string {
  return memo(quotedSchemas, schema, 1000, quote)
}

/** The contexts wrapper (1-0-1) of a list, or null when empty. */
export function contextsText(list: readonly Entity[]): string | null {
  if (list.length === 0) return null
  let s = `{"schema":"${CONTEXTS_SCHEMA}","data":[`
  for (let i = 0; i < list.length; i++) s += (i ? ',' : '') + entityText(list[i]!)
  return s + ']}'
}

export function unstructText(e: Entity | null): string | null {
  return e === null ? null : `{"schema":"${UNSTRUCT_SCHEMA}","data":${entityText(e)}}`
}

/** Sets the three JSON columns from the entity lists; `failures` go first in derived_contexts. */
export function finish(ev: EnrichedEvent, failures: readonly Entity[] = []): void {
  ev.f[F.contexts] = contextsText(ev.contexts)
  ev.f[F.unstruct_event] = unstructText(ev.unstruct)
  ev.f[F.derived_contexts] = contextsText(failures.length || ev.validationInfo.length ? [...failures, ...ev.derived, ...ev.validationInfo] : ev.derived)
}

/** Java `Float.toString`: the shortest decimal that reads back as the same float. */
export function javaFloat(x: number): string {
  // The same coordinates recur event after event (IP lookups); 0 is not kept (-0 and 0 are one key).
  return x === 0 ? javaFloatText(x) : memo(floatTexts, x, 1024, javaFloatText)
}

const floatTexts = new Map<number, string>()

/** {@link javaFloat}, computed. */
export function javaFloatText(x: number): string {
  const f = Math.fround(x)
  if (f === 0) return Object.is(f, -0) ? '-0.0' : '0.0'
  if (!Number.isFinite(f)) return Number.isNaN(f) ? 'NaN' : f > 0 ? 'Infinity' : '-Infinity'
  let digits = ''
  let exp = 0
  for (let p = 1; p <= 9; p++) {
    const s = Math.abs(f).toExponential(p - 1)
    if (Math.fround(Number(s) * Math.sign(f)) === f) {
      const [m, e] = s.split('e') as [string, string]
      digits = m.replace('.', '')
      exp = Number(e)
      break
    }
  }
  digits = digits.replace(/0+$/, '') || '0'
  const sign = f < 0 ? '-' : ''
  const abs = Math.abs(f)
  if (abs >= 1e-3 && abs < 1e7) {
    if (exp >= 0) {
      const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0')
      const frac = digits.slice(exp + 1) || '0'
      return `${sign}${int}.${frac}`
    }
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
  }
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exp}`
}

const FLOAT_COLUMNS = FIELD_KINDS.flatMap((k, i) => (k === 'float' ? [i] : []))
/** Every column but the JSON ones (whose text always needs escaping in JSON). */
const TEXT_COLUMNS = FIELD_KINDS.flatMap((k, i) => (k === 'json' ? [] : [i]))

/** The 131-column TSV line. */
export function toTsv(f: readonly Value[]): string {
  // Without float values, joining writes every column as below (null → empty, numbers
  // with String) and gives a flat string.
  let plain = f.length === FIELD_COUNT
  for (let j = 0; j < FLOAT_COLUMNS.length; j++) if (typeof f[FLOAT_COLUMNS[j]!] === 'number') plain = false
  if (plain) return f.join('\t')
  if (f.length === FIELD_COUNT) {
    // The float columns written as Java does, then joined as above.
    const g = f.slice()
    for (let j = 0; j < FLOAT_COLUMNS.length; j++) {
      const v = g[FLOAT_COLUMNS[j]!]
      if (typeof v === 'number') g[FLOAT_COLUMNS[j]!] = javaFloat(v)
    }
    return g.join('\t')
  }
  let s = ''
  for (let i = 0; i < FIELD_COUNT; i++) {
    const v = f[i]
    if (i > 0) s += '\t'
    if (v === null || v === undefined) continue
    if (typeof v === 'string') s += v
    else s += FIELD_KINDS[i] === 'float' ? javaFloat(v) : String(v)
  }
  return flat(s)
}

/** The JSON object bad rows carry: every column by name, null when unset; decimals and JSON columns as strings. */
export function toPartialJson(f: readonly Value[]): string {
  // Whether any text column needs escaping, checked once over all of them
  // (the JSON columns always do, and are always escaped).
  let texts = ''
  for (let j = 0; j < TEXT_COLUMNS.length; j++) {
    const v = f[TEXT_COLUMNS[j]!]
    if (typeof v === 'string') texts += v
  }
  const plain = !needsEscape(texts)
  // Concatenated, not joined (joining pieces that are themselves concatenations
  // is slower); a run of null columns is one cached piece, so the result has few
  // pieces to copy when it is flattened.
  let s = '{'
  let i = 0
  while (i < FIELD_COUNT) {
    const v = f[i]
    if (v === null || v === undefined) {
      let j = i + 1
      while (j < FIELD_COUNT && (f[j] === null || f[j] === undefined)) j++
      s += nullRun(i, j)
      i = j
      continue
    }
    if (typeof v === 'string') s += plain && FIELD_KINDS[i] !== 'json' ? OPENING_QUOTED[i]! + v + '"' : OPENING[i]! + quote(v)
    else s += OPENING[i]! + (FIELD_KINDS[i] === 'float' ? javaFloat(v) : String(v))
    i++
  }
  return s + '}'
}

/** `"a":null,"b":null` for the columns [start, end), with the leading comma unless start is 0. */
const nullRuns = new Map<number, string>()
function nullRun(start: number, end: number): string {
  const k = start * 256 + end
  let r = nullRuns.get(k)
  if (r === undefined) {
    r = ''
    for (let i = start; i < end; i++) r += (i ? ',' : '') + MEMBER_PREFIXES[i]! + 'null'
    r = flat(r)
    nullRuns.set(k, r)
  }
  return r
}

/** `"name":` of each column. */
const MEMBER_PREFIXES = FIELDS.map((name) => `"${name}":`)
/** `,"name":` of each column (no comma for the first), and the same with a string's opening quote. */
const OPENING = MEMBER_PREFIXES.map((p, i) => (i ? ',' : '') + p)
const OPENING_QUOTED = OPENING.map((p) => p + '"')
