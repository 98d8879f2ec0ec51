/**
 * The inclusion engine: decides "every instance of A is an instance of B" on draft-04 schemas.
 *
 * A is handled as a conjunction of nodes. Dropping constraints of A only enlarges it, so a proof against the
 * enlarged A is still a proof; B's constraints are never dropped. Every negative answer carries a candidate
 * witness checked with the internal validator (and again with ajv by the caller).
 */
import { BudgetExceededError } from './budget'
import { isIntegral } from './decimal'
import { evalAll, evaluate, formatDef } from './evaluate'
import type { Tri } from './evaluate'
import { candidates, genArray, genObject, generate, matchersOf, NONE, strings } from './generate'
import type { Ctx, Node } from './nodes'
import {
  ARR,
  BOOL,
  canon,
  child,
  declaredTypes,
  divergentKeyword,
  idOf,
  INT,
  isObject,
  isTrivial,
  jsonEqual,
  NULL,
  NUM,
  OBJ,
  ShapeError,
  STR,
  TYPE_NAMES,
} from './nodes'
import { compilePattern } from './regex'
import { findString, sampleStrings } from './regex-search'
import type { Matcher } from './regex'
import { escapeRegex } from './samples'
import {
  boundsOf,
  expandAll,
  flatten,
  intRange,
  itemEffAll,
  keyEff,
  keyEffAll,
  maxNum,
  minNum,
  requiredOf,
  TOP_NODE,
  typeMask,
  without,
} from './shape'
import type { Bounds, KeyEff } from './shape'
import type { UndecidableReason } from './types'

export type R = { k: 'C' } | { k: 'I'; w: unknown } | { k: 'U'; reasons: UndecidableReason[] }

const C: R = { k: 'C' }
const I = (w: unknown): R => ({ k: 'I', w })
const U = (keyword: string, path: string, message: string): R => ({ k: 'U', reasons: [{ keyword, path, message }] })

const typeNode = (t: string): Node => {
  const s = { type: t }
  return { s, root: s }
}
const TYPE_GROUPS: [number, Node][] = [
  [NULL, typeNode('null')],
  [BOOL, typeNode('boolean')],
  [INT, typeNode('integer')],
  [NUM, typeNode('number')],
  [STR, typeNode('string')],
  [ARR, typeNode('array')],
  [OBJ, typeNode('object')],
]

function typeName(bit: number): string {
  return TYPE_NAMES.find(([b]) => b === bit)?.[1] ?? '?'
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b]
  return a
}

const MAX_REGION_PATTERNS = 6
const MAX_ENUM_EXPANSION = 256

export class Inclusion {
  private readonly active = new Map<string, number>()
  constructor(private readonly ctx: Ctx) {}

  /** Is every instance of the conjunction A an instance of b? */
  incl(A0: readonly Node[], b0: Node, path: string, depth: number): R {
    const ctx = this.ctx
    ctx.budget.step()
    const bParts = expandAll(ctx, b0)
    if (bParts.length !== 1) return this.andAll(bParts.map((p) => () => this.incl(A0, p, path, depth)))
    const b = bParts[0]
    let A = flatten(ctx, A0)
    if (isTrivial(b.s)) return C
    if (A.length === 0) A = [TOP_NODE]
    if (A.some((n) => n.s === b.s && n.root === b.root && !!n.skipRef === !!b.skipRef)) return C
    if (A.length === 1 && this.equivalent(A[0], b)) return C
    const key = A.map((n) => idOf(n.s) + (n.skipRef ? 's' : '')).join(',') + '|' + idOf(b.s) + (b.skipRef ? 's' : '')
    const seenAt = this.active.get(key)
    if (seenAt !== undefined) {
      return seenAt < depth ? C : U('$ref', path, 'recursive reference that does not descend into the instance')
    }
    this.active.set(key, depth)
    try {
      return this.core(A, b, path, depth)
    } finally {
      this.active.delete(key)
    }
  }

  /** Structurally equal schemas (annotations aside) whose local references resolve in equal documents. */
  private equivalent(a: Node, b: Node): boolean {
    if (!!a.skipRef !== !!b.skipRef) return false
    const ca = canon(a.s)
    const cb = canon(b.s)
    if (ca.c !== cb.c) return false
    return !ca.localRef || a.root === b.root || canon(a.root).c === canon(b.root).c
  }

  private andAll(parts: (() => R)[]): R {
    const reasons: UndecidableReason[] = []
    for (const p of parts) {
      const r = p()
      if (r.k === 'I') return r
      if (r.k === 'U') reasons.push(...r.reasons)
    }
    return reasons.length > 0 ? { k: 'U', reasons } : C
  }

