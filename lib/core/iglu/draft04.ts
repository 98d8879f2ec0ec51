/**
 * JSON Schema draft-04 through ajv-draft-04: meta-schema validity of a schema
 * body and compilation of validators. References to remote documents are not
 * fetched (as Iglu clients do): any `$ref` that is neither local (`#...`) nor the
 * draft-04 meta-schema is treated as an empty schema.
 */
import Ajv04 from 'ajv-draft-04'
import type { ErrorObject, ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { DRAFT4_URI } from './metaschema'
import { ajvRegExp, currentPatternBudget, PatternBudget, PatternBudgetExceeded, withPatternBudget } from './regex-engine'

export type { ErrorObject, ValidateFunction }

/** Formats ajv checks; any other `format` value is accepted without check. */
export const KNOWN_FORMATS = [
  'date-time', 'date', 'time', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'uuid', 'regex',
] as const

function makeAjv(): Ajv04 {
  const ajv = new Ajv04({
    strict: false,
    allErrors: true,
    validateSchema: false,
    addUsedSchema: false,
    logger: false,
    unicodeRegExp: false,
    // `pattern` and `patternProperties` run on a linear-time engine (see regex-engine.ts).
    code: { regExp: ajvRegExp },
  })
  addFormats(ajv, [...KNOWN_FORMATS])
  return ajv
}

let shared: Ajv04 | undefined
function ajv(): Ajv04 {
  shared ??= makeAjv()
  return shared
}

/** Errors of a body against the draft-04 meta-schema (empty when valid). */
export function draft04MetaErrors(body: unknown): ErrorObject[] {
  const a = ajv()
  const ok = a.validateSchema(body as object)
  if (ok) return []
  return [...(a.errors ?? [])]
}

const IGNORED_KEYS = new Set(['$schema', 'self', '$supersedes', '$supersededBy'])

/** Copies a schema for compilation: drops Iglu keys at the root and neutralises remote `$ref`s. */
export function prepareForCompile(schema: unknown): unknown {
  const walk = (v: unknown, root: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, false))
    if (v === null || typeof v !== 'object') return v
    const obj = v as Record<string, unknown>
    if (typeof obj.$ref === 'string' && !obj.$ref.startsWith('#') && obj.$ref !== DRAFT4_URI) return {}
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(obj)) {
      if (root && IGNORED_KEYS.has(k)) continue
      // `id` changes ajv's base URI resolution; Iglu schemas never rely on it.
      if (k === 'id' && typeof x === 'string') continue
      out[k] = walk(x, false)
    }
    return out
  }
  return walk(schema, true)
}

/** Compiles a validator; throws when ajv cannot compile the schema. */
export function compileValidator(schema: unknown): ValidateFunction {
  return boundedPatterns(ajv().compile(prepareForCompile(schema) as object))
}

/**
 * `fn` with its pattern checks bounded (see `PATTERN_BUDGET_UNITS` in
 * regex-engine.ts): charged to the caller's budget when one is set
 * (`withPatternBudget`), else to a budget of its own for this call. When the
 * budget would be exceeded, the data is invalid with one error saying so.
 */
function boundedPatterns(fn: ValidateFunction): ValidateFunction {
  const bounded = function (this: unknown, data: unknown, ...rest: unknown[]): boolean {
    try {
      const ok = withPatternBudget(currentPatternBudget() ?? new PatternBudget(), () => (fn as (this: unknown, ...args: unknown[]) => boolean).call(this, data, ...rest))
      bounded.errors = fn.errors
      return ok
    } catch (err) {
      if (!(err instanceof PatternBudgetExceeded)) throw err
      const error: ErrorObject = { instancePath: '', schemaPath: '#', keyword: 'patternBudget', params: {}, message: err.message }
      bounded.errors = [error]
      return false
    }
  } as ValidateFunction
  bounded.schema = fn.schema
  bounded.schemaEnv = fn.schemaEnv
  return bounded
}

const IGLU_HTTP_REF = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/

/** A `$ref` to another schema as an Iglu URI (`iglu:…`, or an iglucentral.com address), without its fragment; undefined for local refs. */
function remoteRef(ref: string): string | undefined {
  if (ref.startsWith('#') || ref === DRAFT4_URI) return undefined
  const m = IGLU_HTTP_REF.exec(ref)
  return (m ? `iglu:${m[1]}` : ref).split('#')[0]
}

/** Every remote `$ref` of a schema (Iglu URIs where they are Iglu references, else as written). */
export function remoteRefs(schema: unknown): string[] {
  const out = new Set<string>()
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (v === null || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') {
        const r = remoteRef(x)
        if (r !== undefined) out.add(r)
      } else walk(x)
    }
  }
  walk(schema)
  return [...out]
}

