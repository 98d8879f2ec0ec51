/**
 * The services the lookup enrichments (API request, SQL query) call, as the
 * enrich shells give them: an HTTP client keeping a bounded number of
 * keep-alive connections per host, and connection pools to PostgreSQL (`pg`)
 * and MySQL/MariaDB (`mysql2`), one per database, shared by every event and
 * kept across rebuilds of the enrichments.
 */
import http from 'node:http'
import https from 'node:https'
import type { HttpAnswer, HttpClient, HttpRequest, LookupServices, SqlDatabase, SqlDatabaseConfig } from '../core/enrich/enrichments/lookups'
import { sqlDatabase, type SqlPools } from './sql-pools'

export interface HttpClientOptions {
  /** Connections open at once per host (requests beyond wait for one). */
  readonly maxSocketsPerHost?: number
  /** Hosts with their own connections at once (the least recently used one is closed beyond). */
  readonly maxHosts?: number
  /** Largest answer read, in bytes. */
  readonly maxAnswerBytes?: number
}

export const HTTP_DEFAULTS = { maxSocketsPerHost: 32, maxHosts: 64, maxAnswerBytes: 1024 * 1024 } as const

export interface NodeHttpClient extends HttpClient {
  /** Closes every kept connection. */
  close(): void
}

export function nodeHttpClient(o: HttpClientOptions = {}): NodeHttpClient {
  const maxSockets = o.maxSocketsPerHost ?? HTTP_DEFAULTS.maxSocketsPerHost
  const maxHosts = o.maxHosts ?? HTTP_DEFAULTS.maxHosts
  const maxBytes = o.maxAnswerBytes ?? HTTP_DEFAULTS.maxAnswerBytes
  const agents = new Map<string, http.Agent>()

  const agentFor = (u: URL): http.Agent => {
    const origin = u.origin
    let a = agents.get(origin)
    if (a) {
      agents.delete(origin)
      agents.set(origin, a)
      return a
    }
    const opts = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' as const }
    a = u.protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts)
    agents.set(origin, a)
    while (agents.size > maxHosts) {
      const [oldest, agent] = agents.entries().next().value as [string, http.Agent]
      agents.delete(oldest)
      agent.destroy()
    }
    return a
  }

  type Attempt = HttpAnswer | { readonly ok: false; readonly error: string; readonly stale: true }

  /** One exchange until `deadline`; `stale` when a kept connection turned out closed before any answer. */
  const attempt = (r: HttpRequest, u: URL, deadline: number): Promise<Attempt> =>
    new Promise((resolve) => {
      let settled = false
      const done = (a: Attempt) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(a)
      }
      const headers: Record<string, string | number> = { ...r.headers }
      if (r.body !== undefined) headers['content-length'] = Buffer.byteLength(r.body)
      let answered = false
      const limit = r.maxBytes ?? maxBytes
      const req = (u.protocol === 'https:' ? https : http).request(u, { method: r.method, headers, agent: agentFor(u) }, (res) => {
        answered = true
        const chunks: Buffer[] = []
        let size = 0
        if (Number(res.headers['content-length']) > limit) {
          done({ ok: false, error: `the answer is larger than ${limit} bytes` })
          req.destroy()
          return
        }
        res.on('data', (c: Buffer) => {
          size += c.length
          if (size > limit) {
            done({ ok: false, error: `the answer is larger than ${limit} bytes` })
            req.destroy()
            return
          }
          chunks.push(c)
        })
        res.on('end', () => done({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', (err) => done({ ok: false, error: err.message }))
        res.on('aborted', () => done({ ok: false, error: 'the connection closed before the answer was complete' }))
      })
      const timer = setTimeout(() => {
        done({ ok: false, error: `no answer within ${r.timeoutMs} ms`, timedOut: true })
        req.destroy()
      }, Math.max(0, deadline - Date.now()))
      req.on('error', (err: NodeJS.ErrnoException) => {
        const error = err.code ? `${err.code}: ${err.message}` : err.message
        // a kept-alive connection the server closed meanwhile (after a pause, e.g. a frozen function)
        const stale = req.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE')
        done(stale ? { ok: false, error, stale: true } : { ok: false, error })
      })
      req.end(r.body)
    })

  const request = async (r: HttpRequest): Promise<HttpAnswer> => {
    let u: URL
    try {
      u = new URL(r.url)
    } catch {
      return { ok: false, error: 'invalid URL' }
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, error: `${u.protocol} URLs are not requested` }
    const deadline = Date.now() + r.timeoutMs
    // once again on a new connection when a kept one was found closed
    for (let i = 0; ; i++) {
      const a = await attempt(r, u, deadline)
      if (!('stale' in a) || i > 0) return 'stale' in a ? { ok: false, error: a.error } : a
    }
  }

  return {
    request,
    close() {
      for (const a of agents.values()) a.destroy()
      agents.clear()
    },
  }
}

export interface RuntimeLookupServices extends LookupServices {
  readonly http: NodeHttpClient
  readonly sql: (db: SqlDatabaseConfig) => SqlDatabase
  /** Closes every connection (HTTP and SQL). */
  close(): Promise<void>
}

export function lookupServices(o: HttpClientOptions = {}): RuntimeLookupServices {
  const client = nodeHttpClient(o)
  const pools: SqlPools = new Map()
  return {
    http: client,
    sql: (db) => sqlDatabase(pools, db),
    now: () => Date.now(),
    async close() {
      client.close()
      const all = [...pools.values()]
      pools.clear()
      await Promise.all(all.map((p) => p.close().catch(() => {})))
    },
  }
}

let shared: RuntimeLookupServices | undefined

/** The process's services: one set of connections for every build of the enrichments. */
export function sharedLookupServices(): RuntimeLookupServices {
  shared ??= lookupServices()
  return shared
}
