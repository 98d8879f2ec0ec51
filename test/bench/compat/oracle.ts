/**
 * Independent witness oracle: samples instances of A (seeded), mutates them guided by B's atoms, keeps the
 * ones ajv accepts against A and reports the first one ajv rejects against B. It never proves inclusion.
 */
import Ajv from 'ajv-draft-04'
import type { ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { rng } from '../../support/random'

export { rng }

type J = Record<string, unknown>
type Resolve = (uri: string) => object | undefined

const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v)


function strip(s: object): J {
  const c: J = { ...(s as J) }
  delete c.$schema
  delete c.self
  return c
}

const IGLU_HTTP = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/

/** An ajv instance (spec settings) that knows every Iglu schema of the resolver. */
export class OracleValidator {
  private readonly ajv: Ajv
  private readonly cache = new Map<string, ValidateFunction | null>()
  private readonly added = new Set<string>()
  constructor(private readonly resolve: Resolve) {
    this.ajv = new Ajv({ strict: false, validateSchema: false, multipleOfPrecision: 9, logger: false })
    addFormats(this.ajv)
    this.ajv.addKeyword('self')
  }
  private fix(v: unknown): unknown {
    if (Array.isArray(v)) return v.map((x) => this.fix(x))
    if (!isObj(v)) return v
    const out: J = {}
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') {
        const m = IGLU_HTTP.exec(x)
        const ref = m ? `iglu:${m[1]}${m[2] ?? ''}` : x
        if (ref.startsWith('iglu:')) this.add(ref.split('#')[0])
        out[k] = ref
      } else out[k] = this.fix(x)
    }
    return out
  }
  private add(uri: string): void {
    if (this.added.has(uri)) return
    this.added.add(uri)
    const s = this.resolve(uri)
    if (!s) return
    const body = this.fix(strip(s)) as J
    delete body.id
    this.ajv.addSchema(body, uri)
  }
  compile(schema: object): ValidateFunction | undefined {
    const key = JSON.stringify(schema)
    let v = this.cache.get(key)
    if (v === undefined) {
      try {
        v = this.ajv.compile(this.fix(strip(schema)) as object)
      } catch {
        v = null
      }
      this.cache.set(key, v)
    }
    return v ?? undefined
  }
}

const FORMAT_POOL: Record<string, string[]> = {
  'date-time': ['2020-01-01T00:00:00Z', '2021-12-31T23:59:59.999+01:00'],
  date: ['2020-01-01'],
  uuid: ['123e4567-e89b-12d3-a456-426614174000'],
  uri: ['http://example.com/a', 'https://x.y/'],
  email: ['a@example.com', 'a'.repeat(330) + '@example.com'],
  ipv4: ['127.0.0.1'],
  ipv6: ['::1'],
  hostname: ['example.com'],
}
const STRING_POOL = ['', 'a', 'abc', 'x y', '1.0.0', '0', 'A', 'iglu:com.acme/e/jsonschema/1-0-0', 'a'.repeat(300), '$x', 'sp_' + 'a'.repeat(26), 'YWJj', '1x1']

