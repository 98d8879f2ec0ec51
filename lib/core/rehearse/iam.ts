/**
 * IAM's evaluation of identity-based policies for one request, as AWS
 * documents it for a principal in its own account: an explicit deny in any
 * policy wins; otherwise an allow grants; otherwise the request is denied
 * implicitly. A statement applies when its action part (`Action`, or
 * `NotAction`), its resource part (`Resource`, or `NotResource`) and its
 * `Condition` all hold. Policy variables are replaced in `Resource` and in
 * condition values only under policy language version 2012-10-17.
 * `evaluateAccess` adds a resource-based policy (a queue's, a bucket's, a
 * function's permissions) for a caller in the same account. (Service
 * control, session and boundary policies are not part of this evaluation.)
 */
import { conditionHolds, unknownOperators, type ConditionBlock } from './iam-conditions'
import { actionMatches, arnMatches, arnMatchesEscaped, substituteVariables, type RequestContext } from './iam-match'

export type { RequestContext } from './iam-match'

export interface Statement {
  readonly Sid?: string
  readonly Effect: 'Allow' | 'Deny' | string
  readonly Action?: string | readonly string[]
  readonly NotAction?: string | readonly string[]
  readonly Resource?: string | readonly string[]
  readonly NotResource?: string | readonly string[]
  readonly Condition?: ConditionBlock
  readonly Principal?: unknown
  readonly NotPrincipal?: unknown
}

export interface PolicyDocument {
  readonly Version?: string
  readonly Statement: Statement | readonly Statement[]
}

/** A policy attached to the identity, by a name the report can show (the policy resource's logical ID). */
export interface NamedPolicy {
  readonly name: string
  readonly document: PolicyDocument
}

export interface Request {
  /** `service:Action`, e.g. `kinesis:PutRecords`. */
  readonly action: string
  /** The resource's ARN (`*` for actions that take no resource). */
  readonly resource: string
  readonly context?: RequestContext
}

/** Which statement decided: the policy's name, the statement's index in it and its Sid. */
export interface StatementRef {
  readonly policy: string
  readonly index: number
  readonly sid?: string
}

export type Decision =
  | { readonly decision: 'allowed'; readonly statement: StatementRef }
  | { readonly decision: 'explicit-deny'; readonly statement: StatementRef }
  | { readonly decision: 'implicit-deny' }

const list = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v)

/** The statements of a document, as a list. */
export function statementsOf(doc: PolicyDocument): readonly Statement[] {
  return Array.isArray(doc.Statement) ? doc.Statement : [doc.Statement as Statement]
}

function actionApplies(s: Statement, action: string): boolean {
  if (s.Action !== undefined) return list(s.Action).some((p) => actionMatches(p, action))
  if (s.NotAction !== undefined) return !list(s.NotAction).some((p) => actionMatches(p, action))
  return false
}

function resourceApplies(s: Statement, resource: string, context: RequestContext, variables: boolean): boolean {
  const matches = (pattern: string) => {
    if (!variables) return arnMatches(pattern, resource)
    const sub = substituteVariables(pattern, context, true)
    // A variable without a value: this entry matches nothing.
    return sub.ok && arnMatchesEscaped(sub.text, resource)
  }
  if (s.Resource !== undefined) return list(s.Resource).some(matches)
  if (s.NotResource !== undefined) return !list(s.NotResource).some(matches)
  return false
}

/** Whether one statement applies to the request (its effect aside). */
export function statementApplies(s: Statement, request: Request, version?: string): boolean {
  const context = request.context ?? {}
  const variables = version === '2012-10-17'
  if (!actionApplies(s, request.action)) return false
  if (!resourceApplies(s, request.resource, context, variables)) return false
  if (!variables) return conditionHolds(s.Condition === undefined ? undefined : literalBlock(s.Condition), context)
  return conditionHolds(s.Condition, context)
}

/** A condition block whose `${…}` are literal text (older policy language versions). */
function literalBlock(block: ConditionBlock): ConditionBlock {
  const esc = (v: unknown): unknown => (typeof v === 'string' ? v.replace(/\$\{/g, '${$}{') : Array.isArray(v) ? v.map(esc) : v)
  return Object.fromEntries(Object.entries(block).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, esc(v)]))]))
}

