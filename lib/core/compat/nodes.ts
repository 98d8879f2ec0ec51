import type { Budget } from './budget'

/** A JSON schema object as found in the input. */
export type Schema = { readonly [key: string]: unknown }

/**
 * A schema together with the root document its `#...` references resolve against. `skipRef` marks the
 * sibling keywords of a `$ref` (ajv and networknt apply both the reference and its siblings).
 */
export interface Node {
  readonly s: Schema
  readonly root: Schema
  readonly skipRef?: boolean
}

/** A reference that cannot be followed (unknown scheme, unknown Iglu schema, bad pointer, cycle). */
export class RefError extends Error {
  override readonly name = 'RefError'
  constructor(
    readonly ref: string,
    message: string,
  ) {
    super(message)
  }
}

/** A schema value of the wrong shape (draft-04 schemas are objects). */
export class ShapeError extends Error {
  override readonly name = 'ShapeError'
}

/** Shared state of one check. */
export interface Ctx {
  readonly budget: Budget
  readonly resolve?: (igluUri: string) => object | undefined
  /** Resolved Iglu roots by URI (`null` = unknown). */
  readonly roots: Map<string, Schema | null>
}

export const TOP: Schema = Object.freeze({})

// Type bits. NUM stands for the non-integer numbers, so `number` = INT | NUM.
export const NULL = 1
export const BOOL = 2
export const INT = 4
export const NUM = 8
export const STR = 16
export const ARR = 32
export const OBJ = 64
export const ALL_TYPES = 127
export const TYPE_BITS: Record<string, number> = {
  null: NULL,
  boolean: BOOL,
  integer: INT,
  number: INT | NUM,
  string: STR,
  array: ARR,
  object: OBJ,
}
export const TYPE_NAMES: readonly [number, string][] = [
  [NULL, 'null'],
  [BOOL, 'boolean'],
  [INT, 'integer'],
  [NUM, 'number'],
  [STR, 'string'],
  [ARR, 'array'],
  [OBJ, 'object'],
]

export function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Type bit of a JSON value. */
export function typeOfValue(v: unknown): number {
  if (v === null) return NULL
  switch (typeof v) {
    case 'boolean':
      return BOOL
    case 'number':
      return Number.isInteger(v) ? INT : NUM
    case 'string':
      return STR
    case 'object':
      return Array.isArray(v) ? ARR : OBJ
    default:
      return 0
  }
}

/**
 * A `type` that is not a list of draft-04 types (an unknown name, an empty list): ajv skips the check for an
 * empty list and refuses unknown names, other validators reject every value, so no verdict holds for all.
 */
export class TypeListError extends Error {
  override readonly name = 'TypeListError'
}

function typeBit(x: unknown, t: unknown): number {
  if (typeof x === 'string' && Object.hasOwn(TYPE_BITS, x)) return TYPE_BITS[x]
  throw new TypeListError(`'type' ${JSON.stringify(t)} is not a list of draft-04 types; validators read it differently`)
}

/** Types allowed by the `type` keyword of one schema object (ignoring every other keyword); throws {@link TypeListError}. */
export function declaredTypes(s: Schema): number {
  const t = s.type
  if (t === undefined) return ALL_TYPES
  if (!Array.isArray(t)) return typeBit(t, t)
  if (t.length === 0) typeBit(undefined, t)
  let m = 0
  for (const x of t) m |= typeBit(x, t)
  return m
}

/** Deep equality of JSON values (object key order ignored), as used by `enum` and `uniqueItems`. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (!jsonEqual((a as Schema)[k], (b as Schema)[k])) return false
  }
  return true
}

/** Keys that never constrain instances (annotations, Iglu self-description, containers of definitions). */
const ANNOTATIONS = new Set(['$schema', 'self', 'id', 'title', 'description', 'default', 'definitions', 'examples'])

const EQ_IGNORED = new Set(['$schema', 'self', 'title', 'description', 'default', 'examples'])

/**
 * Schema equality ignoring annotations at every level; `$ref`s compare as strings, definitions count, and
 * values that are not schemas (`enum`, `const`) compare exactly.
 */
