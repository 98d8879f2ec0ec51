/**
 * The network behind enrichments that read a web service: GET over Node's
 * HTTP client with keep-alive pools bounded per host, a deadline over the
 * whole exchange and a bound on the answer's size. Never rejects.
 */
import http from 'node:http'
import https from 'node:https'
import type { HttpGet, HttpGetOptions, HttpGetResult } from '../core/enrich/enrichments/http-get'

export interface NodeHttpGetOptions {
  /** Connections open at once per host (default 8); further requests wait for one. */
  readonly maxSocketsPerHost?: number
  /** Idle connections kept per host (default 4). */
  readonly maxFreeSockets?: number
}

const DEFAULT_MAX_BYTES = 1 << 20

export class NodeHttpGet implements HttpGet {
  private readonly http: http.Agent
  private readonly https: https.Agent

  constructor(o: NodeHttpGetOptions = {}) {
    const pool = { keepAlive: true, maxSockets: o.maxSocketsPerHost ?? 8, maxFreeSockets: o.maxFreeSockets ?? 4, scheduling: 'lifo' as const, timeout: 60_000 }
    this.http = new http.Agent(pool)
    this.https = new https.Agent(pool)
  }

  get(url: string, o: HttpGetOptions): Promise<HttpGetResult> {
    const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES
    return new Promise<HttpGetResult>((resolve) => {
      let u: URL
      try {
        u = new URL(url)
      } catch {
        resolve({ ok: false, error: `not a URL: ${url.slice(0, 200)}` })
        return
      }
      const secure = u.protocol === 'https:'
      if (!secure && u.protocol !== 'http:') {
        resolve({ ok: false, error: `unsupported scheme ${u.protocol}` })
        return
      }
      let done = false
      const finish = (r: HttpGetResult) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resolve(r)
      }
      const req = (secure ? https : http).get(u, { agent: secure ? this.https : this.http, headers: { accept: 'application/json', 'accept-encoding': 'identity' } }, (res) => {
        const chunks: Buffer[] = []
        let size = 0
        const declared = Number(res.headers['content-length'])
        if (declared > maxBytes) {
          req.destroy()
          finish({ ok: false, error: `the answer is larger than ${maxBytes} bytes` })
          return
        }
        res.on('data', (c: Buffer) => {
          size += c.length
          if (size > maxBytes) {
            req.destroy()
            finish({ ok: false, error: `the answer is larger than ${maxBytes} bytes` })
          } else chunks.push(c)
        })
        res.on('end', () => finish({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', (err) => finish({ ok: false, error: err.message }))
        res.on('aborted', () => finish({ ok: false, error: 'the connection closed before the answer ended' }))
      })
      req.on('error', (err) => finish({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }))
      const timer = setTimeout(() => {
        finish({ ok: false, error: `timed out after ${o.timeoutMs} ms` })
        req.destroy()
      }, o.timeoutMs)
    })
  }

  /** Closes the idle connections. */
  close(): void {
    this.http.destroy()
    this.https.destroy()
  }
}

let shared: NodeHttpGet | undefined

/** One client per process, so that every enrichment shares the pools. */
export function sharedHttpGet(): NodeHttpGet {
  return (shared ??= new NodeHttpGet())
}
