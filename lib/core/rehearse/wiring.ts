/**
 * What AWS checks when it wires a function to its callers, judged with the
 * IAM evaluator on the templates' own policies:
 * - an event source mapping is created only if the function's role may read
 *   its source (Kinesis: DescribeStream, DescribeStreamSummary, GetRecords,
 *   GetShardIterator, ListShards; a DynamoDB stream: DescribeStream,
 *   GetRecords, GetShardIterator, ListStreams; SQS: ReceiveMessage,
 *   DeleteMessage, GetQueueAttributes) and write to its on-failure
 *   destination (SQS SendMessage, SNS Publish, S3 PutObject and ListBucket);
 * - API Gateway invokes a route's function, and its authorizer's, only with a
 *   `lambda:InvokeFunction` permission for `apigateway.amazonaws.com` whose
 *   source ARN covers the route.
 * A role with managed policies from outside the assembly is not judged (they
 * cannot be read here).
 */
import { evaluate } from './iam'
import { actionMatches, arnMatches } from './iam-match'
import { functionInventory, type FunctionInventory } from './inventory'
import type { AssemblyResolver } from './resolve'
import { rolePolicies } from './roles'
import type { AssemblyStack, Violation } from './template'

/** The calls Lambda makes with the function's role to read a source, by the source's service. */
export const SOURCE_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  kinesis: ['kinesis:DescribeStream', 'kinesis:DescribeStreamSummary', 'kinesis:GetRecords', 'kinesis:GetShardIterator', 'kinesis:ListShards'],
  dynamodb: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
  sqs: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
}

/** The calls Lambda makes with the function's role to send a failed batch's record to its destination: [action, resource]. */
export function destinationCalls(arn: string): [string, string][] {
  const service = arn.split(':')[2]
  if (service === 'sqs') return [['sqs:SendMessage', arn]]
  if (service === 'sns') return [['sns:Publish', arn]]
  if (service === 's3') return [['s3:PutObject', `${arn}/*`], ['s3:ListBucket', arn]]
  return []
}

interface Grant {
  readonly action: string
  readonly principal: string
  readonly sourceArn?: string
}

export function checkWiring(stacks: readonly AssemblyStack[], resolver: AssemblyResolver, inventory: readonly FunctionInventory[] = functionInventory(stacks, resolver)): Violation[] {
  const out: Violation[] = []

  // Lambda permissions (resource-based), by the function they name
  const grants = new Map<string, Grant[]>()
  const byKey = new Map<string, string>()
  for (const f of inventory) for (const k of [f.name, f.arn]) byKey.set(k, `${f.stack}\0${f.logicalId}`)
  for (const s of stacks) {
    for (const r of Object.values(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::Lambda::Permission') continue
      const p = resolver.resolve(s.name, r.Properties ?? {})
      if (!p.ok) continue
      const v = p.value as { FunctionName?: unknown; Action?: unknown; Principal?: unknown; SourceArn?: unknown }
      const fn = typeof v.FunctionName === 'string' ? byKey.get(v.FunctionName) : undefined
      if (!fn || typeof v.Action !== 'string' || typeof v.Principal !== 'string') continue
      grants.set(fn, [...(grants.get(fn) ?? []), { action: v.Action, principal: v.Principal, ...(typeof v.SourceArn === 'string' ? { sourceArn: v.SourceArn } : {}) }])
    }
  }
  const mayInvoke = (f: FunctionInventory, sourceArn: string) =>
    (grants.get(`${f.stack}\0${f.logicalId}`) ?? []).some((g) => actionMatches(g.action, 'lambda:InvokeFunction') && g.principal === 'apigateway.amazonaws.com' && (g.sourceArn === undefined || arnMatches(g.sourceArn, sourceArn)))
  const byId = new Map(inventory.map((f) => [`${f.stack}\0${f.logicalId}`, f]))

  for (const f of inventory) {
    for (const route of f.routes) {
      if (!mayInvoke(f, route.sourceArn)) out.push({ stack: f.stack, resource: route.logicalId, problem: `API Gateway may not invoke ${f.logicalId} for ${route.routeKey}: no lambda:InvokeFunction permission for apigateway.amazonaws.com covers ${route.sourceArn}` })
      const a = route.authorizer
      const authorizerFn = a?.function === undefined ? undefined : byId.get(`${f.stack}\0${a.function}`)
      if (a && authorizerFn && !mayInvoke(authorizerFn, a.sourceArn)) out.push({ stack: f.stack, resource: a.logicalId, problem: `API Gateway may not invoke the authorizer ${authorizerFn.logicalId}: no lambda:InvokeFunction permission for apigateway.amazonaws.com covers ${a.sourceArn}` })
    }

    if (f.triggers.length === 0 || f.role === undefined) continue
    const role = rolePolicies(stacks, f.stack, f.role, resolver)
    if (role.external.length > 0 || role.problems.length > 0) continue
    for (const t of f.triggers) {
      const calls: [string, string][] = [...(SOURCE_ACTIONS[t.kind] ?? []).map((a): [string, string] => [a, t.source]), ...(t.onFailure === undefined ? [] : destinationCalls(t.onFailure))]
      for (const [action, resource] of calls) {
        if (evaluate(role.policies, { action, resource }).decision !== 'allowed') {
          out.push({ stack: f.stack, resource: t.logicalId, problem: `the role ${f.role} of ${f.logicalId} may not ${action} on ${resource}: Lambda refuses the mapping` })
        }
      }
    }
  }
  return out
}
