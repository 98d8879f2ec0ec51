/**
 * The identities of a rehearsal: each function gets a key pair and session
 * token of its own (generated, as a role's temporary credentials are),
 * mapped to its role's policies as the templates declare them
 * (lib/core/rehearse/roles.ts); the IAM proxies decide each call of that key
 * with the IAM evaluator (lib/core/rehearse/iam.ts). A function without a
 * role in its stack, or whose policies cannot be resolved, gets an identity
 * with no policy (every call denied) and the reason is kept.
 */
import { randomBytes } from 'node:crypto'
import { evaluate, type NamedPolicy } from '../../core/rehearse/iam'
import type { FunctionInventory } from '../../core/rehearse/inventory'
import type { AssemblyResolver } from '../../core/rehearse/resolve'
import { rolePolicies } from '../../core/rehearse/roles'
import type { AssemblyStack } from '../../core/rehearse/template'
import type { FunctionCredentials } from './functions'
import type { Authorize, ProxyIdentity } from '../iam-proxy'

export interface FunctionIdentities {
  /** By access key: what the proxies take. */
  readonly byKey: ReadonlyMap<string, ProxyIdentity<readonly NamedPolicy[]>>
  /** By function logical ID: what each function's process is given. */
  readonly credentials: ReadonlyMap<string, FunctionCredentials>
  /** Why a function's role could not be read in full (its calls are judged on what could). */
  readonly problems: readonly { readonly function: string; readonly problem: string }[]
}

/** A temporary access key as STS issues them (`ASIA` and 16 characters). */
function accessKey(random: (n: number) => Buffer): string {
  return `ASIA${random(8).toString('hex').toUpperCase()}`
}

export function functionIdentities(stacks: readonly AssemblyStack[], resolver: AssemblyResolver, functions: readonly FunctionInventory[], random: (n: number) => Buffer = randomBytes): FunctionIdentities {
  const byKey = new Map<string, ProxyIdentity<readonly NamedPolicy[]>>()
  const credentials = new Map<string, FunctionCredentials>()
  const problems: { function: string; problem: string }[] = []
  for (const fn of functions) {
    let policies: readonly NamedPolicy[] = []
    let roleName: string | undefined
    if (fn.role === undefined) problems.push({ function: fn.logicalId, problem: 'no role of its stack: every call is denied' })
    else {
      const r = rolePolicies(stacks, fn.stack, fn.role, resolver)
      policies = r.policies
      roleName = resolver.physical(fn.stack, fn.role)?.ref
      for (const p of r.problems) problems.push({ function: fn.logicalId, problem: `role ${fn.role}: ${p}` })
      for (const arn of r.external) problems.push({ function: fn.logicalId, problem: `role ${fn.role}: managed policy ${arn} is not in the assembly, its grants are not counted` })
    }
    const c = { accessKeyId: accessKey(random), secretAccessKey: random(30).toString('base64'), sessionToken: random(48).toString('base64') }
    credentials.set(fn.logicalId, c)
    byKey.set(c.accessKeyId, { name: fn.logicalId, policies, sessionToken: c.sessionToken, ...(roleName !== undefined ? { roleName } : {}) })
  }
  return { byKey, credentials, problems }
}

/** The proxies' evaluator: IAM's decision on the identity's role policies. */
export const authorizeByPolicies: Authorize<readonly NamedPolicy[]> = (identity, r) => {
  const d = evaluate(identity.policies, { action: r.action, resource: r.resource, context: r.context })
  return d.decision === 'implicit-deny' ? { decision: d.decision } : { decision: d.decision, statement: d.statement }
}