  /** First candidate that is in A and not in b, else the fallback. */
  private search(A: readonly Node[], b: Node, cands: Iterable<unknown>, fallback: R, limit = 200): R {
    let n = 0
    for (const c of cands) {
      if (c === NONE) continue
      if (++n > limit) break
      if (evaluate(this.ctx, b, c) === false && evalAll(this.ctx, A, c) === true) return I(c)
    }
    return fallback
  }

  /** Decides by checking each value of a finite set (values outside A are skipped). */
  private finite(A: readonly Node[], b: Node, values: Iterable<unknown>, path: string, keyword: string): R {
    let unknown = false
    for (const v of values) {
      const ea: Tri = evalAll(this.ctx, A, v)
      if (ea === false) continue
      const eb = evaluate(this.ctx, b, v)
      if (eb === false) {
        if (ea === true) return I(v)
        unknown = true
      } else if (eb === undefined) unknown = true
    }
    return unknown ? U(keyword, path, 'a value cannot be evaluated exactly (format, multipleOf or regex semantics)') : C
  }

  private core(A: Node[], b: Node, path: string, depth: number): R {
    const ctx = this.ctx
    const odd = divergentKeyword(b.s)
    if (odd !== undefined) return U(odd, path, `'${odd}' is not a draft-04 keyword as written; validators disagree on it`)
    // Disjunctions in A: every branch must be included.
    const split = A.findIndex((n) => Array.isArray(n.s.anyOf) || Array.isArray(n.s.oneOf))
    if (split >= 0) {
      const n = A[split]
      const kw = Array.isArray(n.s.anyOf) ? 'anyOf' : 'oneOf'
      const rest = [...A.slice(0, split), ...A.slice(split + 1), without(n, kw)]
      const reasons: UndecidableReason[] = []
      const branches = n.s[kw] as unknown[]
      for (const br of branches) {
        // A oneOf branch also excludes the other branches; keep that as `not` conjuncts (used by disjointness).
        const others = kw === 'oneOf' ? branches.filter((x) => x !== br && isObject(x)).map((x) => negation(n, x as object)) : []
        const r = this.incl([...rest, child(n, br), ...others], b, path, depth)
        if (r.k === 'I') {
          if (evalAll(ctx, A, r.w) === true && evaluate(ctx, b, r.w) === false) return r
          reasons.push({ keyword: kw, path, message: `a counterexample for one ${kw} branch of A is not an instance of A` })
        } else if (r.k === 'U') reasons.push(...r.reasons)
      }
      return reasons.length > 0 ? { k: 'U', reasons } : C
    }
    const en = A.find((n) => Array.isArray(n.s.enum))
    if (en) return this.finite(A, b, en.s.enum as unknown[], path, 'enum')
    // A conjunct `not: X` with X the universe makes A empty.
    for (const n of A) if (isObject(n.s.not) && flatten(ctx, [child(n, n.s.not)]).length === 0) return C
    const m = typeMask(A)
    if (m === 0) return C
    const s = b.s
    const parts: (() => R)[] = []
    if (Array.isArray(s.allOf)) for (const x of s.allOf) parts.push(() => this.incl(A, child(b, x), path, depth))
    if (Array.isArray(s.anyOf)) parts.push(() => this.anyOfPart(A, b, s.anyOf as unknown[], path, depth))
    if (Array.isArray(s.oneOf)) parts.push(() => this.oneOfPart(A, b, s.oneOf as unknown[], path, depth))
    if (s.not !== undefined) parts.push(() => this.notPart(A, b, path, depth))
    parts.push(() => this.typed(A, b, m, path, depth))
    return this.andAll(parts)
  }

  private groups(A: readonly Node[]): Node[][] {
    const m = typeMask(A)
    const out: Node[][] = []
    for (const [bit, node] of TYPE_GROUPS) {
      if (!(m & bit)) continue
      if (bit === INT && m & NUM) continue
      out.push([...A, node])
    }
    return out
  }

  private anyOfPart(A: Node[], b: Node, branches: unknown[], path: string, depth: number): R {
    const nodes = branches.map((x) => child(b, x))
    const found: unknown[] = []
    const reasons: UndecidableReason[] = []
    const tryAll = (As: readonly Node[]): boolean => {
      for (const br of nodes) {
        const r = this.incl(As, br, path, depth)
        if (r.k === 'C') return true
        if (r.k === 'I') found.push(r.w)
        else reasons.push(...r.reasons)
      }
      return false
    }
    if (tryAll(A)) return C
    const gs = this.groups(A)
    if (gs.length > 1 && gs.every((g) => tryAll(g))) return C
    const fallback: R = { k: 'U', reasons: [{ keyword: 'anyOf', path, message: 'no anyOf branch of B covers A' }, ...reasons.slice(0, 5)] }
    return this.search(A, b, [...found, ...candidates(this.ctx, A, 0, 127, depth)], fallback)
  }

