/**
 * Regular-expression inclusion for a safe subset of ECMAScript (unicode mode) syntax, as used by `pattern`
 * and `patternProperties`.
 *
 * Supported: literals, escapes (`\d \D \w \W`, control and hex/unicode escapes, escaped syntax characters),
 * `.`, character classes (ranges, negation), groups (capturing, non-capturing, named), alternation, greedy
 * and lazy quantifiers (`* + ? {n} {n,} {n,m}`, bounded repetition up to {@link MAX_REPEAT}), and `^`/`$`
 * anywhere (without the `m` flag they only match at the ends). Everything else (look-around, back-references,
 * `\b`, `\s` whose meaning differs between Java and ECMAScript, property escapes) is unsupported and makes the
 * caller answer Undecidable. Patterns are unanchored: a string matches when some substring does.
 */

export class UnsupportedRegexError extends Error {
  override readonly name = 'UnsupportedRegexError'
}

/** Largest Unicode code point. */
export const MAXCP = 0x10ffff
const MAX_REPEAT = 256
const MAX_STATES = 20_000

/** Sorted, merged, inclusive code point ranges as a flat list [lo0, hi0, lo1, hi1, ...]. */
type Ranges = number[]

type Ast =
  | { k: 'set'; r: Ranges }
  | { k: 'seq'; xs: Ast[] }
  | { k: 'alt'; xs: Ast[] }
  | { k: 'rep'; x: Ast; min: number; max: number }
  | { k: 'bol' }
  | { k: 'eol' }

function norm(pairs: [number, number][]): Ranges {
  pairs.sort((a, b) => a[0] - b[0])
  const out: Ranges = []
  for (const [lo, hi] of pairs) {
    const n = out.length
    if (n > 0 && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi)
    else out.push(lo, hi)
  }
  return out
}

function toPairs(r: Ranges): [number, number][] {
  const p: [number, number][] = []
  for (let i = 0; i < r.length; i += 2) p.push([r[i], r[i + 1]])
  return p
}

function negate(r: Ranges): Ranges {
  const out: Ranges = []
  let next = 0
  for (let i = 0; i < r.length; i += 2) {
    if (r[i] > next) out.push(next, r[i] - 1)
    next = r[i + 1] + 1
  }
  if (next <= MAXCP) out.push(next, MAXCP)
  return out
}

const DIGIT: Ranges = [0x30, 0x39]
const WORD: Ranges = norm([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
])
const DOT: Ranges = negate(norm([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]))
const SYNTAX = new Set('^$\\.*+?()[]{}|/-'.split('').map((c) => c.codePointAt(0)!))

