/**
 * Schema lint: the checks an Iglu-compatible registry runs on upload. Only
 * ERROR messages block an upload; WARNING and INFO are advice.
 */
import { draft04MetaErrors, KNOWN_FORMATS } from './draft04'
import { jsonDepth } from './json-depth'
import { schemaPatternProblems } from './regex-engine'
import { decodeSelfDescribingSchema, isObject, schemaBody, type JsonObject } from './selfdesc'

export type LintLevel = 'ERROR' | 'WARNING' | 'INFO'

export type LintCheck =
  | 'selfDescribing'
  | 'jsonSchema'
  | 'maxDepth'
  | 'unknownKeywords'
  | 'numericMinimumMaximum'
  | 'stringMinMaxLength'
  | 'arrayMinMaxItems'
  | 'numericProperties'
  | 'stringProperties'
  | 'arrayProperties'
  | 'objectProperties'
  | 'requiredPropertiesExist'
  | 'rootObject'
  | 'unknownFormats'
  | 'numericMinMax'
  | 'stringLength'
  | 'stringMaxLengthRange'
  | 'bqDisallowedCharacters'
  | 'bqIllegalStart'
  | 'optionalNull'
  | 'description'
  | 'patterns'

export interface LintMessage {
  readonly message: string
  readonly level: LintLevel
  /** JSON Pointer into the schema document; `/` is the root. */
  readonly pointer: string
  readonly check: LintCheck
}

/** Checks that may be skipped (`floe registry lint --skip`); the rest always run. */
export const SKIPPABLE_CHECKS: readonly LintCheck[] = [
  'rootObject', 'unknownFormats', 'numericMinMax', 'stringLength', 'stringMaxLengthRange', 'optionalNull', 'description',
  'unknownKeywords', 'bqDisallowedCharacters', 'bqIllegalStart',
]

export const DEFAULT_MAX_JSON_DEPTH = 40

export interface LintOptions {
  readonly skip?: readonly LintCheck[]
  readonly maxJsonDepth?: number
}

const DRAFT4_KEYWORDS = new Set([
  '$schema', 'id', '$ref', 'title', 'description', 'default', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'additionalItems', 'items', 'maxItems', 'minItems',
  'uniqueItems', 'maxProperties', 'minProperties', 'required', 'additionalProperties', 'definitions', 'properties',
  'patternProperties', 'dependencies', 'enum', 'type', 'allOf', 'anyOf', 'oneOf', 'not', 'format',
])
const ROOT_EXTRA = new Set(['self', '$supersedes', '$supersededBy'])

