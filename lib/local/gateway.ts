import { decodeHeaderValue } from '../http/headers'
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda'
import { functions, httpAuthorizer, type FunctionDecl, type FunctionKey, type RouteDecl } from '../infra/functions'
import { parseQuery } from '../http/apigateway'
import { ACCEPTS_STREAMED_BODY, streamedBodyOf } from '../http/streamed-body'
import { invoke, InvocationTimeoutError } from './handlers'
import { countExchange } from './metrics'
import { ACME_CHALLENGE_PREFIX } from '../core/https/rules'
import { boundedBody } from './listen'

interface CompiledRoute<F extends string = FunctionKey> {
  readonly routeKey: string
  readonly method: string
  readonly segments: readonly string[]
  readonly greedy: boolean
  readonly fn: F
}

/** A route table: the routes, and what `$default` reaches. */
export interface RouteTable<F extends string = FunctionKey> {
  readonly routes: readonly CompiledRoute<F>[]
  readonly fallback?: F
}

/** A route table from route keys (`GET /health`, `ANY /x/{proxy+}`, `$default`) and what each reaches. */
export function compileRouteKeys<F extends string>(entries: readonly { readonly routeKey: string; readonly fn: F }[]): RouteTable<F> {
  const routes: CompiledRoute<F>[] = []
  let fallback: F | undefined
  for (const { routeKey, fn } of entries) {
    if (routeKey === '$default') {
      if (fallback !== undefined && fallback !== fn) throw new Error(`Both ${fallback} and ${fn} declare the $default route`)
      fallback = fn
      continue
    }
    const space = routeKey.indexOf(' ')
    const method = routeKey.slice(0, space)
    const segments = routeKey.slice(space + 1).split('/').filter(Boolean)
    routes.push({ routeKey, method, segments, greedy: segments.at(-1)?.endsWith('+}') ?? false, fn })
  }
  return fallback === undefined ? { routes } : { routes, fallback }
}

/** The routes of every declared function, as the HTTP API would have them. */
export function compileRoutes(): RouteTable {
  const entries: { routeKey: string; fn: FunctionKey }[] = []
  for (const [fn, decl] of Object.entries(functions) as [FunctionKey, { routes?: readonly RouteDecl[] }][]) {
    for (const r of decl.routes ?? []) entries.push({ routeKey: r === '$default' ? '$default' : `${r.method} ${r.path}`, fn })
  }
  return compileRouteKeys(entries)
}

function matchRoute<F extends string>(route: CompiledRoute<F>, parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {}
  const segs = route.segments
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!
    if (seg.endsWith('+}')) {
      if (i >= parts.length) return undefined
      params[seg.slice(1, -2)] = parts.slice(i).join('/')
      return params
    }
    if (i >= parts.length) return undefined
    if (seg.startsWith('{')) params[seg.slice(1, -1)] = parts[i]!
    else if (seg !== parts[i]) return undefined
  }
  return parts.length === segs.length ? params : undefined
}

/**
 * API Gateway HTTP API route selection: the most specific path wins (literal
 * segments over variables, greedy variables last), a method-specific route over
 * `ANY`, and `$default` when nothing matches.
 */
export function selectRoute<F extends string = FunctionKey>(
  table: RouteTable<F>,
  method: string,
  path: string,
): { fn: F; routeKey: string; params?: Record<string, string> } | undefined {
  const parts = path.split('/').filter(Boolean)
  let best: { route: CompiledRoute<F>; params: Record<string, string>; score: number[] } | undefined
  for (const route of table.routes) {
    if (route.method !== 'ANY' && route.method !== method) continue
    const params = matchRoute(route, parts)
    if (!params) continue
    const score = [
      route.greedy ? 0 : 1,
      ...route.segments.map((s) => (s.startsWith('{') ? 0 : 1)),
      route.method === 'ANY' ? 0 : 1,
    ]
    if (!best || compareScores(score, best.score) > 0) best = { route, params, score }
  }
  if (best) return { fn: best.route.fn, routeKey: best.route.routeKey, params: best.params }
  if (table.fallback) return { fn: table.fallback, routeKey: '$default' }
  return undefined
}

function compareScores(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -1) - (b[i] ?? -1)
    if (d !== 0) return d
  }
  return 0
}

const TEXT_TYPES = /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded|[\w.+-]+\+(json|xml)))/i

