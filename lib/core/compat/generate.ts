/** Best-effort generation of instances valid against a conjunction of schema nodes (used for witnesses). */
import { evalAll, formatDef } from './evaluate'
import type { Ctx, Node } from './nodes'
import { ARR, BOOL, INT, isObject, NULL, NUM, OBJ, STR } from './nodes'
import { compilePattern } from './regex'
import { findString } from './regex-search'
import type { Matcher } from './regex'
import { formatSamples } from './samples'
import {
  boundsOf,
  flatten,
  intRange,
  itemEffAll,
  keyEffAll,
  maxNum,
  minNum,
  requiredOf,
  typeMask,
  without,
} from './shape'

export const NONE: unique symbol = Symbol('none')
export type Gen = unknown | typeof NONE

const MAX_DEPTH = 10

/** Generates a value valid against all nodes (checked with the internal validator), or NONE. */
export function generate(ctx: Ctx, nodes: readonly Node[], variant = 0, mask = 127, depth = 0): Gen {
  for (const c of candidates(ctx, nodes, variant, mask, depth)) {
    if (evalAll(ctx, nodes, c) === true) return c
  }
  return NONE
}

/** Several distinct candidates (not all necessarily valid) for the conjunction, restricted to type mask. */
export function* candidates(ctx: Ctx, nodes0: readonly Node[], variant: number, mask: number, depth: number): Generator<unknown> {
  if (depth > MAX_DEPTH) return
  ctx.budget.step()
  const nodes = flatten(ctx, nodes0)
  const split = nodes.findIndex((n) => Array.isArray(n.s.anyOf) || Array.isArray(n.s.oneOf))
  if (split >= 0) {
    const n = nodes[split]
    const kw = Array.isArray(n.s.anyOf) ? 'anyOf' : 'oneOf'
    const rest = [...nodes.slice(0, split), without(n, kw), ...nodes.slice(split + 1)]
    for (const br of n.s[kw] as unknown[]) {
      if (!isObject(br)) continue
      yield* candidates(ctx, [...rest, { s: br, root: n.root }], variant, mask, depth)
    }
    return
  }
  const en = nodes.find((n) => Array.isArray(n.s.enum))
  if (en) {
    const vals = en.s.enum as unknown[]
    for (let i = 0; i < vals.length; i++) yield vals[(i + variant) % vals.length]
    return
  }
  const m = typeMask(nodes) & mask
  const order = [OBJ, STR, INT, NUM, BOOL, NULL, ARR]
  const rot = variant % order.length
  const types = [...order.slice(rot), ...order.slice(0, rot)]
  for (const t of types) {
    if (!(m & t)) continue
    switch (t) {
      case NULL:
        yield null
        break
      case BOOL:
        yield variant % 2 === 0
        yield variant % 2 !== 0
        break
      case INT:
      case NUM:
        yield* numbers(nodes, t, variant)
        break
      case STR:
        yield* strings(ctx, nodes, variant)
        break
      case ARR: {
        const a = genArray(ctx, nodes, maxNum(nodes, 'minItems') ?? 0, new Map(), depth)
        if (a !== NONE) yield a
        break
      }
      case OBJ: {
        const o = genObject(ctx, nodes, { variant }, depth)
        if (o !== NONE) yield o
        break
      }
    }
  }
}

function* numbers(nodes: readonly Node[], t: number, variant: number): Generator<number> {
  const b = boundsOf(nodes)
  const [ilo, ihi] = intRange(b)
  const base: number[] = []
  const intMults = b.mults.filter((x) => Number.isInteger(x))
  const step = intMults.length > 0 ? intMults.reduce(lcm) : 1
  const anchor = Number.isFinite(ilo) ? ilo : Number.isFinite(ihi) ? ihi : 0
  const first = Math.ceil(anchor / step) * step
  for (let i = 0; i < 4; i++) base.push(first + (i + variant) * step, first - (i + variant) * step)
  base.push(0, 1, ilo, ihi)
  for (const m of b.mults) base.push(m, m * (variant + 1), Math.ceil(anchor / m) * m)
  if (t === NUM) {
    const lo = Number.isFinite(b.lo) ? b.lo : Number.isFinite(b.hi) ? b.hi - 1 : 0
    const hi = Number.isFinite(b.hi) ? b.hi : lo + 1
    base.unshift((lo + hi) / 2 + variant * 1e-3, lo + 0.5, hi - 0.5, 0.5, 1.5)
  }
  for (const x of base) {
    if (!Number.isFinite(x)) continue
    if (t === INT && !Number.isInteger(x)) continue
    if (t === NUM && Number.isInteger(x)) continue
    yield x
  }
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b]
  return a
}
function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b
}

const WS = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff'
const TIME = '\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?(?:[zZ]|[+-]\\d\\d(?::?\\d\\d)?)?'

/**
 * Regular supersets of some ajv-formats languages (the format check is at least this strict). They only
 * ever enlarge A, so they are safe to use when proving inclusion.
 */
export const FORMAT_SUPERSETS: Record<string, string> = {
  uuid: '^(?:[uU][rR][nN]:[uU][uU][iI][dD]:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$',
  date: '^\\d{4}-\\d\\d-\\d\\d$',
  time: `^${TIME}$`,
  'date-time': `^\\d{4}-\\d\\d-\\d\\d[tT${WS}]${TIME}$`,
  ipv4: '^(?:\\d{1,3}\\.){3}\\d{1,3}$',
}

