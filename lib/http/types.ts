/**
 * A transport-neutral HTTP request, as every Floe API sees it. Built from an
 * API Gateway HTTP API (payload 2.0) event by `fromApiGatewayV2`.
 */
export interface HttpRequest {
  /** Upper-case method, e.g. `GET`. */
  readonly method: string
  /** Raw path, percent-encoded as received, without the query string. */
  readonly path: string
  /** Header names in lower case; repeated headers joined with `,` as API Gateway does. */
  readonly headers: Readonly<Record<string, string>>
  /** Decoded query parameters; a repeated parameter keeps its values joined with `,`. */
  readonly query: Readonly<Record<string, string>>
  /** The raw query string (no leading `?`), percent-encoded as received. */
  readonly rawQuery: string
  /** Cookie header values, one `name=value` entry each. */
  readonly cookies: readonly string[]
  /** The body bytes; empty when there was none. */
  readonly body: Buffer
  /** The client address as API Gateway reports it. */
  readonly sourceIp: string
  /** Path parameters matched by the router (decoded). */
  readonly params: Readonly<Record<string, string>>
  /** Request time in epoch milliseconds as the gateway saw it. */
  readonly timeEpochMs: number
  /** On routes behind basic authentication: the username the authorizer authenticated. */
  readonly user?: string
}

export interface HttpResponse {
  readonly statusCode: number
  readonly headers?: Readonly<Record<string, string>>
  /** `Set-Cookie` values. */
  readonly cookies?: readonly string[]
  /** A string is sent as text; a Buffer is sent base64-encoded through API Gateway. */
  readonly body?: string | Buffer
  /** Instead of `body`: the body's text, produced as it is written (see `./streamed-body.ts`). */
  readonly stream?: AsyncIterable<string>
}

export type HttpHandler = (req: HttpRequest) => Promise<HttpResponse> | HttpResponse

/** Reads the body as UTF-8 text. */
export function bodyText(req: HttpRequest): string {
  return req.body.toString('utf8')
}

/** JSON response with the right content type. */
export function json(statusCode: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
  }
}

/** Plain-text response. */
export function text(statusCode: number, body: string, headers: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body }
}