/**
 * Compiles a validator that follows remote `$ref`s into `refs` (Iglu URI →
 * schema body; every URI `remoteRefs` finds, transitively, must be there).
 */
export function compileWithRefs(schema: unknown, refs: ReadonlyMap<string, unknown>): ValidateFunction {
  const a = makeAjv()
  const rewrite = (v: unknown, root: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => rewrite(x, false))
    if (v === null || typeof v !== 'object') return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if ((root && IGNORED_KEYS.has(k)) || (k === 'id' && typeof x === 'string')) continue
      if (k === '$ref' && typeof x === 'string') {
        const r = remoteRef(x)
        out[k] = r === undefined ? x : `${r}${x.includes('#') ? x.slice(x.indexOf('#')) : ''}`
      } else out[k] = rewrite(x, false)
    }
    return out
  }
  for (const [uri, body] of refs) a.addSchema(rewrite(body, true) as object, uri)
  return boundedPatterns(a.compile(rewrite(schema, true) as object))
}

/** An error reported for a data instance, in the shape Iglu's validation reports use. */
export interface InstanceError {
  readonly message: string
  readonly path: string
  readonly keyword: string
  readonly targets: string[]
}

/** Turns an ajv instance path (`/a/0/b`) into a JSONPath (`$.a[0].b`). */
export function toJsonPath(instancePath: string): string {
  if (!instancePath) return '$'
  let out = '$'
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^[0-9]+$/.test(seg) ? `[${seg}]` : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(seg) ? `.${seg}` : `['${seg}']`
  }
  return out
}

function jsonType(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

function valueAt(data: unknown, instancePath: string): unknown {
  let cur = data
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string, unknown>)[seg]
  }
  return cur
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const unescapePointer = (seg: string) => seg.replace(/~1/g, '/').replace(/~0/g, '~')
const keyIndex = (o: unknown, name: unknown): number => (isObj(o) && typeof name === 'string' ? Object.keys(o).indexOf(name) : -1)

/**
 * The rank of keyword `kw` among the keywords of schema `s` in the order
 * Snowplow's validator (networknt json-schema-validator) runs them:
 * `properties` first, then the others sorted by name.
 */
function keywordRank(s: Record<string, unknown>, kw: string): number {
  if (kw === 'properties') return 0
  let rank = 1
  for (const k of Object.keys(s)) if (k !== 'properties' && k < kw) rank++
  return rank
}

/**
 * Where Snowplow's validator reports error `e` among the others: it walks the
 * schema keyword by keyword (see `keywordRank`), `properties` in the schema's
 * order, array items and extra properties in the data's order; the missing
 * required properties of an object are reported together where `properties`
 * meets the first declared property the data lacks. Compared element by
 * element; a path it cannot follow ends the key (those keep their order).
 */
function reportOrderKey(schema: unknown, data: unknown, e: ErrorObject): number[] {
  const key: number[] = []
  if (!e.schemaPath.startsWith('#/')) return key
  const segs = e.schemaPath.slice(2).split('/').map(unescapePointer)
  const inst = e.instancePath === '' ? [] : e.instancePath.slice(1).split('/').map(unescapePointer)
  let s: unknown = schema
  let d: unknown = data
  let j = 0
  for (let i = 0; i < segs.length; ) {
    if (!isObj(s)) return key
    const kw = segs[i++]!
    if (kw === 'required' && i === segs.length) {
      const props = isObj(s.properties) ? Object.keys(s.properties) : []
      const absent = isObj(d) ? props.findIndex((p) => !Object.prototype.hasOwnProperty.call(d, p)) : -1
      const required = Array.isArray(s.required) ? (s.required as unknown[]) : []
      // When the object has some of its declared properties, the extra ones (additionalProperties) come first
      // (enrich's add_to_cart spec); with none of them, the missing ones come first (SnowplowAdapterSpec's payload_data).
      const someDeclared = isObj(d) && props.some((p) => Object.prototype.hasOwnProperty.call(d, p))
      const at = someDeclared && s.additionalProperties !== undefined
        ? [keywordRank(s, 'additionalProperties'), Number.MAX_SAFE_INTEGER]
        : absent >= 0 ? [0, absent] : [keywordRank(s, 'required')]
      return [...key, ...at, required.indexOf((e.params as { missingProperty?: string }).missingProperty)]
    }
    key.push(keywordRank(s, kw))
    const here: Record<string, unknown> = s
    const child = (next: unknown, rank: number, nextData: unknown) => {
      key.push(rank)
      s = next
      d = nextData
    }
    if (kw === 'properties' && isObj(here.properties) && i < segs.length) {
      const p = segs[i++]!
      child(here.properties[p], keyIndex(here.properties, p), isObj(d) ? d[p] : undefined)
      j++
    } else if (kw === 'items' && Array.isArray(here.items) && i < segs.length) {
      const n = Number(segs[i++])
      child(here.items[n], n, Array.isArray(d) ? d[n] : undefined)
      j++
    } else if (kw === 'items' && isObj(here.items) && j < inst.length) {
      const n = Number(inst[j++])
      child(here.items, n, Array.isArray(d) ? d[n] : undefined)
    } else if (kw === 'additionalProperties' && i === segs.length) {
      key.push(keyIndex(d, (e.params as { additionalProperty?: string }).additionalProperty))
      return key
    } else if (kw === 'additionalProperties' && isObj(here.additionalProperties) && j < inst.length) {
      const name = inst[j++]!
      child(here.additionalProperties, keyIndex(d, name), isObj(d) ? d[name] : undefined)
    } else if (kw === 'patternProperties' && isObj(here.patternProperties) && i < segs.length && j < inst.length) {
      const pattern = segs[i++]!
      const name = inst[j++]!
      key.push(keyIndex(here.patternProperties, pattern))
      child(here.patternProperties[pattern], keyIndex(d, name), isObj(d) ? d[name] : undefined)
    } else if ((kw === 'allOf' || kw === 'anyOf' || kw === 'oneOf') && Array.isArray(here[kw]) && i < segs.length) {
      const n = Number(segs[i++])
      child((here[kw] as unknown[])[n], n, d)
    } else if (kw === 'not' && i < segs.length) {
      s = here.not
    } else return key
  }
  return key
}

