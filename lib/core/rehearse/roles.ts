/**
 * The identity-based policies of a role as a template declares them, their
 * intrinsics resolved: the role's inline `Policies`, every
 * `AWS::IAM::Policy` of the stack attached to it, and the managed policies
 * it names that the assembly itself declares. A managed policy from
 * outside the assembly (an AWS managed one) cannot be read here; it is
 * listed by ARN so a report can say so.
 */
import { documentProblems, type NamedPolicy, type PolicyDocument } from './iam'
import type { AssemblyResolver } from './resolve'
import type { AssemblyStack, Template, Violation } from './template'

export interface RolePolicies {
  readonly stack: string
  readonly role: string
  readonly policies: readonly NamedPolicy[]
  /** Managed policies attached by ARN that no stack of the assembly declares. */
  readonly external: readonly string[]
  /** What could not be resolved (a policy document with an intrinsic that has no local value). */
  readonly problems: readonly string[]
}

/** The logical ID of the role a function runs as (`Role: { Fn::GetAtt: [Role, Arn] }`), when it is in the same template. */
export function functionRole(template: Template, functionId: string): string | undefined {
  const role = template.Resources?.[functionId]?.Properties?.Role as { 'Fn::GetAtt'?: unknown } | undefined
  const att = role?.['Fn::GetAtt']
  if (Array.isArray(att) && typeof att[0] === 'string' && template.Resources?.[att[0]]?.Type === 'AWS::IAM::Role') return att[0]
  if (typeof att === 'string' && att.endsWith('.Arn')) return att.slice(0, -4)
  return undefined
}

export function rolePolicies(stacks: readonly AssemblyStack[], stackName: string, roleId: string, resolver: AssemblyResolver): RolePolicies {
  const stack = stacks.find((s) => s.name === stackName)
  const resources = stack?.template.Resources ?? {}
  const role = resources[roleId]
  const policies: NamedPolicy[] = []
  const external: string[] = []
  const problems: string[] = []
  if (!stack || role?.Type !== 'AWS::IAM::Role') return { stack: stackName, role: roleId, policies, external, problems: [`${stackName} has no role ${roleId}`] }
  const roleName = resolver.physical(stackName, roleId)?.ref

  const add = (name: string, doc: unknown) => {
    const r = resolver.resolve(stackName, doc)
    if (r.ok) policies.push({ name, document: r.value as PolicyDocument })
    else problems.push(`${name}: ${r.problem}`)
  }

  const inline = (role.Properties?.Policies ?? []) as { PolicyName?: unknown; PolicyDocument?: unknown }[]
  inline.forEach((p, i) => add(`${roleId}/${typeof p.PolicyName === 'string' ? p.PolicyName : i}`, p.PolicyDocument))

  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue
    const roles = resolver.resolve(stackName, r.Properties?.Roles ?? [])
    if (roles.ok && Array.isArray(roles.value) && roles.value.includes(roleName)) add(id, r.Properties?.PolicyDocument)
  }

  // Managed policies declared in the assembly, by their ARN.
  const managed = new Map<string, { stack: string; id: string; doc: unknown }>()
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::IAM::ManagedPolicy') continue
      const arn = resolver.physical(s.name, id)?.ref
      if (arn !== undefined) managed.set(arn, { stack: s.name, id, doc: r.Properties?.PolicyDocument })
      // a managed policy can name the roles it is attached to
      const roles = resolver.resolve(s.name, r.Properties?.Roles ?? [])
      if (s.name === stackName && roles.ok && Array.isArray(roles.value) && roles.value.includes(roleName)) {
        const doc = resolver.resolve(s.name, r.Properties?.PolicyDocument)
        if (doc.ok) policies.push({ name: id, document: doc.value as PolicyDocument })
        else problems.push(`${id}: ${doc.problem}`)
      }
    }
  }
  const arns = resolver.resolve(stackName, role.Properties?.ManagedPolicyArns ?? [])
  if (!arns.ok) problems.push(`${roleId} ManagedPolicyArns: ${arns.problem}`)
  else for (const arn of arns.value as string[]) {
    const m = managed.get(arn)
    if (!m) { external.push(arn); continue }
    const doc = resolver.resolve(m.stack, m.doc)
    if (doc.ok) policies.push({ name: m.id, document: doc.value as PolicyDocument })
    else problems.push(`${m.id}: ${doc.problem}`)
  }
  return { stack: stackName, role: roleId, policies, external, problems }
}

/**
 * The roles whose policies cannot be judged by the evaluator: a document
 * with an intrinsic that has no local value, a statement it cannot read
 * (no action part, an unknown condition operator…). One violation each.
 */
export function checkRoles(stacks: readonly AssemblyStack[], resolver: AssemblyResolver): Violation[] {
  const out: Violation[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::IAM::Role') continue
      const role = rolePolicies(stacks, s.name, id, resolver)
      for (const problem of role.problems) out.push({ stack: s.name, resource: id, problem: `policy ${problem}` })
      for (const p of role.policies) for (const problem of documentProblems(p.document)) out.push({ stack: s.name, resource: id, problem: `policy ${p.name}: ${problem}` })
    }
  }
  return out
}