class Parser {
  private i = 0
  private readonly cps: number[]
  constructor(src: string) {
    this.cps = Array.from(src, (c) => c.codePointAt(0)!)
  }
  private peek(off = 0): number | undefined {
    return this.cps[this.i + off]
  }
  private ch(off = 0): string {
    const c = this.peek(off)
    return c === undefined ? '' : String.fromCodePoint(c)
  }
  parse(): Ast {
    const ast = this.alt()
    if (this.i < this.cps.length) throw new UnsupportedRegexError(`unexpected '${this.ch()}'`)
    return ast
  }
  private alt(): Ast {
    const xs = [this.seq()]
    while (this.ch() === '|') {
      this.i++
      xs.push(this.seq())
    }
    return xs.length === 1 ? xs[0] : { k: 'alt', xs }
  }
  private seq(): Ast {
    const xs: Ast[] = []
    while (this.i < this.cps.length && this.ch() !== '|' && this.ch() !== ')') {
      let atom = this.atom()
      atom = this.quant(atom)
      xs.push(atom)
    }
    return { k: 'seq', xs }
  }
  private quant(atom: Ast): Ast {
    for (;;) {
      const c = this.ch()
      let min: number
      let max: number
      if (c === '*') [min, max] = [0, Infinity]
      else if (c === '+') [min, max] = [1, Infinity]
      else if (c === '?') [min, max] = [0, 1]
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...this.cps.slice(this.i, this.i + 24)))
        if (!m) throw new UnsupportedRegexError('bad quantifier')
        min = Number(m[1])
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
        this.i += m[0].length - 1
      } else return atom
      this.i++
      if (this.ch() === '?') this.i++
      if (atom.k === 'bol' || atom.k === 'eol') throw new UnsupportedRegexError('quantified assertion')
      if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) throw new UnsupportedRegexError('repetition too large')
      atom = { k: 'rep', x: atom, min, max }
    }
  }
  private atom(): Ast {
    const c = this.ch()
    this.i++
    switch (c) {
      case '(': {
        if (this.ch() === '?') {
          const n = this.ch(1)
          if (n === ':') this.i += 2
          else if (n === '<' && this.ch(2) !== '=' && this.ch(2) !== '!') {
            const close = this.cps.indexOf(0x3e, this.i)
            if (close < 0) throw new UnsupportedRegexError('bad group name')
            this.i = close + 1
          } else throw new UnsupportedRegexError('look-around')
        }
        const inner = this.alt()
        if (this.ch() !== ')') throw new UnsupportedRegexError('unbalanced group')
        this.i++
        return inner
      }
      case '[':
        return this.cls()
      case '.':
        return { k: 'set', r: DOT }
      case '^':
        return { k: 'bol' }
      case '$':
        return { k: 'eol' }
      case '\\':
        return this.escape(false)
      case ')':
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
      case ']':
        throw new UnsupportedRegexError(`unexpected '${c}'`)
      default: {
        const cp = c.codePointAt(0)!
        return { k: 'set', r: [cp, cp] }
      }
    }
  }
  /** Parses an escape after the backslash. Returns a set. */
  private escape(inClass: boolean): Ast & { k: 'set' } {
    const c = this.ch()
    if (c === '') throw new UnsupportedRegexError('trailing backslash')
    this.i++
    const one = (cp: number): Ast & { k: 'set' } => ({ k: 'set', r: [cp, cp] })
    switch (c) {
      case 'd':
        return { k: 'set', r: DIGIT }
      case 'D':
        return { k: 'set', r: negate(DIGIT) }
      case 'w':
        return { k: 'set', r: WORD }
      case 'W':
        return { k: 'set', r: negate(WORD) }
      case 't':
        return one(9)
      case 'n':
        return one(10)
      case 'v':
        return one(11)
      case 'f':
        return one(12)
      case 'r':
        return one(13)
      case 'b':
        if (inClass) return one(8)
        throw new UnsupportedRegexError('word boundary')
      case '0':
        if (/[0-9]/.test(this.ch())) throw new UnsupportedRegexError('octal escape')
        return one(0)
      case 'c': {
        const l = this.ch()
        if (!/[a-zA-Z]/.test(l)) throw new UnsupportedRegexError('bad control escape')
        this.i++
        return one(l.codePointAt(0)! % 32)
      }
      case 'x': {
        const h = this.ch() + this.ch(1)
        if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new UnsupportedRegexError('bad hex escape')
        this.i += 2
        return one(parseInt(h, 16))
      }
      case 'u': {
        if (this.ch() === '{') {
          const close = this.cps.indexOf(0x7d, this.i)
          const h = String.fromCodePoint(...this.cps.slice(this.i + 1, close))
          if (close < 0 || !/^[0-9a-fA-F]+$/.test(h) || parseInt(h, 16) > MAXCP) throw new UnsupportedRegexError('bad escape')
          this.i = close + 1
          return one(parseInt(h, 16))
        }
        const h = String.fromCodePoint(...this.cps.slice(this.i, this.i + 4))
        if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new UnsupportedRegexError('bad unicode escape')
        this.i += 4
        let cp = parseInt(h, 16)
        if (cp >= 0xd800 && cp <= 0xdbff && this.ch() === '\\' && this.ch(1) === 'u') {
          const l = String.fromCodePoint(...this.cps.slice(this.i + 2, this.i + 6))
          if (/^[0-9a-fA-F]{4}$/.test(l)) {
            const lo = parseInt(l, 16)
            if (lo >= 0xdc00 && lo <= 0xdfff) {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
              this.i += 6
            }
          }
        }
        return one(cp)
      }
      default: {
        const cp = c.codePointAt(0)!
        if (SYNTAX.has(cp)) return one(cp)
        throw new UnsupportedRegexError(`unsupported escape '\\${c}'`)
      }
    }
  }
  private cls(): Ast {
    let neg = false
    if (this.ch() === '^') {
      neg = true
      this.i++
    }
    const pairs: [number, number][] = []
    const classAtom = (): Ranges => {
      const c = this.ch()
      if (c === '') throw new UnsupportedRegexError('unterminated class')
      if (c === '\\') {
        this.i++
        return this.escape(true).r
      }
      this.i++
      const cp = c.codePointAt(0)!
      return [cp, cp]
    }
    while (this.ch() !== ']') {
      const a = classAtom()
      if (this.ch() === '-' && this.ch(1) !== ']' && this.ch(1) !== '') {
        this.i++
        const b = classAtom()
        if (a.length !== 2 || b.length !== 2 || a[0] !== a[1] || b[0] !== b[1]) {
          throw new UnsupportedRegexError('class escape in range')
        }
        if (a[0] > b[0]) throw new UnsupportedRegexError('bad range')
        pairs.push([a[0], b[0]])
      } else pairs.push(...toPairs(a))
    }
    this.i++
    const r = norm(pairs)
    return { k: 'set', r: neg ? negate(r) : r }
  }
}

