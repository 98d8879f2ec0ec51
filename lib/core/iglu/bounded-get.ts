/**
 * The one GET every HTTP repository of the resolver goes through: a deadline
 * over the whole exchange, an answer read as a stream and abandoned as soon
 * as it passes a size cap (never buffered whole), and redirects followed only
 * within the registry's own origin.
 */

/** Largest answer (bytes, after decompression) read from a registry: a schema or a list. */
export const MAX_ANSWER_BYTES = 1 << 20
/** Redirects followed within the same origin before giving up. */
export const MAX_REDIRECTS = 3
/** Bytes of an error answer kept for its message. */
const ERROR_TEXT_BYTES = 1024

export interface BoundedGetOptions {
  readonly headers: Readonly<Record<string, string>>
  /** Deadline of the whole exchange (redirects and body included). */
  readonly timeoutMs: number
  /** Default `MAX_ANSWER_BYTES`. */
  readonly maxBytes?: number
  /** Abandons the exchange (the caller's own budget ran out). */
  readonly signal?: AbortSignal
  readonly fetch?: typeof fetch
}

export type BoundedAnswer =
  | { readonly ok: true; readonly status: number; readonly text: string }
  /** `final`: asking again within the lookup cannot help (too large, redirected elsewhere, unreachable). */
  | { readonly ok: false; readonly message: string; readonly final: boolean }

const REDIRECT = new Set([301, 302, 303, 307, 308])

/** Reads at most `limit` bytes of `res`; `undefined` when the body is longer (then it is cancelled). */
async function readCapped(res: Response, limit: number, truncate: boolean): Promise<string | undefined> {
  const body = res.body
  if (!body) return ''
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (size + value.byteLength > limit) {
        if (truncate) chunks.push(value.subarray(0, limit - size))
        void reader.cancel().catch(() => {})
        if (!truncate) return undefined
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  } finally {
    reader.releaseLock()
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function boundedGet(url: string, o: BoundedGetOptions): Promise<BoundedAnswer> {
  const maxBytes = o.maxBytes ?? MAX_ANSWER_BYTES
  const timeout = AbortSignal.timeout(o.timeoutMs)
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout
  const fetchFn = o.fetch ?? fetch
  const origin = new URL(url).origin
  let current = url
  try {
    for (let hops = 0; ; hops++) {
      const res = await fetchFn(current, { headers: o.headers, redirect: 'manual', signal })
      if (REDIRECT.has(res.status)) {
        await res.body?.cancel().catch(() => {})
        const location = res.headers.get('location')
        if (!location) return { ok: false, message: `GET ${url}: HTTP ${res.status} without a Location`, final: true }
        const next = new URL(location, current)
        if (next.origin !== origin) {
          return { ok: false, message: `GET ${url}: redirected to another origin (${next.origin}); only redirects within ${origin} are followed`, final: true }
        }
        if (hops >= MAX_REDIRECTS) return { ok: false, message: `GET ${url}: more than ${MAX_REDIRECTS} redirects`, final: true }
        current = next.href
        continue
      }
      const ok = res.status >= 200 && res.status < 300
      if (!ok) return { ok: true, status: res.status, text: (await readCapped(res, ERROR_TEXT_BYTES, true)) ?? '' }
      const declared = Number(res.headers.get('content-length') ?? NaN)
      const tooLarge = `GET ${url}: the answer is larger than ${maxBytes} bytes`
      if (declared > maxBytes) {
        await res.body?.cancel().catch(() => {})
        return { ok: false, message: tooLarge, final: true }
      }
      const text = await readCapped(res, maxBytes, false)
      return text === undefined ? { ok: false, message: tooLarge, final: true } : { ok: true, status: res.status, text }
    }
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } }
    const why = timeout.aborted ? `no answer within ${o.timeoutMs} ms` : o.signal?.aborted ? 'abandoned: the lookup ran out of time' : (e.cause?.code ?? e.cause?.message ?? e.message)
    const unreachable = !timeout.aborted && !o.signal?.aborted ? networkErrorCode(err) : undefined
    return { ok: false, message: `GET ${url} failed: ${unreachable ?? why}`, final: unreachable !== undefined }
  }
}

/**
 * Errors that say the registry cannot be reached at all from here (no DNS,
 * nothing listening, no route): asking again a few hundred milliseconds later
 * gives the same answer, so the lookup does not retry them and the
 * repository's circuit breaker carries the failure. Time-outs and 5xx answers
 * are not among them and are retried.
 */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN'])

/** The network error code of a failed fetch when it is one of `UNREACHABLE_CODES`. */
export function networkErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>()
  const walk = (e: unknown, depth: number): string | undefined => {
    if (e === null || typeof e !== 'object' || seen.has(e) || depth > 4) return undefined
    seen.add(e)
    const x = e as { code?: unknown; cause?: unknown; errors?: unknown }
    if (typeof x.code === 'string' && UNREACHABLE_CODES.has(x.code)) return x.code
    // connection attempts to several addresses end in an AggregateError
    if (Array.isArray(x.errors)) {
      for (const inner of x.errors) {
        const c = walk(inner, depth + 1)
        if (c !== undefined) return c
      }
    }
    return walk(x.cause, depth + 1)
  }
  return walk(err, 0)
}
