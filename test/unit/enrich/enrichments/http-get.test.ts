/** The network behind web-service enrichments: keep-alive pools bounded per host, deadlines, bounded answers, failures as results. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NodeHttpGet } from '../../../../lib/aws/http-get'
import { checkBaseUrl } from '../../../../lib/core/enrich/enrichments/http-get'
import { json, startServer, type WebServer } from './web-server'

let server: WebServer
beforeAll(async () => {
  server = await startServer(async (_req, res, url) => {
    if (url.pathname === '/slow') await new Promise((r) => setTimeout(r, 50))
    if (url.pathname === '/hang') return
    if (url.pathname === '/stale' && server.seen.filter((x) => x.connection === server.seen.at(-1)!.connection).length > 1) return void _req.socket.destroy()
    if (url.pathname === '/big') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return void res.end(`"${'x'.repeat(5000)}"`)
    }
    if (url.pathname === '/stream') {
      res.writeHead(200, { 'content-type': 'application/json' }) // no length: counted as it arrives
      for (let i = 0; i < 10; i++) res.write('y'.repeat(1000))
      return void res.end()
    }
    json(res, url.pathname === '/missing' ? 404 : 200, { path: url.pathname })
  })
})
afterAll(() => server.close())

describe('NodeHttpGet', () => {
  it('answers with the status and the body, whatever the status', async () => {
    const c = new NodeHttpGet()
    expect(await c.get(`${server.url}/a`, { timeoutMs: 2000 })).toEqual({ ok: true, status: 200, body: '{"path":"/a"}' })
    expect(await c.get(`${server.url}/missing`, { timeoutMs: 2000 })).toEqual({ ok: true, status: 404, body: '{"path":"/missing"}' })
    c.close()
  })
  it('keeps connections open and never opens more than the bound per host', async () => {
    const c = new NodeHttpGet({ maxSocketsPerHost: 2 })
    const before = server.connections()
    const all = await Promise.all(Array.from({ length: 12 }, () => c.get(`${server.url}/slow`, { timeoutMs: 5000 })))
    expect(all.every((r) => r.ok && r.status === 200)).toBe(true)
    expect(server.connections() - before).toBe(2)
    await c.get(`${server.url}/again`, { timeoutMs: 2000 })
    expect(server.connections() - before).toBe(2)
    c.close()
  })
  it('tries once more on a new connection when a kept-alive one turns out closed', async () => {
    const c = new NodeHttpGet()
    const before = server.connections()
    expect(await c.get(`${server.url}/first`, { timeoutMs: 2000 })).toMatchObject({ ok: true })
    expect(await c.get(`${server.url}/stale`, { timeoutMs: 2000 })).toEqual({ ok: true, status: 200, body: '{"path":"/stale"}' })
    expect(server.connections() - before).toBe(2)
    c.close()
  })
  it('turns timeouts, refused connections, oversized answers and bad URLs into results', async () => {
    const c = new NodeHttpGet()
    expect(await c.get(`${server.url}/hang`, { timeoutMs: 80 })).toEqual({ ok: false, error: 'no answer within 80 ms', timedOut: true })
    expect(await c.get(`${server.url}/big`, { timeoutMs: 2000, maxBytes: 1000 })).toEqual({ ok: false, error: 'the answer is larger than 1000 bytes' })
    expect(await c.get(`${server.url}/stream`, { timeoutMs: 2000, maxBytes: 5000 })).toEqual({ ok: false, error: 'the answer is larger than 5000 bytes' })
    expect(await c.get('http://127.0.0.1:1/x', { timeoutMs: 2000 })).toMatchObject({ ok: false, error: expect.stringMatching(/^ECONNREFUSED/) })
    expect(await c.get('ftp://127.0.0.1/x', { timeoutMs: 2000 })).toEqual({ ok: false, error: 'ftp: URLs are not requested' })
    expect(await c.get('not a url', { timeoutMs: 2000 })).toEqual({ ok: false, error: 'invalid URL' })
    c.close()
  })
})

describe('checkBaseUrl', () => {
  it('accepts http(s) URLs and names the parameter otherwise', () => {
    expect(checkBaseUrl('apiUrl', 'https://mirror.example.com/oer/')).toBeUndefined()
    expect(checkBaseUrl('apiUrl', 'http://127.0.0.1:8080')).toBeUndefined()
    expect(checkBaseUrl('apiUrl', 'mirror.example.com')).toBe('apiUrl is not a URL: "mirror.example.com"')
    expect(checkBaseUrl('apiUrl', 'https://x.example/?a=1')).toBe('apiUrl must not have a query or a fragment: "https://x.example/?a=1"')
    expect(checkBaseUrl('apiUrl', 'https://u:p@x.example/')).toBe('apiUrl must not carry credentials')
  })
})
