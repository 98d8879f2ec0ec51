/** Inclusion checks for numbers (bounds, multipleOf, integer enums) and strings (lengths, patterns, formats, enums). */
import { isIntegral } from './decimal'
import { formatDef } from './evaluate'
import { matchersOf, strings } from './generate'
import type { Ctx, Node } from './nodes'
import { INT, NUM } from './nodes'
import { compilePattern } from './regex'
import { findString, sampleStrings } from './regex-search'
import type { Matcher } from './regex'
import { escapeRegex } from './samples'
import { boundsOf, intRange, maxNum, minNum } from './shape'
import type { Bounds } from './shape'
import type { UndecidableReason } from './types'
import { C, finite, search, U } from './verdict'
import type { R } from './verdict'

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b]
  return a
}

const MAX_ENUM_EXPANSION = 256

export function inclNumbers(ctx: Ctx, A: Node[], b: Node, tm: number, bm: number, path: string): R {
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
      const r = finite(ctx, A, b, vals, path, 'enum')
      if (r.k !== 'C') return r
    } else {
      ok = false
      reasons.push({ keyword: 'enum', path, message: 'A allows more numbers than B enumerates' })
    }
  }
  if (ok) return C
  const cands = numberCandidates(ab, bb, ilo, ihi, step, intOnly)
  const fallback: R = reasons.length > 0 ? { k: 'U', reasons } : U('minimum', path, 'no counterexample found for numeric bounds')
  return search(ctx, A, b, cands, fallback, 400)
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

export function inclStrings(ctx: Ctx, A: Node[], b: Node, path: string): R {
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
  return search(ctx, A, b, cands, fallback)
}
