/**
 * The HTTP API as the templates declare it, for the rehearsal's gateway:
 * each route key with the function its integration invokes and the Lambda
 * authorizer in front of it (its function, identity sources, result TTL,
 * simple or IAM-policy responses), and the decisions API Gateway makes
 * around an authorizer: which identity sources a request lacks (401),
 * the cache key of its result, and its verdict (allow with a context, or
 * 403). Pure: the gateway (lib/local/rehearse/http-api.ts) does the I/O.
 */
import type { FunctionInventory } from './inventory'
import type { AssemblyResolver } from './resolve'
import type { AssemblyStack } from './template'

export interface ApiAuthorizer {
  readonly logicalId: string
  /** The authorizer function's logical ID. */
  readonly function: string
  /** `$request.header.Authorization`, `$request.querystring.x`, `$context.x`, `$stageVariables.x`. */
  readonly identitySources: readonly string[]
  readonly ttlSeconds: number
  readonly simpleResponses: boolean
  readonly payloadFormat: string
}

export interface ApiRoute {
  readonly routeKey: string
  /** The integration's function (logical ID). */
  readonly function: string
  readonly payloadFormat: string
  /** `arn:…:execute-api:<region>:<account>:<api>/<stage>`: the route ARN's stem. */
  readonly arnStem: string
  readonly authorizer?: ApiAuthorizer
}

/** Every route of the assembly's HTTP APIs with what serves it. */
export function apiRoutes(stacks: readonly AssemblyStack[], resolver: AssemblyResolver, functions: readonly FunctionInventory[]): ApiRoute[] {
  const out: ApiRoute[] = []
  for (const fn of functions) {
    for (const r of fn.routes) {
      const a = r.authorizer
      const declared = a ? stacks.find((s) => s.name === fn.stack)?.template.Resources?.[a.logicalId]?.Properties : undefined
      const sources = declared ? resolver.resolve(fn.stack, declared.IdentitySource ?? []) : undefined
      const stem = r.sourceArn.split('/').slice(0, 2).join('/')
      out.push({
        routeKey: r.routeKey,
        function: fn.logicalId,
        payloadFormat: r.payloadFormat ?? '2.0',
        arnStem: stem,
        ...(a?.function ? {
          authorizer: {
            logicalId: a.logicalId,
            function: a.function,
            identitySources: sources?.ok && Array.isArray(sources.value) ? sources.value.map(String) : [],
            ttlSeconds: a.ttlSeconds,
            simpleResponses: a.simpleResponses,
            payloadFormat: a.payloadFormat ?? '2.0',
          },
        } : {}),
      })
    }
  }
  return out
}

/** The parts of a payload 2.0 event an identity source reads. */
export interface IdentityContext {
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>>
  readonly requestContext: Readonly<Record<string, unknown>>
  readonly stageVariables?: Readonly<Record<string, string | undefined>>
}

/**
 * The values of the identity sources for a request, or `missing`: API
 * Gateway answers 401 without invoking the authorizer when one is absent or
 * empty.
 */
export function identityValues(sources: readonly string[], e: IdentityContext): { values: string[] } | { missing: string } {
  const values: string[] = []
  for (const s of sources) {
    let v: unknown
    const [, where, name] = /^\$(request\.header|request\.querystring|context|stageVariables)\.(.+)$/.exec(s) ?? []
    if (where === 'request.header') v = e.headers[name!.toLowerCase()]
    else if (where === 'request.querystring') v = e.queryStringParameters?.[name!]
    else if (where === 'stageVariables') v = e.stageVariables?.[name!]
    else if (where === 'context') v = name!.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), e.requestContext)
    if (v === undefined || v === null || v === '') return { missing: s }
    values.push(String(v))
  }
  return { values }
}

/** The cache key of an authorizer's result: only with identity sources and a TTL above 0 (else every request invokes it). */
export function authorizerCacheKey(a: ApiAuthorizer, values: readonly string[]): string | undefined {
  return a.ttlSeconds > 0 && a.identitySources.length > 0 ? `${a.logicalId}\0${JSON.stringify(values)}` : undefined
}

export type Verdict = { readonly allow: true; readonly context: Readonly<Record<string, unknown>> } | { readonly allow: false }

/**
 * An authorizer's answer as API Gateway reads it: with simple responses,
 * `isAuthorized: true`; otherwise an IAM policy whose statements allow
 * `execute-api:Invoke` on the route's ARN and deny none of it.
 */
export function authorizerVerdict(answer: unknown, simpleResponses: boolean, routeArn: string): Verdict {
  const a = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>) : {}
  const context = a.context !== null && typeof a.context === 'object' ? (a.context as Record<string, unknown>) : {}
  if (simpleResponses) return a.isAuthorized === true ? { allow: true, context } : { allow: false }
  const statements = (a.policyDocument as { Statement?: unknown } | undefined)?.Statement
  const list = (Array.isArray(statements) ? statements : statements ? [statements] : []) as Record<string, unknown>[]
  const arr = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)])
  const glob = (p: string, s: string) => new RegExp(`^${p.split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(s)
  const applies = (st: Record<string, unknown>) => arr(st.Action).some((x) => glob(x, 'execute-api:Invoke')) && arr(st.Resource).some((x) => glob(x, routeArn))
  if (list.some((st) => st.Effect === 'Deny' && applies(st))) return { allow: false }
  return list.some((st) => st.Effect === 'Allow' && applies(st)) ? { allow: true, context } : { allow: false }
}
