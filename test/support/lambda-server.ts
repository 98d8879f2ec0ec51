/**
 * A Lambda endpoint for tests: answers `Invoke` (REST JSON:
 * `POST /2015-03-31/functions/<name>/invocations`, the payload as the body)
 * with what `answer` returns for each payload, and records each request:
 * the function, the payload and the credential scope of its signature.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface InvokeRequest {
  readonly method: string
  readonly functionName: string
  readonly invocationType?: string
  readonly payload: unknown
  readonly accessKeyId?: string
  readonly region?: string
}

export interface LambdaServer {
  readonly url: string
  readonly requests: InvokeRequest[]
  close(): Promise<void>
}

export async function startLambdaServer(answer: (functionName: string, payload: unknown) => unknown): Promise<LambdaServer> {
  const requests: InvokeRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec((req.url ?? '').split('?')[0]!)
      const scope = /Credential=([^/]+)\/\d{8}\/([^/]+)\/lambda\//.exec(req.headers.authorization ?? '')
      const text = Buffer.concat(chunks).toString('utf8')
      const r: InvokeRequest = {
        method: req.method ?? '',
        functionName: decodeURIComponent(m?.[1] ?? ''),
        invocationType: req.headers['x-amz-invocation-type'] as string | undefined,
        payload: text ? JSON.parse(text) : undefined,
        accessKeyId: scope?.[1],
        region: scope?.[2],
      }
      requests.push(r)
      if (!m || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' })
        return res.end(JSON.stringify({ Type: 'User', message: `Function not found: ${req.url}` }))
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' })
      res.end(JSON.stringify(answer(r.functionName, r.payload)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
