/**
 * The network behind enrichments that read a web service: GETs through the
 * same Node HTTP client as the lookup enrichments (keep-alive pools bounded
 * per host, a deadline over the whole exchange, a bound on the answer's
 * size, one new attempt when a kept connection turns out closed). Never rejects.
 */
import type { HttpGet, HttpGetOptions, HttpGetResult } from '../core/enrich/enrichments/http-get'
import { nodeHttpClient, sharedLookupServices, type NodeHttpClient } from '../runtime/lookup-services'

export interface NodeHttpGetOptions {
  /** Connections open at once per host (default 8); further requests wait for one. */
  readonly maxSocketsPerHost?: number
}

const DEFAULT_MAX_BYTES = 1 << 20
const HEADERS = { accept: 'application/json', 'accept-encoding': 'identity' }

/** A GET client of its own (its own pools). */
export class NodeHttpGet implements HttpGet {
  private readonly client: NodeHttpClient

  constructor(o: NodeHttpGetOptions = {}) {
    this.client = nodeHttpClient({ maxSocketsPerHost: o.maxSocketsPerHost ?? 8 })
  }

  get(url: string, o: HttpGetOptions): Promise<HttpGetResult> {
    return this.client.request({ method: 'GET', url, headers: HEADERS, timeoutMs: o.timeoutMs, maxBytes: o.maxBytes ?? DEFAULT_MAX_BYTES })
  }

  /** Closes the idle connections. */
  close(): void {
    this.client.close()
  }
}

/** GETs over the process's shared client, so that every enrichment shares the pools. */
export function sharedHttpGet(): HttpGet {
  const http = sharedLookupServices().http!
  return { get: (url, o) => http.request({ method: 'GET', url, headers: HEADERS, timeoutMs: o.timeoutMs, maxBytes: o.maxBytes ?? DEFAULT_MAX_BYTES }) }
}
