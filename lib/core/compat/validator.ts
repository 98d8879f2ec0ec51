/**
 * Witness confirmation with a real validator: ajv-draft-04 with ajv-formats ("full" formats),
 * `multipleOfPrecision: 9`, `self` accepted as a no-op keyword and the Iglu `$schema` stripped.
 */
import Ajv from 'ajv-draft-04'
import { ajvRegExp } from '../iglu/regex-engine'
import type { ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { isObject } from './nodes'

type Resolve = (igluUri: string) => object | undefined

interface Instance {
  ajv: Ajv
  compiled: Map<string, ValidateFunction | null>
  added: Set<string>
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
    fn = inst.ajv.compile(body)
  } catch {
    fn = null
  }
  if (inst.compiled.size > 5000) inst.compiled.clear()
  inst.compiled.set(key, fn)
  return fn ?? undefined
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
 */
export function confirmWitness(a: object, b: object, witness: unknown, resolve?: Resolve): boolean {
  const inst = instanceFor(resolve)
  const va = compile(inst, a, resolve)
  const vb = compile(inst, b, resolve)
  if (!va || !vb) return false
  // Round-trip through JSON: the witness must be a JSON document.
  const w = JSON.parse(JSON.stringify(witness)) as unknown
  return va(w) === true && vb(w) === false
}