/** The messages of Snowplow's validator for the keywords whose failure it words itself (`{}`: the schema's value). */
const SNOWPLOW_WORDING: Record<string, string> = {
  maxLength: 'may only be {} characters long',
  minLength: 'must be at least {} characters long',
  maximum: 'must have a maximum value of {}',
  minimum: 'must have a minimum value of {}',
  maxItems: 'there must be a maximum of {} items in the array',
  minItems: 'there must be a minimum of {} items in the array',
  maxProperties: 'may only have a maximum of {} properties',
  minProperties: 'should have a minimum of {} properties',
  multipleOf: 'must be multiple of {}',
  pattern: 'does not match the regex pattern {}',
  uniqueItems: 'the items in the array must be unique',
}
const EXCLUSIVE_WORDING: Record<string, string> = {
  maximum: 'must have an exclusive maximum value of {}',
  minimum: 'must have an exclusive minimum value of {}',
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return 0
}

/**
 * Converts ajv errors for `data` into Iglu-style reports; with the `schema`
 * they were found against, in the order Snowplow's validator emits them.
 */
export function instanceErrors(errors: readonly ErrorObject[] | null | undefined, data: unknown, schema?: unknown): InstanceError[] {
  let list = errors ?? []
  if (schema !== undefined && list.length > 1) {
    const keyed = list.map((e, i) => ({ e, i, k: reportOrderKey(schema, data, e) }))
    keyed.sort((x, y) => compareKeys(x.k, y.k) || x.i - y.i)
    list = keyed.map((x) => x.e)
  }
  return list.map((e) => {
    let path = toJsonPath(e.instancePath)
    let targets: string[] = []
    let message: string
    switch (e.keyword) {
      case 'type': {
        const expected = ([] as string[]).concat((e.params as { type: string | string[] }).type)
        const actual = jsonType(valueAt(data, e.instancePath))
        targets = [actual, ...expected]
        message = `${path}: ${actual} found, ${expected.join(', ')} expected`
        break
      }
      case 'required': {
        const missing = (e.params as { missingProperty: string }).missingProperty
        targets = [missing]
        message = `${path}.${missing}: is missing but it is required`
        break
      }
      case 'additionalProperties': {
        const extra = (e.params as { additionalProperty: string }).additionalProperty
        targets = [extra]
        message = `${path}.${extra}: is not defined in the schema and the schema does not allow additional properties`
        break
      }
      case 'enum': {
        targets = ((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((x) => JSON.stringify(x))
        message = `${path}: does not have a value in the enumeration [${targets.join(', ')}]`
        break
      }
      default: {
        targets = Object.values(e.params ?? {}).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
        const wording = SNOWPLOW_WORDING[e.keyword]
        const limit = (e.params as { limit?: unknown; multipleOf?: unknown; pattern?: unknown }).limit ?? (e.params as { multipleOf?: unknown }).multipleOf ?? (e.params as { pattern?: unknown }).pattern
        const exclusive = (e.params as { comparison?: string }).comparison
        if (wording) {
          const w = exclusive === '<' || exclusive === '>' ? (EXCLUSIVE_WORDING[e.keyword] ?? wording) : wording
          message = `${path}: ${w.replace('{}', String(limit))}`
          if (limit !== undefined) targets = [String(limit)]
        } else message = `${path}: ${e.message ?? e.keyword}`
      }
    }
    path = path || '$'
    return { message, path, keyword: e.keyword, targets }
  })
}
