/**
 * Lucene's query-string syntax (Elasticsearch's `q=` and `query_string`)
 * parsed into the search store's query tree: `field:value`, quoted phrases,
 * `*`/`?` wildcards, `[a TO b]`/`{a TO b}` ranges and `>`, `>=`, `<`, `<=`,
 * `AND`/`OR`/`NOT` (and `&&`, `||`, `!`, `+`, `-`), groups `( … )` and
 * `field:(a OR b)`, `_exists_:field`, and `^boost` (accepted, no effect:
 * results are not scored). Regular expressions (`/…/`) and fuzzy or
 * proximity searches (`~`) are refused by name.
 *
 * A query nested deeper than `MAX_DEPTH` groups or with more than
 * `MAX_CLAUSES` terms is refused, as the query DSL is (400).
 *
 * Every value is analysed as Snowplow Mini's indices analyse it (the keyword
 * analyser): a term or a phrase matches the whole value, case-sensitively.
 */
import { MAX_CLAUSES, MAX_DEPTH, refuse, type Bound, type Query } from './query-tree'

export interface QueryStringOptions {
  /** The field of terms without one (`*`: any field). */
  readonly defaultField?: string
  /** How terms next to each other combine. */
  readonly defaultOperator?: 'OR' | 'AND'
}

const SPECIAL = new Set([...'()[]{}:"^~/\\'])
const WS = /\s/

/** Parses a query string; a syntax error is a refusal naming the position. */
export function parseQueryString(input: string, options: QueryStringOptions = {}): Query {
  const p = new Parser(input, options.defaultOperator ?? 'OR')
  const q = p.expression(options.defaultField ?? '*', false)
  p.skipWs()
  if (!p.done()) p.fail(`unexpected '${input[p.pos]}'`)
  return q
}

type Item = { q: Query; not: boolean; op: 'AND' | 'OR' | null }

class Parser {
  pos = 0
  depth = 0
  clauses = 0
  constructor(
    readonly s: string,
    readonly defaultOp: 'OR' | 'AND',
  ) {}

  done() {
    return this.pos >= this.s.length
  }
  skipWs() {
    while (!this.done() && WS.test(this.s[this.pos]!)) this.pos++
  }
  fail(what: string): never {
    throw refuse(`Failed to parse query [${this.s}]: ${what} at position ${this.pos}`, 'query_shard_exception')
  }
  /** A keyword (`AND`, `OR`, `NOT`) followed by a boundary. */
  keyword(word: string): boolean {
    if (!this.s.startsWith(word, this.pos)) return false
    const next = this.s[this.pos + word.length]
    if (next !== undefined && !WS.test(next) && next !== '(') return false
    this.pos += word.length
    return true
  }
  symbol(sym: string): boolean {
    if (!this.s.startsWith(sym, this.pos)) return false
    this.pos += sym.length
    return true
  }

  /** Clauses up to the end or a closing parenthesis (`nested`). */
  expression(field: string, nested: boolean): Query {
    const items: Item[] = []
    let op: 'AND' | 'OR' | null = null
    for (;;) {
      this.skipWs()
      if (this.done()) break
      if (this.s[this.pos] === ')') {
        if (!nested) this.fail("unbalanced ')'")
        break
      }
      if (items.length > 0 && (this.keyword('AND') || this.symbol('&&'))) {
        op = 'AND'
        continue
      }
      if (items.length > 0 && (this.keyword('OR') || this.symbol('||'))) {
        op = 'OR'
        continue
      }
      let not = false
      let required = false
      for (;;) {
        if (this.keyword('NOT') || this.symbol('!')) not = !not
        else if (this.s[this.pos] === '-' && this.pos + 1 < this.s.length && !WS.test(this.s[this.pos + 1]!)) {
          this.pos++
          not = true
        } else if (this.s[this.pos] === '+' && this.pos + 1 < this.s.length && !WS.test(this.s[this.pos + 1]!)) {
          this.pos++
          required = true
        } else break
        this.skipWs()
      }
      if (this.done() || this.s[this.pos] === ')') this.fail('a term was expected')
      const q = this.clause(field)
      items.push({ q, not, op: items.length === 0 ? null : (op ?? (required ? 'AND' : this.defaultOp)) })
      op = null
    }
    if (op !== null) this.fail(`a term was expected after ${op}`)
    return combine(items)
  }

  clause(field: string): Query {
    if (++this.clauses > MAX_CLAUSES) throw refuse(`the query has more than ${MAX_CLAUSES} clauses`, 'too_many_clauses')
    if (this.symbol('(')) {
      const q = this.group(field)
      if (!this.symbol(')')) this.fail("')' was expected")
      this.boost()
      return q
    }
    if (this.s[this.pos] === '"' || this.s[this.pos] === '[' || this.s[this.pos] === '{' || this.s[this.pos] === '/' || this.s[this.pos] === '>' || this.s[this.pos] === '<') {
      return this.value(field)
    }
    const start = this.pos
    const word = this.term()
    if (this.s[this.pos] === ':') {
      this.pos++
      const name = word.text
      if (name === '') this.fail('a field name was expected')
      this.skipWs()
      if (name === '_exists_') {
        const target = this.term()
        if (target.text === '') this.fail('a field name was expected after _exists_:')
        return { kind: 'exists', field: target.text }
      }
      if (word.wild.some(Boolean) && name !== '*') {
        throw refuse(`field names with wildcards ([${name}]) are not supported by the search store`)
      }
      if (this.done()) this.fail(`a value was expected for field [${name}]`)
      if (this.s[this.pos] === '(') {
        this.pos++
        const q = this.group(name)
        if (!this.symbol(')')) this.fail("')' was expected")
        this.boost()
        return q
      }
      return this.value(name)
    }
    this.pos = start
    return this.value(field)
  }

