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
import { ajvRegExp } from './regex-engine'

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
  return ajv().compile(prepareForCompile(schema) as object)
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
  return a.compile(rewrite(schema, true) as object)
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

/** Converts ajv errors for `data` into Iglu-style reports. */
export function instanceErrors(errors: readonly ErrorObject[] | null | undefined, data: unknown): InstanceError[] {
  return (errors ?? []).map((e) => {
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
        message = `${path}: ${e.message ?? e.keyword}`
      }
    }
    path = path || '$'
    return { message, path, keyword: e.keyword, targets }
  })
}