const NUMERIC_KEYWORDS = ['minimum', 'maximum', 'multipleOf', 'exclusiveMinimum', 'exclusiveMaximum']
const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern']
const ARRAY_KEYWORDS = ['items', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems']
const OBJECT_KEYWORDS = ['properties', 'additionalProperties', 'required', 'patternProperties', 'minProperties', 'maxProperties', 'dependencies']

const FORMATS = new Set<string>(KNOWN_FORMATS)

function ptr(base: string, ...segs: (string | number)[]): string {
  const tail = segs.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')
  return base === '/' ? `/${tail}` : `${base}/${tail}`
}

function typesOf(s: JsonObject): string[] | undefined {
  if (typeof s.type === 'string') return [s.type]
  if (Array.isArray(s.type) && s.type.every((t) => typeof t === 'string')) return s.type as string[]
  return undefined
}

export { jsonDepth }

/** Lints a (supposedly self-describing) schema document. */
export function lint(doc: unknown, opts: LintOptions = {}): LintMessage[] {
  const out: LintMessage[] = []
  const skip = new Set(opts.skip ?? [])
  const add = (check: LintCheck, level: LintLevel, pointer: string, message: string) => {
    if (!skip.has(check) || !SKIPPABLE_CHECKS.includes(check)) out.push({ check, level, pointer, message })
  }
  const maxDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH
  if (jsonDepth(doc) > maxDepth) {
    add('maxDepth', 'ERROR', '/', `The schema is nested deeper than the maximum JSON depth of ${maxDepth}`)
    return out
  }
  if (!isObject(doc)) {
    add('jsonSchema', 'ERROR', '/', 'Cannot extract JSON Schema')
    return out
  }
  const sd = decodeSelfDescribingSchema(doc)
  if (!sd.ok) {
    // As Iglu Server: each bad part of `self` is reported where it is; any failure also reads 'not self-describing'.
    const selfErrors = isObject(doc.self) ? selfPartErrors(doc.self) : []
    for (const e of selfErrors) add('selfDescribing', 'ERROR', e.pointer, e.message)
    for (const e of sd.errors) if (!(selfErrors.length > 0 && e.startsWith('self is invalid')) && e !== NOT_SELF_DESCRIBING) add('selfDescribing', 'ERROR', '/', e)
    if (selfErrors.length === 0) add('selfDescribing', 'ERROR', '/', NOT_SELF_DESCRIBING)
  }

  const body = schemaBody(doc)
  for (const e of draft04MetaErrors(body)) {
    const extra = e.keyword === 'enum' ? ` ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}` : ''
    add('jsonSchema', 'ERROR', e.instancePath || '/', `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`)
  }

  if (typesOf(doc)?.join() !== 'object' || !isObject(doc.properties)) {
    add('rootObject', 'WARNING', '/', 'At the root level, the schema should have a "type" property set to "object" and have a "properties" property')
  }
  if (typeof doc.description !== 'string') add('description', 'INFO', '/', 'The schema is missing the "description" property')

  // Patterns must run on the linear-time engine validators use (never skippable).
  for (const p of schemaPatternProblems(body)) add('patterns', 'ERROR', p.pointer, p.message)
  visit(doc, '/', true, add)
  // Iglu Server's report order: INFO, then WARNING, then ERROR (document order within a level).
  return LEVELS.flatMap((level) => out.filter((m) => m.level === level))
}

const LEVELS: readonly LintLevel[] = ['INFO', 'WARNING', 'ERROR']
const NOT_SELF_DESCRIBING = 'JSON Schema is not self-describing'
const SELF_PATTERNS: readonly [string, RegExp, string][] = [
  ['vendor', /^[a-zA-Z0-9-_.]+$/, '^[a-zA-Z0-9-_.]+$'],
  ['name', /^[a-zA-Z0-9-_]+$/, '^[a-zA-Z0-9-_]+$'],
  ['format', /^[a-zA-Z0-9-_]+$/, '^[a-zA-Z0-9-_]+$'],
  ['version', /^[0-9]+-[0-9]+-[0-9]+$/, '^[0-9]+-[0-9]+-[0-9]+$'],
]

/** The parts of `self` that do not match the self-describing meta-schema, with their pointers. */
function selfPartErrors(self: JsonObject): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = []
  for (const [k, re, text] of SELF_PATTERNS) {
    const v = self[k]
    if (typeof v === 'string' && !re.test(v)) out.push({ pointer: `/self/${k}`, message: `$.self.${k}: does not match the regex pattern ${text}` })
  }
  return out
}

/** A JSON Pointer as the dotted path Iglu's messages use (`/properties/a` → `$.properties.a`). */
function dotted(pointer: string): string {
  return pointer === '/' ? '$' : `$${pointer.split('/').slice(1).map((s) => `.${s.replace(/~1/g, '/').replace(/~0/g, '~')}`).join('')}`
}

type Add = (check: LintCheck, level: LintLevel, pointer: string, message: string) => void