class Sampler {
  constructor(
    private readonly r: () => number,
    private readonly resolve: Resolve,
    private readonly atoms: unknown[],
  ) {}
  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]
  }
  private deref(s: J, root: J): [J, J] {
    for (let i = 0; i < 20 && typeof s.$ref === 'string'; i++) {
      const ref = s.$ref
      let doc: J | undefined = root
      let frag = ''
      if (ref.startsWith('#')) frag = ref.slice(1)
      else {
        const m = IGLU_HTTP.exec(ref)
        const uri = m ? `iglu:${m[1]}` : ref.split('#')[0]
        frag = m ? (m[2] ?? '').slice(1) : ref.includes('#') ? ref.slice(ref.indexOf('#') + 1) : ''
        const d = this.resolve(uri)
        doc = isObj(d) ? d : undefined
        if (!doc) return [{}, root]
        root = doc
      }
      let cur: unknown = doc
      for (const t of frag.split('/').filter(Boolean)) cur = isObj(cur) ? cur[t.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
      s = isObj(cur) ? cur : {}
    }
    return [s, root]
  }
  gen(s0: unknown, root: J, depth: number): unknown {
    if (!isObj(s0)) return null
    let [s, r] = this.deref(s0, root)
    root = r
    if (Array.isArray(s.allOf)) {
      let m: J = { ...s }
      delete m.allOf
      for (const x of s.allOf) if (isObj(x)) m = { ...m, ...this.deref(x, root)[0] }
      s = m
    }
    for (const kw of ['anyOf', 'oneOf']) {
      const br = s[kw]
      if (Array.isArray(br) && br.length > 0) {
        const m: J = { ...s }
        delete m[kw]
        s = { ...m, ...this.deref(this.pick(br) as J, root)[0] }
      }
    }
    if (Array.isArray(s.enum) && s.enum.length > 0) return this.pick(s.enum)
    let types: string[] = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : []
    if (types.length === 0) {
      if (s.properties || s.required || s.additionalProperties !== undefined) types = ['object']
      else if (s.items) types = ['array']
      else if (s.pattern || s.format || s.maxLength !== undefined) types = ['string']
      else types = ['string', 'integer', 'number', 'boolean', 'null', 'object', 'array']
    }
    const t = this.pick(types)
    switch (t) {
      case 'null':
        return null
      case 'boolean':
        return this.r() < 0.5
      case 'integer':
      case 'number': {
        const lo = typeof s.minimum === 'number' ? s.minimum : -1000
        const hi = typeof s.maximum === 'number' ? s.maximum : lo + 2000
        let x = lo + this.r() * (hi - lo)
        if (t === 'integer' || this.r() < 0.5) x = Math.round(x)
        if (typeof s.multipleOf === 'number') x = Math.round(x / s.multipleOf) * s.multipleOf
        return this.r() < 0.2 ? this.pick([lo, hi, 0]) : x
      }
      case 'string': {
        if (typeof s.format === 'string' && FORMAT_POOL[s.format]) return this.pick(FORMAT_POOL[s.format])
        const pool = [...STRING_POOL, ...this.atoms.filter((a): a is string => typeof a === 'string')]
        if (typeof s.pattern === 'string' && this.r() < 0.8) {
          try {
            const re = new RegExp(s.pattern, 'u')
            const ok = pool.filter((x) => re.test(x))
            if (ok.length > 0) return this.pick(ok)
          } catch {
            /* fall through */
          }
        }
        const min = typeof s.minLength === 'number' ? s.minLength : 0
        const max = typeof s.maxLength === 'number' ? s.maxLength : min + 12
        const len = Math.min(max, min + Math.floor(this.r() * 8))
        return this.r() < 0.5 ? 'a'.repeat(len) : this.pick(pool)
      }
      case 'array': {
        if (depth > 5) return []
        const min = typeof s.minItems === 'number' ? s.minItems : 0
        const max = typeof s.maxItems === 'number' ? s.maxItems : min + 3
        const len = Math.min(max, min + Math.floor(this.r() * 3))
        const out: unknown[] = []
        for (let i = 0; i < len; i++) {
          const it = Array.isArray(s.items) ? (i < s.items.length ? s.items[i] : s.additionalItems) : s.items
          out.push(this.gen(isObj(it) ? it : {}, root, depth + 1))
        }
        return out
      }
      default: {
        if (depth > 5) return {}
        const o: J = {}
        const props = isObj(s.properties) ? s.properties : {}
        const req = Array.isArray(s.required) ? (s.required as string[]) : []
        for (const k of Object.keys(props)) if (req.includes(k) || this.r() < 0.6) o[k] = this.gen(props[k], root, depth + 1)
        for (const k of req) if (!(k in o)) o[k] = this.gen({}, root, depth + 1)
        if (s.additionalProperties !== false && this.r() < 0.3) o['extra_' + Math.floor(this.r() * 10)] = this.gen(isObj(s.additionalProperties) ? s.additionalProperties : {}, root, depth + 1)
        return o
      }
    }
  }
}