export function schemaEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!isObject(a) || !isObject(b)) return jsonEqual(a, b)
  let na = 0
  for (const k in a) {
    if (EQ_IGNORED.has(k)) continue
    na++
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    const va = a[k]
    const vb = b[k]
    if (k === 'enum' || k === 'const') {
      if (!jsonEqual(va, vb)) return false
    } else if (k === 'properties' || k === 'patternProperties' || k === 'dependencies' || k === 'definitions') {
      if (!isObject(va) || !isObject(vb)) {
        if (!jsonEqual(va, vb)) return false
        continue
      }
      let n = 0
      for (const p in va) {
        n++
        if (!Object.prototype.hasOwnProperty.call(vb, p) || !schemaEqual(va[p], vb[p])) return false
      }
      for (const _ in vb) n--
      if (n !== 0) return false
    } else if (Array.isArray(va)) {
      if (!Array.isArray(vb) || va.length !== vb.length) return false
      for (let i = 0; i < va.length; i++) if (!schemaEqual(va[i], vb[i])) return false
    } else if (!schemaEqual(va, vb)) return false
  }
  for (const k in b) if (!EQ_IGNORED.has(k)) na--
  return na === 0
}

/** True when the schema object has no keyword that can reject an instance. */
export function isTrivial(s: Schema): boolean {
  for (const k in s) {
    const v = s[k]
    switch (k) {
      case 'additionalProperties':
      case 'additionalItems':
        if (v !== true && !(isObject(v) && isTrivial(v))) return false
        break
      case 'items':
        if (Array.isArray(v) || !(isObject(v) && isTrivial(v))) return false
        break
      case 'uniqueItems':
        if (v !== false) return false
        break
      case 'required':
        if (!Array.isArray(v) || v.length > 0) return false
        break
      case 'properties':
      case 'patternProperties':
        if (!isObject(v)) return false
        for (const p in v) if (!isObject(v[p]) || !isTrivial(v[p] as Schema)) return false
        break
      case 'allOf':
        if (!Array.isArray(v) || v.some((x) => !isObject(x) || !isTrivial(x))) return false
        break
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        break
      case 'type':
        if (declaredTypes(s) !== ALL_TYPES) return false
        break
      case 'minLength':
      case 'minItems':
      case 'minProperties':
        if (v !== 0) return false
        break
      case 'type_':
        break
      default:
        if (!ANNOTATIONS.has(k)) return false
    }
  }
  return true
}

function decodePointerToken(t: string): string {
  return decodeURIComponent(t).replace(/~1/g, '/').replace(/~0/g, '~')
}

function walkPointer(root: Schema, fragment: string, ref: string): Schema {
  let cur: unknown = root
  if (fragment === '' || fragment === '/') return root
  if (!fragment.startsWith('/')) throw new RefError(ref, `unsupported fragment in $ref '${ref}'`)
  for (const raw of fragment.slice(1).split('/')) {
    const tok = decodePointerToken(raw)
    if (Array.isArray(cur)) cur = cur[Number(tok)]
    else if (isObject(cur)) cur = Object.prototype.hasOwnProperty.call(cur, tok) ? cur[tok] : undefined
    else cur = undefined
    if (cur === undefined) throw new RefError(ref, `$ref '${ref}' points to nothing`)
  }
  if (!isObject(cur)) throw new RefError(ref, `$ref '${ref}' does not point to a schema object`)
  return cur
}

const IGLU_HTTP = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/

function loadIglu(ctx: Ctx, uri: string, ref: string): Schema {
  let root = ctx.roots.get(uri)
  if (root === undefined) {
    const found = ctx.resolve?.(uri)
    root = isObject(found) ? found : null
    ctx.roots.set(uri, root)
  }
  if (root === null) throw new RefError(ref, `cannot resolve '${uri}'`)
  return root
}

