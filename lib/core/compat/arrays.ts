/** Inclusion checks for arrays: items and additionalItems position by position, lengths, uniqueItems. */
import { evalAll, evaluate } from './evaluate'
import { candidates, genArray, generate, NONE } from './generate'
import type { Ctx, Node } from './nodes'
import { ARR } from './nodes'
import { itemEffAll, maxNum, minNum, TOP_NODE } from './shape'
import type { UndecidableReason } from './types'
import { andAll, C, finite, I, search, U } from './verdict'
import type { Incl, R } from './verdict'

export function inclArrays(ctx: Ctx, incl: Incl, A: Node[], b: Node, path: string, depth: number): R {
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
  if (aMax === 0) return finite(ctx, A, b, [[]], path, 'maxItems')
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
      return andAll(
        eb.nodes.map((bn) => () => {
          const r = incl(Ai, bn, p, depth + 1)
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
  if (s.enum !== undefined) parts.push(() => search(ctx, A, b, candidates(ctx, A, 0, ARR, depth), U('enum', path, 'array values against a B enum')))
  return andAll(parts)
}
