/**
 * Failures of a dependency (a database, stream or bucket endpoint that cannot
 * be reached, times out or says it is unavailable) as opposed to defects:
 * they are answered 503 with `Retry-After`, so clients retry instead of
 * reporting an error.
 */
import type { HttpResponse } from './types'

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'])
const UNAVAILABLE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'ServiceUnavailable', 'ServiceUnavailableException', 'InternalServerError', 'InternalFailure', 'ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'SlowDown', 'DatabaseResumingException', 'DatabaseUnavailableException', 'DatabaseNotFoundException', 'StatementTimeoutException'])

/** Seconds a client should wait before retrying. */
export const RETRY_AFTER_SECONDS = 5

/** Whether an error means a dependency is unavailable (for now), with what failed. */
export function unavailableReason(err: unknown, depth = 0): string | undefined {
  if (err === null || typeof err !== 'object' || depth > 4) return undefined
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown; $metadata?: { httpStatusCode?: number } }
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return `${e.code}${typeof e.message === 'string' && e.message ? `: ${e.message}` : ''}`
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return String(e.message || e.name)
  if (typeof e.message === 'string' && /socket hang up|connect ECONNREFUSED|other side closed|Connection terminated|timeout exceeded when trying to connect/i.test(e.message)) return e.message
  const status = e.$metadata?.httpStatusCode
  if (typeof status === 'number' && (status === 503 || status === 502 || status === 504)) return `HTTP ${status}`
  if (Array.isArray(e.errors)) for (const x of e.errors) {
    const r = unavailableReason(x, depth + 1)
    if (r) return r
  }
  return unavailableReason(e.cause, depth + 1)
}

/** The 503 answer: a JSON body that is both the registry's `{message}` and the tracking-design envelope. */
export function unavailableResponse(reason: string): HttpResponse {
  const title = `A service this request needs is unavailable (${reason}); retry in ${RETRY_AFTER_SECONDS} seconds`
  return {
    statusCode: 503,
    headers: { 'content-type': 'application/json', 'retry-after': String(RETRY_AFTER_SECONDS) },
    body: JSON.stringify({ message: title, data: [], includes: [], errors: [{ type: 'Error', code: 'ServiceUnavailable', title, source: '' }] }),
  }
}