interface Nfa {
  eps: number[][]
  bol: number[][]
  eol: number[][]
  edges: { r: Ranges; to: number }[][]
  start: number
  final: number
}

function buildNfa(ast: Ast): Nfa {
  const nfa: Nfa = { eps: [], bol: [], eol: [], edges: [], start: 0, final: 0 }
  const state = (): number => {
    if (nfa.eps.length >= MAX_STATES) throw new UnsupportedRegexError('pattern too large')
    nfa.eps.push([])
    nfa.bol.push([])
    nfa.eol.push([])
    nfa.edges.push([])
    return nfa.eps.length - 1
  }
  const build = (a: Ast, s: number, e: number): void => {
    switch (a.k) {
      case 'set':
        if (a.r.length > 0) nfa.edges[s].push({ r: a.r, to: e })
        return
      case 'bol':
        nfa.bol[s].push(e)
        return
      case 'eol':
        nfa.eol[s].push(e)
        return
      case 'seq': {
        let cur = s
        a.xs.forEach((x, i) => {
          const nxt = i === a.xs.length - 1 ? e : state()
          build(x, cur, nxt)
          cur = nxt
        })
        if (a.xs.length === 0) nfa.eps[s].push(e)
        return
      }
      case 'alt':
        for (const x of a.xs) build(x, s, e)
        return
      case 'rep': {
        let cur = s
        for (let i = 0; i < a.min; i++) {
          const nxt = state()
          build(a.x, cur, nxt)
          cur = nxt
        }
        if (a.max === Infinity) {
          const loop = state()
          nfa.eps[cur].push(loop)
          build(a.x, loop, loop)
          nfa.eps[loop].push(e)
        } else {
          for (let i = a.min; i < a.max; i++) {
            nfa.eps[cur].push(e)
            const nxt = state()
            build(a.x, cur, nxt)
            cur = nxt
          }
          nfa.eps[cur].push(e)
        }
        return
      }
    }
  }
  nfa.start = state()
  nfa.final = state()
  build(ast, nfa.start, nfa.final)
  return nfa
}

