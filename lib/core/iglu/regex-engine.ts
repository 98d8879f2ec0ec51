/**
 * Regular expressions that come from schemas (`pattern`, `patternProperties`)
 * run on RE2JS, a JavaScript port of RE2: matching takes time linear in the
 * input whatever the pattern, so a schema cannot freeze the process with a
 * catastrophic pattern such as `^(a+)+$`. (Pure JavaScript, so it bundles into
 * every function and needs no native build; about 0.5 µs per test of a short
 * string.)
 *
 * Patterns are ECMA-262 regular expressions, as JSON Schema says: a pattern
 * must first be a valid JavaScript regular expression, and is then translated
 * to RE2's syntax (`\uXXXX`, `[^]`, `\cX`, `\s`, `.` keep their ECMA meaning).
 * What RE2 cannot express in linear time — backreferences and lookaround — is
 * refused with the reason (`UnsupportedPattern`).
 */
import { RE2JS } from 're2js'

/** A pattern that is not a valid ECMA regular expression, or that needs backtracking. */
export class UnsupportedPattern extends SyntaxError {
  override readonly name = 'UnsupportedPattern'
}

/** ECMA `\s`: white space and line terminators. */
const SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}'
const hex = (code: number) => `\\x{${code.toString(16).toUpperCase()}}`

/** ECMA syntax → RE2 syntax, with the same meaning; throws `UnsupportedPattern` for what RE2 cannot do. */
export function toRe2(pattern: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '\\') {
      const n = pattern[i + 1]
      if (n === undefined) throw new UnsupportedPattern('the pattern ends with a lone backslash')
      if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(pattern.slice(i + 2, i + 6))) {
        out += hex(parseInt(pattern.slice(i + 2, i + 6), 16))
        i += 5
      } else if (n === 'u' && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3)
        out += hex(parseInt(pattern.slice(i + 3, end), 16))
        i = end
      } else if (n === 'c' && /[A-Za-z]/.test(pattern[i + 2] ?? '')) {
        out += hex(pattern.charCodeAt(i + 2) % 32)
        i += 2
      } else if (n === 's') {
        out += inClass ? SPACE : `[${SPACE}]`
        i++
      } else if (n === 'S') {
        if (inClass) throw new UnsupportedPattern('\\S inside a character class is not supported by the linear-time engine')
        out += `[^${SPACE}]`
        i++
      } else if (/[1-9]/.test(n) && !inClass) {
        throw new UnsupportedPattern(`backreferences (\\${n}) need backtracking and are not supported`)
      } else if (n === 'k' && pattern[i + 2] === '<') {
        throw new UnsupportedPattern('named backreferences (\\k<…>) need backtracking and are not supported')
      } else if (n === '/' || n === '-') {
        out += inClass ? `\\${n}` : n === '/' ? '/' : '\\-'
        i++
      } else {
        out += c + n
        i++
      }
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (c === '[') {
      if (pattern.startsWith('[^]', i)) {
        out += '[\\x{0}-\\x{10FFFF}]'
        i += 2
        continue
      }
      inClass = true
      out += c
      // a `]` right after `[` or `[^` is the end of an empty class in ECMA, a literal in RE2
      if (pattern[i + 1] === ']') throw new UnsupportedPattern('the empty character class [] is not supported')
      if (pattern[i + 1] === '^') {
        out += '^'
        i++
      }
      continue
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const kind = pattern.slice(i + 2, i + 4)
      if (kind.startsWith('=') || kind.startsWith('!') || kind === '<=' || kind === '<!') {
        throw new UnsupportedPattern('lookahead and lookbehind assertions need backtracking and are not supported')
      }
    }
    out += c === '.' ? '[^\\n\\r\\x{2028}\\x{2029}]' : c
  }
  return out
}

export interface LinearRegExp {
  test(input: string): boolean
  toString(): string
}

/**
 * Compiles a schema pattern for the linear-time engine; throws
 * `UnsupportedPattern` with the reason when it cannot.
 */
