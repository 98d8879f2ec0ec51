/**
 * The fast path of witness confirmation: a draft-04 validator that walks the schema instead of generating
 * code for it. It must answer as ajv-draft-04 does with the options of `validator.ts`, whose `confirmWhole`
 * is the plain definition; ajv spends milliseconds compiling a large schema, a witness is judged here in
 * microseconds.
 *
 * It answers only where it reproduces ajv exactly, and says `undefined` (the caller then asks ajv) for:
 * an `id` anywhere, a keyword ajv knows that is not implemented here (`nullable`, `if`, `contains`,
 * `propertyNames`, a nested `$schema`, ...), a keyword value ajv would refuse to compile or read in its own
 * way, a pattern the engine refuses, a reference that does not resolve or is not a plain pointer, a name
 * ajv would read from the object prototype (`constructor`), `__proto__`, and a nesting deeper than 100.
 * Keywords ajv does not know are ignored, as ajv ignores them (`strict: false`).
 */
import type { LinearRegExp } from '../iglu/regex-engine'
import { jsRegex } from './evaluate'

type Resolve = (igluUri: string) => object | undefined
type J = Record<string, unknown>

/** What the interpreter needs of the ajv instance it stands in for. */
export interface AjvSetup {
  /** Every keyword the instance knows (`Object.keys(ajv.RULES.keywords)`). */
  readonly keywords: ReadonlySet<string>
  /** Its format table (`ajv.formats`). */
  readonly formats: Readonly<Record<string, unknown>>
}

/** Thrown inside, caught in `judge`: the answer would not be exactly ajv's. */
class Unsupported extends Error {}
const UNSUPPORTED = new Unsupported('outside the interpreted subset')
function unsupported(): never {
  throw UNSUPPORTED
}

/** A document `#` references resolve against. */
interface Doc {
  readonly root: unknown
}

const MAX_DEPTH = 100
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'])
const NUMBER_KEYWORDS = ['maximum', 'minimum', 'multipleOf', 'maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties']
/** Keywords that do not constrain instances with ajv's options here. */
const NO_OPS = new Set(['title', 'description', 'default', '$comment', 'definitions', '$defs', 'self'])
const IGLU_HTTP = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/
const IGLU_URI = /^iglu:[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+\/\d+-\d+-\d+$/
/** Pointers read the same by ajv's URI parser and by a plain split (no percent-encoding, no spaces). */
const POINTER = /^(?:\/[A-Za-z0-9_.~$-]+)+$/
/** Own names of plain objects that ajv's deep equality reads as methods. */
const METHOD_NAMES = new Set(['constructor', 'valueOf', 'toString', '__proto__'])

const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v)
/** A map of names to schemas or lists as ajv reads it (it skips a `__proto__` name, which is not followed here). */
const map = (v: unknown): J => (isObj(v) && !Object.hasOwn(v, '__proto__') ? v : unsupported())

/** String length in code points, as ajv counts it (a lone surrogate counts one). */
function codePoints(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; n++) {
    const c = s.charCodeAt(i++)
    if (c >= 0xd800 && c <= 0xdbff && i < s.length && (s.charCodeAt(i) & 0xfc00) === 0xdc00) i++
  }
  return n
}