/** Atoms of B: property names, enum values, boundary values. */
function atomsOf(b: unknown): { names: string[]; values: unknown[] } {
  const names = new Set<string>()
  const values: unknown[] = [null, true, 0, 1, 1.5, -1, '', 'x', [], {}]
  const walk = (s: unknown): void => {
    if (Array.isArray(s)) return s.forEach(walk)
    if (!isObj(s)) return
    if (isObj(s.properties)) for (const k of Object.keys(s.properties)) names.add(k)
    if (Array.isArray(s.required)) for (const k of s.required) if (typeof k === 'string') names.add(k)
    if (Array.isArray(s.enum)) values.push(...s.enum)
    for (const k of ['maximum', 'minimum']) if (typeof s[k] === 'number') values.push((s[k] as number) + 1, (s[k] as number) - 1, (s[k] as number) + 0.5, (s[k] as number) - 0.5, s[k])
    if (typeof s.maxLength === 'number' && s.maxLength < 100_000) values.push('a'.repeat(s.maxLength + 1))
    if (typeof s.minLength === 'number' && s.minLength > 0) values.push('a'.repeat(s.minLength - 1))
    if (typeof s.maxItems === 'number' && s.maxItems < 1000) values.push(new Array(s.maxItems + 1).fill(null))
    for (const v of Object.values(s)) walk(v)
  }
  walk(b)
  return { names: [...names], values }
}

function* mutations(x: unknown, atoms: { names: string[]; values: unknown[] }, level: number): Generator<unknown> {
  if (level > 2) return
  if (isObj(x)) {
    for (const k of Object.keys(x)) {
      const rest = { ...x }
      delete rest[k]
      yield rest
      for (const v of atoms.values.slice(0, 10)) yield { ...x, [k]: v }
      for (const m of mutations(x[k], atoms, level + 1)) yield { ...x, [k]: m }
    }
    for (const n of atoms.names) if (!(n in x)) for (const v of atoms.values.slice(0, 10)) yield { ...x, [n]: v }
    yield { ...x, zz_extra: 'x' }
  } else if (Array.isArray(x)) {
    if (x.length > 0) {
      yield [...x, x[0]]
      yield x.slice(1)
      for (let i = 0; i < Math.min(x.length, 3); i++) for (const m of mutations(x[i], atoms, level + 1)) yield x.map((y, j) => (j === i ? m : y))
    }
    yield [...x, null]
  } else {
    yield* atoms.values
  }
}

/** Instances near A: `count` samples of it, each followed by some of its mutations towards A's own atoms. */
export function instancesNear(a: object, resolve: Resolve, count: number, seed = 1): unknown[] {
  const atoms = atomsOf(a)
  const sampler = new Sampler(rng(seed), resolve, atoms.values)
  const out: unknown[] = [...atoms.values]
  for (let i = 0; i < count; i++) {
    const x = sampler.gen(a, a as J, 0)
    out.push(x)
    let m = 0
    for (const y of mutations(x, atoms, 0)) {
      if (m++ >= 8) break
      out.push(y)
    }
  }
  return out
}

/** Looks for an instance ajv accepts against A and rejects against B; undefined if none found. */
export function findWitness(v: OracleValidator, a: object, b: object, resolve: Resolve, tries = 300, seed = 1): unknown {
  const va = v.compile(a)
  const vb = v.compile(b)
  if (!va || !vb) return undefined
  const atoms = atomsOf(b)
  const sampler = new Sampler(rng(seed), resolve, atoms.values)
  let n = 0
  const check = (c: unknown): boolean => {
    n++
    return va(c) === true && vb(c) === false
  }
  for (const c of atoms.values) if (check(c)) return c
  for (let i = 0; i < 12 && n < tries; i++) {
    const x = sampler.gen(a, a as J, 0)
    if (va(x) !== true) continue
    if (vb(x) === false) return x
    for (const m of mutations(x, atoms, 0)) {
      if (n >= tries) break
      if (check(m)) return m
    }
  }
  return undefined
}
