import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import type { HttpRequest, HttpResponse } from './types'

/** Decodes a raw query string as API Gateway does: a repeated parameter's values joined with `,`. */
export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!raw) return out
  for (const part of raw.split('&')) {
    if (!part) continue
    const eq = part.indexOf('=')
    const k = eq < 0 ? part : part.slice(0, eq)
    const v = eq < 0 ? '' : part.slice(eq + 1)
    const key = safeDecode(k)
    const value = safeDecode(v)
    out[key] = key in out ? `${out[key]},${value}` : value
  }
  return out
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '))
  } catch {
    return s
  }
}

/** Turns an API Gateway HTTP API (payload format 2.0) event into an HttpRequest. */
export function fromApiGatewayV2(event: APIGatewayProxyEventV2, params: Record<string, string> = {}): HttpRequest {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v
  const body = event.body
    ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
    : Buffer.alloc(0)
  const rawQuery = event.rawQueryString ?? ''
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    headers,
    query: parseQuery(rawQuery),
    rawQuery,
    cookies: event.cookies ?? [],
    body,
    sourceIp: event.requestContext.http.sourceIp,
    params: { ...(event.pathParameters as Record<string, string> | undefined), ...params },
    timeEpochMs: event.requestContext.timeEpoch,
  }
}

/** Turns an HttpResponse into the structured result API Gateway expects. */
export function toApiGatewayV2(res: HttpResponse): APIGatewayProxyStructuredResultV2 {
  const out: APIGatewayProxyStructuredResultV2 = {
    statusCode: res.statusCode,
    headers: { ...res.headers },
  }
  if (res.cookies && res.cookies.length > 0) out.cookies = [...res.cookies]
  if (Buffer.isBuffer(res.body)) {
    out.body = res.body.toString('base64')
    out.isBase64Encoded = true
  } else {
    out.body = res.body ?? ''
    out.isBase64Encoded = false
  }
  return out
}