export function linearRegExp(pattern: string, flags = ''): LinearRegExp {
  try {
    // Syntax only: constructing a RegExp does not match anything.
    new RegExp(pattern, flags.includes('u') ? 'u' : '')
  } catch (err) {
    throw new UnsupportedPattern(`not a valid regular expression: ${(err as Error).message}`)
  }
  let re: ReturnType<typeof RE2JS.compile>
  try {
    re = RE2JS.compile(toRe2(pattern))
  } catch (err) {
    if (err instanceof UnsupportedPattern) throw err
    throw new UnsupportedPattern(`not supported by the linear-time regular expression engine: ${(err as Error).message}`)
  }
  // ajv keys its compiled patterns by `toString()`: it must differ per pattern.
  const text = `/${pattern}/${flags}`
  if (backtrackFree(pattern)) {
    // Nothing to try again: the native engine runs it in linear time, and is ECMA's by definition.
    const native = new RegExp(pattern, flags.includes('u') ? 'u' : '')
    return { test: (input: string) => native.test(input), toString: () => text }
  }
  const size = re.matcher('').programSize()
  // The same short values recur event after event (schema URIs, enum-like codes): their answers are kept.
  const seen = new Map<string, boolean>()
  const test = (input: string): boolean => {
    if (input.length > MEMO_MAX_LENGTH) return charged(re, input, size, pattern)
    let r = seen.get(input)
    if (r === undefined) {
      r = charged(re, input, size, pattern)
      if (seen.size >= MEMO_SIZE) seen.clear()
      seen.set(input, r)
    }
    return r
  }
  return { test, toString: () => text }
}

/**
 * The work of pattern checks is bounded. Matching is linear in the input, but
 * its factor is the size of the pattern's program (thousands of instructions
 * for a pattern such as `(?:a|b|ab){0,500}x`, each a step per character): a
 * schema's pattern applied to a long string could otherwise take seconds, and
 * a request can hold many strings. So, within a budget (`PatternBudget`):
 * - one check may cost at most `PATTERN_CHECK_UNITS` units of
 *   `(length + 1) × program size`, counted before it runs (so a check that is
 *   refused is refused on any machine, and no single check takes long);
 * - all the checks charged to a budget may take at most `PATTERN_BUDGET_MS`
 *   of time together: the validation of one value by default, or what a
 *   caller shares across several validations (enrich: one stream record)
 *   with `withPatternBudget`.
 * A check beyond either throws `PatternBudgetExceeded` instead of running;
 * the validator wrapper (draft04.ts) makes it a validation error. Remembered
 * answers (short recurring inputs) cost nothing.
 */
export const PATTERN_CHECK_UNITS = 1_000_000
export const PATTERN_BUDGET_MS = 2_000

/** A budget of pattern work (see `PATTERN_CHECK_UNITS`); `spentMs` grows as checks run, timed by `clock` (milliseconds). */
export class PatternBudget {
  spentMs = 0
  readonly limitMs: number
  readonly clock: () => number
  constructor(limitMs?: number, clock?: () => number) {
    this.limitMs = limitMs ?? PATTERN_BUDGET_MS
    this.clock = clock ?? (() => performance.now())
  }
}

/** A pattern check refused because of its cost, or because its budget's time is spent. */
export class PatternBudgetExceeded extends Error {
  override readonly name = 'PatternBudgetExceeded'
  constructor(readonly pattern: string, readonly length: number, readonly size: number, why: string) {
    super(`a string of ${length} characters was not checked against the pattern ${JSON.stringify(pattern.length > 100 ? `${pattern.slice(0, 100)}…` : pattern)} (${size} instructions): ${why}`)
  }
}

let current: PatternBudget | undefined

/** `re.test(input)`, charged to the current budget. */
function charged(re: ReturnType<typeof RE2JS.compile>, input: string, size: number, pattern: string): boolean {
  const b = current
  if (b === undefined) return re.test(input)
  const units = (input.length + 1) * size
  if (units > PATTERN_CHECK_UNITS) {
    throw new PatternBudgetExceeded(pattern, input.length, size, `the check would cost ${units} units (length × instructions), more than the limit of ${PATTERN_CHECK_UNITS}`)
  }
  if (b.spentMs >= b.limitMs) throw new PatternBudgetExceeded(pattern, input.length, size, `the pattern checks of this data already took their limit of ${b.limitMs} ms`)
  const t0 = b.clock()
  try {
    return re.test(input)
  } finally {
    b.spentMs += b.clock() - t0
  }
}

/** Runs `fn` (synchronous) with every pattern check charged to `budget`. */
export function withPatternBudget<T>(budget: PatternBudget, fn: () => T): T {
  const outer = current
  current = budget
  try {
    return fn()
  } finally {
    current = outer
  }
}

