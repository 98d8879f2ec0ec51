/** Mutations whose inclusion verdict is known by construction (widen: S ⊆ S'; narrow: S ⊄ S', with witness). */
type J = Record<string, unknown>
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface Mutation {
  readonly op: string
  readonly schema: object
}

/** Paths to subschemas in positive positions (never under oneOf, not, dependencies or definitions). */
function positions(s: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (!isObj(s) || out.length > 200) return out
  out.push(path)
  if (typeof s.$ref === 'string') return out
  if (isObj(s.properties)) for (const k of Object.keys(s.properties)) positions(s.properties[k], [...path, 'properties', k], out)
  if (isObj(s.patternProperties)) for (const k of Object.keys(s.patternProperties)) positions(s.patternProperties[k], [...path, 'patternProperties', k], out)
  if (isObj(s.additionalProperties)) positions(s.additionalProperties, [...path, 'additionalProperties'], out)
  if (isObj(s.items)) positions(s.items, [...path, 'items'], out)
  if (Array.isArray(s.items)) s.items.forEach((x, i) => positions(x, [...path, 'items', i], out))
  for (const kw of ['anyOf', 'allOf']) if (Array.isArray(s[kw])) (s[kw] as unknown[]).forEach((x, i) => positions(x, [...path, kw, i], out))
  return out
}

function at(root: unknown, path: (string | number)[]): J {
  let cur = root
  for (const p of path) cur = (cur as J)[p as string]
  return cur as J
}

function edit(root: object, path: (string | number)[], f: (x: J) => J | undefined): object | undefined {
  const copy = structuredClone(root) as J
  if (path.length === 0) return f(copy)
  const parent = at(copy, path.slice(0, -1))
  const next = f(parent[path[path.length - 1] as string] as J)
  if (next === undefined) return undefined
  parent[path[path.length - 1] as string] = next
  return copy
}

const widenOps: [string, (x: J, isRoot: boolean) => J | undefined][] = [
  ['drop-required', (x) => (Array.isArray(x.required) && x.required.length > 0 ? { ...x, required: x.required.slice(0, -1) } : undefined)],
  ['raise-maxLength', (x) => (typeof x.maxLength === 'number' ? { ...x, maxLength: x.maxLength + 5 } : undefined)],
  ['lower-minLength', (x) => (typeof x.minLength === 'number' && x.minLength > 0 ? { ...x, minLength: x.minLength - 1 } : undefined)],
  ['raise-maximum', (x) => (typeof x.maximum === 'number' ? { ...x, maximum: x.maximum + 10 } : undefined)],
  ['lower-minimum', (x) => (typeof x.minimum === 'number' ? { ...x, minimum: x.minimum - 10 } : undefined)],
  ['raise-maxItems', (x) => (typeof x.maxItems === 'number' ? { ...x, maxItems: x.maxItems + 1 } : undefined)],
  ['add-enum-value', (x) => (Array.isArray(x.enum) ? { ...x, enum: [...x.enum, '__added__'] } : undefined)],
  ['add-null-type', (x) => (typeof x.type === 'string' && x.type !== 'null' ? { ...x, type: [x.type, 'null'] } : undefined)],
  ['drop-pattern', (x) => (typeof x.pattern === 'string' ? without(x, 'pattern') : undefined)],
  ['drop-format', (x) => (typeof x.format === 'string' ? without(x, 'format') : undefined)],
  ['open-object', (x) => (x.additionalProperties === false ? without(x, 'additionalProperties') : undefined)],
  ['to-any', (x, isRoot) => (isRoot ? undefined : {})],
]

const narrowOps: [string, (x: J) => J | undefined][] = [
  ['add-required', (x) => (x.type === 'object' ? { ...x, required: [...(Array.isArray(x.required) ? x.required : []), 'zz_new_required'] } : undefined)],
  ['drop-enum-value', (x) => (Array.isArray(x.enum) && x.enum.length > 1 ? { ...x, enum: x.enum.slice(1) } : undefined)],
  ['drop-type', (x) => (Array.isArray(x.type) && x.type.length > 1 ? { ...x, type: x.type.slice(1) } : undefined)],
  ['close-object', (x) => (x.type === 'object' && x.additionalProperties === undefined && isObj(x.properties) ? { ...x, additionalProperties: false } : undefined)],
  ['cap-maxLength', (x) => (x.type === 'string' && x.enum === undefined ? { ...x, maxLength: 0 } : undefined)],
  ['lower-maximum', (x) => (x.type === 'integer' || x.type === 'number' ? { ...x, maximum: typeof x.minimum === 'number' ? x.minimum - 1 : -1e9 } : undefined)],
]

function without(x: J, k: string): J {
  const c = { ...x }
  delete c[k]
  return c
}

/** Deterministic widenings and narrowings of a schema (at most `limit` of each). */
export function mutate(schema: object, limit: number, seed: number): { widen: Mutation[]; narrow: Mutation[] } {
  const pos = positions(schema)
  const widen: Mutation[] = []
  const narrow: Mutation[] = []
  const order = pos.map((_, i) => (i * 7919 + seed) % pos.length)
  for (const i of order) {
    const p = pos[i]
    for (const [op, f] of widenOps) {
      if (widen.length >= limit || widen.some((w) => w.op === op)) continue
      const m = edit(schema, p, (x) => f(x, p.length === 0))
      if (m) widen.push({ op, schema: m })
    }
    for (const [op, f] of narrowOps) {
      if (narrow.length >= limit || narrow.some((w) => w.op === op)) continue
      const m = edit(schema, p, f)
      if (m) narrow.push({ op, schema: m })
    }
  }
  return { widen, narrow }
}
