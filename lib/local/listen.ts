/** Local servers: listening on one address, and reading a request body within a bound. */
import type { IncomingMessage } from 'node:http'
import type { AddressInfo, Server } from 'node:net'

/** Listens on `host` (default 127.0.0.1) and `port` (default: a free one); resolves with the server's `http://` URL. */
export async function listenLocal(server: Server, o: { readonly host?: string; readonly port?: number } = {}): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve())
  })
  const { address, port } = server.address() as AddressInfo
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`
}

/**
 * Reads a request's body, keeping at most `max` bytes; `done` gets the
 * whole size (over `max`: the body is cut, answer 413) and what was kept.
 */
export function boundedBody(req: IncomingMessage, max: number, done: (size: number, body: Buffer) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  req.on('data', (c: Buffer) => {
    size += c.length
    if (size <= max) chunks.push(c)
  })
  req.on('end', () => done(size, Buffer.concat(chunks)))
}