function inRanges(r: Ranges, cp: number): boolean {
  for (let i = 0; i < r.length; i += 2) {
    if (cp < r[i]) return false
    if (cp <= r[i + 1]) return true
  }
  return false
}

/**
 * A search-mode matcher over an NFA with on-the-fly subset construction. States are interned subsets; the
 * special subset [MATCHED] means "some substring already matched", which stays accepting.
 */
export class Matcher {
  private readonly sets: number[][] = []
  private readonly index = new Map<string, number>()
  private readonly trans = new Map<number, number>()
  private readonly acc = new Map<number, boolean>()
  readonly cuts: number[]
  readonly initial: number
  private readonly matched: number
  constructor(
    private readonly nfa: Nfa,
    readonly source: string,
  ) {
    const cuts = new Set<number>([0])
    for (const es of nfa.edges) {
      for (const e of es) {
        for (let i = 0; i < e.r.length; i += 2) {
          cuts.add(e.r[i])
          if (e.r[i + 1] + 1 <= MAXCP) cuts.add(e.r[i + 1] + 1)
        }
      }
    }
    this.cuts = [...cuts].sort((a, b) => a - b)
    this.matched = this.intern([-1])
    this.initial = this.intern(this.closure([nfa.start], true))
  }
  private intern(set: number[]): number {
    if (set.includes(-1)) set = [-1]
    const key = set.join(',')
    let id = this.index.get(key)
    if (id === undefined) {
      id = this.sets.length
      this.sets.push(set)
      this.index.set(key, id)
    }
    return id
  }
  private closure(seed: number[], atStart: boolean, atEnd = false): number[] {
    const seen = new Set<number>()
    const stack = [...seed]
    while (stack.length > 0) {
      const s = stack.pop()!
      if (s === -1 || seen.has(s)) continue
      seen.add(s)
      if (s === this.nfa.final && !atEnd) return [-1]
      stack.push(...this.nfa.eps[s])
      if (atStart) stack.push(...this.nfa.bol[s])
      if (atEnd) stack.push(...this.nfa.eol[s])
    }
    return [...seen].sort((a, b) => a - b)
  }
  /** Next state after reading code point cp (not at position 0). */
  step(id: number, cp: number): number {
    if (id === this.matched) return id
    const key = id * 0x110000 + cp
    const hit = this.trans.get(key)
    if (hit !== undefined) return hit
    const next: number[] = [this.nfa.start]
    for (const s of this.sets[id]) {
      for (const e of this.nfa.edges[s]) if (inRanges(e.r, cp)) next.push(e.to)
    }
    const res = this.intern(this.closure(next, false))
    this.trans.set(key, res)
    return res
  }
  /** Does the string read so far match (given whether it is empty)? */
  accepts(id: number, atStart: boolean): boolean {
    if (id === this.matched) return true
    const key = id * 2 + (atStart ? 1 : 0)
    let a = this.acc.get(key)
    if (a === undefined) {
      const cl = this.closure(this.sets[id], atStart, true)
      a = cl.includes(this.nfa.final)
      this.acc.set(key, a)
    }
    return a
  }
  /** Direct test of a whole string (used to cross-check against RegExp). */
  test(s: string): boolean {
    let st = this.initial
    let first = true
    for (const ch of s) {
      st = this.step(st, ch.codePointAt(0)!)
      first = false
    }
    return this.accepts(st, first)
  }
}

const cache = new Map<string, Matcher | null>()

/** Compiles a pattern, or returns `undefined` when it is outside the supported subset or not a valid regex. */
export function compilePattern(source: string): Matcher | undefined {
  const hit = cache.get(source)
  if (hit !== undefined) return hit ?? undefined
  let m: Matcher | null = null
  try {
    new RegExp(source, 'u')
    m = new Matcher(buildNfa(new Parser(source).parse()), source)
  } catch {
    m = null
  }
  if (cache.size > 2000) cache.clear()
  cache.set(source, m)
  return m ?? undefined
}
