/**
 * The Application Load Balancer's Lambda target events, with multi-value headers
 * turned on for the target group (`lambda.multi_value_headers.enabled`), so that
 * repeated headers, query parameters and every `Set-Cookie` of an answer survive.
 * A request becomes the same `HttpRequest` an API Gateway HTTP API event gives:
 * lower-case headers with repeats joined by `,`, the `Cookie` header as `cookies`,
 * the raw query string (the load balancer passes it undecoded) and the client
 * address (the last `X-Forwarded-For` entry, the one the load balancer appended).
 */
import type { ALBEvent, ALBResult } from 'aws-lambda'
import { STATUS_CODES } from 'node:http'
import { parseQuery } from './apigateway'
import type { HttpRequest, HttpResponse } from './types'

export function isAlbEvent(event: unknown): event is ALBEvent {
  return typeof event === 'object' && event !== null && typeof (event as { requestContext?: { elb?: unknown } }).requestContext?.elb === 'object'
}

export function fromAlb(event: ALBEvent): HttpRequest {
  const multi: Record<string, string[]> = {}
  if (event.multiValueHeaders) {
    for (const [k, vs] of Object.entries(event.multiValueHeaders)) if (vs) (multi[k.toLowerCase()] ??= []).push(...vs)
  } else {
    for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) (multi[k.toLowerCase()] ??= []).push(v)
  }
  const cookies = (multi.cookie ?? []).flatMap((c) => c.split(';')).map((c) => c.trim()).filter((c) => c !== '')
  delete multi.cookie
  const headers: Record<string, string> = {}
  for (const [k, vs] of Object.entries(multi)) headers[k] = vs.join(',')
  const pairs: string[] = []
  if (event.multiValueQueryStringParameters) {
    for (const [k, vs] of Object.entries(event.multiValueQueryStringParameters)) for (const v of vs ?? []) pairs.push(v === '' ? k : `${k}=${v}`)
  } else {
    for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) pairs.push(v === '' || v === undefined ? k : `${k}=${v}`)
  }
  const rawQuery = pairs.join('&')
  const forwarded = (headers['x-forwarded-for'] ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  return {
    method: event.httpMethod.toUpperCase(),
    path: event.path,
    headers,
    query: parseQuery(rawQuery),
    rawQuery,
    cookies,
    body: event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0),
    sourceIp: forwarded.at(-1) ?? '',
    params: {},
    timeEpochMs: Date.now(),
  }
}

/** The answer in the multi-value shape the target group expects; each cookie its own `Set-Cookie`. */
export function toAlb(res: HttpResponse): ALBResult {
  const multiValueHeaders: Record<string, string[]> = {}
  for (const [k, v] of Object.entries(res.headers ?? {})) multiValueHeaders[k] = [String(v)]
  if (res.cookies && res.cookies.length > 0) multiValueHeaders['set-cookie'] = [...res.cookies]
  const binary = Buffer.isBuffer(res.body)
  return {
    statusCode: res.statusCode,
    statusDescription: `${res.statusCode} ${STATUS_CODES[res.statusCode] ?? ''}`.trim(),
    multiValueHeaders,
    body: binary ? (res.body as Buffer).toString('base64') : ((res.body as string | undefined) ?? ''),
    isBase64Encoded: binary,
  }
}