/** Matchers of all supported patterns of the conjunction (unsupported ones are skipped). */
export function matchersOf(nodes: readonly Node[], withFormats = false): { ms: Matcher[]; unsupported: string[] } {
  const ms: Matcher[] = []
  const unsupported: string[] = []
  for (const n of nodes) {
    if (withFormats && typeof n.s.format === 'string' && FORMAT_SUPERSETS[n.s.format]) {
      const m = compilePattern(FORMAT_SUPERSETS[n.s.format])
      if (m) ms.push(m)
    }
    if (typeof n.s.pattern !== 'string') continue
    const m = compilePattern(n.s.pattern)
    if (m) ms.push(m)
    else unsupported.push(n.s.pattern)
  }
  return { ms, unsupported }
}

export function* strings(ctx: Ctx, nodes: readonly Node[], variant: number, wanted: number[] = []): Generator<string> {
  const min = maxNum(nodes, 'minLength') ?? 0
  const max = minNum(nodes, 'maxLength') ?? Infinity
  const formats = [...new Set(nodes.map((n) => n.s.format).filter((f): f is string => typeof f === 'string'))]
  const stringFormats = formats.filter((f) => formatDef(f)?.type !== 'number')
  const lens = [...wanted, min + variant, min, Math.min(max, Math.max(min, 1))]
  for (const f of stringFormats) yield* formatSamples(f, lens)
  const { ms } = matchersOf(nodes)
  if (ms.length > 0) {
    for (const l of [...wanted, min + variant]) {
      if (l < min || l > max) continue
      const s = findString(ms, (acc, k) => k === l && acc.every(Boolean), [l, l + 1], l, ctx.budget)
      if (s !== null) yield s
    }
    const s = findString(ms, (acc, k) => k >= min && acc.every(Boolean), [min], max, ctx.budget)
    if (s !== null) yield s
  }
  for (const l of lens) if (l >= min && l <= max && l < 100_000) yield 'a'.repeat(l)
  yield ''
}

export interface ObjectPlan {
  set?: ReadonlyMap<string, unknown> | undefined
  omit?: ReadonlySet<string> | undefined
  minKeys?: number | undefined
  variant?: number | undefined
}

const FRESH = ['x', 'y', 'z', 'x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9']

/** Builds an object for the conjunction: required keys, dependencies, then optional keys up to a size. */
export function genObject(ctx: Ctx, nodes: readonly Node[], plan: ObjectPlan, depth: number): Gen {
  const keys: string[] = []
  const add = (k: string): void => {
    if (!keys.includes(k) && !plan.omit?.has(k)) keys.push(k)
  }
  for (const k of requiredOf(nodes)) add(k)
  if (plan.set) for (const k of plan.set.keys()) add(k)
  const want = Math.max(plan.minKeys ?? 0, maxNum(nodes, 'minProperties') ?? 0)
  const addDeps = (): void => {
    for (let changed = true; changed; ) {
      changed = false
      for (const n of nodes) {
        if (!isObject(n.s.dependencies)) continue
        for (const k of keys) {
          const d = n.s.dependencies[k]
          if (!Array.isArray(d)) continue
          for (const x of d) {
            if (typeof x === 'string' && !keys.includes(x) && !plan.omit?.has(x)) {
              keys.push(x)
              changed = true
            }
          }
        }
      }
    }
  }
  addDeps()
  if (keys.length < want) {
    const declared = new Set<string>()
    for (const n of nodes) if (isObject(n.s.properties)) for (const k in n.s.properties) declared.add(k)
    for (const k of [...declared, ...FRESH]) {
      if (keys.length >= want) break
      if (keys.includes(k) || plan.omit?.has(k)) continue
      if (keyEffAll(nodes, k).forbidden) continue
      keys.push(k)
      addDeps()
    }
  }
  const o: Record<string, unknown> = {}
  for (const k of keys) {
    if (plan.set?.has(k)) {
      o[k] = plan.set.get(k)
      continue
    }
    const eff = keyEffAll(nodes, k)
    if (eff.forbidden) return NONE
    const v = generate(ctx, eff.nodes, plan.variant ?? 0, 127, depth + 1)
    if (v === NONE) return NONE
    o[k] = v
  }
  return o
}

/** Builds an array of the given length; `set` fixes some positions. */
export function genArray(ctx: Ctx, nodes: readonly Node[], length: number, set: ReadonlyMap<number, unknown>, depth: number): Gen {
  if (length > 10_000) return NONE
  const unique = nodes.some((n) => n.s.uniqueItems === true)
  const a: unknown[] = []
  for (let i = 0; i < length; i++) {
    if (set.has(i)) {
      a.push(set.get(i))
      continue
    }
    const eff = itemEffAll(nodes, i)
    if (eff.forbidden) return NONE
    let v: Gen = NONE
    for (let variant = i; variant < i + 8; variant++) {
      v = generate(ctx, eff.nodes, variant, 127, depth + 1)
      if (v === NONE || !unique) break
      if (!a.some((x) => JSON.stringify(x) === JSON.stringify(v))) break
    }
    if (v === NONE) return NONE
    a.push(v)
  }
  return a
}