function visit(s: unknown, pointer: string, root: boolean, add: Add): void {
  if (!isObject(s)) return
  const types = typesOf(s)
  const has = (k: string) => k in s

  for (const k of Object.keys(s)) {
    if (!DRAFT4_KEYWORDS.has(k) && !(root && ROOT_EXTRA.has(k))) {
      add('unknownKeywords', 'WARNING', pointer, `${dotted(ptr(pointer, k))}: is not defined in the schema and the schema does not allow additional properties`)
    }
  }

  const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined)
  const pair = (check: LintCheck, lo: string, hi: string) => {
    const a = num(lo)
    const b = num(hi)
    if (a !== undefined && b !== undefined && a > b) add(check, 'ERROR', pointer, `${lo} ${a} is greater than ${hi} ${b}`)
  }
  pair('numericMinimumMaximum', 'minimum', 'maximum')
  pair('stringMinMaxLength', 'minLength', 'maxLength')
  pair('arrayMinMaxItems', 'minItems', 'maxItems')

  if (types) {
    const incompatible = (check: LintCheck, keys: string[], allowed: string[], what: string) => {
      const used = keys.filter(has)
      if (used.length > 0 && !types.some((t) => allowed.includes(t))) {
        add(check, 'ERROR', pointer, `${what} properties [${used.join(', ')}] require ${allowed.join(' or ')} type, found ${types.join(', ')}`)
      }
    }
    incompatible('numericProperties', NUMERIC_KEYWORDS, ['number', 'integer'], 'Numeric')
    incompatible('stringProperties', STRING_KEYWORDS, ['string'], 'String')
    incompatible('arrayProperties', ARRAY_KEYWORDS, ['array'], 'Array')
    incompatible('objectProperties', OBJECT_KEYWORDS, ['object'], 'Object')

    if (types.some((t) => t === 'number' || t === 'integer') && !(has('minimum') && has('maximum')) && !has('enum')) {
      add('numericMinMax', 'WARNING', pointer, 'A numeric property should have minimum and maximum specified')
    }
    if (types.includes('string') && !has('maxLength') && !has('enum') && !has('format')) {
      add('stringLength', 'WARNING', pointer, 'A string property should have maxLength specified')
    }
  }
  const maxLength = num('maxLength')
  if (maxLength !== undefined && maxLength > 65535) {
    add('stringMaxLengthRange', 'WARNING', pointer, `maxLength ${maxLength} exceeds 65535, the maximum length of a text column`)
  }
  if (typeof s.format === 'string' && !FORMATS.has(s.format)) {
    add('unknownFormats', 'WARNING', pointer, `Format '${s.format}' is not known; values will not be checked against it`)
  }

  const props = isObject(s.properties) ? s.properties : undefined
  if (Array.isArray(s.required) && s.additionalProperties === false && !isObject(s.patternProperties)) {
    const missing = s.required.filter((r) => typeof r === 'string' && !(props && r in props))
    if (missing.length > 0) {
      add('requiredPropertiesExist', 'ERROR', pointer, `Elements specified as required [${missing.join(',')}] don't exist in schema properties`)
    }
  }
  if (props) {
    const required = new Set(Array.isArray(s.required) ? s.required : [])
    for (const [name, p] of Object.entries(props)) {
      const pp = ptr(pointer, 'properties', name)
      if (!/^[A-Za-z0-9_]*$/.test(name)) {
        add('bqDisallowedCharacters', 'WARNING', pp, `Property name '${name}' has characters other than letters, digits and underscore`)
      }
      if (/^[0-9]/.test(name)) add('bqIllegalStart', 'WARNING', pp, `Property name '${name}' starts with a digit`)
      if (!required.has(name) && isObject(p)) {
        const pt = typesOf(p)
        const allowsNull = pt ? pt.includes('null') : true
        const enumNull = Array.isArray(p.enum) ? p.enum.includes(null) : true
        if (!allowsNull || !enumNull) add('optionalNull', 'INFO', pp, `Optional property '${name}' does not allow null`)
      }
      visit(p, pp, false, add)
    }
  }
  for (const k of ['patternProperties', 'definitions']) {
    const m = s[k]
    if (isObject(m)) for (const [n, sub] of Object.entries(m)) visit(sub, ptr(pointer, k, n), false, add)
  }
  if (isObject(s.dependencies)) {
    for (const [n, sub] of Object.entries(s.dependencies)) if (isObject(sub)) visit(sub, ptr(pointer, 'dependencies', n), false, add)
  }
  for (const k of ['additionalProperties', 'additionalItems', 'not']) if (isObject(s[k])) visit(s[k], ptr(pointer, k), false, add)
  if (Array.isArray(s.items)) s.items.forEach((sub, i) => visit(sub, ptr(pointer, 'items', i), false, add))
  else if (isObject(s.items)) visit(s.items, ptr(pointer, 'items'), false, add)
  for (const k of ['allOf', 'anyOf', 'oneOf']) {
    const arr = s[k]
    if (Array.isArray(arr)) arr.forEach((sub, i) => visit(sub, ptr(pointer, k, i), false, add))
  }
}

export function hasErrors(messages: readonly LintMessage[]): boolean {
  return messages.some((m) => m.level === 'ERROR')
}

/** The report entries as the registry answers them. */
export function reportOf(messages: readonly LintMessage[]): { message: string; level: LintLevel; pointer: string }[] {
  return messages.map(({ message, level, pointer }) => ({ message, level, pointer }))
}
