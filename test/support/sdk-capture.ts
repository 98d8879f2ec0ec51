/**
 * The final HTTP request an SDK v3 client sends for a command (serialized,
 * signed, with every header), captured by a request handler that never
 * reaches the network, in the shape the request classifier reads.
 */
import type { AwsHttpRequest } from '../../lib/core/rehearse/requests'

/** The fields of the SDK's HttpRequest read here. */
interface HttpRequest {
  readonly method: string
  readonly hostname: string
  readonly port?: number
  readonly path: string
  readonly query?: Record<string, string | string[] | null | undefined>
  readonly headers: Record<string, string>
  readonly body?: unknown
}

class Captured extends Error {
  constructor(readonly request: HttpRequest) {
    super('captured')
  }
}

/** A request handler that records the request and fails the call. */
export const capturingHandler = {
  handle: async (request: HttpRequest): Promise<never> => {
    throw new Captured(request)
  },
  updateHttpClientConfig() {},
  httpHandlerConfigs: () => ({}),
}

async function bodyBytes(body: unknown): Promise<Uint8Array> {
  if (body === undefined || body === null) return new Uint8Array()
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
    const parts: Buffer[] = []
    for await (const c of body as AsyncIterable<Buffer | string>) parts.push(Buffer.from(c))
    return Buffer.concat(parts)
  }
  throw new Error(`unexpected body ${typeof body}`)
}

function queryString(q: HttpRequest['query']): string {
  return Object.entries(q ?? {})
    .flatMap(([k, v]) => (v === null || v === undefined ? [encodeURIComponent(k)] : (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(x)}`)))
    .join('&')
}

/** The request `client.send(command)` would put on the wire. */
export async function captureRequest(client: { send(c: any): Promise<unknown>; config: { requestHandler: unknown } }, command: unknown, secure = true): Promise<AwsHttpRequest> {
  client.config.requestHandler = capturingHandler
  try {
    await client.send(command)
  } catch (e) {
    if (!(e instanceof Captured)) throw e
    const r = e.request
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(r.headers)) headers[k.toLowerCase()] = String(v)
    const host = headers['host'] ?? (r.port ? `${r.hostname}:${r.port}` : r.hostname)
    return { method: r.method, host, path: r.path, query: queryString(r.query), headers, body: await bodyBytes(r.body), secure }
  }
  throw new Error('the command was not sent')
}
