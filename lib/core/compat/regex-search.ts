/** String search over compiled regex matchers: finding witnesses by length/acceptance and sampling accepted strings. */
import type { Budget } from './budget'
import { MAXCP } from './regex'
import type { Matcher } from './regex'

const NICE = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. '.split('').map((c) => c.codePointAt(0)!)

function representative(lo: number, hi: number): number {
  for (const c of NICE) if (c >= lo && c <= hi) return c
  if (lo <= 0x7e && hi >= 0x21) return Math.max(lo, 0x21)
  if (lo >= 0xd800 && lo <= 0xdfff && hi > 0xdfff) return 0xe000
  return lo
}

/** Alphabet classes (one representative code point each) on which all the matchers behave uniformly. */
function alphabet(ms: Matcher[], extra: number[] = []): number[] {
  const cuts = new Set<number>()
  for (const c of extra) {
    cuts.add(c)
    cuts.add(c + 1)
  }
  for (const m of ms) for (const c of m.cuts) cuts.add(c)
  const sorted = [...cuts].sort((a, b) => a - b)
  const reps: number[] = []
  for (let i = 0; i < sorted.length; i++) {
    const lo = sorted[i]
    const hi = i + 1 < sorted.length ? sorted[i + 1] - 1 : MAXCP
    reps.push(representative(lo, hi))
  }
  // Prefer nice characters first so that witnesses read well.
  return reps.sort((a, b) => niceness(a) - niceness(b))
}

function niceness(c: number): number {
  const i = NICE.indexOf(c)
  if (i >= 0) return i
  if (c >= 0x21 && c <= 0x7e) return 100 + c
  return 1000 + c
}

/**
 * Searches for a string s such that `test(acceptance of each matcher on s, length of s)` holds, with
 * length ≤ maxLen. `thresholds` must list every length at which `test` may change its answer for a fixed
 * acceptance vector. Returns the string, `null` when none exists (exact), or throws on budget exhaustion.
 */
export function findString(
  ms: Matcher[],
  test: (acc: boolean[], len: number) => boolean,
  thresholds: number[],
  maxLen: number,
  budget: Budget,
): string | null {
  const reps = alphabet(ms)
  const n = ms.length
  // A layer maps each tuple of matcher states reached at one length to how it was first reached. Tuples of
  // up to two states are keyed by a number (states are small interned ids), longer ones by their text.
  type Key = number | string
  type Layer = Map<Key, { t: readonly number[]; prev?: Key; cp?: number }>
  const keyOf = (t: readonly number[]): Key => (n === 0 ? 0 : n === 1 ? t[0] : n === 2 && t[0] < STATE_LIMIT && t[1] < STATE_LIMIT ? t[0] * STATE_LIMIT + t[1] : t.join(','))
  const layers: Layer[] = []
  const first: Layer = new Map()
  const t0 = ms.map((m) => m.initial)
  first.set(keyOf(t0), { t: t0 })
  layers.push(first)
  const seen = new Map<string, number>()
  const acceptVec = (t: readonly number[], k: number): boolean[] => t.map((s, i) => ms[i].accepts(s, k === 0))
  const rebuild = (k: number, key: Key, idx: (pos: number) => number): string => {
    const cps: number[] = []
    let cur = key
    for (let pos = k; pos >= 1; pos--) {
      budget.step()
      const e = layers[idx(pos)].get(cur)!
      cps.push(e.cp!)
      cur = e.prev!
    }
    return String.fromCodePoint(...cps.reverse())
  }
  const finite = thresholds.filter((x) => Number.isFinite(x))
  const scratch: number[] = new Array<number>(n)
  for (let k = 0; ; k++) {
    if (k > maxLen) return null
    const layer = layers[k]
    for (const [key, e] of layer) {
      budget.step()
      if (test(acceptVec(e.t, k), k)) return rebuild(k, key, (p) => p)
    }
    if (k >= 1) {
      const lkey = [...layer.keys()].map(String).sort().join('|')
      const j = seen.get(lkey)
      if (j !== undefined) {
        const p = k - j
        const idx = (pos: number): number => {
          if (pos <= k) return pos
          const r = j + ((pos - j) % p)
          return r === j ? k : r
        }
        const starts = [k + 1, ...finite.filter((x) => x > k + 1)].sort((a, b) => a - b)
        for (const lo of starts) {
          for (let pos = lo; pos < lo + p && pos <= maxLen; pos++) {
            for (const [key, e] of layers[idx(pos)]) {
              budget.step()
              if (test(acceptVec(e.t, pos), pos)) return rebuild(pos, key, idx)
            }
          }
        }
        return null
      }
      seen.set(lkey, k)
    }
    const next: Layer = new Map()
    for (const [key, e] of layer) {
      for (const cp of reps) {
        budget.step(n)
        // the next tuple is written to scratch, and copied only when it is new
        for (let i = 0; i < n; i++) scratch[i] = ms[i].step(e.t[i], cp)
        const tk = keyOf(scratch)
        if (!next.has(tk)) next.set(tk, { t: scratch.slice(), prev: key, cp })
      }
    }
    if (next.size === 0) return null
    layers.push(next)
  }
}

/** Bound of the state ids packed two to a number key (2^26 each, so their pair stays an exact integer). */
const STATE_LIMIT = 2 ** 26

const SAMPLE_EXTRA = 'ab0A_-. /:@'.split('').map((c) => c.codePointAt(0)!)

/**
 * Up to `count` distinct strings accepted by every matcher with a length in [min, max], shortest first,
 * over a varied alphabet (for witness search where exact reasoning is not available).
 */
export function sampleStrings(ms: Matcher[], min: number, max: number, count: number, budget: Budget): string[] {
  const reps = alphabet(ms, SAMPLE_EXTRA)
  const out: string[] = []
  let layer: { t: number[]; s: string }[] = [{ t: ms.map((m) => m.initial), s: '' }]
  for (let k = 0; k <= max && k <= min + 24 && out.length < count && layer.length > 0; k++) {
    for (const e of layer) {
      budget.step()
      if (k >= min && e.t.every((st, i) => ms[i].accepts(st, k === 0))) {
        out.push(e.s)
        if (out.length >= count) break
      }
    }
    const next: { t: number[]; s: string }[] = []
    const seen = new Map<string, number>()
    for (const e of layer) {
      for (const cp of reps) {
        budget.step(ms.length + 1)
        const t = e.t.map((st, i) => ms[i].step(st, cp))
        const key = t.join(',')
        const n = seen.get(key) ?? 0
        if (n >= 4) continue
        seen.set(key, n + 1)
        next.push({ t, s: e.s + String.fromCodePoint(cp) })
        if (next.length >= 256) break
      }
      if (next.length >= 256) break
    }
    layer = next
  }
  return out
}
