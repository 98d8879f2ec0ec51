/**
 * Witness confirmation with a real validator: ajv-draft-04 with ajv-formats ("full" formats),
 * `multipleOfPrecision: 9`, `self` accepted as a no-op keyword and the Iglu `$schema` stripped.
 */
import Ajv from 'ajv-draft-04'
import { ajvRegExp } from '../iglu/regex-engine'
import type { ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { Interpreter } from './interpret'
import { isObject } from './nodes'

type Resolve = (igluUri: string) => object | undefined

interface Instance {
  ajv: Ajv
  compiled: Map<string, ValidateFunction | null>
  added: Set<string>
  /** The same verdicts without code generation, where it can give them (interpret.ts). */
  interpreter?: Interpreter
}

const NO_RESOLVER = {}
const instances = new WeakMap<object, Instance>()

const explainers = new WeakMap<object, Instance>()

function makeInstance(allErrors = false): Instance {
  const ajv = new Ajv({ strict: false, validateSchema: false, multipleOfPrecision: 9, logger: false, allErrors, code: { optimize: false, regExp: ajvRegExp } })
  addFormats(ajv)
  ajv.addKeyword('self')
  return { ajv, compiled: new Map(), added: new Set() }
}

/** Removes the root-level keys that only describe the schema (`$schema`, `self`). */
export function stripRoot(schema: object): object {
  if (!isObject(schema) || (!('$schema' in schema) && !('self' in schema))) return schema
  const copy: Record<string, unknown> = { ...schema }
  delete copy.$schema
  delete copy.self
  return copy
}

const IGLU_HTTP = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/

/** Rewrites iglucentral.com addresses into `iglu:` references and collects the Iglu URIs used. */
function rewrite(v: unknown, uris: Set<string>): unknown {
  if (Array.isArray(v)) return v.map((x) => rewrite(x, uris))
  if (!isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) {
    if (k === '$ref' && typeof x === 'string') {
      let ref = x
      const m = IGLU_HTTP.exec(x)
      if (m) ref = `iglu:${m[1]}${m[2] ?? ''}`
      if (ref.startsWith('iglu:')) uris.add(ref.split('#')[0])
      out[k] = ref
    } else out[k] = rewrite(x, uris)
  }
  return out
}

function compile(inst: Instance, schema: object, resolve: Resolve | undefined): ValidateFunction | undefined {
  const key = JSON.stringify(schema)
  const hit = inst.compiled.get(key)
  if (hit !== undefined) return hit ?? undefined
  let fn: ValidateFunction | null = null
  try {
    fn = inst.ajv.compile(prepare(inst, schema, resolve))
  } catch {
    fn = null
  }
  if (inst.compiled.size > 5000) inst.compiled.clear()
  inst.compiled.set(key, fn)
  return fn ?? undefined
}

/** The schema as ajv compiles it (iglucentral.com addresses as `iglu:` references), its references added to `inst`. */
function prepare(inst: Instance, schema: object, resolve: Resolve | undefined): object {
  const uris = new Set<string>()
  const body = rewrite(stripRoot(schema), uris) as object
  const pending = [...uris]
  while (pending.length > 0) {
    const uri = pending.pop()!
    if (inst.added.has(uri)) continue
    const found = resolve?.(uri)
    if (!found) throw new Error(`unresolved ${uri}`)
    const more = new Set<string>()
    const sub = rewrite(stripRoot(found), more) as Record<string, unknown>
    delete sub.id
    inst.ajv.addSchema(sub, uri)
    inst.added.add(uri)
    pending.push(...more)
  }
  return body
}

function instanceFor(resolve?: Resolve, allErrors = false): Instance {
  const owner = resolve ?? NO_RESOLVER
  const map = allErrors ? explainers : instances
  let inst = map.get(owner)
  if (!inst) {
    inst = makeInstance(allErrors)
    map.set(owner, inst)
  }
  return inst
}

/** At most this many rejections are reported for one instance. */
export const MAX_REJECTIONS = 5

/** Where and why ajv rejects an instance: the first error it reports. */
export interface Rejection {
  /** JSON pointer into the instance (`''` for the instance itself). */
  readonly path: string
  /** The keyword of B that fails, and the JSON pointer to it in B. */
  readonly keyword: string
  readonly schemaPath: string
  readonly params: Record<string, unknown>
  /** ajv's message, e.g. `must be array`. */
  readonly message: string
}

/**
 * The errors ajv reports for `instance` against `schema` (all of them, in ajv's order, at most
 * {@link MAX_REJECTIONS}); empty when it is valid or the schema cannot be compiled.
 */
export function explainRejection(schema: object, instance: unknown, resolve?: Resolve): Rejection[] {
  const v = compile(instanceFor(resolve, true), schema, resolve)
  if (!v) return []
  const w = JSON.parse(JSON.stringify(instance ?? null)) as unknown
  if (v(w) === true || !v.errors) return []
  return v.errors.slice(0, MAX_REJECTIONS).map((e) => ({ path: e.instancePath, keyword: e.keyword, schemaPath: e.schemaPath, params: { ...e.params }, message: e.message ?? 'is invalid' }))
}

/**
 * True when `witness` is valid against A and invalid against B according to ajv; false otherwise
 * (including when a schema cannot be compiled).
 *
 * A witness is small and a schema can be large, and ajv generates code for all of it. So the witness is
 * first judged by the interpreter of `interpret.ts`, which reproduces ajv's verdicts without compiling and
 * answers only where it does so exactly; then by ajv against the parts of A and B that can apply to it
 * ({@link relevantPart}, which gives ajv's answer for those instances by construction), which compile in a
 * fraction of the time; only when neither confirms it are the whole schemas compiled ({@link confirmWhole},
 * the plain definition).
 */
export function confirmWitness(a: object, b: object, witness: unknown, resolve?: Resolve): boolean {
  // Round-trip through JSON: the witness must be a JSON document.
  const w = JSON.parse(JSON.stringify(witness)) as unknown
  const inst = instanceFor(resolve)
  if (interpreterOf(inst, resolve).judge(a, w) === true && interpreterOf(inst, resolve).judge(b, w) === false) return true
  const pa = relevantRoot(a, w)
  const pb = pa === undefined ? undefined : relevantRoot(b, w)
  if (pa !== undefined && pb !== undefined) {
    const va = compileOnce(inst, pa, resolve)
    const vb = va === undefined ? undefined : compileOnce(inst, pb, resolve)
    if (va !== undefined && vb !== undefined && va(w) === true && vb(w) === false) return true
  }
  return confirmWhole(a, b, w, resolve)
}

function interpreterOf(inst: Instance, resolve: Resolve | undefined): Interpreter {
  inst.interpreter ??= new Interpreter({ keywords: new Set(Object.keys(inst.ajv.RULES.keywords)), formats: inst.ajv.formats }, resolve)
  return inst.interpreter
}

/** The interpreter's verdict on a JSON value, as witness confirmation gets it: ajv's, or undefined where it does not give it. */
export function interpretedVerdict(schema: object, instance: unknown, resolve?: Resolve): boolean | undefined {
  return interpreterOf(instanceFor(resolve), resolve).judge(schema, instance)
}

/** {@link confirmWitness} on the whole schemas (compiled validators cached per schema text). */
export function confirmWhole(a: object, b: object, witness: unknown, resolve?: Resolve): boolean {
  const inst = instanceFor(resolve)
  const va = compile(inst, a, resolve)
  const vb = compile(inst, b, resolve)
  if (!va || !vb) return false
  const w = JSON.parse(JSON.stringify(witness)) as unknown
  return va(w) === true && vb(w) === false
}

/** Compiles a schema used once, and lets ajv forget it. */
function compileOnce(inst: Instance, schema: object, resolve: Resolve | undefined): ValidateFunction | undefined {
  let body: object | undefined
  try {
    body = prepare(inst, schema, resolve)
    return inst.ajv.compile(body)
  } catch {
    return undefined
  } finally {
    if (body !== undefined) inst.ajv.removeSchema(body)
  }
}

/**
 * The part of a root schema that can apply to `instance`, or undefined when only the whole schema will do:
 * when it has identifiers, or references other than to its `definitions` or to other schemas (the
 * `definitions` are then kept as written, so every reference finds its target).
 */
export function relevantRoot(schema: object, instance: unknown): object | undefined {
  const body = stripRoot(schema) as Record<string, unknown>
  const { id: _id, ...rest } = body
  const refs = { local: false, other: false }
  if (!scanRefs(rest, 0, refs)) return undefined
  const part = relevantPart(rest, [instance]) as Record<string, unknown>
  if (refs.local && 'definitions' in rest) part.definitions = rest.definitions
  return part
}

/** Notes the kinds of `$ref` under `v`; false when one cannot be kept (a pointer outside `definitions`) or there is an `id`. */
function scanRefs(v: unknown, depth: number, refs: { local: boolean; other: boolean }): boolean {
  if (depth > 200) return false
  if (Array.isArray(v)) return v.every((x) => scanRefs(x, depth + 1, refs))
  if (!isObject(v)) return true
  for (const [k, x] of Object.entries(v)) {
    if (k === 'id' && typeof x === 'string') return false
    if (k === '$ref' && typeof x === 'string') {
      if (x.startsWith('#/definitions/')) refs.local = true
      else if (x.startsWith('#') || !(x.startsWith('iglu:') || IGLU_HTTP.test(x))) return false
      else refs.other = true
    } else if (!scanRefs(x, depth + 1, refs)) return false
  }
  return true
}

/** Keywords that apply to one type of instance only (ajv skips them for the others). */
const OBJECT_ONLY = new Set(['properties', 'patternProperties', 'additionalProperties', 'required', 'minProperties', 'maxProperties', 'dependencies'])
const ARRAY_ONLY = new Set(['items', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems'])
const STRING_ONLY = new Set(['minLength', 'maxLength', 'pattern'])
const NUMBER_ONLY = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'])

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * `schema` (draft-04, without references or identifiers) cut down to what can apply to `instances`:
 * each of them is valid against the result exactly when it is valid against `schema`. Cut away are the
 * keywords of types none of them has, `properties` of names none of them has, `additionalProperties`
 * when none of them has an additional name, `definitions` (nothing refers to them), and below those the
 * same for the values each subschema applies to. Everything else is kept as written.
 */
export function relevantPart(schema: unknown, instances: readonly unknown[]): unknown {
  if (!isObject(schema)) return schema
  const objects = instances.filter(isPlainObject)
  const arrays = instances.filter(Array.isArray) as unknown[][]
  const strings = instances.some((w) => typeof w === 'string')
  const numbers = instances.some((w) => typeof w === 'number')
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'definitions') continue
    if ((OBJECT_ONLY.has(k) && objects.length === 0) || (ARRAY_ONLY.has(k) && arrays.length === 0)) continue
    if ((STRING_ONLY.has(k) && !strings) || (NUMBER_ONLY.has(k) && !numbers)) continue
    if (k === 'properties' && isPlainObject(v)) {
      const props: Record<string, unknown> = {}
      for (const name of Object.keys(v)) {
        // ajv reads a property as `data[name] !== undefined`: an inherited one (`constructor`) counts, as it is
        if (objects.some((o) => !Object.hasOwn(o, name) && o[name] !== undefined)) props[name] = v[name]
        else {
          const values = objects.filter((o) => Object.hasOwn(o, name)).map((o) => o[name])
          if (values.length > 0) props[name] = relevantPart(v[name], values)
        }
      }
      out[k] = props
    } else if (k === 'additionalProperties' && isObject(v) && !('patternProperties' in schema)) {
      const declared = isPlainObject(schema.properties) ? schema.properties : {}
      const values = objects.flatMap((o) => Object.keys(o).filter((name) => !Object.hasOwn(declared, name)).map((name) => o[name]))
      if (values.length > 0) out[k] = relevantPart(v, values)
    } else if (k === 'items' && Array.isArray(v)) {
      out[k] = v.map((s, i) => {
        const values = arrays.filter((a) => a.length > i).map((a) => a[i])
        return values.length > 0 ? relevantPart(s, values) : {}
      })
    } else if (k === 'items' && isObject(v)) {
      const values = arrays.flat()
      out[k] = values.length > 0 ? relevantPart(v, values) : {}
    } else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      out[k] = v.map((s) => relevantPart(s, instances))
    } else if (k === 'not' && isObject(v)) {
      out[k] = relevantPart(v, instances)
    } else out[k] = v
  }
  return out
}
