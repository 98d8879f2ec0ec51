/**
 * A small draft-04 validator with three-valued answers, used to pick and check candidate witnesses quickly.
 * `undefined` means "cannot tell" (unknown `format`, decimal `multipleOf` where exact arithmetic and ajv
 * disagree, invalid regex). Final witnesses are always re-checked with ajv.
 */
import { linearRegExp, type LinearRegExp } from '../iglu/regex-engine'
import { fullFormats } from 'ajv-formats/dist/formats'
import { multipleOf } from './decimal'
import type { Ctx, Node, Schema } from './nodes'
import { child, cpLength, declaredTypes, divergentKeyword, expandRef, isObject, jsonEqual, typeOfValue } from './nodes'

export type Tri = boolean | undefined

type FormatCheck = { type: 'string' | 'number'; test: (v: never) => boolean }
const formatCache = new Map<string, FormatCheck | null>()

/** The ajv-formats ("full" mode) definition of a format, or `undefined` when the name is unknown. */
export function formatDef(name: string): FormatCheck | undefined {
  const hit = formatCache.get(name)
  if (hit !== undefined) return hit ?? undefined
  const d = (fullFormats as Record<string, unknown>)[name]
  let res: FormatCheck | null = null
  if (d instanceof RegExp) res = { type: 'string', test: (s: string) => d.test(s) }
  else if (typeof d === 'function') res = { type: 'string', test: d as (s: string) => boolean }
  else if (d === true) res = { type: 'string', test: () => true }
  else if (isObject(d)) {
    const v = d.validate
    const type = d.type === 'number' ? 'number' : 'string'
    if (v instanceof RegExp) res = { type, test: (s: string) => v.test(s) }
    else if (typeof v === 'function') res = { type, test: v as (x: never) => boolean }
  }
  formatCache.set(name, res)
  return res ?? undefined
}

/** Does value satisfy `format: name`? Formats only apply to their own type. */
export function checkFormat(name: string, value: unknown): Tri {
  const def = formatDef(name)
  if (!def) return typeof value === 'string' ? undefined : true
  if (def.type === 'string' ? typeof value !== 'string' : typeof value !== 'number') return true
  try {
    return def.test(value as never)
  } catch {
    return undefined
  }
}

const reCache = new Map<string, LinearRegExp | null>()
/** A schema pattern on the linear-time engine, as validators run it; undefined when it cannot be compiled. */
export function jsRegex(p: string): LinearRegExp | undefined {
  let r = reCache.get(p)
  if (r === undefined) {
    try {
      r = linearRegExp(p, 'u')
    } catch {
      r = null
    }
    if (reCache.size > 5000) reCache.clear()
    reCache.set(p, r)
  }
  return r ?? undefined
}

function has(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k)
}

function and(a: Tri, b: Tri): Tri {
  if (a === false || b === false) return false
  if (a === undefined || b === undefined) return undefined
  return true
}

/** Validates `value` against every node of a conjunction. */
export function evalAll(ctx: Ctx, nodes: readonly Node[], value: unknown): Tri {
  let r: Tri = true
  for (const n of nodes) {
    r = and(r, evaluate(ctx, n, value))
    if (r === false) return false
  }
  return r
}

/** Validates `value` against one schema node (draft-04 semantics as implemented by ajv-draft-04). */
export function evaluate(ctx: Ctx, node: Node, value: unknown): Tri {
  const parts: Node[] = []
  expandRef(ctx, node, parts)
  let r: Tri = true
  for (const p of parts) {
    r = and(r, evalOwn(ctx, p, value))
    if (r === false) return false
  }
  return r
}

