import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { expect } from 'vitest'
import { checkCompatibility } from '../../../lib/core/compat/index'
import type { CompatOptions, CompatResult } from '../../../lib/core/compat/index'

/** An ajv instance independent of the checker's, with the settings of the spec. */
export function makeAjv(): Ajv {
  const ajv = new Ajv({ strict: false, validateSchema: false, multipleOfPrecision: 9, logger: false })
  addFormats(ajv)
  ajv.addKeyword('self')
  return ajv
}
const ajv = makeAjv()

export function valid(schema: object, value: unknown): boolean {
  const s = { ...(schema as Record<string, unknown>) }
  delete s.$schema
  return ajv.validate(s, value) === true
}

/** Runs the checker and asserts the verdict; an Incompatible witness is re-validated here with ajv. */
export function expectVerdict(a: object, b: object, verdict: CompatResult['result'], options?: CompatOptions): CompatResult {
  const r = checkCompatibility(a, b, options)
  expect(r.result, JSON.stringify(r)).toBe(verdict)
  if (r.result === 'SchemaIncompatible' && !options?.resolve) {
    expect(valid(a, r.witness), `witness ${JSON.stringify(r.witness)} valid in A`).toBe(true)
    expect(valid(b, r.witness), `witness ${JSON.stringify(r.witness)} invalid in B`).toBe(false)
  }
  if (r.result === 'SchemaUndecidable') expect(r.reasons.length).toBeGreaterThan(0)
  return r
}

/** Both directions at once. */
export function expectBoth(a: object, b: object, ab: CompatResult['result'], ba: CompatResult['result']): void {
  expectVerdict(a, b, ab)
  expectVerdict(b, a, ba)
}

/** Never a proven-wrong Compatible: accept anything except Compatible. */
export function expectNotCompatible(a: object, b: object): CompatResult {
  const r = checkCompatibility(a, b)
  expect(r.result, JSON.stringify(r)).not.toBe('Compatible')
  if (r.result === 'SchemaIncompatible') {
    expect(valid(a, r.witness)).toBe(true)
    expect(valid(b, r.witness)).toBe(false)
  }
  return r
}
