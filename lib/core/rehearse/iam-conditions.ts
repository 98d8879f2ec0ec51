/**
 * The `Condition` element of an IAM policy statement, evaluated against a
 * request context as IAM documents it:
 * - every operator of a block must hold, and every key under an operator;
 * - several policy values for one key: any may match (OR); for a negated
 *   operator (`StringNotEquals`, `ArnNotLike`…) the request value must match
 *   none of them;
 * - a key missing from the request: false, except for negated operators
 *   (true), `…IfExists` (true) and `Null` (which tests presence);
 * - `ForAnyValue:` holds when some request value matches; `ForAllValues:`
 *   when every request value does (and when the key is missing or empty).
 */
import { arnMatchesEscaped, lookup, substituteVariables, wildcardMatchEscaped, type RequestContext } from './iam-match'

export type ConditionBlock = Readonly<Record<string, Readonly<Record<string, unknown>>>>

type Compare = (request: string, policy: string) => boolean

interface Operator {
  readonly compare: Compare
  readonly negated: boolean
  /** Policy values may carry policy variables. */
  readonly variables: boolean
}

const num = (s: string) => (s.trim() === '' ? NaN : Number(s))
const date = (s: string) => (/^\d+$/.test(s.trim()) ? Number(s) * 1000 : Date.parse(s))

function numeric(f: (a: number, b: number) => boolean): Compare {
  return (r, p) => { const a = num(r); const b = num(p); return !Number.isNaN(a) && !Number.isNaN(b) && f(a, b) }
}
function dated(f: (a: number, b: number) => boolean): Compare {
  return (r, p) => { const a = date(r); const b = date(p); return !Number.isNaN(a) && !Number.isNaN(b) && f(a, b) }
}

/** An IPv4 or IPv6 address as a number and its width in bits, or undefined. */
function ip(text: string): { n: bigint; bits: number } | undefined {
  const t = text.trim()
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(t)) {
    const parts = t.split('.').map(Number)
    if (parts.some((x) => x > 255)) return undefined
    return { n: parts.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n), bits: 32 }
  }
  if (!t.includes(':')) return undefined
  const [head, tail] = t.split('::') as [string, string | undefined]
  const h = head === '' ? [] : head.split(':')
  const tl = tail === undefined || tail === '' ? [] : tail.split(':')
  const fill = tail === undefined ? 0 : 8 - h.length - tl.length
  const groups = [...h, ...Array(Math.max(0, fill)).fill('0'), ...tl]
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  return { n: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n), bits: 128 }
}

/** Whether `address` lies in `cidr` (`203.0.113.0/24`, `2001:db8::/32`, or one address). */
export function inCidr(address: string, cidr: string): boolean {
  const [base, len] = cidr.split('/') as [string, string | undefined]
  const a = ip(address)
  const b = ip(base)
  if (!a || !b || a.bits !== b.bits) return false
  const prefix = len === undefined ? b.bits : Number(len)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > b.bits) return false
  const shift = BigInt(b.bits - prefix)
  return a.n >> shift === b.n >> shift
}

const OPERATORS: Readonly<Record<string, Operator>> = {
  StringEquals: { compare: (r, p) => r === p, negated: false, variables: true },
  StringNotEquals: { compare: (r, p) => r === p, negated: true, variables: true },
  StringEqualsIgnoreCase: { compare: (r, p) => r.toLowerCase() === p.toLowerCase(), negated: false, variables: true },
  StringNotEqualsIgnoreCase: { compare: (r, p) => r.toLowerCase() === p.toLowerCase(), negated: true, variables: true },
  StringLike: { compare: (r, p) => wildcardMatchEscaped(p, r), negated: false, variables: true },
  StringNotLike: { compare: (r, p) => wildcardMatchEscaped(p, r), negated: true, variables: true },
  NumericEquals: { compare: numeric((a, b) => a === b), negated: false, variables: false },
  NumericNotEquals: { compare: numeric((a, b) => a === b), negated: true, variables: false },
  NumericLessThan: { compare: numeric((a, b) => a < b), negated: false, variables: false },
  NumericLessThanEquals: { compare: numeric((a, b) => a <= b), negated: false, variables: false },
  NumericGreaterThan: { compare: numeric((a, b) => a > b), negated: false, variables: false },
  NumericGreaterThanEquals: { compare: numeric((a, b) => a >= b), negated: false, variables: false },
  DateEquals: { compare: dated((a, b) => a === b), negated: false, variables: false },
  DateNotEquals: { compare: dated((a, b) => a === b), negated: true, variables: false },
  DateLessThan: { compare: dated((a, b) => a < b), negated: false, variables: false },
  DateLessThanEquals: { compare: dated((a, b) => a <= b), negated: false, variables: false },
  DateGreaterThan: { compare: dated((a, b) => a > b), negated: false, variables: false },
  DateGreaterThanEquals: { compare: dated((a, b) => a >= b), negated: false, variables: false },
  Bool: { compare: (r, p) => r.toLowerCase() === p.toLowerCase(), negated: false, variables: true },
  BinaryEquals: { compare: (r, p) => r === p, negated: false, variables: false },
  IpAddress: { compare: (r, p) => inCidr(r, p), negated: false, variables: false },
  NotIpAddress: { compare: (r, p) => inCidr(r, p), negated: true, variables: false },
  ArnEquals: { compare: (r, p) => arnMatchesEscaped(p, r), negated: false, variables: true },
  ArnLike: { compare: (r, p) => arnMatchesEscaped(p, r), negated: false, variables: true },
  ArnNotEquals: { compare: (r, p) => arnMatchesEscaped(p, r), negated: true, variables: true },
  ArnNotLike: { compare: (r, p) => arnMatchesEscaped(p, r), negated: true, variables: true },
}

