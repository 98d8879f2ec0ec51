import { request } from 'node:http'

export interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

/**
 * A GET of `path` on `baseUrl` from the loopback address `ip` (any of
 * 127.0.0.0/8 on Linux), on a connection of its own: the gateway sees `ip` as
 * the source address.
 */
export function fromAddress(baseUrl: string, path: string, ip: string, headers: Record<string, string> = {}): Promise<Answer> {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip)) throw new Error(`not a loopback address: ${ip}`)
  const url = new URL(path, baseUrl)
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', headers, localAddress: ip, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
