/** Helpers that read keyword groups out of conjunctions of schema nodes. */
import { jsRegex } from './evaluate'
import type { Ctx, Node, Schema } from './nodes'
import { ALL_TYPES, child, declaredTypes, expandRef, isObject, isTrivial, TOP } from './nodes'

export const TOP_NODE: Node = { s: TOP, root: TOP }

const withoutCache = new WeakMap<object, Map<string, Schema>>()
/** The node without one keyword (stable identity per schema object and keyword). */
export function without(node: Node, key: string): Node {
  let m = withoutCache.get(node.s)
  if (!m) {
    m = new Map()
    withoutCache.set(node.s, m)
  }
  let s = m.get(key)
  if (!s) {
    const copy: Record<string, unknown> = { ...node.s }
    delete copy[key]
    s = copy
    m.set(key, s)
  }
  return { s, root: node.root, skipRef: node.skipRef }
}

/** Expands `$ref`s and nested `allOf`s into a flat conjunction, dropping trivial members. */
export function flatten(ctx: Ctx, nodes: readonly Node[]): Node[] {
  if (nodes.length === 1) {
    // the common case, as the loop below would answer it: one schema without a reference to follow or allOf
    const n = nodes[0]
    if (isObject(n.s) && (n.skipRef || typeof n.s.$ref !== 'string') && !Array.isArray(n.s.allOf)) return isTrivial(n.s) ? [] : [n]
  }
  const out: Node[] = []
  const visit = (n: Node, depth: number): void => {
    if (depth > 64) throw new Error('allOf nesting too deep')
    const parts: Node[] = []
    expandRef(ctx, n, parts)
    for (const p of parts) {
      const all = p.s.allOf
      if (Array.isArray(all)) {
        for (const x of all) visit(child(p, x), depth + 1)
        const rest = without(p, 'allOf')
        if (!isTrivial(rest.s)) out.push(rest)
      } else if (!isTrivial(p.s)) out.push(p)
    }
  }
  for (const n of nodes) visit(n, 0)
  // Drop repeated members (same schema object) so that re-expanded recursions are recognised.
  return out.filter((n, i) => out.findIndex((m) => m.s === n.s && !!m.skipRef === !!n.skipRef) === i)
}

export function typeMask(nodes: readonly Node[]): number {
  let m = ALL_TYPES
  for (const n of nodes) m &= declaredTypes(n.s)
  return m
}

/** Effective schemas for the value of key `k` in one object schema: forbidden, a list, or unknown. */
export type KeyEff = { forbidden: true } | { forbidden: false; nodes: Node[]; unknown?: boolean }

export function keyEff(node: Node, k: string): KeyEff {
  const s = node.s
  const nodes: Node[] = []
  let unknown = false
  let matched = false
  if (isObject(s.properties) && Object.prototype.hasOwnProperty.call(s.properties, k)) {
    matched = true
    nodes.push(child(node, s.properties[k]))
  }
  if (isObject(s.patternProperties)) {
    for (const p in s.patternProperties) {
      const re = jsRegex(p)
      if (!re) unknown = true
      else if (re.test(k)) {
        matched = true
        nodes.push(child(node, s.patternProperties[p]))
      }
    }
  }
  if (!matched) {
    if (s.additionalProperties === false) return { forbidden: true }
    if (isObject(s.additionalProperties)) nodes.push(child(node, s.additionalProperties))
  }
  return { forbidden: false, nodes, unknown }
}

/** Conjunction of the key's effective schemas over several object schemas. */
export function keyEffAll(nodes: readonly Node[], k: string): KeyEff {
  const out: Node[] = []
  let unknown = false
  for (const n of nodes) {
    const e = keyEff(n, k)
    if (e.forbidden) return e
    out.push(...e.nodes)
    unknown ||= !!e.unknown
  }
  return { forbidden: false, nodes: out, unknown }
}

export function requiredOf(nodes: readonly Node[]): Set<string> {
  const r = new Set<string>()
  for (const n of nodes) if (Array.isArray(n.s.required)) for (const k of n.s.required) if (typeof k === 'string') r.add(k)
  return r
}

/** Effective schema of array position i in one array schema. */
export function itemEff(node: Node, i: number): KeyEff {
  const s = node.s
  if (Array.isArray(s.items)) {
    if (i < s.items.length) return { forbidden: false, nodes: [child(node, s.items[i])] }
    if (s.additionalItems === false) return { forbidden: true }
    if (isObject(s.additionalItems)) return { forbidden: false, nodes: [child(node, s.additionalItems)] }
    return { forbidden: false, nodes: [] }
  }
  if (isObject(s.items)) return { forbidden: false, nodes: [child(node, s.items)] }
  return { forbidden: false, nodes: [] }
}

export function itemEffAll(nodes: readonly Node[], i: number): KeyEff {
  const out: Node[] = []
  for (const n of nodes) {
    const e = itemEff(n, i)
    if (e.forbidden) return e
    out.push(...e.nodes)
  }
  return { forbidden: false, nodes: out }
}

export function maxNum(nodes: readonly Node[], key: string): number | undefined {
  let r: number | undefined
  for (const n of nodes) {
    const v = n.s[key]
    if (typeof v === 'number' && (r === undefined || v > r)) r = v
  }
  return r
}

export function minNum(nodes: readonly Node[], key: string): number | undefined {
  let r: number | undefined
  for (const n of nodes) {
    const v = n.s[key]
    if (typeof v === 'number' && (r === undefined || v < r)) r = v
  }
  return r
}

/** Numeric bounds of a conjunction. */
export interface Bounds {
  lo: number
  loEx: boolean
  hi: number
  hiEx: boolean
  mults: number[]
}

export function boundsOf(nodes: readonly Node[]): Bounds {
  const b: Bounds = { lo: -Infinity, loEx: false, hi: Infinity, hiEx: false, mults: [] }
  for (const n of nodes) {
    const s = n.s
    if (typeof s.minimum === 'number') {
      const ex = s.exclusiveMinimum === true
      if (s.minimum > b.lo || (s.minimum === b.lo && ex)) [b.lo, b.loEx] = [s.minimum, ex]
    }
    if (typeof s.maximum === 'number') {
      const ex = s.exclusiveMaximum === true
      if (s.maximum < b.hi || (s.maximum === b.hi && ex)) [b.hi, b.hiEx] = [s.maximum, ex]
    }
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0) b.mults.push(s.multipleOf)
  }
  return b
}

/** Smallest and largest integers inside bounds (ignoring multipleOf). */
export function intRange(b: Bounds): [number, number] {
  const lo = b.lo === -Infinity ? -Infinity : b.loEx ? Math.floor(b.lo) + 1 : Math.ceil(b.lo)
  const hi = b.hi === Infinity ? Infinity : b.hiEx ? Math.ceil(b.hi) - 1 : Math.floor(b.hi)
  return [lo, hi]
}

export function expandAll(ctx: Ctx, n: Node): Node[] {
  const out: Node[] = []
  expandRef(ctx, n, out)
  return out
}