/** Builds the payload format 2.0 event API Gateway would send for this request. */
export function toEvent(req: IncomingMessage, body: Buffer, routeKey: string, params: Record<string, string> | undefined, now: number, secure = false): APIGatewayProxyEventV2 {
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const rawPath = q < 0 ? url : url.slice(0, q)
  const rawQueryString = q < 0 ? '' : url.slice(q + 1)
  const headers: Record<string, string> = {}
  const cookies: string[] = []
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase()
    // API Gateway passes UTF-8 header bytes on as UTF-8 text; Node reads them as Latin-1.
    const value = decodeHeaderValue(req.rawHeaders[i + 1]!)
    if (name === 'cookie') {
      cookies.push(...value.split(';').map((c) => c.trim()).filter(Boolean))
      continue
    }
    headers[name] = name in headers ? `${headers[name]},${value}` : value
  }
  // Over TLS, as API Gateway says it: the pages' cross-site check then compares https:// origins.
  if (secure) headers['x-forwarded-proto'] = 'https'
  const query = parseQuery(rawQueryString)
  const isText = body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? '')
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '')
  const host = headers.host ?? 'localhost'
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: host,
      domainPrefix: host.split('.')[0]!,
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    isBase64Encoded: !isText,
  }
  if (cookies.length) event.cookies = cookies
  if (Object.keys(query).length) event.queryStringParameters = query
  if (params && Object.keys(params).length) event.pathParameters = params
  if (body.length) event.body = isText ? body.toString('utf8') : body.toString('base64')
  return event
}

/**
 * Writes a streamed body (see `../http/streamed-body.ts`) chunk by chunk,
 * each after the client has taken the one before, so an answer of any size
 * holds one chunk in memory. A client that goes away ends the stream (its
 * source stops reading); a stream that fails after the head was sent breaks
 * the connection, so the client never takes a cut answer for a whole one.
 */
async function writeStreamed(res: ServerResponse, stream: AsyncIterable<string>): Promise<void> {
  try {
    for await (const chunk of stream) {
      if (res.destroyed) break
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go)
            res.off('close', go)
            resolve()
          }
          res.on('drain', go)
          res.on('close', go)
        })
      }
    }
    res.end()
  } catch (err) {
    res.destroy(err as Error)
  }
}

/** Writes a Lambda result back as API Gateway does for payload format 2.0. */
export async function writeResult(res: ServerResponse, result: unknown): Promise<void> {
  if (result === null || typeof result !== 'object' || !('statusCode' in (result as object))) {
    // A bare value: API Gateway answers 200 with it as a JSON body.
    const body = typeof result === 'string' ? result : JSON.stringify(result ?? null)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(body)
    return
  }
  const r = result as { statusCode: number; headers?: Record<string, string | number | boolean>; multiValueHeaders?: Record<string, string[]>; cookies?: string[]; body?: string; isBase64Encoded?: boolean }
  const headers: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(v)
  for (const [k, v] of Object.entries(r.multiValueHeaders ?? {})) headers[k.toLowerCase()] = v.join(',')
  if (r.cookies?.length) headers['set-cookie'] = r.cookies
  const streamed = streamedBodyOf(result)
  if (streamed !== undefined) {
    res.writeHead(r.statusCode, headers) // chunked: the length is not known yet
    return writeStreamed(res, streamed)
  }
  const body = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body, r.isBase64Encoded ? 'base64' : 'utf8')
  headers['content-length'] = String(body.length)
  res.writeHead(r.statusCode, headers)
  res.end(body)
}

export function errorResponse(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ message })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
  res.end(body)
}

/**
 * The Lambda authorizer's request (payload format 2.0, no identity source)
 * for a route event, as API Gateway builds it.
 */
export function authorizerEvent(event: APIGatewayProxyEventV2): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:us-east-1:000000000000:local/$default/${event.requestContext.http.method}${event.rawPath}`,
    identitySource: [],
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    cookies: event.cookies ?? [],
    headers: event.headers,
    queryStringParameters: event.queryStringParameters ?? {},
    requestContext: event.requestContext as APIGatewayRequestAuthorizerEventV2['requestContext'],
    pathParameters: event.pathParameters ?? {},
    stageVariables: {},
  }
}

/**
 * Runs the declared authorizer for a route of a function with `auth: 'basic'`
 * as API Gateway does with simple responses: a denial is 403, a failure 500,
 * and an authorization passes its context to the function.
 */
async function authorizeRoute(fn: FunctionKey, event: APIGatewayProxyEventV2, log: (line: string) => void): Promise<{ status: number; message: string } | undefined> {
  if ((functions[fn] as FunctionDecl).auth !== 'basic') return undefined
  let answer: { isAuthorized?: boolean; context?: Record<string, unknown> }
  try {
    answer = (await invoke(httpAuthorizer.function, authorizerEvent(event))) as typeof answer
  } catch (err) {
    // API Gateway answers a failed authorizer with a bare 500; the reason goes to the stack's log
    log(`${httpAuthorizer.function} (for ${fn}): ${err instanceof InvocationTimeoutError ? err.message : String((err as Error)?.stack ?? err)}`)
    return { status: 500, message: 'Internal Server Error' }
  }
  if (answer?.isAuthorized !== true) return { status: 403, message: 'Forbidden' }
  ;(event.requestContext as { authorizer?: unknown }).authorizer = { lambda: answer.context ?? {} }
  return undefined
}

/** API Gateway's HTTP API payload limit. */
const MAX_BODY = 10 * 1024 * 1024

export interface Gateway {
  readonly url: string
  readonly server: Server
  /** Serves one request as the HTTP port does; `secure` for a request that came over TLS. */
  handle(req: IncomingMessage, res: ServerResponse, secure: boolean): void
  close(): Promise<void>
}

/** What the HTTPS of the stack adds to the gateway (lib/local/https). */
export interface GatewayTls {
  /** The key authorization of an ACME HTTP-01 token, or undefined. */
  challenge(token: string): string | undefined
  /** The origin (`https://domain[:port]`) pages and APIs on plain HTTP move to, while HTTPS serves. */
  secureOrigin(): string | undefined
}

