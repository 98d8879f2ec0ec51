/** Results of inclusion checks (included, counterexample, undecidable) and the helpers that combine and search for them. */
import { evalAll, evaluate } from './evaluate'
import type { Tri } from './evaluate'
import { NONE } from './generate'
import type { Ctx, Node } from './nodes'
import type { UndecidableReason } from './types'

export type R = { k: 'C' } | { k: 'I'; w: unknown } | { k: 'U'; reasons: UndecidableReason[] }

export const C: R = { k: 'C' }
export const I = (w: unknown): R => ({ k: 'I', w })
export const U = (keyword: string, path: string, message: string): R => ({ k: 'U', reasons: [{ keyword, path, message }] })

/** The recursive inclusion check, handed to the per-type checks. */
export type Incl = (A: readonly Node[], b: Node, path: string, depth: number) => R

export function andAll(parts: (() => R)[]): R {
  const reasons: UndecidableReason[] = []
  for (const p of parts) {
    const r = p()
    if (r.k === 'I') return r
    if (r.k === 'U') reasons.push(...r.reasons)
  }
  return reasons.length > 0 ? { k: 'U', reasons } : C
}

/** First candidate that is in A and not in b, else the fallback. */
export function search(ctx: Ctx, A: readonly Node[], b: Node, cands: Iterable<unknown>, fallback: R, limit = 200): R {
  let n = 0
  for (const c of cands) {
    if (c === NONE) continue
    if (++n > limit) break
    if (evaluate(ctx, b, c) === false && evalAll(ctx, A, c) === true) return I(c)
  }
  return fallback
}

/** Decides by checking each value of a finite set (values outside A are skipped). */
export function finite(ctx: Ctx, A: readonly Node[], b: Node, values: Iterable<unknown>, path: string, keyword: string): R {
  let unknown = false
  for (const v of values) {
    const ea: Tri = evalAll(ctx, A, v)
    if (ea === false) continue
    const eb = evaluate(ctx, b, v)
    if (eb === false) {
      if (ea === true) return I(v)
      unknown = true
    } else if (eb === undefined) unknown = true
  }
  return unknown ? U(keyword, path, 'a value cannot be evaluated exactly (format, multipleOf or regex semantics)') : C
}