  /** The inside of a group `( … )`, its opening parenthesis read. */
  group(field: string): Query {
    if (++this.depth > MAX_DEPTH) throw refuse(`the query is nested deeper than ${MAX_DEPTH} levels`)
    const q = this.expression(field, true)
    this.depth--
    return q
  }

  /** A value for `field`: a phrase, a range, a comparison or a term. */
  value(field: string): Query {
    const c = this.s[this.pos]
    if (c === '"') {
      const text = this.phrase()
      this.suffixes()
      return { kind: 'eq', field, values: [text] }
    }
    if (c === '[' || c === '{') return this.range(field)
    if (c === '/') throw refuse(`regular expressions ([${field}:/…/]) are not supported by the search store; use wildcards (* and ?)`)
    if (c === '>' || c === '<') {
      this.pos++
      const eq = this.symbol('=')
      const t = this.term()
      if (t.text === '') this.fail('a value was expected after the comparison')
      const b: Bound = t.text
      return { kind: 'range', field, ...(c === '>' ? (eq ? { gte: b } : { gt: b }) : eq ? { lte: b } : { lt: b }) }
    }
    const t = this.term()
    if (t.text === '' && !t.wild.some(Boolean)) this.fail('a term was expected')
    this.suffixes()
    if (t.wild.some(Boolean)) {
      if (t.wild.every(Boolean) && t.text.split('').every((x) => x === '*')) {
        return field === '*' ? { kind: 'all' } : { kind: 'exists', field }
      }
      return { kind: 'wildcard', field, pattern: t.text, wild: t.wild }
    }
    return { kind: 'eq', field, values: [t.text] }
  }

  /** `^boost` (ignored) and refused `~` (fuzzy and proximity). */
  suffixes() {
    if (this.s[this.pos] === '~') throw refuse('fuzzy and proximity searches (~) are not supported by the search store: values are matched whole')
    this.boost()
  }
  boost() {
    if (this.s[this.pos] !== '^') return
    this.pos++
    const m = /^[0-9]+(\.[0-9]+)?/.exec(this.s.slice(this.pos))
    if (!m) this.fail('a number was expected after ^')
    this.pos += m[0].length
  }

  /** An unquoted term, unescaped, with which characters are wildcards. */
  term(): { text: string; wild: boolean[] } {
    let text = ''
    const wild: boolean[] = []
    while (!this.done()) {
      const c = this.s[this.pos]!
      if (c === '\\') {
        if (this.pos + 1 >= this.s.length) this.fail('a character was expected after \\')
        text += this.s[this.pos + 1]
        wild.push(false)
        this.pos += 2
        continue
      }
      if (WS.test(c) || SPECIAL.has(c)) break
      text += c
      wild.push(c === '*' || c === '?')
      this.pos++
    }
    return { text, wild }
  }

  phrase(): string {
    this.pos++ // "
    let text = ''
    while (!this.done()) {
      const c = this.s[this.pos]!
      if (c === '\\') {
        if (this.pos + 1 >= this.s.length) break
        text += this.s[this.pos + 1]
        this.pos += 2
        continue
      }
      if (c === '"') {
        this.pos++
        return text
      }
      text += c
      this.pos++
    }
    this.fail('unterminated phrase')
  }

  range(field: string): Query {
    const inclusiveLow = this.s[this.pos] === '['
    this.pos++
    this.skipWs()
    const lo = this.rangeBound()
    this.skipWs()
    if (!this.keyword('TO')) this.fail("'TO' was expected in the range")
    this.skipWs()
    const hi = this.rangeBound()
    this.skipWs()
    const close = this.s[this.pos]
    if (close !== ']' && close !== '}') this.fail("']' or '}' was expected to close the range")
    this.pos++
    this.boost()
    const q: { kind: 'range'; field: string; gt?: Bound; gte?: Bound; lt?: Bound; lte?: Bound } = { kind: 'range', field }
    if (lo !== null) q[inclusiveLow ? 'gte' : 'gt'] = lo
    if (hi !== null) q[close === ']' ? 'lte' : 'lt'] = hi
    return q
  }

  /** A range end; `*` is open (null). */
  rangeBound(): string | null {
    if (this.s[this.pos] === '"') return this.phrase()
    let text = ''
    while (!this.done()) {
      const c = this.s[this.pos]!
      if (c === '\\' && this.pos + 1 < this.s.length) {
        text += this.s[this.pos + 1]
        this.pos += 2
        continue
      }
      if (WS.test(c) || c === ']' || c === '}') break
      text += c
      this.pos++
    }
    if (text === '') this.fail('a range bound was expected')
    return text === '*' ? null : text
  }
}

/** Items joined by AND/OR (AND binds tighter), `NOT` items excluded. */
function combine(items: readonly Item[]): Query {
  if (items.length === 0) return { kind: 'all' }
  const groups: Item[][] = [[]]
  for (const it of items) {
    if (it.op === 'OR') groups.push([])
    groups.at(-1)!.push(it)
  }
  const ofGroup = (g: Item[]): Query => {
    const must = g.filter((i) => !i.not).map((i) => i.q)
    const mustNot = g.filter((i) => i.not).map((i) => i.q)
    if (mustNot.length === 0 && must.length === 1) return must[0]!
    return { kind: 'bool', must, should: [], mustNot, filter: [], minimumShouldMatch: 0 }
  }
  if (groups.length === 1) return ofGroup(groups[0]!)
  return { kind: 'bool', must: [], should: groups.map(ofGroup), mustNot: [], filter: [], minimumShouldMatch: 1 }
}
