/** Inclusion checks for objects: named properties, patternProperties regions, required, property counts, dependencies. */
import { evalAll, evaluate } from './evaluate'
import { candidates, genObject, generate, NONE } from './generate'
import type { Ctx, Node } from './nodes'
import { child, isObject, OBJ } from './nodes'
import { compilePattern } from './regex'
import { findString } from './regex-search'
import type { Matcher } from './regex'
import { escapeRegex } from './samples'
import { keyEff, keyEffAll, maxNum, minNum, requiredOf, TOP_NODE } from './shape'
import type { KeyEff } from './shape'
import { andAll, C, finite, I, search, U } from './verdict'
import type { Incl, R } from './verdict'

const MAX_REGION_PATTERNS = 6

export function inclObjects(ctx: Ctx, incl: Incl, A: Node[], b: Node, path: string, depth: number): R {
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
  if ((minNum(A, 'maxProperties') ?? Infinity) === 0) return finite(ctx, A, b, [{}], path, 'maxProperties')
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
      return andAll(
        eb.nodes.map((bn) => () => {
          const r = incl(Ak, bn, p, depth + 1)
          if (r.k !== 'I') return r
          return compose({ set: new Map([[k, r.w]]) }, U('properties', p, 'a value counterexample could not be placed in an object of A'))
        }),
      )
    })
  }
  parts.push(() => otherKeys(ctx, incl, A, b, names, path, depth, compose))
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
          const r = incl([...A, ...extra], child(b, d), p, depth)
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
  if (s.enum !== undefined) parts.push(() => search(ctx, A, b, candidates(ctx, A, 0, OBJ, depth), U('enum', path, 'object values against a B enum')))
  return andAll(parts)
}

/** Keys that are not named anywhere: compared region by region of the patternProperties regexes. */
function otherKeys(
  ctx: Ctx,
  incl: Incl,
  A: Node[],
  b: Node,
  names: Set<string>,
  path: string,
  depth: number,
  compose: (plan: { set?: Map<string, unknown> }, fallback: R) => R,
): R {
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
        r = andAll(effB.nodes.map((bn) => () => incl(Ak, bn, p, depth + 1)))
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
  return andAll(parts)
}

function nodesOf(e: KeyEff): Node[] {
  return e.forbidden ? [] : e.nodes
}