/** ajv's deep equality (fast-deep-equal) on JSON values. */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    return a.length === bb.length && a.every((x, i) => equal(x, bb[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.some((k) => METHOD_NAMES.has(k)) || kb.some((k) => METHOD_NAMES.has(k))) unsupported()
  if (ka.length !== kb.length) return false
  return ka.every((k) => Object.hasOwn(b, k) && equal((a as J)[k], (b as J)[k]))
}

/** Whether `x` has the member `name` as ajv reads it (`x[name] !== undefined`). */
function has(x: J, name: string): boolean {
  if (Object.hasOwn(x, name)) return true
  if (x[name] !== undefined) unsupported()
  return false
}

function typeOk(t: string, x: unknown): boolean {
  switch (t) {
    case 'null':
      return x === null
    case 'integer':
      return typeof x === 'number' && !(x % 1) && !Number.isNaN(x)
    case 'object':
      return isObj(x)
    case 'array':
      return Array.isArray(x)
    default:
      return typeof x === t
  }
}

export class Interpreter {
  private readonly docs = new Map<string, Doc | null>()
  private readonly checked = new WeakSet<object>()

  constructor(
    private readonly ajv: AjvSetup,
    private readonly resolve?: Resolve,
  ) {}

  /** ajv's verdict on `instance` (a JSON value) against `schema`, or undefined when it is not reproduced here. */
  judge(schema: object, instance: unknown): boolean | undefined {
    try {
      const doc = this.mainDoc(schema)
      return this.valid(doc.root, instance, doc, 0)
    } catch {
      // outside the subset (UNSUPPORTED), or anything else a check threw (a pattern's cost budget): ajv answers
      return undefined
    }
  }

  private mainDoc(schema: object): Doc {
    const doc: Doc = { root: withoutRootKeys(schema, false) }
    if (!this.checked.has(schema)) {
      this.load(doc)
      this.checked.add(schema)
    }
    return doc
  }

  /**
   * Throws unless ajv would compile the document: no `id` anywhere, every Iglu schema it names anywhere
   * (as ajv is given them, unreferenced ones too) found and loadable, and its root checked.
   */
  private load(doc: Doc): void {
    const walk = (v: unknown, depth: number): void => {
      if (depth > 2 * MAX_DEPTH) unsupported()
      if (Array.isArray(v)) {
        for (const x of v) walk(x, depth + 1)
        return
      }
      if (!isObj(v)) return
      for (const k in v) {
        const x = v[k]
        if (k === 'id' && typeof x === 'string') unsupported()
        if (k === '$ref' && typeof x === 'string') {
          const m = IGLU_HTTP.exec(x)
          const uri = (m ? `iglu:${m[1]}` : x).split('#')[0]
          if (uri.startsWith('iglu:')) this.igluDoc(uri)
        } else walk(x, depth + 1)
      }
    }
    walk(doc.root, 0)
    this.check(doc.root, doc, new Set(), 0)
  }

  /** The Iglu schema at `uri` as ajv has it added: root `$schema`, `self` and `id` dropped, then checked. */
  private igluDoc(uri: string): Doc {
    const known = this.docs.get(uri)
    if (known === null) unsupported()
    if (known !== undefined) return known
    const found = IGLU_URI.test(uri) ? this.resolve?.(uri) : undefined
    if (found === undefined || !isObj(found)) {
      this.docs.set(uri, null)
      unsupported()
    }
    const doc: Doc = { root: withoutRootKeys(found, true) }
    // Set before the check, so that a cycle of references ends; a failed check forgets it.
    this.docs.set(uri, doc)
    try {
      this.load(doc)
    } catch (err) {
      this.docs.set(uri, null)
      throw err
    }
    return doc
  }

  /** A pattern as ajv runs it here (`linearRegExp` with the `u` flag, shared with the checker's own cache). */
  private regex(p: string): LinearRegExp {
    return jsRegex(p) ?? unsupported()
  }

  /** The schema and document a `$ref` points to. */
  private target(ref: string, doc: Doc): [unknown, Doc] {
    const m = IGLU_HTTP.exec(ref)
    const uri = m ? `iglu:${m[1]}${m[2] ?? ''}` : ref
    const hash = uri.indexOf('#')
    const base = hash < 0 ? uri : uri.slice(0, hash)
    const fragment = hash < 0 ? '' : uri.slice(hash + 1)
    let d = doc
    if (base !== '') {
        d = this.igluDoc(base)
    }
    if (fragment === '') return [d.root, d]
    if (!POINTER.test(fragment)) unsupported()
    let cur: unknown = d.root
    for (const token of fragment.slice(1).split('/')) {
      const key = token.replace(/~1/g, '/').replace(/~0/g, '~')
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) unsupported()
      cur = (cur as J)[key]
    }
    return isObj(cur) ? [cur, d] : unsupported()
  }

  /**
   * Throws unless ajv compiles `s` as this interpreter reads it: every keyword value of the shape ajv
   * expects, every pattern accepted, every reference resolved (and checked in turn), no `id`.
   */
  private check(s: unknown, doc: Doc, seen: Set<object>, depth: number): void {
    if (typeof s === 'boolean') return
    if (!isObj(s) || depth > MAX_DEPTH) unsupported()
    if (seen.has(s)) return
    seen.add(s)
    const d = depth + 1
    for (const k in s) {
      const v = s[k]
      if (NUMBER_KEYWORDS.includes(k)) {
        if (typeof v !== 'number' || !Number.isFinite(v)) unsupported()
        continue
      }
      switch (k) {
        case 'type': {
          const ts = Array.isArray(v) ? v : [v]
          if (ts.length === 0 || !ts.every((t) => typeof t === 'string' && TYPES.has(t))) unsupported()
          break
        }
        case 'enum':
          if (!Array.isArray(v) || v.length === 0) unsupported()
          break
        case 'const':
          break
        case 'exclusiveMaximum':
        case 'exclusiveMinimum':
          if (typeof v !== 'boolean' || s[k === 'exclusiveMaximum' ? 'maximum' : 'minimum'] === undefined) unsupported()
          break
        case 'pattern':
          this.regex(typeof v === 'string' ? v : unsupported())
          break
        case 'format': {
          const def = typeof v === 'string' ? this.ajv.formats[v] : unsupported()
          if (isObj(def) && !(def instanceof RegExp) && def.async) unsupported()
          break
        }
        case 'required':
          if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) unsupported()
          break
        case 'uniqueItems':
          if (typeof v !== 'boolean') unsupported()
          break
        case 'properties':
          for (const p in map(v)) this.check((v as J)[p], doc, seen, d)
          break
        case 'patternProperties':
          for (const p in map(v)) {
            this.regex(p)
            this.check((v as J)[p], doc, seen, d)
          }
          break
        case 'dependencies':
          for (const p in map(v)) {
            const x = (v as J)[p]
            if (!Array.isArray(x)) this.check(x, doc, seen, d)
            else if (!x.every((y) => typeof y === 'string')) unsupported()
          }
          break
        case 'items':
          if (Array.isArray(v)) for (const x of v) this.check(x, doc, seen, d)
          else this.check(v, doc, seen, d)
          break
        case 'allOf':
        case 'anyOf':
        case 'oneOf':
          if (!Array.isArray(v)) unsupported()
          for (const x of v) this.check(x, doc, seen, d)
          break
        case 'additionalProperties':
        case 'additionalItems':
        case 'not':
          this.check(v, doc, seen, d)
          break
        case '$ref': {
          const [t, td] = this.target(typeof v === 'string' ? v : unsupported(), doc)
          this.check(t, td, seen, d)
          break
        }
        default:
          if (this.ajv.keywords.has(k) && !NO_OPS.has(k)) unsupported()
      }
    }
  }

  private valid(s: unknown, x: unknown, doc: Doc, depth: number): boolean {
    if (typeof s === 'boolean') return s
    if (depth > MAX_DEPTH) unsupported()
    const o = s as J
    if (o.type !== undefined) {
      const t = o.type
      if (!(Array.isArray(t) ? t.some((y) => typeOk(y as string, x)) : typeOk(t as string, x))) return false
    }
    if (o.enum !== undefined && !(o.enum as unknown[]).some((v) => equal(x, v))) return false
    if (Object.hasOwn(o, 'const') && !equal(x, o.const)) return false
    if (o.$ref !== undefined) {
      const [t, d] = this.target(o.$ref as string, doc)
      if (!this.valid(t, x, d, depth + 1)) return false
    }
    if (o.allOf !== undefined && !(o.allOf as unknown[]).every((y) => this.valid(y, x, doc, depth + 1))) return false
    if (o.anyOf !== undefined && !(o.anyOf as unknown[]).some((y) => this.valid(y, x, doc, depth + 1))) return false
    if (o.oneOf !== undefined && (o.oneOf as unknown[]).filter((y) => this.valid(y, x, doc, depth + 1)).length !== 1) return false
    if (o.not !== undefined && this.valid(o.not, x, doc, depth + 1)) return false
    if (typeof x === 'number') return this.number(o, x)
    if (typeof x === 'string') return this.string(o, x)
    if (Array.isArray(x)) return this.array(o, x, doc, depth)
    if (isObj(x)) return this.object(o, x, doc, depth)
    return true
  }

  /** ajv's `format` for a value of rule group `group`: unknown formats pass, as with `strict: false`. */
  private format(o: J, x: string | number, group: 'string' | 'number'): boolean {
    if (o.format === undefined) return true
    const def = this.ajv.formats[o.format as string]
    if (def === undefined || def === true) return true
    let type = 'string'
    let fn: unknown = def
    if (isObj(def) && !(def instanceof RegExp)) {
      type = (def.type as string | undefined) || 'string'
      fn = def.validate
    }
    if (type !== group) return true
    return typeof fn === 'function' ? Boolean((fn as (v: unknown) => unknown)(x)) : (fn as RegExp).test(String(x))
  }

  private number(o: J, x: number): boolean {
    const max = o.maximum as number | undefined
    if (max !== undefined && (o.exclusiveMaximum ? x >= max : x > max)) return false
    const min = o.minimum as number | undefined
    if (min !== undefined && (o.exclusiveMinimum ? x <= min : x < min)) return false
    const m = o.multipleOf as number | undefined
    if (m !== undefined) {
      if (m === 0) return false
      const d = x / m
      if (Math.abs(Math.round(d) - d) > 1e-9) return false
    }
    return this.format(o, x, 'number')
  }

  private string(o: J, x: string): boolean {
    if (o.maxLength !== undefined || o.minLength !== undefined) {
      const n = codePoints(x)
      if (n > ((o.maxLength as number | undefined) ?? Infinity) || n < ((o.minLength as number | undefined) ?? -Infinity)) return false
    }
    if (o.pattern !== undefined && !this.regex(o.pattern as string).test(x)) return false
    return this.format(o, x, 'string')
  }

  private array(o: J, x: unknown[], doc: Doc, depth: number): boolean {
    if (o.maxItems !== undefined && x.length > (o.maxItems as number)) return false
    if (o.minItems !== undefined && x.length < (o.minItems as number)) return false
    const items = o.items
    if (Array.isArray(items)) {
      for (let i = 0; i < items.length && i < x.length; i++) if (!this.valid(items[i], x[i], doc, depth + 1)) return false
      const more = o.additionalItems
      if (more === false && x.length > items.length) return false
      if (isObj(more)) for (let i = items.length; i < x.length; i++) if (!this.valid(more, x[i], doc, depth + 1)) return false
    } else if (items !== undefined) {
      for (const y of x) if (!this.valid(items, y, doc, depth + 1)) return false
    }
    if (o.uniqueItems === true) {
      // ajv keys scalar items by their text when `items` declares only scalar types: `__proto__` is not read back
      if (x.includes('__proto__')) unsupported()
      for (let i = 0; i < x.length; i++) for (let j = 0; j < i; j++) if (equal(x[i], x[j])) return false
    }
    return true
  }

  private object(o: J, x: J, doc: Doc, depth: number): boolean {
    const keys = Object.keys(x)
    if (keys.includes('__proto__')) unsupported()
    if (o.maxProperties !== undefined && keys.length > (o.maxProperties as number)) return false
    if (o.minProperties !== undefined && keys.length < (o.minProperties as number)) return false
    if (o.required !== undefined && !(o.required as string[]).every((n) => has(x, n))) return false
    const props = o.properties as J | undefined
    if (props !== undefined) for (const n of Object.keys(props)) if (has(x, n) && !this.valid(props[n], x[n], doc, depth + 1)) return false
    const pats = o.patternProperties as J | undefined
    const patterns = pats === undefined ? [] : Object.keys(pats)
    for (const p of patterns) {
      const re = this.regex(p)
      for (const k of keys) if (re.test(k) && !this.valid(pats![p], x[k], doc, depth + 1)) return false
    }
    const more = o.additionalProperties
    if (more !== undefined && more !== true) {
      for (const k of keys) {
        if (props !== undefined && Object.hasOwn(props, k)) continue
        if (patterns.some((p) => this.regex(p).test(k))) continue
        if (!this.valid(more, x[k], doc, depth + 1)) return false
      }
    }
    const deps = o.dependencies as J | undefined
    if (deps !== undefined) {
      for (const n in deps) {
        const d = deps[n]
        if (!has(x, n)) continue
        if (Array.isArray(d) ? !d.every((m) => has(x, m as string)) : !this.valid(d, x, doc, depth + 1)) return false
      }
    }
    return true
  }
}

/** A document's root without the keys that only describe it: `$schema` and `self`, and for an added Iglu schema its `id`. */
function withoutRootKeys(schema: object, dropId: boolean): unknown {
  if (!isObj(schema)) return schema
  const { $schema: _s, self: _self, ...rest } = schema
  if (dropId) delete rest.id
  return rest
}
