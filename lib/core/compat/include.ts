/**
 * The inclusion engine: decides "every instance of A is an instance of B" on draft-04 schemas.
 *
 * A is handled as a conjunction of nodes. Dropping constraints of A only enlarges it, so a proof against the
 * enlarged A is still a proof; B's constraints are never dropped. Every negative answer carries a candidate
 * witness checked with the internal validator (and again with ajv by the caller).
 */
import { inclArrays } from './arrays'
import { BudgetExceededError } from './budget'
import { evalAll, evaluate } from './evaluate'
import { candidates, matchersOf } from './generate'
import type { Ctx, Node, Schema } from './nodes'
import {
  ARR,
  BOOL,
  child,
  declaredTypes,
  divergentKeyword,
  hasLocalRef,
  idOf,
  INT,
  isObject,
  isTrivial,
  jsonEqual,
  NULL,
  NUM,
  OBJ,
  schemaEqual,
  ShapeError,
  STR,
  TYPE_NAMES,
} from './nodes'
import { inclObjects } from './objects'
import { findString } from './regex-search'
import { inclNumbers, inclStrings } from './scalars'
import { boundsOf, expandAll, flatten, intRange, itemEffAll, keyEffAll, maxNum, minNum, requiredOf, TOP_NODE, typeMask, without } from './shape'
import type { UndecidableReason } from './types'
import { andAll, C, finite, search, U } from './verdict'
import type { Incl, R } from './verdict'

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

export class Inclusion {
  private readonly active = new Map<string, number>()
  private readonly inclFn: Incl = (A, b, path, depth) => this.incl(A, b, path, depth)
  constructor(private readonly ctx: Ctx) {}

  /** Is every instance of the conjunction A an instance of b? */
  incl(A0: readonly Node[], b0: Node, path: string, depth: number): R {
    const ctx = this.ctx
    ctx.budget.step()
    const bParts = expandAll(ctx, b0)
    if (bParts.length !== 1) return andAll(bParts.map((p) => () => this.incl(A0, p, path, depth)))
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
    if (!!a.skipRef !== !!b.skipRef || !schemaEqual(a.s, b.s)) return false
    return !hasLocalRef(a.s) || a.root === b.root || this.sameRoots(a.root, b.root)
  }

  private readonly rootsEqual = new WeakMap<object, WeakMap<object, boolean>>()
  /** Whether two documents are equal (annotations aside), remembered per pair. */
  private sameRoots(a: Schema, b: Schema): boolean {
    let m = this.rootsEqual.get(a)
    if (!m) this.rootsEqual.set(a, (m = new WeakMap()))
    let r = m.get(b)
    if (r === undefined) m.set(b, (r = schemaEqual(a, b)))
    return r
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
    if (en) return finite(this.ctx, A, b, en.s.enum as unknown[], path, 'enum')
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
    return andAll(parts)
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
    return search(this.ctx, A, b, [...found, ...candidates(this.ctx, A, 0, 127, depth)], fallback)
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
    return search(this.ctx, A, b, [...found, ...candidates(ctx, A, 0, 127, depth), ...candidates(ctx, A, 1, 127, depth), ...twice()], fallback, 400)
  }

  private notPart(A: Node[], b: Node, path: string, depth: number): R {
    const n = child(b, b.s.not)
    if (this.disjoint(A, n, 0, depth)) return C
    const both = [...A, n]
    return search(this.ctx, A, b, [...candidates(this.ctx, both, 0, 127, depth), ...candidates(this.ctx, both, 1, 127, depth)], U('not', path, 'A could not be shown disjoint from the schema under not'))
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
    if (m & NULL) parts.push(() => finite(this.ctx, A, b, [null], path, 'type'))
    if (m & BOOL) parts.push(() => finite(this.ctx, A, b, [true, false], path, 'type'))
    if (m & (INT | NUM)) parts.push(() => inclNumbers(this.ctx, A, b, m & (INT | NUM), bm, path))
    if (m & STR) parts.push(() => (bm & STR ? inclStrings(this.ctx, A, b, path) : this.mismatch(A, b, STR, path, depth)))
    if (m & ARR) parts.push(() => (bm & ARR ? inclArrays(this.ctx, this.inclFn, A, b, path, depth) : this.mismatch(A, b, ARR, path, depth)))
    if (m & OBJ) parts.push(() => (bm & OBJ ? inclObjects(this.ctx, this.inclFn, A, b, path, depth) : this.mismatch(A, b, OBJ, path, depth)))
    return andAll(parts)
  }

  private mismatch(A: Node[], b: Node, t: number, path: string, depth: number): R {
    const name = typeName(t)
    const group = TYPE_GROUPS.find(([bit]) => bit === t)
    if (group && this.disjointList([...A, group[1]], 0)) return C
    return search(this.ctx, A, b, candidates(this.ctx, A, 0, t, depth), U('type', path, `A allows ${name} values, B does not, and no ${name} instance of A was found`))
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

export type { R }
export { BudgetExceededError, ShapeError, jsonEqual }
