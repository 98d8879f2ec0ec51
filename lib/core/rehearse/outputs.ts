/**
 * The outputs of a cloud assembly's stacks as CloudFormation answers them in
 * `DescribeStacks` once deployed: each output's `Value` resolved (resources
 * to their local physical names), with the HTTP APIs' endpoints given by the
 * caller (where the rehearsal serves them). What `floe … --stack <name>`
 * reads (lib/infra/outputs.ts).
 */
import { assemblyResolver, type ResolverOptions } from './resolve'
import { resourcesOfType, type AssemblyStack } from './template'

export interface ResolvedOutputs {
  /** Output key → value, by stack name. */
  readonly outputs: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** Outputs that could not be resolved, and why (a deploy would fail on them). */
  readonly problems: readonly { readonly stack: string; readonly output: string; readonly problem: string }[]
}

/**
 * Resolves every output of every stack. `apiUrl` is the endpoint of each
 * `AWS::ApiGatewayV2::Api` (its `ApiEndpoint` attribute): the rehearsal's
 * HTTP API. Outputs under a condition that does not hold are left out.
 */
export function stackOutputs(stacks: readonly AssemblyStack[], o: { readonly apiUrl?: string; readonly resolver?: ResolverOptions } = {}): ResolvedOutputs {
  const physical: Record<string, Record<string, { attributes: Record<string, string> }>> = {}
  if (o.apiUrl !== undefined) {
    for (const s of stacks) {
      for (const [id] of resourcesOfType(s.template, 'AWS::ApiGatewayV2::Api')) {
        ;(physical[s.name] ??= {})[id] = { attributes: { ApiEndpoint: o.apiUrl } }
      }
    }
  }
  const given = o.resolver?.physical ?? {}
  const merged: Record<string, Record<string, unknown>> = { ...physical }
  for (const [stack, byId] of Object.entries(given)) merged[stack] = { ...merged[stack], ...byId }
  const resolver = assemblyResolver(stacks, { ...o.resolver, physical: merged as ResolverOptions['physical'] })
  const outputs: Record<string, Record<string, string>> = {}
  const problems: { stack: string; output: string; problem: string }[] = []
  for (const s of stacks) {
    const mine: Record<string, string> = {}
    for (const [key, out] of Object.entries(s.template.Outputs ?? {})) {
      if (out.Condition !== undefined) {
        const c = resolver.resolve(s.name, { 'Fn::If': [out.Condition, true, false] })
        if (c.ok && c.value === false) continue
      }
      const r = resolver.resolve(s.name, out.Value)
      if (!r.ok) {
        problems.push({ stack: s.name, output: key, problem: r.problem })
        continue
      }
      mine[key] = typeof r.value === 'string' ? r.value : Array.isArray(r.value) ? r.value.join(',') : String(r.value)
    }
    outputs[s.name] = mine
  }
  return { outputs, problems }
}
