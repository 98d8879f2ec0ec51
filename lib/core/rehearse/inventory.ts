/**
 * The functions of a cloud assembly as the templates declare them, with
 * everything needed to run one as AWS would: its handler, runtime, memory,
 * timeout, bundle, role and environment (intrinsics resolved), the event
 * source mappings that invoke it, and the HTTP API routes that reach it
 * (with their authorizer). Outcomes as data: what cannot be resolved is
 * listed in `problems`.
 */
import type { AssemblyResolver } from './resolve'
import { functionRole } from './roles'
import type { AssemblyStack, TemplateResource } from './template'

/** Lambda's defaults when the template says nothing. */
export const LAMBDA_DEFAULTS = { memoryMb: 128, timeoutSeconds: 3 } as const

export interface Trigger {
  readonly logicalId: string
  /** The source's ARN. */
  readonly source: string
  readonly kind: 'kinesis' | 'dynamodb' | 'sqs' | 'other'
  readonly enabled: boolean
  readonly batchSize?: number
  readonly maxBatchingWindowSeconds?: number
  readonly startingPosition?: string
  readonly bisectOnError: boolean
  readonly reportBatchItemFailures: boolean
  readonly parallelizationFactor?: number
  readonly maxRetryAttempts?: number
  readonly maxRecordAgeSeconds?: number
  /** Where records that fail every retry go (an ARN). */
  readonly onFailure?: string
}

export interface Route {
  readonly logicalId: string
  /** `GET /health`, `$default`… */
  readonly routeKey: string
  readonly payloadFormat?: string
  readonly authorizationType: string
  /** The ARN API Gateway invokes the function with (`aws:SourceArn`): `arn:aws:execute-api:<region>:<account>:<api>/<stage>/<method>/<path>`. */
  readonly sourceArn: string
  /** The Lambda authorizer in front of the route, when it has one (`sourceArn`: `…:<api>/authorizers/<id>`). */
  readonly authorizer?: { readonly logicalId: string; readonly function?: string; readonly payloadFormat?: string; readonly simpleResponses: boolean; readonly ttlSeconds: number; readonly sourceArn: string }
}

export interface FunctionInventory {
  readonly stack: string
  readonly logicalId: string
  /** Its physical name and ARN (local). */
  readonly name: string
  readonly arn: string
  readonly handler?: string
  readonly runtime?: string
  readonly memoryMb: number
  readonly timeoutSeconds: number
  /** The bundle's directory in the assembly (`asset.<hash>`). */
  readonly assetPath?: string
  /** The logical ID of its role, in the same stack. */
  readonly role?: string
  readonly environment: Readonly<Record<string, string>>
  readonly triggers: readonly Trigger[]
  readonly routes: readonly Route[]
  readonly problems: readonly string[]
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined)
const bool = (v: unknown): boolean => v === true || v === 'true'

/** The function ARN inside an API Gateway integration URI (`…/functions/<arn>/invocations`), or the URI itself. */
export function invokedFunctionArn(uri: string): string {
  return /\/functions\/(arn:[^/]+)\/invocations$/.exec(uri)?.[1] ?? uri
}

