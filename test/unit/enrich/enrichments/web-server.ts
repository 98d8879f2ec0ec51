/** A local HTTP server for enrichments that read a web service: the test answers each request. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface Seen {
  readonly path: string
  readonly query: URLSearchParams
  /** Which connection carried it (1, 2, …). */
  readonly connection: number
}

export interface WebServer {
  readonly url: string
  readonly seen: Seen[]
  /** Connections opened so far. */
  connections(): number
  close(): Promise<void>
}

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>

export const json = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

export async function startServer(handler: Handler): Promise<WebServer> {
  const seen: Seen[] = []
  const ids = new WeakMap<Socket, number>()
  const open = new Set<Socket>()
  let count = 0
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    seen.push({ path: url.pathname, query: url.searchParams, connection: ids.get(req.socket) ?? 0 })
    void Promise.resolve(handler(req, res, url)).catch((err: Error) => {
      if (!res.headersSent) json(res, 500, { error: true, message: err.message })
    })
  })
  server.on('connection', (s) => {
    ids.set(s, ++count)
    open.add(s)
    s.on('close', () => open.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    connections: () => count,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy()
        server.close(() => r())
      }),
  }
}
