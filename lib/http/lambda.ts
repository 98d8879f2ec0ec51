import middy from '@middy/core'
import type { ALBEvent, ALBResult, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { clients } from '../aws/clients'
import { REALM } from '../core/auth/basic'
import { checkRestarts } from '../runtime/restarts'
import { fromAlb, isAlbEvent, toAlb } from './alb'
import { fromApiGatewayV2, toApiGatewayV2 } from './apigateway'
import { crossSiteRefusalReason, type CrossSiteOptions } from './cross-site'
import type { HttpHandler, HttpRequest, HttpResponse } from './types'
import { text } from './types'
import { unavailableReason, unavailableResponse } from './unavailable'

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
   * another origin is refused with 403 (see `./cross-site.ts`): basic
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

/**
 * Wraps a transport-neutral HTTP handler as a Lambda handler for the three
 * ingresses: an API Gateway HTTP API (payload 2.0), a Lambda function URL (the
 * same payload) and an Application Load Balancer target (multi-value headers);
 * the answer goes back in the shape of the event that came. A dependency that
 * cannot be reached is a 503 with `Retry-After`; other unexpected errors become
 * a 500 with a generic message (the detail goes to the log, never to the
 * client). Restarts ordered by the control plane are applied before the request
 * is handled. Behind basic authentication, requests that change state are
 * refused when a browser sent them from another origin.
 */
export function httpLambda(handler: HttpHandler, opts: HttpLambdaOptions = {}) {
  return middy<APIGatewayProxyEventV2 | ALBEvent, APIGatewayProxyStructuredResultV2 | ALBResult>().handler(async (event) => {
    const alb = isAlbEvent(event)
    const answer = alb ? toAlb : toApiGatewayV2
    const path = alb ? event.path : event.rawPath
    try {
      if (opts.auth === 'basic') {
        // Only the HTTP API's authorizer gives a verdict: any other ingress is refused.
        const refusal = basicAuthRefusal(alb ? ({ requestContext: {} } as APIGatewayProxyEventV2) : event)
        if (refusal) return answer(refusal)
      }
      const plain = alb ? fromAlb(event) : fromApiGatewayV2(event)
      const user = opts.auth === 'basic' && !alb ? verdictUser(event) : undefined
      const req = user !== undefined ? { ...plain, user } : plain
      if (opts.auth === 'basic') {
        const crossSite = crossSiteRefusalReason(req, opts.crossSite)
        if (crossSite !== undefined) return answer((opts.crossSite?.refusal ?? crossSiteRefusal)(req, 403, crossSite))
      }
      void checkRestarts(() => clients().ddb)
      return answer(await handler(req))
    } catch (err) {
      const unavailable = unavailableReason(err)
      if (unavailable !== undefined) {
        console.error(JSON.stringify({ level: 'warn', msg: 'dependency unavailable', path, error: unavailable }))
        return answer(unavailableResponse(unavailable))
      }
      console.error(JSON.stringify({ level: 'error', msg: 'unhandled error', path, error: String((err as Error)?.stack ?? err) }))
      return answer({
        statusCode: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Internal server error' }),
      })
    }
  })
}
