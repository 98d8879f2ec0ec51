/**
 * Iglu identifiers: SchemaVer, SchemaKey (Iglu URI), partial keys and
 * SchemaCriterion. Pure functions; errors are returned as data.
 */

export interface SchemaVer {
  readonly model: number
  readonly revision: number
  readonly addition: number
}

export interface SchemaKey {
  readonly vendor: string
  readonly name: string
  readonly format: string
  readonly version: SchemaVer
}

export type ParseErrorCode = 'INVALID_IGLUURI' | 'INVALID_SCHEMAVER' | 'INVALID_SCHEMA_PATH'

export type Parsed<T> = { ok: true; value: T } | { ok: false; code: ParseErrorCode; message: string }

/** Vendors and names are at most 128 characters, as in Iglu's own parser. */
export const VENDOR_RE = /^[a-zA-Z0-9\-_.]{1,128}$/
export const NAME_RE = /^[a-zA-Z0-9\-_]{1,128}$/
export const FORMAT_RE = NAME_RE
export const SCHEMAVER_RE = /^[1-9][0-9]*-(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$/

const LOOSE_URI_RE = /^iglu:([a-zA-Z0-9\-_.]{1,128})\/([a-zA-Z0-9\-_]{1,128})\/([a-zA-Z0-9\-_]+)\/([0-9]*-[0-9]*-[0-9]*)$/
const LOOSE_PATH_RE = /^([a-zA-Z0-9\-_.]{1,128})\/([a-zA-Z0-9\-_]{1,128})\/([a-zA-Z0-9\-_]+)\/([0-9]*-[0-9]*-[0-9]*)$/

/** Parses a full SchemaVer such as `1-0-2`. */
export function parseSchemaVer(text: string): Parsed<SchemaVer> {
  if (!SCHEMAVER_RE.test(text)) {
    return { ok: false, code: 'INVALID_SCHEMAVER', message: `Cannot parse version part '${text}' as SchemaVer, INVALID_SCHEMAVER` }
  }
  const [model, revision, addition] = text.split('-').map(Number) as [number, number, number]
  if (![model, revision, addition].every(Number.isSafeInteger)) {
    return { ok: false, code: 'INVALID_SCHEMAVER', message: `Cannot parse version part '${text}' as SchemaVer, INVALID_SCHEMAVER` }
  }
  return { ok: true, value: { model, revision, addition } }
}

export function isSchemaVer(text: unknown): text is string {
  return typeof text === 'string' && parseSchemaVer(text).ok
}

export function formatSchemaVer(v: SchemaVer): string {
  return `${v.model}-${v.revision}-${v.addition}`
}

export function compareSchemaVer(a: SchemaVer, b: SchemaVer): number {
  return a.model - b.model || a.revision - b.revision || a.addition - b.addition
}

/** Parses `iglu:vendor/name/format/M-R-A`. */
export function parseIgluUri(uri: string): Parsed<SchemaKey> {
  const m = LOOSE_URI_RE.exec(uri)
  if (!m) return { ok: false, code: 'INVALID_IGLUURI', message: `Invalid Iglu URI: '${uri}', INVALID_IGLUURI` }
  return build(m[1]!, m[2]!, m[3]!, m[4]!)
}

/** Parses a static-layout path `vendor/name/format/M-R-A`. */
export function parseSchemaPath(path: string): Parsed<SchemaKey> {
  const m = LOOSE_PATH_RE.exec(path)
  if (!m) return { ok: false, code: 'INVALID_SCHEMA_PATH', message: `Invalid schema path: '${path}', INVALID_SCHEMA_PATH` }
  return build(m[1]!, m[2]!, m[3]!, m[4]!)
}

function build(vendor: string, name: string, format: string, version: string): Parsed<SchemaKey> {
  const v = parseSchemaVer(version)
  if (!v.ok) return v
  return { ok: true, value: { vendor, name, format, version: v.value } }
}

/** Builds a key from parts, checking every part. */
export function makeSchemaKey(vendor: string, name: string, format: string, version: string): Parsed<SchemaKey> {
  if (!VENDOR_RE.test(vendor) || !NAME_RE.test(name) || !FORMAT_RE.test(format)) {
    const why = !VENDOR_RE.test(vendor)
      ? `the vendor ${JSON.stringify(vendor)} may only hold ASCII letters, digits, '-', '_' and '.', at most 128`
      : !NAME_RE.test(name)
        ? `the name ${JSON.stringify(name)} may only hold ASCII letters, digits, '-' and '_', at most 128`
        : `the format ${JSON.stringify(format)} may only hold ASCII letters, digits, '-' and '_'`
    return { ok: false, code: 'INVALID_IGLUURI', message: `Invalid schema key '${vendor}/${name}/${format}/${version}' (${why}), INVALID_IGLUURI` }
  }
  return build(vendor, name, format, version)
}

export function toIgluUri(k: SchemaKey): string {
  return `iglu:${toSchemaPath(k)}`
}

export function toSchemaPath(k: SchemaKey): string {
  return `${k.vendor}/${k.name}/${k.format}/${formatSchemaVer(k.version)}`
}

export function sameGroup(a: SchemaKey, b: SchemaKey): boolean {
  return a.vendor === b.vendor && a.name === b.name
}

export function compareSchemaKeys(a: SchemaKey, b: SchemaKey): number {
  return cmp(a.vendor, b.vendor) || cmp(a.name, b.name) || cmp(a.format, b.format) || compareSchemaVer(a.version, b.version)
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** A criterion such as `iglu:com.acme/e/jsonschema/1-*-*`; unset parts match anything. */
export interface SchemaCriterion {
  readonly vendor: string
  readonly name: string
  readonly format: string
  readonly model?: number
  readonly revision?: number
  readonly addition?: number
}

const CRITERION_RE = /^iglu:([a-zA-Z0-9\-_.]+)\/([a-zA-Z0-9\-_]+)\/([a-zA-Z0-9\-_]+)\/([0-9]+|\*)-([0-9]+|\*)-([0-9]+|\*)$/

export function parseCriterion(text: string): Parsed<SchemaCriterion> {
  const m = CRITERION_RE.exec(text)
  if (!m) return { ok: false, code: 'INVALID_IGLUURI', message: `Invalid schema criterion: '${text}'` }
  const n = (s: string) => (s === '*' ? undefined : Number(s))
  return { ok: true, value: { vendor: m[1]!, name: m[2]!, format: m[3]!, model: n(m[4]!), revision: n(m[5]!), addition: n(m[6]!) } }
}

export function criterionMatches(c: SchemaCriterion, k: SchemaKey): boolean {
  return (
    c.vendor === k.vendor &&
    c.name === k.name &&
    c.format === k.format &&
    (c.model === undefined || c.model === k.version.model) &&
    (c.revision === undefined || c.revision === k.version.revision) &&
    (c.addition === undefined || c.addition === k.version.addition)
  )
}

export function formatCriterion(c: SchemaCriterion): string {
  const p = (n: number | undefined) => (n === undefined ? '*' : String(n))
  return `iglu:${c.vendor}/${c.name}/${c.format}/${p(c.model)}-${p(c.revision)}-${p(c.addition)}`
}
