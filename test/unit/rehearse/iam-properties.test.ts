import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { evaluate, type NamedPolicy, type Statement } from '../../../lib/core/rehearse/iam'
import { arnMatches, wildcardMatch } from '../../../lib/core/rehearse/iam-match'

/** The plain definition of a wildcard match: `*` any run, `?` one character, the rest literal. */
function reference(p: string, t: string): boolean {
  if (p === '') return t === ''
  if (p[0] === '*') return reference(p.slice(1), t) || (t !== '' && reference(p, t.slice(1)))
  if (t === '') return false
  return (p[0] === '?' || p[0] === t[0]) && reference(p.slice(1), t.slice(1))
}

const text = (chars: string[], maxLength: number) => fc.array(fc.constantFrom(...chars), { maxLength }).map((a) => a.join(''))

const actions = ['s3:GetObject', 's3:PutObject', 'kinesis:PutRecords', 'dynamodb:GetItem', 'dynamodb:Query']
const resources = ['arn:aws:s3:::b/k', 'arn:aws:s3:::b/x/y', 'arn:aws:kinesis:us-east-1:000000000000:stream/raw', 'arn:aws:dynamodb:us-east-1:000000000000:table/t']
const actionPatterns = [...actions, 's3:*', '*', 'dynamodb:*Item', 'kinesis:Put?ecords', 'sqs:*']
const resourcePatterns = [...resources, '*', 'arn:aws:s3:::b/*', 'arn:aws:*:us-east-1:000000000000:*', 'arn:aws:dynamodb:*:*:table/t']

const statement: fc.Arbitrary<Statement> = fc.record({
  Effect: fc.constantFrom('Allow', 'Deny'),
  actions: fc.array(fc.constantFrom(...actionPatterns), { minLength: 1, maxLength: 3 }),
  notAction: fc.boolean(),
  resources: fc.array(fc.constantFrom(...resourcePatterns), { minLength: 1, maxLength: 3 }),
  notResource: fc.boolean(),
}).map((s) => ({
  Effect: s.Effect,
  ...(s.notAction ? { NotAction: s.actions } : { Action: s.actions }),
  ...(s.notResource ? { NotResource: s.resources } : { Resource: s.resources }),
}))
const policies = fc.array(fc.array(statement, { minLength: 1, maxLength: 4 }), { maxLength: 4 })
  .map((ps) => ps.map((Statement, i): NamedPolicy => ({ name: `P${i}`, document: { Version: '2012-10-17', Statement } })))
const request = fc.record({ action: fc.constantFrom(...actions), resource: fc.constantFrom(...resources) })

describe('IAM evaluation: properties over random policies', () => {
  it('wildcard matching agrees with the plain definition', () => {
    fc.assert(fc.property(text(['a', 'b', '*', '?', ':'], 8), text(['a', 'b', ':'], 10), (p, t) => wildcardMatch(p, t) === reference(p, t)), { numRuns: 2000 })
  })

  it('an ARN pattern never lets a wildcard cross from one segment into the next', () => {
    const seg = text(['a', 'b', '*'], 3)
    fc.assert(fc.property(fc.array(seg, { minLength: 6, maxLength: 6 }), fc.array(text(['a', 'b'], 3), { minLength: 6, maxLength: 6 }), (p, a) => {
      const expected = p.every((s, i) => reference(s, a[i]!))
      return arnMatches(p.join(':'), a.join(':')) === expected
    }), { numRuns: 1000 })
  })

  it('the decision does not depend on the order of policies or statements', () => {
    fc.assert(fc.property(policies, request, fc.nat(), (ps, r, seed) => {
      const rotate = <T>(xs: readonly T[]) => xs.map((_, i) => xs[(i + seed) % xs.length]!)
      const shuffled = rotate(ps).reverse().map((p) => ({ ...p, document: { ...p.document, Statement: rotate(p.document.Statement as Statement[]).reverse() } }))
      return evaluate(ps, r).decision === evaluate(shuffled, r).decision
    }), { numRuns: 500 })
  })

  it('a deny of everything always wins; without any deny nothing is denied explicitly; more allows never take a grant away', () => {
    fc.assert(fc.property(policies, request, statement, (ps, r, extra) => {
      const denyAll: NamedPolicy = { name: 'DenyAll', document: { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: '*', Resource: '*' }] } }
      expect(evaluate([...ps, denyAll], r).decision).toBe('explicit-deny')
      const allowsOnly = ps.map((p) => ({ ...p, document: { ...p.document, Statement: (p.document.Statement as Statement[]).filter((s) => s.Effect === 'Allow') } }))
      expect(evaluate(allowsOnly, r).decision).not.toBe('explicit-deny')
      const before = evaluate(ps, r).decision
      const after = evaluate([...ps, { name: 'More', document: { Version: '2012-10-17', Statement: [{ ...extra, Effect: 'Allow' }] } }], r).decision
      if (before === 'allowed') expect(after).toBe('allowed')
      if (before === 'explicit-deny') expect(after).toBe('explicit-deny')
    }), { numRuns: 500 })
  })
})
