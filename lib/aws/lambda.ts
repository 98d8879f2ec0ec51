import middy from '@middy/core'
import type { ALBEvent, ALBResult, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { REALM } from '../core/auth/basic'
import { fromAlb, isAlbEvent, toAlb } from '../http/alb'
import { fromApiGatewayV2, toApiGatewayV2 } from '../http/apigateway'
import { acceptsStreamedBody, collectedResponse, STREAMED_BODY } from '../http/streamed-body'
import { crossSiteRefusalReason, type CrossSiteOptions } from '../http/cross-site'
import type { HttpHandler, HttpRequest, HttpResponse } from '../http/types'
import { text } from '../http/types'
import { unavailableReason, unavailableResponse } from '../http/unavailable'
import { checkRestarts } from '../runtime/restarts'
import { clients } from './clients'

export interface HttpLambdaOptions {
  /**
   * `basic`: the function is declared with `auth: 'basic'`; a request goes
   * through only with the authorizer's verdict that it is authenticated.
   * Without a verdict (a misconfigured route) it is refused too.
   */
  readonly auth?: 'basic'
  /**
   * With `auth: 'basic'` every request that changes state (any method but GET,
   * HEAD and OPTIONS, and GET on `stateChangingGets`) sent by a browser from
   * another origin is refused with 403 (see `../http/cross-site.ts`): basic
   * credentials are sent by the browser itself. `refusal` gives the 403 in the
   * function's own error shape (plain text by default).
   */
  readonly crossSite?: CrossSiteOptions & { readonly refusal?: (req: HttpRequest, status: 403, message: string) => HttpResponse }
}

/** The default answer to a refused cross-site request: plain text, never cached. */
export function crossSiteRefusal(_req: HttpRequest, status: 403, message: string): HttpResponse {
  return text(status, `${message}\n`, { 'cache-control': 'no-store' })
}

type AuthorizerVerdict = { authenticated?: unknown; username?: unknown; retryAfter?: unknown; reason?: unknown; detail?: unknown }

/** The username in the authorizer's verdict, or undefined. */
function verdictUser(event: APIGatewayProxyEventV2): string | undefined {
  const u = (event.requestContext as { authorizer?: { lambda?: AuthorizerVerdict } } | undefined)?.authorizer?.lambda?.username
  return typeof u === 'string' && u !== '' ? u : undefined
}

/** The answer to a request the authorizer did not authenticate, or undefined when it did. */
export function basicAuthRefusal(event: APIGatewayProxyEventV2): HttpResponse | undefined {
  const verdict = (event.requestContext as { authorizer?: { lambda?: AuthorizerVerdict } }).authorizer?.lambda
  if (verdict?.authenticated === true || verdict?.authenticated === 'true') return undefined
  if (verdict?.reason === 'unavailable') return unavailableResponse(`the credentials cannot be checked: ${String(verdict.detail ?? 'the settings table is unavailable')}`)
  const retryAfter = Number(verdict?.retryAfter)
  if (verdict?.reason === 'throttled' && retryAfter > 0) {
    return text(429, `Too many failed sign-ins with this username from this address: try again in ${retryAfter} seconds.\n`, { 'retry-after': String(retryAfter), 'cache-control': 'no-store' })
  }
  if (verdict?.reason === 'busy' && retryAfter > 0) {
    return text(429, `Too many sign-ins are being checked right now: try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.\n`, { 'retry-after': String(retryAfter), 'cache-control': 'no-store' })
  }
  const why = verdict?.reason === 'wrong' ? 'The username or password is wrong.' : verdict?.reason === 'malformed' ? 'The Authorization header is not HTTP basic authentication.' : 'This page needs the Floe username and password.'
  return text(401, `${why}\n${PASSWORD_SOURCE}\n`, { 'www-authenticate': `Basic realm="${REALM}", charset="UTF-8"`, 'cache-control': 'no-store' })
}

/** Where the password comes from, in every 401 answer. */
export const PASSWORD_SOURCE =
  "The password is the one set with FLOE_PASSWORD at the first start, or the one generated then and shown on the terminal of 'npm start' (it is written to no log). " +
  "'npx floe credentials reset' sets a new one and shows it (add --stack <name> for a deployment on AWS)."

type LambdaEvent = APIGatewayProxyEventV2 | ALBEvent
type LambdaResult = APIGatewayProxyStructuredResultV2 | ALBResult
type Request = middy.Request<LambdaEvent, LambdaResult>
type Middleware = middy.MiddlewareObj<LambdaEvent, LambdaResult>

/** The answer in the shape of the event that came (ALB: multi-value headers; API Gateway and function URLs: payload 2.0). */
const inShapeOf = (event: LambdaEvent) => (isAlbEvent(event) ? toAlb : toApiGatewayV2)

/** The transport-neutral request of an event, with the authorizer's username when there is one (read once per event). */
const requests = new WeakMap<LambdaEvent, HttpRequest>()
function requestOf(event: LambdaEvent, auth: HttpLambdaOptions['auth']): HttpRequest {
  let req = requests.get(event)
  if (req === undefined) {
    const alb = isAlbEvent(event)
    const plain = alb ? fromAlb(event) : fromApiGatewayV2(event)
    const user = auth === 'basic' && !alb ? verdictUser(event) : undefined
    req = user !== undefined ? { ...plain, user } : plain
    requests.set(event, req)
  }
  return req
}

/** Refuses what the authorizer did not authenticate; only the HTTP API's authorizer gives a verdict, any other ingress is refused. */
const basicAuthGate = (): Middleware => ({
  before: (r: Request) => {
    const event = r.event
    const refusal = basicAuthRefusal(isAlbEvent(event) ? ({ requestContext: {} } as APIGatewayProxyEventV2) : event)
    return refusal === undefined ? undefined : inShapeOf(event)(refusal)
  },
})

/** Refuses a state change a browser sent from another origin (see `../http/cross-site.ts`). */
const crossSiteGuard = (opts: HttpLambdaOptions): Middleware => ({
  before: (r: Request) => {
    const req = requestOf(r.event, opts.auth)
    const why = crossSiteRefusalReason(req, opts.crossSite)
    return why === undefined ? undefined : inShapeOf(r.event)((opts.crossSite?.refusal ?? crossSiteRefusal)(req, 403, why))
  },
})

/** Applies restarts ordered by the control plane (reads the generations at most every few seconds; never delays the request). */
const restartCheck = (): Middleware => ({
  before: () => {
    void checkRestarts(() => clients().ddb)
  },
})

/** A dependency that cannot be reached is a 503 with `Retry-After`; anything else a 500 whose detail goes only to the log. */
const errorEnvelope = (): Middleware => ({
  onError: (r: Request) => {
    const path = isAlbEvent(r.event) ? r.event.path : r.event.rawPath
    const unavailable = unavailableReason(r.error)
    if (unavailable !== undefined) {
      console.error(JSON.stringify({ level: 'warn', msg: 'dependency unavailable', path, error: unavailable }))
      r.response = inShapeOf(r.event)(unavailableResponse(unavailable))
      return
    }
    console.error(JSON.stringify({ level: 'error', msg: 'unhandled error', path, error: String((r.error as Error)?.stack ?? r.error) }))
    r.response = inShapeOf(r.event)({ statusCode: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Internal server error' }) })
  },
})

/**
 * Wraps a transport-neutral HTTP handler as a Lambda handler for the three
 * ingresses: an API Gateway HTTP API (payload 2.0), a Lambda function URL (the
 * same payload) and an Application Load Balancer target (multi-value headers).
 * The cross-cutting parts are middy middlewares, in this order: the error
 * envelope (503 for an unreachable dependency, 500 otherwise), then, behind
 * basic authentication, the authorizer's verdict and the cross-site refusal,
 * then the restart check; the handler itself sees only an `HttpRequest`.
 */
export function httpLambda(handler: HttpHandler, opts: HttpLambdaOptions = {}) {
  const m = middy<LambdaEvent, LambdaResult>().use(errorEnvelope())
  if (opts.auth === 'basic') m.use(basicAuthGate()).use(crossSiteGuard(opts))
  return m.use(restartCheck()).handler(async (event) => {
    const res = await handler(requestOf(event, opts.auth))
    if (res.stream !== undefined && acceptsStreamedBody(event)) {
      const { stream, ...rest } = res
      return Object.assign(inShapeOf(event)({ ...rest, body: '' }), { [STREAMED_BODY]: stream })
    }
    return inShapeOf(event)(await collectedResponse(res))
  })
}