  private oneOfPart(A: Node[], b: Node, branches: unknown[], path: string, depth: number): R {
    const nodes = branches.map((x) => child(b, x))
    const found: unknown[] = []
    const reasons: UndecidableReason[] = []
    const cover = (As: readonly Node[]): boolean => {
      for (let i = 0; i < nodes.length; i++) {
        const r = this.incl(As, nodes[i], path, depth)
        if (r.k === 'I') {
          found.push(r.w)
          continue
        }
        if (r.k === 'U') {
          reasons.push(...r.reasons)
          continue
        }
        if (nodes.every((other, j) => j === i || this.disjoint(As, other, 0, depth))) return true
        reasons.push({ keyword: 'oneOf', path, message: `A is inside oneOf branch ${i} of B but could not be shown disjoint from the others` })
      }
      return false
    }
    const gs = this.groups(A)
    if (gs.length > 1 ? gs.every((g) => cover(g)) : cover(A)) return C
    const fallback: R = { k: 'U', reasons: [{ keyword: 'oneOf', path, message: 'no oneOf branch of B provably covers A exclusively' }, ...reasons.slice(0, 5)] }
    const ctx = this.ctx
    // Instances of A in two branches at once fail oneOf.
    const twice = function* (): Generator<unknown> {
      for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) yield* candidates(ctx, [...A, nodes[i], nodes[j]], 0, 127, depth)
    }
    return this.search(A, b, [...found, ...candidates(ctx, A, 0, 127, depth), ...candidates(ctx, A, 1, 127, depth), ...twice()], fallback, 400)
  }

  private notPart(A: Node[], b: Node, path: string, depth: number): R {
    const n = child(b, b.s.not)
    if (this.disjoint(A, n, 0, depth)) return C
    const both = [...A, n]
    return this.search(A, b, [...candidates(this.ctx, both, 0, 127, depth), ...candidates(this.ctx, both, 1, 127, depth)], U('not', path, 'A could not be shown disjoint from the schema under not'))
  }

  /** Proves that no instance satisfies both the conjunction A and x (false means "not proven"). */
  disjoint(A0: readonly Node[], x0: Node, level: number, depth: number): boolean {
    const ctx = this.ctx
    ctx.budget.step()
    if (level > 8) return false
    const A = flatten(ctx, A0)
    const X = flatten(ctx, [x0])
    // A conjunct `not: N` of one side with the other side inside N.
    for (const [side, other] of [
      [A, X],
      [X, A],
    ] as const) {
      for (const n of side) {
        if (!isObject(n.s.not)) continue
        if (this.incl(other, child(n, n.s.not), '#', depth).k === 'C') return true
      }
    }
    return this.disjointList([...A, ...X], level)
  }

  /** Is the conjunction empty (proved)? */
  private disjointList(nodes0: Node[], level: number): boolean {
    const ctx = this.ctx
    const nodes = flatten(ctx, nodes0)
    const en = nodes.find((n) => Array.isArray(n.s.enum))
    if (en) return (en.s.enum as unknown[]).every((v) => evalAll(ctx, nodes, v) === false)
    const split = nodes.findIndex((n) => Array.isArray(n.s.anyOf) || Array.isArray(n.s.oneOf))
    if (split >= 0) {
      const n = nodes[split]
      const kw = Array.isArray(n.s.anyOf) ? 'anyOf' : 'oneOf'
      const rest = [...nodes.slice(0, split), ...nodes.slice(split + 1), without(n, kw)]
      return (n.s[kw] as unknown[]).every((br) => this.disjointList([...rest, child(n, br)], level + 1))
    }
    const m = typeMask(nodes)
    if (m & NULL && evalAll(ctx, nodes, null) !== false) return false
    if (m & BOOL && (evalAll(ctx, nodes, true) !== false || evalAll(ctx, nodes, false) !== false)) return false
    if (m & (INT | NUM)) {
      const bd = boundsOf(nodes)
      if (m & NUM) {
        if (!(bd.lo > bd.hi || (bd.lo === bd.hi && (bd.loEx || bd.hiEx)))) return false
      } else {
        const [lo, hi] = intRange(bd)
        if (lo <= hi) return false
      }
    }
    if (m & STR) {
      const min = maxNum(nodes, 'minLength') ?? 0
      const max = minNum(nodes, 'maxLength') ?? Infinity
      if (min <= max) {
        const { ms } = matchersOf(nodes)
        if (ms.length === 0) return false
        const w = findString(ms, (acc, k) => k >= min && acc.every(Boolean), [min], max, ctx.budget)
        if (w !== null) return false
      }
    }
    if (m & ARR) {
      const min = maxNum(nodes, 'minItems') ?? 0
      const max = minNum(nodes, 'maxItems') ?? Infinity
      if (min <= max) {
        let empty = false
        for (let i = 0; i < min && i < 64 && !empty; i++) {
          const e = itemEffAll(nodes, i)
          if (e.forbidden || (e.nodes.length > 0 && this.disjointList(e.nodes, level + 1))) empty = true
        }
        if (!empty) return false
      }
    }
    if (m & OBJ) {
      const min = maxNum(nodes, 'minProperties') ?? 0
      const max = minNum(nodes, 'maxProperties') ?? Infinity
      const req = requiredOf(nodes)
      let empty = min > max || req.size > max
      for (const k of req) {
        if (empty) break
        const e = keyEffAll(nodes, k)
        if (e.forbidden || (e.nodes.length > 0 && !e.unknown && this.disjointList(e.nodes, level + 1))) empty = true
      }
      if (!empty) return false
    }
    return true
  }

  private typed(A: Node[], b: Node, m: number, path: string, depth: number): R {
    const bm = declaredTypes(b.s)
    const parts: (() => R)[] = []
    if (m & NULL) parts.push(() => this.finite(A, b, [null], path, 'type'))
    if (m & BOOL) parts.push(() => this.finite(A, b, [true, false], path, 'type'))
    if (m & (INT | NUM)) parts.push(() => this.numbers(A, b, m & (INT | NUM), bm, path))
    if (m & STR) parts.push(() => (bm & STR ? this.strings(A, b, path) : this.mismatch(A, b, STR, path, depth)))
    if (m & ARR) parts.push(() => (bm & ARR ? this.arrays(A, b, path, depth) : this.mismatch(A, b, ARR, path, depth)))
    if (m & OBJ) parts.push(() => (bm & OBJ ? this.objects(A, b, path, depth) : this.mismatch(A, b, OBJ, path, depth)))
    return this.andAll(parts)
  }

  private mismatch(A: Node[], b: Node, t: number, path: string, depth: number): R {
    const name = typeName(t)
    const group = TYPE_GROUPS.find(([bit]) => bit === t)
    if (group && this.disjointList([...A, group[1]], 0)) return C
    return this.search(A, b, candidates(this.ctx, A, 0, t, depth), U('type', path, `A allows ${name} values, B does not, and no ${name} instance of A was found`))
  }

  private numbers(A: Node[], b: Node, tm: number, bm: number, path: string): R {
    const s = b.s
    const ab = boundsOf(A)
    const bb = boundsOf([b])
    const intOnly = !(tm & NUM)
    let [ilo, ihi] = intRange(ab)
    const intMults = ab.mults.filter((x) => isIntegral(x))
    let step = 1
    if (intOnly) {
      for (const x of intMults) step = (step / gcd(step, x)) * x
      if (Number.isFinite(ilo)) ilo = Math.ceil(ilo / step) * step
      if (Number.isFinite(ihi)) ihi = Math.floor(ihi / step) * step
      if (ilo > ihi) return C
    } else if (ab.lo > ab.hi || (ab.lo === ab.hi && (ab.loEx || ab.hiEx))) return C
    const reasons: UndecidableReason[] = []
    let ok = true
    if (!(bm & INT)) ok = false
    else if (!intOnly && !(bm & NUM)) {
      ok = false
      reasons.push({ keyword: 'type', path, message: 'A allows numbers where B requires integers (integer-valued numbers such as 1.0 are judged differently by validators)' })
    }
    if (bb.lo !== -Infinity) {
      const lowOk = intOnly ? ilo > bb.lo || (ilo === bb.lo && !bb.loEx) : ab.lo > bb.lo || (ab.lo === bb.lo && (ab.loEx || !bb.loEx))
      if (!lowOk) ok = false
    }
    if (bb.hi !== Infinity) {
      const highOk = intOnly ? ihi < bb.hi || (ihi === bb.hi && !bb.hiEx) : ab.hi < bb.hi || (ab.hi === bb.hi && (ab.hiEx || !bb.hiEx))
      if (!highOk) ok = false
    }
    for (const mb of bb.mults) {
      if (ab.mults.includes(mb)) continue
      if (intOnly && isIntegral(mb) && (mb === 1 || step % mb === 0)) continue
      ok = false
      reasons.push({
        keyword: 'multipleOf',
        path,
        message: isIntegral(mb) && intOnly ? `multipleOf ${mb} not implied by A` : `multipleOf ${mb}: decimal or non-integer multiples are only compared for equality`,
      })
    }
    if (typeof s.format === 'string' && formatDef(s.format)?.type === 'number' && !A.some((n) => n.s.format === s.format)) {
      ok = false
      reasons.push({ keyword: 'format', path, message: `numeric format '${s.format}' in B not guaranteed by A` })
    }
    if (Array.isArray(s.enum)) {
      if (intOnly && Number.isFinite(ilo) && Number.isFinite(ihi) && (ihi - ilo) / step <= MAX_ENUM_EXPANSION) {
        const vals: number[] = []
        for (let x = ilo; x <= ihi; x += step) vals.push(x)
        const r = this.finite(A, b, vals, path, 'enum')
        if (r.k !== 'C') return r
      } else {
        ok = false
        reasons.push({ keyword: 'enum', path, message: 'A allows more numbers than B enumerates' })
      }
    }
    if (ok) return C
    const cands = numberCandidates(ab, bb, ilo, ihi, step, intOnly)
    const fallback: R = reasons.length > 0 ? { k: 'U', reasons } : U('minimum', path, 'no counterexample found for numeric bounds')
    return this.search(A, b, cands, fallback, 400)
  }

  private strings(A: Node[], b: Node, path: string): R {
    const ctx = this.ctx
    const s = b.s
    const aMin = maxNum(A, 'minLength') ?? 0
    const aMax = minNum(A, 'maxLength') ?? Infinity
    if (aMin > aMax) return C
    const bMin = typeof s.minLength === 'number' ? s.minLength : 0
    const bMax = typeof s.maxLength === 'number' ? s.maxLength : Infinity
    const formatsA = new Set(A.map((n) => n.s.format).filter((f) => typeof f === 'string'))
    const reasons: UndecidableReason[] = []
    let ok = true
    if (typeof s.format === 'string') {
      const def = formatDef(s.format)
      if (def?.type === 'number' || formatsA.has(s.format)) {
        // numeric formats do not apply to strings; the same format on both sides is the same predicate
      } else {
        ok = false
        reasons.push({
          keyword: 'format',
          path,
          message: def ? `B requires format '${s.format}', which A does not guarantee` : `unknown format '${s.format}' in B`,
        })
      }
    }
    const bms: Matcher[] = []
    let bKnown = true
    // The same pattern string in A already guarantees B's pattern, whatever the regex.
    if (typeof s.pattern === 'string' && !A.some((n) => n.s.pattern === s.pattern)) {
      const mt = compilePattern(s.pattern)
      if (mt) bms.push(mt)
      else {
        bKnown = false
        ok = false
        reasons.push({ keyword: 'pattern', path, message: `pattern /${s.pattern}/ is outside the supported regex subset` })
      }
    }
    if (Array.isArray(s.enum)) {
      const strs = s.enum.filter((x): x is string => typeof x === 'string')
      const mt = compilePattern(strs.length === 0 ? '[]' : `^(?:${strs.map(escapeRegex).join('|')})$`)
      if (mt) bms.push(mt)
      else {
        bKnown = false
        ok = false
        reasons.push({ keyword: 'enum', path, message: 'string enum too large to compare' })
      }
    }
    let diff: string | null = null
    if (bKnown) {
      const ams = matchersOf(A, true).ms
      const all = [...ams, ...bms]
      if (all.length === 0) {
        if (aMin < bMin) diff = 'a'.repeat(aMin)
        else if (aMax > bMax) diff = bMax + 1 <= 1_000_000 ? 'a'.repeat(bMax + 1) : null
        if (aMax > bMax && diff === null) {
          ok = false
          reasons.push({ keyword: 'maxLength', path, message: 'counterexample would be too long' })
        }
      } else {
        const na = ams.length
        diff = findString(
          all,
          (acc, k) => {
            if (k < aMin || k > aMax) return false
            for (let i = 0; i < na; i++) if (!acc[i]) return false
            if (k < bMin || k > bMax) return true
            for (let i = na; i < acc.length; i++) if (!acc[i]) return true
            return false
          },
          [aMin, aMax + 1, bMin, bMax + 1],
          aMax,
          ctx.budget,
        )
      }
      if (diff !== null) ok = false
    }
    if (ok) return C
    const wanted = [bMax + 1, bMin - 1, aMin, aMin + 1].filter((x) => x >= aMin && x <= aMax && x >= 0 && x < 1_000_000)
    const cands = (function* (): Generator<unknown> {
      if (diff !== null) yield diff
      yield* strings(ctx, A, 0, wanted)
      yield* strings(ctx, A, 1, wanted)
      yield* sampleStrings(matchersOf(A).ms, aMin, aMax, 48, ctx.budget)
    })()
    const fallback: R = reasons.length > 0 ? { k: 'U', reasons } : U('format', path, "no counterexample found that also satisfies A's format")
    return this.search(A, b, cands, fallback)
  }

  private arrays(A: Node[], b: Node, path: string, depth: number): R {
    const ctx = this.ctx
    const s = b.s
    let aMin = maxNum(A, 'minItems') ?? 0
    let aMax = minNum(A, 'maxItems') ?? Infinity
    let tupleLen = Array.isArray(s.items) ? s.items.length : 0
    for (const n of A) if (Array.isArray(n.s.items)) tupleLen = Math.max(tupleLen, n.s.items.length)
    for (const n of A) if (Array.isArray(n.s.items) && n.s.additionalItems === false) aMax = Math.min(aMax, n.s.items.length)
    // The first position that A forbids caps the length.
    for (let i = 0; i <= tupleLen && i < aMax; i++) {
      if (itemEffAll(A, i).forbidden) {
        aMax = i
        break
      }
    }
    if (aMin > aMax) return C
    if (aMax === 0) return this.finite(A, b, [[]], path, 'maxItems')
    const bMin = typeof s.minItems === 'number' ? s.minItems : 0
    const bMax = typeof s.maxItems === 'number' ? s.maxItems : Infinity
    const parts: (() => R)[] = []
    const reasonsU: UndecidableReason[] = []
    const compose = (len: number, set: Map<number, unknown>, fallback: R): R => {
      const arr = genArray(ctx, A, len, set, depth)
      if (arr !== NONE && evalAll(ctx, A, arr) === true && evaluate(ctx, b, arr) === false) return I(arr)
      return fallback
    }
    for (let i = 0; i <= tupleLen && i < aMax; i++) {
      const ea = itemEffAll(A, i)
      if (ea.forbidden) break
      const eb = itemEffAll([b], i)
      const p = `${path}/items/${i}`
      parts.push(() => {
        const len = Math.max(i + 1, aMin)
        if (eb.forbidden) {
          const v = generate(ctx, ea.nodes, 0, 127, depth + 1)
          return compose(len, new Map(v === NONE ? [] : [[i, v]]), U('additionalItems', p, 'A allows an item here that B forbids, but no item was found'))
        }
        const Ai = ea.nodes.length > 0 ? ea.nodes : [TOP_NODE]
        return this.andAll(
          eb.nodes.map((bn) => () => {
            const r = this.incl(Ai, bn, p, depth + 1)
            if (r.k !== 'I') return r
            return compose(len, new Map([[i, r.w]]), U('items', p, 'an item counterexample could not be placed in an array of A'))
          }),
        )
      })
    }
    if (aMin < bMin || aMax > bMax) {
      parts.push(() => {
        const len = aMin < bMin ? aMin : bMax + 1
        return compose(len, new Map(), U(aMin < bMin ? 'minItems' : 'maxItems', path, 'no array of A with a length outside B was found'))
      })
    }
    if (s.uniqueItems === true && !A.some((n) => n.s.uniqueItems === true) && aMax >= 2) {
      parts.push(() => {
        const len = Math.max(2, aMin)
        const base = genArray(ctx, A, len, new Map(), depth)
        if (base !== NONE) {
          const arr = base as unknown[]
          const dup = [...arr]
          dup[1] = dup[0]
          if (evalAll(ctx, A, dup) === true && evaluate(ctx, b, dup) === false) return I(dup)
        }
        return U('uniqueItems', path, 'B requires unique items; no array of A with duplicates was found')
      })
    }
    if (reasonsU.length > 0) parts.push(() => ({ k: 'U', reasons: reasonsU }))
    if (s.enum !== undefined) parts.push(() => this.search(A, b, candidates(ctx, A, 0, ARR, depth), U('enum', path, 'array values against a B enum')))
    return this.andAll(parts)
  }

  private objects(A: Node[], b: Node, path: string, depth: number): R {
    const ctx = this.ctx
    const s = b.s
    const reqA = requiredOf(A)
    const reqB = requiredOf([b])
    const names = new Set<string>(reqA)
    for (const k of reqB) names.add(k)
    for (const n of [...A, b]) {
      if (isObject(n.s.properties)) for (const k in n.s.properties) names.add(k)
    }
    if (isObject(s.dependencies)) for (const k in s.dependencies) names.add(k)
    // Required keys that A forbids make A's objects empty.
    for (const k of reqA) if (keyEffAll(A, k).forbidden) return C
    // maxProperties 0: the empty object is the only candidate.
    if ((minNum(A, 'maxProperties') ?? Infinity) === 0) return this.finite(A, b, [{}], path, 'maxProperties')
    const compose = (plan: { set?: Map<string, unknown>; omit?: Set<string>; minKeys?: number }, fallback: R): R => {
      for (let variant = 0; variant < 2; variant++) {
        const o = genObject(ctx, A, { ...plan, variant }, depth)
        if (o !== NONE && evalAll(ctx, A, o) === true && evaluate(ctx, b, o) === false) return I(o)
      }
      return fallback
    }
    const parts: (() => R)[] = []
    const present = (k: string): KeyEff => keyEffAll(A, k)
    for (const k of names) {
      const ea = present(k)
      if (ea.forbidden) continue
      const p = `${path}/properties/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`
      parts.push(() => {
        const eb = keyEff(b, k)
        if (ea.unknown || (!eb.forbidden && eb.unknown)) return U('patternProperties', p, 'a patternProperties regex is not valid')
        if (eb.forbidden) {
          const v = generate(ctx, ea.nodes, 0, 127, depth + 1)
          return compose(v === NONE ? {} : { set: new Map([[k, v]]) }, U('additionalProperties', p, `B forbids key '${k}' but no value for it in A was found`))
        }
        const Ak = ea.nodes.length > 0 ? ea.nodes : [TOP_NODE]
        return this.andAll(
          eb.nodes.map((bn) => () => {
            const r = this.incl(Ak, bn, p, depth + 1)
            if (r.k !== 'I') return r
            return compose({ set: new Map([[k, r.w]]) }, U('properties', p, 'a value counterexample could not be placed in an object of A'))
          }),
        )
      })
    }
    parts.push(() => this.otherKeys(A, b, names, path, depth, compose))
    for (const k of reqB) {
      if (reqA.has(k)) continue
      parts.push(() => compose({ omit: new Set([k]) }, U('required', path, `B requires '${k}'; no object of A without it was found`)))
    }
    const aMin = Math.max(maxNum(A, 'minProperties') ?? 0, reqA.size)
    if (typeof s.minProperties === 'number' && s.minProperties > aMin) {
      parts.push(() => compose({}, U('minProperties', path, 'no object of A with fewer properties than B allows was found')))
    }
    if (typeof s.maxProperties === 'number') {
      let aMax = minNum(A, 'maxProperties') ?? Infinity
      for (const n of A) {
        if (n.s.additionalProperties === false && !isObject(n.s.patternProperties)) {
          aMax = Math.min(aMax, isObject(n.s.properties) ? Object.keys(n.s.properties).length : 0)
        }
      }
      const bMax = s.maxProperties
      if (aMax > bMax) parts.push(() => compose({ minKeys: bMax + 1 }, U('maxProperties', path, 'no object of A with more properties than B allows was found')))
    }
    if (isObject(s.dependencies)) {
      const deps = s.dependencies
      for (const k in deps) {
        if (present(k).forbidden) continue
        const d = deps[k]
        const p = `${path}/dependencies/${k}`
        if (Array.isArray(d)) {
          for (const x of d) {
            if (typeof x !== 'string' || reqA.has(x)) continue
            const implied = A.some((n) => isObject(n.s.dependencies) && Array.isArray(n.s.dependencies[k]) && (n.s.dependencies[k] as unknown[]).includes(x))
            if (implied) continue
            parts.push(() => {
              const v = generate(ctx, nodesOf(present(k)), 0, 127, depth + 1)
              return compose({ set: v === NONE ? undefined : new Map([[k, v]]), omit: new Set([x]) }, U('dependencies', p, `B makes '${k}' require '${x}'; no counterexample found`))
            })
          }
        } else if (isObject(d)) {
          parts.push(() => {
            const extra = A.flatMap((n) => (isObject(n.s.dependencies) && isObject(n.s.dependencies[k]) ? [child(n, n.s.dependencies[k])] : []))
            const r = this.incl([...A, ...extra], child(b, d), p, depth)
            if (r.k !== 'I') return r
            if (evalAll(ctx, A, r.w) === true && evaluate(ctx, b, r.w) === false) return r
            const o = r.w
            if (isObject(o) && !Object.prototype.hasOwnProperty.call(o, k)) {
              const v = generate(ctx, nodesOf(present(k)), 0, 127, depth + 1)
              const o2 = { ...o, [k]: v }
              if (v !== NONE && evalAll(ctx, A, o2) === true && evaluate(ctx, b, o2) === false) return I(o2)
            }
            return U('dependencies', p, 'schema dependency counterexample could not be completed')
          })
        }
      }
    }
    if (s.enum !== undefined) parts.push(() => this.search(A, b, candidates(ctx, A, 0, OBJ, depth), U('enum', path, 'object values against a B enum')))
    return this.andAll(parts)
  }

  /** Keys that are not named anywhere: compared region by region of the patternProperties regexes. */
  private otherKeys(
    A: Node[],
    b: Node,
    names: Set<string>,
    path: string,
    depth: number,
    compose: (plan: { set?: Map<string, unknown> }, fallback: R) => R,
  ): R {
    const ctx = this.ctx
    const pats: string[] = []
    for (const n of [...A, b]) if (isObject(n.s.patternProperties)) for (const p in n.s.patternProperties) if (!pats.includes(p)) pats.push(p)
    const p = `${path}/additionalProperties`
    if (pats.length > MAX_REGION_PATTERNS) return U('patternProperties', path, 'too many patternProperties to compare')
    const ms: (Matcher | undefined)[] = pats.map((x) => compilePattern(x))
    const namesList = [...names]
    const maxName = Math.max(0, ...[...names].map((x) => x.length))
    const namesM = compilePattern(namesList.length === 0 ? '[]' : `^(?:${namesList.map(escapeRegex).join('|')})$`)
    const regionSchemas = (n: Node, member: boolean[]): KeyEff => {
      const nodes: Node[] = []
      const pp = isObject(n.s.patternProperties) ? n.s.patternProperties : {}
      let matched = false
      pats.forEach((x, i) => {
        if (member[i] && Object.prototype.hasOwnProperty.call(pp, x)) {
          matched = true
          nodes.push(child(n, pp[x]))
        }
      })
      if (!matched) {
        if (n.s.additionalProperties === false) return { forbidden: true }
        if (isObject(n.s.additionalProperties)) nodes.push(child(n, n.s.additionalProperties))
      }
      return { forbidden: false, nodes }
    }
    const parts: (() => R)[] = []
    for (let mask = 0; mask < 1 << pats.length; mask++) {
      const member = pats.map((_, i) => ((mask >> i) & 1) === 1)
      // Region schemas first: cheap exits before any regex work.
      const effA: Node[] = []
      let aForbidden = false
      for (const n of A) {
        const e = regionSchemas(n, member)
        if (e.forbidden) {
          aForbidden = true
          break
        }
        effA.push(...e.nodes)
      }
      if (aForbidden) continue
      const effB = regionSchemas(b, member)
      if (!effB.forbidden && effB.nodes.length === 0) continue
      parts.push(() => {
        const Ak = effA.length > 0 ? effA : [TOP_NODE]
        let r: R = C
        if (!effB.forbidden) {
          r = this.andAll(effB.nodes.map((bn) => () => this.incl(Ak, bn, p, depth + 1)))
          if (r.k === 'C') return C
        }
        // Only now find out whether the region holds any key at all, and name one.
        let key: string | undefined
        if (ms.every((x) => x !== undefined)) {
          const pm = ms as Matcher[]
          const inRegion = (acc: boolean[]): boolean => acc.every((a, i) => a === member[i])
          const found = findString(pm, (acc, k) => k > maxName && inRegion(acc), [maxName + 1], Infinity, ctx.budget)
          if (found !== null) key = found
          else if (namesM) {
            const exact = findString([...pm, namesM], (acc) => acc.every((a, i) => (i < pats.length ? a === member[i] : !a)), [], Infinity, ctx.budget)
            if (exact === null) return C
            key = exact
          }
        }
        if (effB.forbidden) {
          if (key === undefined) return U('additionalProperties', p, 'cannot find a key name for an extra property (unsupported regex)')
          const v = generate(ctx, effA, 0, 127, depth + 1)
          return compose(v === NONE ? {} : { set: new Map([[key, v]]) }, U('additionalProperties', p, 'B forbids extra keys; no extra key value of A was found'))
        }
        if (r.k !== 'I') return r
        if (key === undefined) return U('patternProperties', p, 'cannot find a key name for a counterexample (unsupported regex)')
        return compose({ set: new Map([[key, r.w]]) }, U('additionalProperties', p, 'an extra-key counterexample could not be placed in an object of A'))
      })
    }
    return this.andAll(parts)
  }
}

