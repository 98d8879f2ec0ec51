/**
 * Self-describing schemas and data: recognising them, splitting a schema into
 * its key and body, and rebuilding the canonical form.
 */
import { compileValidator, type ValidateFunction } from './draft04'
import { formatSchemaVer, isSchemaVer, makeSchemaKey, parseIgluUri, parseSchemaVer, toIgluUri, type SchemaKey, type SchemaVer } from './keys'
import { META_SCHEMA_URI, selfDescribingMetaSchema } from './metaschema'

export type JsonObject = Record<string, unknown>

export function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** A schema split into its identity and JSON Schema body. */
export interface SelfDescribingSchema {
  readonly key: SchemaKey
  /** The JSON Schema without `$schema`, `self`, `$supersedes`, `$supersededBy`. */
  readonly body: JsonObject
  readonly supersedes: SchemaVer[]
}

export type SchemaDecode = { ok: true; value: SelfDescribingSchema } | { ok: false; errors: string[] }

const FRONT_KEYS = new Set(['$schema', 'self', '$supersedes', '$supersededBy'])

/** The body of a schema document: every key but the Iglu ones, in document order. */
export function schemaBody(doc: JsonObject): JsonObject {
  const body: JsonObject = {}
  for (const [k, v] of Object.entries(doc)) if (!FRONT_KEYS.has(k)) body[k] = v
  return body
}

/** Reads `$supersedes` (array of full SchemaVers) if present. */
export function readSupersedes(doc: JsonObject): { ok: true; value: SchemaVer[] } | { ok: false; error: string } {
  const raw = doc.$supersedes
  if (raw === undefined || raw === null) return { ok: true, value: [] }
  if (!Array.isArray(raw) || !raw.every(isSchemaVer)) return { ok: false, error: '$supersedes must be an array of SchemaVers such as 1-0-0' }
  return { ok: true, value: (raw as string[]).map((s) => (parseSchemaVer(s) as { ok: true; value: SchemaVer }).value) }
}

/**
 * Recognises a self-describing schema: exact `$schema` meta URI and a complete,
 * valid `self`. Does not check the body (see `lint`).
 */
export function decodeSelfDescribingSchema(doc: unknown): SchemaDecode {
  if (!isObject(doc)) return { ok: false, errors: ['JSON Schema is not self-describing'] }
  const errors: string[] = []
  if (!('$schema' in doc)) errors.push('No $schema field in top-level of schema')
  else if (doc.$schema !== META_SCHEMA_URI) errors.push(`$schema must be ${META_SCHEMA_URI}`)
  const self = doc.self
  let key: SchemaKey | undefined
  if (!isObject(self)) errors.push('JSON Schema is not self-describing')
  else {
    const { vendor, name, format, version } = self
    if ([vendor, name, format, version].some((x) => typeof x !== 'string')) {
      errors.push('self must have string vendor, name, format and version')
    } else {
      const k = makeSchemaKey(vendor as string, name as string, format as string, version as string)
      if (!k.ok) errors.push(`self is invalid: ${k.message}`)
      else key = k.value
    }
    const extra = Object.keys(self).filter((x) => !['vendor', 'name', 'format', 'version'].includes(x))
    if (extra.length > 0) errors.push(`self has unexpected properties: ${extra.join(', ')}`)
  }
  const sup = readSupersedes(doc)
  if (!sup.ok) errors.push(sup.error)
  if (doc.$supersededBy !== undefined && !isSchemaVer(doc.$supersededBy)) errors.push('$supersededBy must be a SchemaVer such as 1-0-1')
  if (errors.length > 0 || !key || !sup.ok) return { ok: false, errors }
  return { ok: true, value: { key, body: schemaBody(doc), supersedes: sup.value } }
}

/** `self` as it appears in a schema document. */
export function selfOf(key: SchemaKey) {
  return { vendor: key.vendor, name: key.name, format: key.format, version: formatSchemaVer(key.version) }
}

/** The canonical document: `$schema`, superseding fields, `self`, then the body. */
export function canonicalSchema(key: SchemaKey, body: JsonObject, extra: { supersededBy?: SchemaVer; supersedes?: readonly SchemaVer[] } = {}): JsonObject {
  const out: JsonObject = { $schema: META_SCHEMA_URI }
  if (extra.supersededBy) out.$supersededBy = formatSchemaVer(extra.supersededBy)
  if (extra.supersedes && extra.supersedes.length > 0) out.$supersedes = extra.supersedes.map(formatSchemaVer)
  out.self = selfOf(key)
  for (const [k, v] of Object.entries(body)) if (!(k in out)) out[k] = v
  return out
}

/** Self-describing data `{schema, data}`. */
export interface SelfDescribingData {
  readonly schema: SchemaKey
  readonly data: unknown
}

export type DataDecode = { ok: true; value: SelfDescribingData } | { ok: false; code: string; message: string }

export function decodeSelfDescribingData(doc: unknown): DataDecode {
  if (!isObject(doc) || typeof doc.schema !== 'string' || !('data' in doc)) {
    return { ok: false, code: 'INVALID_DATA_PAYLOAD', message: 'JSON payload is not self-describing, INVALID_DATA_PAYLOAD' }
  }
  const k = parseIgluUri(doc.schema)
  if (!k.ok) return { ok: false, code: k.code, message: `JSON payload is not self-describing, ${k.code}` }
  return { ok: true, value: { schema: k.value, data: doc.data } }
}

let metaValidator: ValidateFunction | undefined

/** Messages from validating a document against the self-describing meta-schema. */
export function metaSchemaErrors(doc: unknown): { message: string; pointer: string }[] {
  metaValidator ??= compileValidator(selfDescribingMetaSchema)
  if (metaValidator(doc)) return []
  return (metaValidator.errors ?? [])
    .filter((e) => e.keyword !== 'allOf')
    .map((e) => ({ message: `${e.instancePath || '/'} ${e.message ?? e.keyword}`.trim(), pointer: e.instancePath || '/' }))
}

export { toIgluUri, META_SCHEMA_URI }