function evalOwn(ctx: Ctx, node: Node, v: unknown): Tri {
  ctx.budget.step()
  const s = node.s
  const t = typeOfValue(v)
  if (s.type !== undefined && (declaredTypes(s) & t) === 0) return false
  if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v))) return false
  let r: Tri = divergentKeyword(s) === undefined ? true : undefined
  const sub = (x: unknown, val: unknown): Tri => (isObject(x) ? evaluate(ctx, child(node, x), val) : true)
  if (typeof v === 'number') {
    const min = s.minimum
    if (typeof min === 'number' && (s.exclusiveMinimum === true ? v <= min : v < min)) return false
    const max = s.maximum
    if (typeof max === 'number' && (s.exclusiveMaximum === true ? v >= max : v > max)) return false
    if (typeof s.multipleOf === 'number') r = and(r, multipleOf(v, s.multipleOf))
    if (r === false) return false
  }
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' || typeof s.minLength === 'number') {
      const len = cpLength(v)
      if (typeof s.maxLength === 'number' && len > s.maxLength) return false
      if (typeof s.minLength === 'number' && len < s.minLength) return false
    }
    if (typeof s.pattern === 'string') {
      const re = jsRegex(s.pattern)
      if (!re) r = undefined
      else if (!re.test(v)) return false
    }
  }
  if (typeof s.format === 'string') {
    r = and(r, checkFormat(s.format, v))
    if (r === false) return false
  }
  if (Array.isArray(v)) {
    if (typeof s.maxItems === 'number' && v.length > s.maxItems) return false
    if (typeof s.minItems === 'number' && v.length < s.minItems) return false
    if (s.uniqueItems === true) {
      for (let i = 0; i < v.length; i++) for (let j = 0; j < i; j++) if (jsonEqual(v[i], v[j])) return false
    }
    if (Array.isArray(s.items)) {
      for (let i = 0; i < v.length; i++) {
        if (i < s.items.length) r = and(r, sub(s.items[i], v[i]))
        else if (s.additionalItems === false) return false
        else r = and(r, sub(s.additionalItems, v[i]))
        if (r === false) return false
      }
    } else if (isObject(s.items)) {
      for (const x of v) {
        r = and(r, sub(s.items, x))
        if (r === false) return false
      }
    }
  }
  if (t === 64) {
    const o = v as Schema
    const keys = Object.keys(o)
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) return false
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties) return false
    if (Array.isArray(s.required)) for (const k of s.required) if (typeof k === 'string' && !has(o, k)) return false
    const props = isObject(s.properties) ? s.properties : undefined
    const pprops = isObject(s.patternProperties) ? s.patternProperties : undefined
    for (const k of keys) {
      let matched = false
      if (props && Object.prototype.hasOwnProperty.call(props, k)) {
        matched = true
        r = and(r, sub(props[k], o[k]))
      }
      if (pprops) {
        for (const p in pprops) {
          const re = jsRegex(p)
          if (!re) {
            r = undefined
            continue
          }
          if (re.test(k)) {
            matched = true
            r = and(r, sub(pprops[p], o[k]))
          }
        }
      }
      if (!matched) {
        if (s.additionalProperties === false) return false
        r = and(r, sub(s.additionalProperties, o[k]))
      }
      if (r === false) return false
    }
    if (isObject(s.dependencies)) {
      for (const k in s.dependencies) {
        if (!has(o, k)) continue
        const d = s.dependencies[k]
        if (Array.isArray(d)) {
          for (const x of d) if (typeof x === 'string' && !has(o, x)) return false
        } else r = and(r, sub(d, v))
        if (r === false) return false
      }
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const x of s.allOf) {
      r = and(r, sub(x, v))
      if (r === false) return false
    }
  }
  if (Array.isArray(s.anyOf)) {
    let any: Tri = false
    for (const x of s.anyOf) {
      const e = sub(x, v)
      if (e === true) {
        any = true
        break
      }
      if (e === undefined) any = undefined
    }
    r = and(r, any)
    if (r === false) return false
  }
  if (Array.isArray(s.oneOf)) {
    let yes = 0
    let unknown = 0
    for (const x of s.oneOf) {
      const e = sub(x, v)
      if (e === true) yes++
      else if (e === undefined) unknown++
    }
    const one: Tri = yes > 1 ? false : unknown > 0 ? undefined : yes === 1
    r = and(r, one)
    if (r === false) return false
  }
  if (isObject(s.not)) {
    const e = sub(s.not, v)
    r = and(r, e === undefined ? undefined : !e)
  }
  return r
}
