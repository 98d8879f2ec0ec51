/**
 * JSON Schema (draft-04) inclusion checker: is every instance valid against schema A also valid against
 * schema B? See README.md in this directory for the exact semantics.
 *
 * @example
 * ```ts
 * const r = checkCompatibility(eventSchema, dataStructureSchema, { resolve: (uri) => registry.get(uri) })
 * if (r.result === 'SchemaIncompatible') console.log('breaks on', r.witness)
 * ```
 */
import { Budget, BudgetExceededError } from './budget'
import { Inclusion } from './include'
import type { Ctx, Schema } from './nodes'
import { isObject, RefError, schemaEqual, ShapeError, TypeListError } from './nodes'
import type { CompatOptions, CompatResult, UndecidableReason } from './types'
import { DEFAULT_BUDGET } from './types'
import { confirmWitness } from './validator'

export type { CompatOptions, CompatResult, UndecidableReason } from './types'
export { DEFAULT_BUDGET } from './types'
export { describeRejection, explainWitness, topProperty, type Names, type WitnessFailure } from './explain'

function undecidable(reasons: UndecidableReason[]): CompatResult {
  const seen = new Set<string>()
  const unique = reasons.filter((r) => {
    const k = `${r.keyword}\u0000${r.path}\u0000${r.message}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  return { result: 'SchemaUndecidable', reasons: unique.slice(0, 20) }
}

/**
 * Decides whether every instance valid against `a` is valid against `b` (both draft-04 JSON Schemas,
 * optionally self-describing: `self` and `$schema` are ignored).
 *
 * - `Compatible` is returned only with a proof.
 * - `SchemaIncompatible` carries a witness that ajv-draft-04 (with ajv-formats, `multipleOfPrecision: 9`)
 *   accepts against `a` and rejects against `b`.
 * - Otherwise `SchemaUndecidable` with reasons (keyword, JSON path, message), including budget exhaustion
 *   and unresolvable `$ref`s.
 *
 * Pure and synchronous; `options.resolve` supplies schemas for `iglu:` references.
 */
export function checkCompatibility(a: unknown, b: unknown, options: CompatOptions = {}): CompatResult {
  if (!isObject(a) || !isObject(b)) {
    return undecidable([{ keyword: 'schema', path: '#', message: 'both schemas must be JSON objects' }])
  }
  if (schemaEqual(a, b)) return { result: 'Compatible' }
  const budget = new Budget(options.budget ?? DEFAULT_BUDGET)
  const ctx: Ctx = { budget, resolve: options.resolve, roots: new Map() }
  const engine = new Inclusion(ctx)
  try {
    const r = engine.incl([{ s: a, root: a }], { s: b, root: b as Schema }, '#', 0)
    if (r.k === 'C') return { result: 'Compatible' }
    if (r.k === 'U') return undecidable(r.reasons)
    if (confirmWitness(a, b, r.w, options.resolve)) return { result: 'SchemaIncompatible', witness: r.w }
    return undecidable([{ keyword: 'witness', path: '#', message: 'the counterexample found was not confirmed by ajv' }])
  } catch (err) {
    if (err instanceof BudgetExceededError) {
      return undecidable([{ keyword: 'budget', path: '#', message: `work budget of ${budget.limit} steps exhausted` }])
    }
    if (err instanceof RefError) return undecidable([{ keyword: '$ref', path: '#', message: err.message }])
    if (err instanceof ShapeError) return undecidable([{ keyword: 'schema', path: '#', message: err.message }])
    if (err instanceof TypeListError) return undecidable([{ keyword: 'type', path: '#', message: err.message }])
    if (err instanceof RangeError) {
      return undecidable([{ keyword: '$ref', path: '#', message: 'recursion too deep (a reference that never reaches a constraint)' }])
    }
    throw err
  }
}
