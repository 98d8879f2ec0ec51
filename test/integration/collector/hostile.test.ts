/** Hostile header bytes and `nuid` values through the local gateway: clear answers, and what was answered 200 is on the stream once. */
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { testClients, useLocalStack } from '../../support/stack'
import { readPayloads } from '../../support/streams'

const stack = useLocalStack({ triggers: false })

/** A GET whose header values are sent as the given raw bytes. */
function get(path: string, headers: Record<string, Buffer>): Promise<{ status: number; setCookie: string[] }> {
  const u = new URL(stack.current.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET', headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.toString('latin1')])) }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, setCookie: (res.headers['set-cookie'] as string[] | undefined) ?? [] }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('collector: hostile headers and nuid through the gateway', () => {
  it('a User-Agent sent as UTF-8 bytes is stored as that text', async () => {
    const ua = 'Mozilla/5.0 (Linux; Ünïcødé) 日本語 😀'
    const res = await get('/i?e=pv&aid=utf8-ua', { 'user-agent': Buffer.from(ua, 'utf8') })
    expect(res.status).toBe(200)
    const p = (await readPayloads(testClients().kinesis, stack.current.names.streams.raw)).find((x) => x.querystring?.includes('aid=utf8-ua'))
    expect(p!.userAgent).toBe(ua)
  })

  it('a nuid with a NUL, a non-Latin-1 character or cookie attributes is answered 200 once, with a clean cookie', async () => {
    for (const [i, nuid] of ['a\u0000b', 'é\u0100x', 'abc; Domain=evil.example; Max-Age=999999999'].entries()) {
      const res = await get(`/i?e=pv&aid=nuid-${i}&nuid=${encodeURIComponent(nuid)}`, {})
      expect(res.status).toBe(200)
      expect(res.setCookie).toHaveLength(1)
      expect(res.setCookie[0]).not.toMatch(/evil|Max-Age/)
    }
    const payloads = await readPayloads(testClients().kinesis, stack.current.names.streams.raw)
    for (const i of [0, 1, 2]) expect(payloads.filter((x) => x.querystring?.includes(`aid=nuid-${i}&`))).toHaveLength(1)
  })

  it('headers over the size limit get 431, not a 500', async () => {
    const res = await get('/i?e=pv', { 'user-agent': Buffer.from('x'.repeat(20_000)) })
    expect(res.status).toBe(431)
  })
})
