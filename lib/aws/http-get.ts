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
    let u: URL
    try {
      u = new URL(url)
    } catch {
      return Promise.resolve({ ok: false, error: 'not a URL' })
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return Promise.resolve({ ok: false, error: `unsupported scheme ${u.protocol}` })
    return new Promise<HttpGetResult>((resolve) => {
      let done = false
      let req: http.ClientRequest | undefined
      const timer = setTimeout(() => {
        finish({ ok: false, error: `timed out after ${o.timeoutMs} ms` })
        req?.destroy()
      }, o.timeoutMs)
      const finish = (r: HttpGetResult) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resolve(r)
      }
      // A kept-alive connection the server closed while idle (or while a Lambda was frozen) fails at once: one new attempt.
      const attempt = (retry: boolean) => {
        req = this.send(u, o.maxBytes ?? DEFAULT_MAX_BYTES, (r, reused) => {
          if (!r.ok && retry && reused && !done && /^(ECONNRESET|EPIPE|ECONNABORTED)$/.test(r.error)) attempt(false)
          else finish(r)
        })
      }
      attempt(true)
    })
  }

  /** One request; `done` is called once, with whether the connection had served an earlier request. */
  private send(u: URL, maxBytes: number, done: (r: HttpGetResult, reused: boolean) => void): http.ClientRequest {
    const secure = u.protocol === 'https:'
    let called = false
    const end = (r: HttpGetResult) => {
      if (called) return
      called = true
      done(r, req.reusedSocket)
    }
    const tooLong: HttpGetResult = { ok: false, error: `the answer is larger than ${maxBytes} bytes` }
    const req = (secure ? https : http).get(u, { agent: secure ? this.https : this.http, headers: { accept: 'application/json', 'accept-encoding': 'identity' } }, (res) => {
      const chunks: Buffer[] = []
      let size = 0
      if (Number(res.headers['content-length']) > maxBytes) {
        end(tooLong)
        req.destroy()
        return
      }
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size <= maxBytes) chunks.push(c)
        else {
          end(tooLong)
          req.destroy()
        }
      })
      res.on('end', () => end({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (err) => end({ ok: false, error: err.message }))
      res.on('aborted', () => end({ ok: false, error: 'the connection closed before the answer ended' }))
    })
    req.on('error', (err) => end({ ok: false, error: (err as NodeJS.ErrnoException).code ?? err.message }))
    return req
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
