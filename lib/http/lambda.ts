import middy from '@middy/core'
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { fromApiGatewayV2, toApiGatewayV2 } from './apigateway'
import type { HttpHandler } from './types'
import { unavailableReason, unavailableResponse } from './unavailable'

/**
 * Wraps a transport-neutral HTTP handler as an API Gateway HTTP API (payload
 * 2.0) Lambda handler. A dependency that cannot be reached is a 503 with
 * `Retry-After`; other unexpected errors become a 500 with a generic message
 * (the detail goes to the log, never to the client).
 */
export function httpLambda(handler: HttpHandler) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>().handler(async (event) => {
    try {
      return toApiGatewayV2(await handler(fromApiGatewayV2(event)))
    } catch (err) {
      const unavailable = unavailableReason(err)
      if (unavailable !== undefined) {
        console.error(JSON.stringify({ level: 'warn', msg: 'dependency unavailable', path: event.rawPath, error: unavailable }))
        return toApiGatewayV2(unavailableResponse(unavailable))
      }
      console.error(JSON.stringify({ level: 'error', msg: 'unhandled error', path: event.rawPath, error: String((err as Error)?.stack ?? err) }))
      return toApiGatewayV2({
        statusCode: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Internal server error' }),
      })
    }
  })
}