/** The budget checks are charged to now, if any. */
export function currentPatternBudget(): PatternBudget | undefined {
  return current
}

/** Characters that mean something in a pattern outside a class (a literal one is escaped). */
const SYNTAX = new Set('^$\\.|?*+()[]{}')
/** Characters that stand for themselves when escaped. */
const ESCAPED = new Set('^$\\.|?*+()[]{}/-')
/** Class escapes (`\d`, `\w`, `\s` and their complements). */
const CLASS_ESCAPES = new Set('dDwWsS')

/**
 * Whether `pattern` is a fixed sequence of one-character atoms (literal or
 * escaped characters, `.`, `\d`-style escapes, character classes without
 * escapes other than those), each at most repeated an exact number of times
 * (`{n}`), optionally between `^` and `$`: such as a UUID's or a date's pattern.
 * A backtracking engine has no alternative to try again on such a pattern, so
 * it matches in time linear in the input — times the pattern's width when it
 * is not anchored with `^` (every start is tried), so an unanchored one must
 * match at most 16 characters. Anything else (alternation, groups, variable
 * repeats, other escapes, wide unanchored sequences) is left to the
 * linear-time engine and its budget.
 */
export function backtrackFree(pattern: string): boolean {
  const anchored = pattern.startsWith('^')
  let i = anchored ? 1 : 0
  let width = 0
  const end = pattern.endsWith('$') && !pattern.endsWith('\\$') ? pattern.length - 1 : pattern.length
  while (i < end) {
    const c = pattern[i]!
    if (c === '\\') {
      const n = pattern[i + 1]
      if (n === undefined || !(CLASS_ESCAPES.has(n) || ESCAPED.has(n))) return false
      i += 2
    } else if (c === '[') {
      i++
      if (pattern[i] === '^') i++
      if (pattern[i] === ']') return false
      for (;;) {
        const d = pattern[i]
        if (d === undefined || i >= end || d === '[') return false
        if (d === ']') break
        if (d === '\\') {
          const n = pattern[i + 1]
          if (n === undefined || !(CLASS_ESCAPES.has(n) || ESCAPED.has(n))) return false
          i += 2
        } else i++
      }
      i++
    } else if (c === '.' || !SYNTAX.has(c)) i++
    else return false
    if (pattern[i] === '{') {
      const m = /^\{(\d{1,4})\}/.exec(pattern.slice(i, i + 6))
      if (!m) return false
      i += m[0].length
      width += Number(m[1])
    } else width++
  }
  return i === end && (anchored || width <= 16)
}

/** Inputs up to this length have their answers remembered, up to `MEMO_SIZE` per pattern. */
const MEMO_MAX_LENGTH = 256
const MEMO_SIZE = 512

/** Why a pattern cannot be used, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  try {
    linearRegExp(pattern)
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/** For ajv's `code.regExp` option: every `pattern` and `patternProperties` regex of a schema. */
export const ajvRegExp = Object.assign((pattern: string, flags: string) => linearRegExp(pattern, flags), {
  code: 'require("re2js") /* linear-time patterns */',
})

/**
 * Every `pattern` and `patternProperties` key in a schema (at any depth) that
 * cannot be used, with its JSON Pointer (below `base`) and why.
 */
export function schemaPatternProblems(schema: unknown, base = ''): { pointer: string; message: string }[] {
  const out: { pointer: string; message: string }[] = []
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')
  const walk = (v: unknown, at: string, depth: number): void => {
    if (depth > 200 || v === null || typeof v !== 'object') return
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}/${i}`, depth + 1))
    const o = v as Record<string, unknown>
    if (typeof o.pattern === 'string') {
      const why = patternProblem(o.pattern)
      if (why) out.push({ pointer: `${at}/pattern`, message: `The pattern ${JSON.stringify(o.pattern)} cannot be used: ${why}` })
    }
    const pp = o.patternProperties
    if (pp !== null && typeof pp === 'object' && !Array.isArray(pp)) {
      for (const k of Object.keys(pp)) {
        const why = patternProblem(k)
        if (why) out.push({ pointer: `${at}/patternProperties/${esc(k)}`, message: `The patternProperties key ${JSON.stringify(k)} cannot be used: ${why}` })
      }
    }
    for (const [k, x] of Object.entries(o)) walk(x, `${at}/${esc(k)}`, depth + 1)
  }
  walk(schema, base, 0)
  return out
}