const negations = new WeakMap<object, Node>()
/** The node `{not: x}` (stable identity per x). */
function negation(parent: Node, x: object): Node {
  let n = negations.get(x)
  if (!n) {
    n = { s: { not: x }, root: parent.root }
    negations.set(x, n)
  }
  return n
}

function nodesOf(e: KeyEff): Node[] {
  return e.forbidden ? [] : e.nodes
}

function* numberCandidates(ab: Bounds, bb: Bounds, ilo: number, ihi: number, step: number, intOnly: boolean): Generator<number> {
  const pts = new Set<number>()
  const addAround = (x: number): void => {
    if (!Number.isFinite(x)) return
    for (const d of [0, 1, -1, 0.5, -0.5, 1e-6, -1e-6, 2, -2]) pts.add(x + d)
    if (step > 1) for (const d of [0, step, -step]) pts.add(Math.round(x / step) * step + d)
  }
  addAround(ab.lo)
  addAround(ab.hi)
  addAround(bb.lo)
  addAround(bb.hi)
  addAround(ilo)
  addAround(ihi)
  for (const x of [0, 1, -1, 0.5, 1.5, 2, 3, 10, 100, 1e6, -1e6, 2 ** 31, -(2 ** 31) - 1, 2 ** 63, -(2 ** 64), 1e300]) pts.add(x)
  for (const mb of bb.mults) {
    for (const ma of [...ab.mults, 1]) for (let j = 1; j <= 12; j++) pts.add(ma * j)
    pts.add(mb / 2)
    pts.add(mb * 1.5)
  }
  if (Number.isFinite(ab.lo) && Number.isFinite(ab.hi)) pts.add((ab.lo + ab.hi) / 2)
  for (const x of pts) {
    if (!Number.isFinite(x)) continue
    if (intOnly && !Number.isInteger(x)) continue
    yield x
  }
}

export { BudgetExceededError, ShapeError, jsonEqual }