/** The decision for `request` under the identity's policies. */
export function evaluate(policies: readonly NamedPolicy[], request: Request): Decision {
  let allow: StatementRef | undefined
  for (const p of policies) {
    const statements = statementsOf(p.document)
    for (let i = 0; i < statements.length; i++) {
      const s = statements[i]!
      if (!statementApplies(s, request, p.document.Version)) continue
      const ref: StatementRef = { policy: p.name, index: i, ...(s.Sid === undefined ? {} : { sid: s.Sid }) }
      if (s.Effect === 'Deny') return { decision: 'explicit-deny', statement: ref }
      if (s.Effect === 'Allow') allow ??= ref
    }
  }
  return allow ? { decision: 'allowed', statement: allow } : { decision: 'implicit-deny' }
}

/** What keeps a document from being judged: unknown condition operators, an effect that is neither Allow nor Deny, a statement with no action or resource part. */
export function documentProblems(doc: PolicyDocument): string[] {
  const out: string[] = []
  statementsOf(doc).forEach((s, i) => {
    const at = s.Sid ?? `statement ${i}`
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') out.push(`${at}: Effect ${JSON.stringify(s.Effect)} is neither Allow nor Deny`)
    if ((s.Action === undefined) === (s.NotAction === undefined)) out.push(`${at}: needs exactly one of Action and NotAction`)
    if ((s.Resource === undefined) === (s.NotResource === undefined)) out.push(`${at}: needs exactly one of Resource and NotResource`)
    for (const op of unknownOperators(s.Condition)) out.push(`${at}: unknown condition operator ${op}`)
  })
  return out
}

/** Who makes a request: a role's ARN and account, or an AWS service (`apigateway.amazonaws.com`). */
export interface Caller {
  readonly arn?: string
  readonly account?: string
  readonly service?: string
}

/** Whether a statement's `Principal` names the caller: `*`, an ARN, an account (ID or `:root`), or a service. */
export function principalMatches(principal: unknown, caller: Caller): boolean {
  if (principal === '*') return true
  if (principal === null || typeof principal !== 'object') return false
  const p = principal as { AWS?: unknown; Service?: unknown }
  const names = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
  const aws = names(p.AWS).some((a) => a === '*' || (caller.arn !== undefined && a === caller.arn) || (caller.account !== undefined && (a === caller.account || /^arn:[^:]+:iam::(\d{12}):root$/.exec(a)?.[1] === caller.account)))
  const service = caller.service !== undefined && names(p.Service).includes(caller.service)
  return aws || service
}

function resourceStatementApplies(s: Statement, caller: Caller, request: Request, version?: string): boolean {
  if (s.Principal !== undefined && !principalMatches(s.Principal, caller)) return false
  if (s.NotPrincipal !== undefined && principalMatches(s.NotPrincipal, caller)) return false
  if (s.Principal === undefined && s.NotPrincipal === undefined) return false
  return statementApplies(s, request, version)
}

/**
 * A request within one account with both kinds of policy: an explicit deny
 * in the caller's policies or in the resource's policy (for a principal it
 * names) wins; otherwise an allow in either grants; otherwise implicit deny.
 */
export function evaluateAccess(identity: readonly NamedPolicy[], resource: readonly NamedPolicy[], caller: Caller, request: Request): Decision {
  let allow: StatementRef | undefined
  for (const p of resource) {
    const statements = statementsOf(p.document)
    for (let i = 0; i < statements.length; i++) {
      const s = statements[i]!
      if (!resourceStatementApplies(s, caller, request, p.document.Version)) continue
      const ref: StatementRef = { policy: p.name, index: i, ...(s.Sid === undefined ? {} : { sid: s.Sid }) }
      if (s.Effect === 'Deny') return { decision: 'explicit-deny', statement: ref }
      if (s.Effect === 'Allow') allow ??= ref
    }
  }
  const own = evaluate(identity, request)
  if (own.decision !== 'implicit-deny') return own
  return allow ? { decision: 'allowed', statement: allow } : own
}
