import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, normalize } from 'node:path'

/** A tiny static file server on 127.0.0.1:0, recording the requests it sees. */
export async function serveStatic(root: string, opts: { status?: (path: string) => number | undefined } = {}) {
  const requests: { path: string; apikey?: string }[] = []
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!)
    requests.push({ path, apikey: req.headers.apikey as string | undefined })
    const forced = opts.status?.(path)
    if (forced) {
      res.writeHead(forced, { 'content-type': 'text/plain' }).end(`forced ${forced}`)
      return
    }
    const file = join(root, normalize(path).replace(/^(\.\.[/\\])+/, ''))
    try {
      const s = await stat(file)
      if (!s.isFile()) throw new Error('not a file')
      res.writeHead(200, { 'content-type': 'application/json' })
      createReadStream(file).pipe(res)
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Stops listening and drops open (keep-alive) connections: clients see the server gone at once. */
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    }),
  }
}