/** Functions that keep answering on plain HTTP once HTTPS serves: trackers configured with http:// keep their events; monitors keep /health. */
const PLAIN_HTTP_FUNCTIONS: ReadonlySet<FunctionKey> = new Set(['collector', 'health'] as FunctionKey[])

function plainText(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store', ...headers })
  res.end(body)
}

/**
 * An HTTP server that serves the declared routes the way API Gateway's HTTP
 * API does: each request becomes a payload format 2.0 event for the same
 * handler the CDK app deploys, and the handler's result is written back.
 */
export async function startGateway(opts: { host?: string; port?: number; log?: (l: string) => void; tls?: GatewayTls; invoke?: (fn: FunctionKey, event: unknown) => Promise<unknown> } = {}): Promise<Gateway> {
  const table = compileRoutes()
  // the stack passes its own: functions it runs in a worker thread are invoked there
  const call = opts.invoke ?? invoke
  const log = opts.log ?? (() => {})
  const handle = (req: IncomingMessage, res: ServerResponse, secure: boolean) => {
    const url = req.url ?? '/'
    const path = url.split('?')[0]!
    // ACME's HTTP-01 challenge: open (no basic authentication), GET only, nothing but the tokens answered.
    if (opts.tls && path.startsWith(ACME_CHALLENGE_PREFIX)) {
      req.resume()
      const token = path.slice(ACME_CHALLENGE_PREFIX.length)
      const answer = req.method === 'GET' || req.method === 'HEAD' ? (/^[\w-]{1,256}$/.test(token) ? opts.tls.challenge(token) : undefined) : undefined
      if (answer === undefined) return plainText(res, 404, 'no such ACME challenge\n')
      return plainText(res, 200, answer)
    }
    const origin = secure ? undefined : opts.tls?.secureOrigin()
    if (origin !== undefined) {
      const route = selectRoute(table, req.method ?? 'GET', path)
      if (route && !PLAIN_HTTP_FUNCTIONS.has(route.fn)) {
        req.resume()
        // 308 keeps the method and body of API calls; pages are moved for good (301).
        const status = req.method === 'GET' || req.method === 'HEAD' ? 301 : 308
        const target = `${origin}${url.startsWith('/') ? url : '/'}`
        return plainText(res, status, `moved to ${target}\n`, { location: target })
      }
    }
    boundedBody(req, MAX_BODY, async (size, body) => {
      if (size > MAX_BODY) return errorResponse(res, 413, 'Request Entity Too Large')
      const route = selectRoute(table, req.method ?? 'GET', path)
      if (!route) return errorResponse(res, 404, 'Not Found')
      countExchange(route.fn, req, res, size) // bytes in and out, per function, for /metrics
      const event = toEvent(req, body, route.routeKey, route.params, Date.now(), secure)
      // this gateway writes a streamed body as it comes (API Gateway cannot: there the function collects it)
      Object.assign(event, { [ACCEPTS_STREAMED_BODY]: true })
      try {
        const refused = await authorizeRoute(route.fn, event, log)
        if (refused) return errorResponse(res, refused.status, refused.message)
        await writeResult(res, await call(route.fn, event))
      } catch (err) {
        if (err instanceof InvocationTimeoutError) {
          log(`${route.fn}: ${err.message}`)
          return errorResponse(res, 503, 'Service Unavailable')
        }
        log(`${route.fn}: ${String((err as Error)?.stack ?? err)}`)
        errorResponse(res, 500, 'Internal Server Error')
      }
    })
  }
  const server = createServer((req, res) => handle(req, res, false))
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  return {
    url: `http://${address}:${port}`,
    server,
    handle,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
