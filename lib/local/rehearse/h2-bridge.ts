/**
 * An HTTP/2 (cleartext, prior knowledge) endpoint in front of an HTTP/1.1
 * one. The AWS SDK's Kinesis client speaks HTTP/2 to an `http://` endpoint
 * (its default request handler), which kinesalite does not: a function run
 * from its bundle, with no client option of the local runtime, reaches
 * kinesalite through this bridge. Requests and answers pass unchanged (the
 * signed `host` header is kept), hop-by-hop headers aside.
 */
import { request } from 'node:http'
import { createServer, constants, type Http2Server, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2'
import type { AddressInfo } from 'node:net'

export interface Http2Bridge {
  readonly url: string
  close(): Promise<void>
}

/** Headers HTTP/2 forbids (connection-specific). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings'])

export async function startHttp2Bridge(target: string): Promise<Http2Bridge> {
  const to = new URL(target)
  const server: Http2Server = createServer()
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const out: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v
    out.host = String(headers[constants.HTTP2_HEADER_AUTHORITY] ?? to.host)
    const req = request({ hostname: to.hostname, port: to.port, method: String(headers[constants.HTTP2_HEADER_METHOD]), path: String(headers[constants.HTTP2_HEADER_PATH]), headers: out }, (res) => {
      const back: Record<string, string | string[] | number> = { [constants.HTTP2_HEADER_STATUS]: res.statusCode ?? 502 }
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) back[k] = v
      if (stream.destroyed) return res.resume()
      stream.respond(back)
      res.pipe(stream)
    })
    req.on('error', () => {
      if (!stream.destroyed && !stream.headersSent) stream.respond({ [constants.HTTP2_HEADER_STATUS]: 502 })
      stream.end()
    })
    stream.pipe(req)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const sessions = new Set<import('node:http2').ServerHttp2Session>()
  server.on('session', (s) => { sessions.add(s); s.once('close', () => sessions.delete(s)) })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sessions) s.destroy()
      server.close(() => resolve())
    }),
  }
}
