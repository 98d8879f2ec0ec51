/**
 * Why a witness breaks an inclusion: ajv's first error for the witness against B, said in words
 * ("at /items: A allows a number where B requires an array").
 */
import { isObject } from './nodes'
import { explainRejection, type Rejection } from './validator'

/** A witness's failures against B: where in the instance, which keywords, and one text. */
export interface WitnessFailure {
  readonly rejections: readonly Rejection[]
  /** The JSON pointers into the witness where B rejects it, in ajv's order, without repeats. */
  readonly paths: readonly string[]
  /**
   * Each rejection in words, joined by `; `, e.g. `at /items: the event specification allows an
   * array where the data structure requires a number (type)`.
   */
  readonly reason: string
}

/** What to call A and B in the sentence. */
export interface Names {
  readonly a: string
  readonly b: string
}

const MAX_VALUE_CHARS = 80

function kind(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number'
  if (typeof v === 'object') return 'an object'
  return `a ${typeof v}`
}

const article = (t: string) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)

/** The value at a JSON pointer of the instance. */
function at(instance: unknown, pointer: string): unknown {
  let v = instance
  for (const raw of pointer.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(v)) v = v[Number(k)]
    else if (isObject(v)) v = v[k]
    else return undefined
  }
  return v
}

function shown(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s
}

/** The top-level property a JSON pointer into the instance goes through (undefined for the instance itself). */
export function topProperty(pointer: string): string | undefined {
  if (pointer === '') return undefined
  return pointer.split('/')[1]!.replace(/~1/g, '/').replace(/~0/g, '~')
}

/** Says in words why `witness` (valid against A) is rejected by B. */
export function describeRejection(r: Rejection, witness: unknown, names: Names): string {
  const where = r.path === '' ? 'at the top level' : `at ${r.path}`
  const value = at(witness, r.path)
  const p = r.params
  let what: string
  if (r.keyword === 'type') {
    const types = String(p.type).split(',').map(article).join(' or ')
    what = `${names.a} allows ${kind(value)} where ${names.b} requires ${types}`
  } else if (r.keyword === 'required') {
    what = `${names.a} allows leaving out "${String(p.missingProperty)}", which ${names.b} requires`
  } else if (r.keyword === 'additionalProperties') {
    what = `${names.a} allows the property "${String(p.additionalProperty)}", which ${names.b} does not allow`
  } else if (r.keyword === 'enum') {
    what = `${names.a} allows ${shown(value)}, which is not one of the values ${names.b} allows`
  } else {
    what = `${names.a} allows ${shown(value)} where ${names.b} says it ${r.message}`
  }
  return `${where}: ${what} (${r.keyword})`
}

/** The failures of a confirmed witness against B, or undefined when B accepts it (or cannot be compiled). */
export function explainWitness(b: object, witness: unknown, names: Names, resolve?: (igluUri: string) => object | undefined): WitnessFailure | undefined {
  const rs = explainRejection(b, witness, resolve)
  if (rs.length === 0) return undefined
  const reason = [...new Set(rs.map((r) => describeRejection(r, witness, names)))].join('; ')
  return { rejections: rs, paths: [...new Set(rs.map((r) => r.path))], reason }
}
