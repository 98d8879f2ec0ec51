import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import type { APIGatewayProxyEventV2 } from 'aws-lambda'
import { describe, expect, it } from 'vitest'
import { compileRoutes, selectRoute, toEvent, writeResult } from '../../../lib/local/gateway'
import { testClients, useLocalStack } from '../../support/stack'

/** Runs a real HTTP exchange where the server side is `serve`. */
async function exchange(serve: (req: IncomingMessage, body: Buffer, res: import('node:http').ServerResponse) => void, init: RequestInit & { path?: string } = {}) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => serve(req, Buffer.concat(chunks), res))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    const { port } = server.address() as AddressInfo
    return await fetch(`http://127.0.0.1:${port}${init.path ?? '/'}`, init)
  } finally {
    server.close()
  }
}

describe('API Gateway HTTP API emulation', () => {
  it('builds a payload 2.0 event: raw path and query, lower-case headers, cookies, text or base64 body', async () => {
    let event!: APIGatewayProxyEventV2
    await exchange(
      (req, body, res) => {
        event = toEvent(req, body, 'POST /things/{id}', { id: '42' }, 1_700_000_000_000)
        res.end()
      },
      { method: 'POST', path: '/things/42?a=1&b=x%20y&a=2', headers: { 'X-Thing': 'v', cookie: 'sp=abc; other=1', 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 1, 2, 255]) },
    )
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /things/{id}',
      rawPath: '/things/42',
      rawQueryString: 'a=1&b=x%20y&a=2',
      cookies: ['sp=abc', 'other=1'],
      queryStringParameters: { a: '1,2', b: 'x y' },
      pathParameters: { id: '42' },
      isBase64Encoded: true,
      body: Buffer.from([0, 1, 2, 255]).toString('base64'),
      requestContext: { http: { method: 'POST', path: '/things/42', sourceIp: '127.0.0.1' }, stage: '$default', timeEpoch: 1_700_000_000_000 },
    })
    expect(event.headers['x-thing']).toBe('v')
    expect(event.headers.cookie).toBeUndefined()

    await exchange(
      (req, body, res) => {
        event = toEvent(req, body, '$default', undefined, Date.now())
        res.end()
      },
      { method: 'POST', headers: { 'content-type': 'application/json; charset=UTF-8' }, body: '{"a":"é"}' },
    )
    expect(event.isBase64Encoded).toBe(false)
    expect(event.body).toBe('{"a":"é"}')
  })

  it('writes status, headers, cookies and base64 bodies back; a bare value becomes a 200 JSON body', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
    const res = await exchange((_req, _b, out) =>
      writeResult(out, { statusCode: 201, headers: { 'Content-Type': 'image/gif', 'x-n': 5 }, cookies: ['a=1; Path=/', 'b=2'], body: gif.toString('base64'), isBase64Encoded: true }),
    )
    expect(res.status).toBe(201)
    expect(res.headers.get('content-type')).toBe('image/gif')
    expect(res.headers.get('x-n')).toBe('5')
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2'])
    expect(Buffer.from(await res.arrayBuffer())).toEqual(gif)

    const bare = await exchange((_req, _b, out) => writeResult(out, { hello: 'world' }))
    expect(bare.status).toBe(200)
    expect(await bare.json()).toEqual({ hello: 'world' })
  })

  it('selects routes as API Gateway does: literal over variable over greedy, method over ANY, then $default', () => {
    const table = {
      routes: [
        { routeKey: 'ANY /a/{proxy+}', method: 'ANY', segments: ['a', '{proxy+}'], greedy: true, fn: 'g' },
        { routeKey: 'GET /a/{id}', method: 'GET', segments: ['a', '{id}'], greedy: false, fn: 'v' },
        { routeKey: 'GET /a/b', method: 'GET', segments: ['a', 'b'], greedy: false, fn: 'l' },
        { routeKey: 'ANY /a/b', method: 'ANY', segments: ['a', 'b'], greedy: false, fn: 'any' },
      ],
      fallback: 'd',
    } as unknown as ReturnType<typeof compileRoutes>
    expect(selectRoute(table, 'GET', '/a/b')?.fn).toBe('l')
    expect(selectRoute(table, 'POST', '/a/b')?.fn).toBe('any')
    expect(selectRoute(table, 'GET', '/a/c')).toMatchObject({ fn: 'v', params: { id: 'c' } })
    expect(selectRoute(table, 'GET', '/a/c/d')).toMatchObject({ fn: 'g', params: { proxy: 'c/d' } })
    expect(selectRoute(table, 'GET', '/z')).toMatchObject({ fn: 'd', routeKey: '$default' })
  })
})

describe('local stack', () => {
  // With the licence: without it, enrich is off and /health says so (test/integration/health).
  const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

  it('answers GET /health with 200 ok through the gateway and the deployed handler', async () => {
    const res = await fetch(`${stack.current.url}/health`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('ok')
  })

  it('archives raw stream records to the archive bucket through the declared stream trigger', async () => {
    const { kinesis, s3 } = testClients()
    const payloads = ['one', 'two', 'three'].map((s) => Buffer.from(`\u0000binary-${s}`))
    await kinesis.send(new PutRecordsCommand({ StreamName: stack.current.names.streams.raw, Records: payloads.map((Data) => ({ Data, PartitionKey: 'p' })) }))
    await stack.current.drain()
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: stack.current.names.buckets.archive, Prefix: `${stack.current.names.streams.raw}/` }))
    const lines: string[] = []
    for (const o of listed.Contents ?? []) {
      const body = await s3.send(new GetObjectCommand({ Bucket: stack.current.names.buckets.archive, Key: o.Key }))
      lines.push(...gunzipSync(Buffer.from(await body.Body!.transformToByteArray())).toString().trim().split('\n'))
    }
    expect(lines.map((l) => Buffer.from(l, 'base64')).sort(Buffer.compare)).toEqual([...payloads].sort(Buffer.compare))
  })
})
