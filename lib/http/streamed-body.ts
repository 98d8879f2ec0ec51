/**
 * Answers too large to build in memory (`/micro/good` over every stored
 * event): a handler gives `HttpResponse.stream`, the body's text in order,
 * produced as it is read. Where the caller can write a body as it comes (the
 * local gateway marks its events with `ACCEPTS_STREAMED_BODY`), the Lambda
 * wrapper hands the stream on under `STREAMED_BODY` and the gateway writes it
 * chunk by chunk, waiting for the client to take each one. A Lambda behind
 * API Gateway answers with one body of at most 6 MB: there the stream is
 * collected up to that size, and a larger answer is a `413` that says so.
 */
import type { HttpResponse } from './types'

/** Set (to `true`) on an event by a caller that writes a result's `STREAMED_BODY`. */
export const ACCEPTS_STREAMED_BODY = Symbol.for('floe.acceptsStreamedBody')
/** The result's body, to be written as it comes (the result's own `body` is then empty). */
export const STREAMED_BODY = Symbol.for('floe.streamedBody')

/** The largest body a Lambda response carries through API Gateway (6 MB for the whole response, headers included). */
export const LAMBDA_BODY_LIMIT = 6 * 1024 * 1024 - 64 * 1024

/** Whether the caller of `event` writes streamed bodies. */
export function acceptsStreamedBody(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as Record<symbol, unknown>)[ACCEPTS_STREAMED_BODY] === true
}

/** The streamed body a result carries, if any. */
export function streamedBodyOf(result: unknown): AsyncIterable<string> | undefined {
  return typeof result === 'object' && result !== null ? ((result as Record<symbol, unknown>)[STREAMED_BODY] as AsyncIterable<string> | undefined) : undefined
}

/**
 * A response whose body is whole: a streamed one collected up to `limit`
 * bytes, or a `413` saying the answer is larger than a response can carry
 * (the stream is then closed, so nothing more is read).
 */
export async function collectedResponse(res: HttpResponse, limit = LAMBDA_BODY_LIMIT): Promise<HttpResponse> {
  if (res.stream === undefined) return res
  const parts: string[] = []
  let bytes = 0
  for await (const chunk of res.stream) {
    bytes += Buffer.byteLength(chunk)
    if (bytes > limit) {
      return {
        statusCode: 413,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: `The answer is larger than ${Math.floor(limit / 1024 / 1024)} MB, the most one response of this deployment can carry: ask for less (e.g. a "limit", or an "event_type" or "schema" filter)\n`,
      }
    }
    parts.push(chunk)
  }
  const { stream: _, ...rest } = res
  return { ...rest, body: parts.join('') }
}