export function functionInventory(stacks: readonly AssemblyStack[], resolver: AssemblyResolver): FunctionInventory[] {
  // every function of the assembly by the names and ARNs that can designate it
  const byKey = new Map<string, { stack: string; id: string }>()
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::Lambda::Function') continue
      const p = resolver.physical(s.name, id)
      if (p) for (const k of [p.ref, p.attributes.Arn]) if (k) byKey.set(k, { stack: s.name, id })
    }
  }
  const key = (stack: string, id: string) => `${stack}\0${id}`
  const triggers = new Map<string, Trigger[]>()
  const routes = new Map<string, Route[]>()
  const push = <T>(m: Map<string, T[]>, k: string, v: T) => m.set(k, [...(m.get(k) ?? []), v])
  const target = (stack: string, value: unknown): { stack: string; id: string } | undefined => {
    const r = resolver.resolve(stack, value)
    return r.ok && typeof r.value === 'string' ? byKey.get(invokedFunctionArn(r.value)) : undefined
  }

  for (const s of stacks) {
    const resources = Object.entries(s.template.Resources ?? {})
    const str = (v: unknown): string | undefined => { const r = resolver.resolve(s.name, v); return r.ok && typeof r.value === 'string' ? r.value : undefined }

    for (const [id, r] of resources) {
      if (r.Type !== 'AWS::Lambda::EventSourceMapping') continue
      const p = r.Properties ?? {}
      const fn = target(s.name, p.FunctionName)
      const source = str(p.EventSourceArn)
      if (!fn || source === undefined) continue
      const service = source.split(':')[2]
      const onFailure = str((p.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure?.Destination)
      push(triggers, key(fn.stack, fn.id), {
        logicalId: id,
        source,
        kind: service === 'kinesis' || service === 'dynamodb' || service === 'sqs' ? service : 'other',
        enabled: p.Enabled === undefined || bool(p.Enabled),
        ...(num(p.BatchSize) !== undefined ? { batchSize: num(p.BatchSize)! } : {}),
        ...(num(p.MaximumBatchingWindowInSeconds) !== undefined ? { maxBatchingWindowSeconds: num(p.MaximumBatchingWindowInSeconds)! } : {}),
        ...(typeof p.StartingPosition === 'string' ? { startingPosition: p.StartingPosition } : {}),
        bisectOnError: bool(p.BisectBatchOnFunctionError),
        reportBatchItemFailures: Array.isArray(p.FunctionResponseTypes) && p.FunctionResponseTypes.includes('ReportBatchItemFailures'),
        ...(num(p.ParallelizationFactor) !== undefined ? { parallelizationFactor: num(p.ParallelizationFactor)! } : {}),
        ...(num(p.MaximumRetryAttempts) !== undefined ? { maxRetryAttempts: num(p.MaximumRetryAttempts)! } : {}),
        ...(num(p.MaximumRecordAgeInSeconds) !== undefined ? { maxRecordAgeSeconds: num(p.MaximumRecordAgeInSeconds)! } : {}),
        ...(onFailure !== undefined ? { onFailure } : {}),
      })
    }

    // HTTP API: route → integration → function, and the route's authorizer
    const byRef = (type: string) => {
      const m = new Map<string, { id: string; r: TemplateResource }>()
      for (const [id, r] of resources) {
        const ref = r.Type === type ? resolver.physical(s.name, id)?.ref : undefined
        if (ref !== undefined) m.set(ref, { id, r })
      }
      return m
    }
    const integrations = byRef('AWS::ApiGatewayV2::Integration')
    const stageOf = new Map<string, string>()
    for (const [, r] of resources) {
      const api = r.Type === 'AWS::ApiGatewayV2::Stage' ? str(r.Properties?.ApiId) : undefined
      const name = str(r.Properties?.StageName)
      if (api !== undefined && name !== undefined && !stageOf.has(api)) stageOf.set(api, name)
    }
    const place = resolver.place(s.name)
    const executeApi = (api: string, rest: string) => `arn:${place.partition}:execute-api:${place.region}:${place.account}:${api}/${rest}`
    const authorizers = byRef('AWS::ApiGatewayV2::Authorizer')
    for (const [id, r] of resources) {
      if (r.Type !== 'AWS::ApiGatewayV2::Route') continue
      const p = r.Properties ?? {}
      const integrationRef = str(p.Target)?.replace(/^integrations\//, '')
      const integration = integrationRef === undefined ? undefined : integrations.get(integrationRef)
      const fn = integration ? target(s.name, integration.r.Properties?.IntegrationUri) : undefined
      if (!fn) continue
      const api = str(p.ApiId) ?? ''
      const stage = stageOf.get(api) ?? '$default'
      const routeKey = String(p.RouteKey)
      const [method, path] = routeKey === '$default' ? ['$default', ''] : [routeKey.split(' ')[0]!, routeKey.slice(routeKey.indexOf(' ') + 1).replace(/^\//, '')]
      const sourceArn = executeApi(api, method === '$default' ? `${stage}/$default` : `${stage}/${method}/${path}`)
      const authorizerRef = str(p.AuthorizerId)
      const auth = authorizerRef === undefined ? undefined : authorizers.get(authorizerRef)
      const ap: Record<string, unknown> = auth?.r.Properties ?? {}
      const authFn = auth ? target(s.name, ap.AuthorizerUri) : undefined
      push(routes, key(fn.stack, fn.id), {
        logicalId: id,
        routeKey,
        ...(typeof integration!.r.Properties?.PayloadFormatVersion === 'string' ? { payloadFormat: integration!.r.Properties.PayloadFormatVersion } : {}),
        authorizationType: typeof p.AuthorizationType === 'string' ? p.AuthorizationType : 'NONE',
        sourceArn,
        ...(auth ? {
          authorizer: {
            logicalId: auth.id,
            ...(authFn ? { function: authFn.id } : {}),
            ...(typeof ap.AuthorizerPayloadFormatVersion === 'string' ? { payloadFormat: ap.AuthorizerPayloadFormatVersion } : {}),
            simpleResponses: bool(ap.EnableSimpleResponses),
            ttlSeconds: num(ap.AuthorizerResultTtlInSeconds) ?? 300,
            sourceArn: executeApi(api, `authorizers/${authorizerRef}`),
          },
        } : {}),
      })
    }
  }

  const out: FunctionInventory[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {}) as [string, TemplateResource][]) {
      if (r.Type !== 'AWS::Lambda::Function') continue
      const p = r.Properties ?? {}
      const phys = resolver.physical(s.name, id)
      const own: string[] = []
      const env: Record<string, string> = {}
      const vars = resolver.resolve(s.name, (p.Environment as { Variables?: unknown } | undefined)?.Variables ?? {})
      if (!vars.ok) own.push(`environment: ${vars.problem}`)
      else for (const [k, v] of Object.entries(vars.value as Record<string, unknown>)) env[k] = typeof v === 'string' ? v : JSON.stringify(v)
      const role = functionRole(s.template, id)
      if (!role) own.push('no role of the stack found in Role')
      const asset = r.Metadata?.['aws:asset:path']
      out.push({
        stack: s.name,
        logicalId: id,
        name: phys?.ref ?? id,
        arn: phys?.attributes.Arn ?? '',
        ...(typeof p.Handler === 'string' ? { handler: p.Handler } : {}),
        ...(typeof p.Runtime === 'string' ? { runtime: p.Runtime } : {}),
        memoryMb: num(p.MemorySize) ?? LAMBDA_DEFAULTS.memoryMb,
        timeoutSeconds: num(p.Timeout) ?? LAMBDA_DEFAULTS.timeoutSeconds,
        ...(typeof asset === 'string' ? { assetPath: asset } : {}),
        ...(role ? { role } : {}),
        environment: env,
        triggers: triggers.get(key(s.name, id)) ?? [],
        routes: routes.get(key(s.name, id)) ?? [],
        problems: own,
      })
    }
  }
  return out
}
