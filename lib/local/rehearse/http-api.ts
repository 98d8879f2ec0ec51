/**
 * The rehearsal's HTTP API: serves the routes read from the templates
 * (lib/core/rehearse/http-api.ts) as API Gateway's HTTP API does, with the
 * local gateway's route selection and payload format 2.0 events, invoking
 * the functions through the function host: the route's Lambda authorizer
 * first (401 when an identity source is missing, 403 on a denial, 500 when
 * it fails; its result cached for its TTL by identity), then the route's
 * function (500 when it fails).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { APIGatewayProxyEventV2 } from 'aws-lambda'
import { authorizerCacheKey, authorizerVerdict, identityValues, type ApiRoute, type Verdict } from '../../core/rehearse/http-api'
import { authorizerEvent, compileRouteKeys, errorResponse, selectRoute, toEvent, writeResult } from '../gateway'
import type { FunctionHost } from './functions'
import { boundedBody } from '../listen'

export interface RehearsalApi {
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

export interface RehearsalApiOptions {
  readonly routes: readonly ApiRoute[]
  readonly host: Pick<FunctionHost, 'invoke'>
  readonly port?: number
  /** The clock of the authorizer cache (ms). */
  readonly now?: () => number
  readonly log?: (line: string) => void
}

/** API Gateway's HTTP API payload limit. */
const MAX_BODY = 10 * 1024 * 1024

export async function startRehearsalApi(o: RehearsalApiOptions): Promise<RehearsalApi> {
  const byKey = new Map(o.routes.map((r) => [r.routeKey, r]))
  const table = compileRouteKeys(o.routes.map((r) => ({ routeKey: r.routeKey, fn: r.routeKey })))
  const now = o.now ?? Date.now
  const log = o.log ?? (() => {})
  const cache = new Map<string, { until: number; verdict: Verdict }>()

  /** The authorizer's verdict for a route's event, or the answer API Gateway gives instead. */
  async function authorize(route: ApiRoute, event: APIGatewayProxyEventV2): Promise<Verdict | { status: number; message: string }> {
    const a = route.authorizer!
    const identity = identityValues(a.identitySources, event as unknown as Parameters<typeof identityValues>[1])
    if ('missing' in identity) return { status: 401, message: 'Unauthorized' }
    const key = authorizerCacheKey(a, identity.values)
    const hit = key === undefined ? undefined : cache.get(key)
    if (hit && hit.until > now()) return hit.verdict
    const routeArn = `${route.arnStem}/${event.requestContext.http.method}${event.rawPath}`
    const r = await o.host.invoke(a.function, { ...authorizerEvent(event), routeArn, identitySource: identity.values })
    if (!r.ok) {
      log(`${a.function} (authorizer of ${route.routeKey}): ${r.error.errorType}: ${r.error.errorMessage}`)
      return { status: 500, message: 'Internal Server Error' }
    }
    const verdict = authorizerVerdict(r.result, a.simpleResponses, routeArn)
    if (key !== undefined) cache.set(key, { until: now() + a.ttlSeconds * 1000, verdict })
    return verdict
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!
    boundedBody(req, MAX_BODY, async (size, body) => {
      try {
        if (size > MAX_BODY) return errorResponse(res, 413, 'Request Entity Too Large')
        const selected = selectRoute(table, req.method ?? 'GET', path)
        if (!selected) return errorResponse(res, 404, 'Not Found')
        const route = byKey.get(selected.fn)!
        const event = toEvent(req, body, route.routeKey, selected.params, now())
        if (route.authorizer) {
          const v = await authorize(route, event)
          if ('status' in v) return errorResponse(res, v.status, v.message)
          if (!v.allow) return errorResponse(res, 403, 'Forbidden')
          ;(event.requestContext as { authorizer?: unknown }).authorizer = { lambda: v.context }
        }
        const r = await o.host.invoke(route.function, event)
        if (!r.ok) {
          log(`${route.function} (${route.routeKey}): ${r.error.errorType}: ${r.error.errorMessage}`)
          return errorResponse(res, 500, 'Internal Server Error')
        }
        writeResult(res, r.result)
      } catch (err) {
        log(`${req.method} ${path}: ${String((err as Error)?.stack ?? err)}`)
        if (!res.headersSent) errorResponse(res, 500, 'Internal Server Error')
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