export type ConditionProblem = { readonly problem: string }

/** An operator name taken apart: `ForAllValues:StringLikeIfExists` → set `all`, base `StringLike`, ifExists. */
export function parseOperator(name: string): { set?: 'any' | 'all'; base: string; ifExists: boolean } | undefined {
  let rest = name
  let set: 'any' | 'all' | undefined
  const m = /^(ForAnyValue|ForAllValues):(.*)$/i.exec(rest)
  if (m) { set = m[1]!.toLowerCase() === 'foranyvalue' ? 'any' : 'all'; rest = m[2]! }
  let ifExists = false
  if (rest !== 'Null' && rest.endsWith('IfExists')) { ifExists = true; rest = rest.slice(0, -'IfExists'.length) }
  if (rest !== 'Null' && !(rest in OPERATORS)) return undefined
  if (rest === 'Null' && (set !== undefined || ifExists)) return undefined
  return { ...(set ? { set } : {}), base: rest, ifExists }
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v])
const scalar = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v))

/** Whether one operator's test over one key holds. */
function keyHolds(opName: string, key: string, policyValue: unknown, context: RequestContext): boolean {
  const op = parseOperator(opName)
  if (!op) throw new Error(`unknown condition operator ${opName}`)
  const present = lookup(context, key)
  if (op.base === 'Null') {
    const wantsAbsent = asList(policyValue).map(scalar).some((v) => v.toLowerCase() === 'true')
    const absent = present === undefined || (Array.isArray(present) && present.length === 0)
    return wantsAbsent === absent
  }
  const def = OPERATORS[op.base]!
  const wildcards = op.base === 'StringLike' || op.base === 'StringNotLike' || op.base.startsWith('Arn')
  const patterns: string[] = []
  for (const raw of asList(policyValue)) {
    const text = scalar(raw)
    if (!def.variables) { patterns.push(text); continue }
    const s = substituteVariables(text, context, wildcards)
    if (s.ok) patterns.push(s.text)
  }
  const requestValues = present === undefined ? undefined : Array.isArray(present) ? present.map(scalar) : [scalar(present)]
  /** One request value against the policy values: OR, or NOR when negated. */
  const one = (v: string) => {
    const hit = patterns.some((p) => def.compare(v, p))
    return def.negated ? !hit : hit
  }
  if (op.set === 'all') return requestValues === undefined || requestValues.every(one)
  if (requestValues === undefined) return op.ifExists || (op.set === undefined && def.negated)
  if (op.set === 'any') return requestValues.some(one)
  // A single-valued operator over a list: each value is tried, as for a single value.
  return def.negated ? requestValues.every(one) : requestValues.some(one)
}

/** Whether a statement's whole Condition block holds for the request (an absent block holds). */
export function conditionHolds(block: ConditionBlock | undefined, context: RequestContext): boolean {
  if (block === undefined) return true
  for (const [opName, keys] of Object.entries(block)) {
    for (const [key, value] of Object.entries(keys)) if (!keyHolds(opName, key, value, context)) return false
  }
  return true
}

/** The operators of a block that this evaluator does not know (a policy using one cannot be judged). */
export function unknownOperators(block: ConditionBlock | undefined): string[] {
  return Object.keys(block ?? {}).filter((k) => parseOperator(k) === undefined)
}