/** Resolves one `$ref` string relative to the node's root. */
export function resolveRef(ctx: Ctx, node: Node, ref: string): Node {
  if (ref === '#' || ref === '') return { s: node.root, root: node.root }
  if (ref.startsWith('#')) return { s: walkPointer(node.root, ref.slice(1), ref), root: node.root }
  let igluUri: string | undefined
  let fragment = ''
  if (ref.startsWith('iglu:')) {
    const hash = ref.indexOf('#')
    igluUri = hash < 0 ? ref : ref.slice(0, hash)
    fragment = hash < 0 ? '' : ref.slice(hash + 1)
  } else {
    const m = IGLU_HTTP.exec(ref)
    if (m) {
      igluUri = `iglu:${m[1]}`
      fragment = m[2] ? m[2].slice(1) : ''
    }
  }
  if (igluUri === undefined) throw new RefError(ref, `cannot resolve '${ref}' (only '#...' and Iglu references)`)
  const root = loadIglu(ctx, igluUri, ref)
  return { s: walkPointer(root, fragment, ref), root }
}

const MAX_REF_HOPS = 64

/**
 * Expands a node into the conjunction it stands for: a `$ref` is followed (repeatedly) and its constraining
 * siblings are kept as a separate conjunct.
 */
export function expandRef(ctx: Ctx, node: Node, out: Node[]): void {
  let cur = node
  for (let hops = 0; ; hops++) {
    if (!isObject(cur.s)) throw new ShapeError('schema is not an object')
    const ref = cur.skipRef ? undefined : cur.s.$ref
    if (typeof ref !== 'string') {
      out.push(cur)
      return
    }
    if (hops > MAX_REF_HOPS) throw new RefError(ref, `$ref chain too long or cyclic at '${ref}'`)
    ctx.budget.step()
    const siblings = Object.keys(cur.s).some((k) => k !== '$ref' && !ANNOTATIONS.has(k))
    if (siblings) out.push({ s: cur.s, root: cur.root, skipRef: true })
    cur = resolveRef(ctx, cur, ref)
  }
}

/** Child node helper (same root). */
export function child(node: Node, s: unknown): Node {
  if (!isObject(s)) throw new ShapeError('schema is not an object')
  return { s, root: node.root }
}

let nextId = 1
const ids = new WeakMap<object, number>()
/** Stable identity number of a schema object (for recursion detection). */
export function idOf(o: object): number {
  let id = ids.get(o)
  if (id === undefined) {
    id = nextId++
    ids.set(o, id)
  }
  return id
}

/** Code point length, as ajv counts string lengths. */
export function cpLength(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    n++
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
  }
  return n
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

const localRefs = new WeakMap<object, boolean>()

/** Whether a `$ref` relative to its document ('#...' or a relative address) occurs anywhere under `s` (memoized per object). */
export function hasLocalRef(s: unknown): boolean {
  if (s === null || typeof s !== 'object') return false
  const hit = localRefs.get(s)
  if (hit !== undefined) return hit
  let found = false
  if (Array.isArray(s)) found = s.some(hasLocalRef)
  else {
    for (const k in s) {
      const v = (s as Schema)[k]
      if (k === '$ref' && typeof v === 'string' ? !v.startsWith('iglu:') && !/^https?:/.test(v) : hasLocalRef(v)) {
        found = true
        break
      }
    }
  }
  localRefs.set(s, found)
  return found
}

/**
 * Keywords from later drafts that ajv-draft-04 still enforces but draft-04 validators (networknt) ignore, and
 * draft-04 keywords with a later-draft value shape. Their presence in B makes a verdict validator-dependent.
 */
const LATER_DRAFT = ['const', 'contains', 'propertyNames', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'prefixItems', 'unevaluatedProperties', 'unevaluatedItems', 'minContains', 'maxContains']

/** The first keyword of `s` whose meaning differs between draft-04 validators, if any. */
export function divergentKeyword(s: Schema): string | undefined {
  for (const k of LATER_DRAFT) if (k in s) return k
  if (s.exclusiveMinimum !== undefined && typeof s.exclusiveMinimum !== 'boolean') return 'exclusiveMinimum'
  if (s.exclusiveMaximum !== undefined && typeof s.exclusiveMaximum !== 'boolean') return 'exclusiveMaximum'
  return undefined
}
