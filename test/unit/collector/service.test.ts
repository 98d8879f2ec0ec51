import { describe, expect, it } from 'vitest'
import { handleCollectorRequest, PIXEL, ROBOTS_TXT, sinkFailureResponse } from '../../../lib/core/collector/service'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { config, NOW, rawPayloads, request, TP2_SCHEMA, uuids } from './helpers'

const run = (req = request(), cfg = config(), ctx = {}) => handleCollectorRequest(req, cfg, NOW, uuids(), ctx)
const tp2Body = JSON.stringify({ schema: TP2_SCHEMA, data: [{ e: 'pv', url: 'http://example.com/a', p: 'web', tv: 'js-4.10.1' }] })
const post = (over = {}) =>
  request({
    method: 'POST',
    path: '/com.snowplowanalytics.snowplow/tp2',
    headers: { host: 'collector.example.com:8080', 'content-type': 'application/json; charset=UTF-8', 'user-agent': 'node', origin: 'https://shop.example.com' },
    body: Buffer.from(tp2Body),
    ...over,
  })

describe('collector routes', () => {
  it('POST /com.snowplowanalytics.snowplow/tp2 → 200 ok and one raw record', () => {
    const out = run(post())
    expect(out.response.statusCode).toBe(200)
    expect(out.response.body).toBe('ok')
    expect(out.response.headers?.['content-type']).toMatch(/^text\/plain/)
    expect(out.records).toHaveLength(1)
    expect(out.records[0]!.stream).toBe('raw')
  })

  it('POST to any /{vendor}/{version} is accepted with the path stored', () => {
    for (const path of ['/com.snowplowanalytics.iglu/v1', '/com.acme/webhook']) {
      const out = run(post({ path }))
      expect(out.response.statusCode).toBe(200)
      expect(rawPayloads(out)[0]!.path).toBe(path)
    }
  })

  it('GET and HEAD /i, /ice.png and /{vendor}/{version} → the 43-byte GIF, no-cache', () => {
    expect(PIXEL.length).toBe(43)
    expect(PIXEL.toString('hex')).toBe('47494638396101000100f00000ffffff00000021f90405000000002c00000000010001000002024401003b')
    for (const method of ['GET', 'HEAD']) {
      for (const path of ['/i', '/ice.png', '/com.snowplowanalytics.snowplow/tp2']) {
        const out = run(request({ method, path, rawQuery: 'e=pv&url=http%3A%2F%2Fa.com' }))
        expect(out.response.statusCode, `${method} ${path}`).toBe(200)
        expect(out.response.body).toEqual(PIXEL)
        expect(out.response.headers).toMatchObject({ 'content-type': 'image/gif', 'cache-control': 'no-cache, no-store, must-revalidate' })
        const [p] = rawPayloads(out)
        expect(p!.path).toBe(path)
        expect(p!.querystring).toBe('e=pv&url=http%3A%2F%2Fa.com')
        expect(p!.body).toBeUndefined()
      }
    }
  })

  it('POST /i, three segments, unknown paths and PUT → 404 with nothing recorded', () => {
    for (const [method, path] of [['POST', '/i'], ['GET', '/a/b/c'], ['GET', '/nope'], ['PUT', '/com.acme/v1'], ['GET', '/'], ['GET', '/crossdomain.xml'], ['GET', '/com.acme/v1/']]) {
      const out = run(request({ method, path }))
      expect(out.response.statusCode, `${method} ${path}`).toBe(404)
      expect(out.records).toEqual([])
    }
  })

  it('health, sink health and robots.txt', () => {
    expect(run(request({ path: '/health' })).response).toMatchObject({ statusCode: 200, body: 'ok' })
    expect(run(request({ path: '/sink-health' })).response).toMatchObject({ statusCode: 200, body: 'ok' })
    expect(run(request({ path: '/sink-health' }), config(), { sinkHealthy: false }).response).toMatchObject({ statusCode: 503 })
    const robots = run(request({ path: '/robots.txt' }))
    expect(robots.response.body).toBe(ROBOTS_TXT)
    expect(ROBOTS_TXT).toBe('User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /\n\nUser-agent: AdsBot-Google\nDisallow: /')
    for (const p of ['/health', '/sink-health', '/robots.txt']) expect(run(request({ path: p })).records).toEqual([])
  })

  it('root response and crossdomain.xml when enabled', () => {
    const cfg = config({
      rootResponse: { enabled: true, statusCode: 302, headers: { location: 'https://example.com/' }, body: '302' },
      crossDomain: { enabled: true, domains: ['*.acme.com', 'example.com'], secure: false },
    })
    expect(run(request({ path: '/' }), cfg).response).toEqual({ statusCode: 302, headers: { location: 'https://example.com/' }, body: '302' })
    const cd = run(request({ path: '/crossdomain.xml' }), cfg).response
    expect(cd.statusCode).toBe(200)
    expect(cd.headers?.['content-type']).toMatch(/^text\/xml/)
    expect(cd.body).toBe(
      '<?xml version="1.0"?>\n<cross-domain-policy>\n  <allow-access-from domain="*.acme.com" secure="false" />\n  <allow-access-from domain="example.com" secure="false" />\n</cross-domain-policy>',
    )
  })

  it('custom paths map /{vendor}/{version} to a standard path', () => {
    const cfg = config({ paths: { '/com.acme/track': '/com.snowplowanalytics.snowplow/tp2', '/com.acme/redirect': '/r/tp2' } })
    expect(rawPayloads(run(post({ path: '/com.acme/track' }), cfg))[0]!.path).toBe('/com.snowplowanalytics.snowplow/tp2')
    const redirect = run(request({ path: '/com.acme/redirect', rawQuery: 'u=https%3A%2F%2Fexample.com%2Fx' }), cfg)
    expect(redirect.response.statusCode).toBe(302)
    expect(redirect.response.headers?.location).toBe('https://example.com/x')
    expect(rawPayloads(redirect)[0]!.path).toBe('/r/tp2')
  })

  it('bodies over 2 MiB → 413, nothing recorded', () => {
    const out = run(post({ body: Buffer.alloc(2 * 1024 * 1024 + 1, 0x20) }))
    expect(out.response.statusCode).toBe(413)
    expect(out.records).toEqual([])
    expect(run(post({ body: Buffer.alloc(11, 0x20) }), config({ networking: { dropPayloadSize: 10 } })).response.statusCode).toBe(413)
  })

  it('503 for a failed write carries CORS headers', () => {
    expect(sinkFailureResponse(post())).toMatchObject({ statusCode: 503, headers: { 'access-control-allow-origin': 'https://shop.example.com', 'access-control-allow-credentials': 'true' } })
  })
})

describe('redirects', () => {
  it('are off by default: any /r/ path answers 404 redirects disabled', () => {
    for (const method of ['GET', 'POST', 'OPTIONS']) {
      const out = run(request({ method, path: '/r/tp2', rawQuery: 'u=https%3A%2F%2Fexample.com' }))
      expect(out.response).toMatchObject({ statusCode: 404, body: 'redirects disabled' })
      expect(out.records).toEqual([])
    }
  })

  it('when enabled: 302 to u, event recorded with path /r/tp2', () => {
    const out = run(request({ path: '/r/tp2', rawQuery: 'u=https%3A%2F%2Fexample.com%2Fpage%3Fa%3D1&aid=ads' }), config({ enableDefaultRedirect: true }))
    expect(out.response.statusCode).toBe(302)
    expect(out.response.headers?.location).toBe('https://example.com/page?a=1')
    expect(out.response.cookies?.[0]).toMatch(/^sp=/)
    const [p] = rawPayloads(out)
    expect(p).toMatchObject({ path: '/r/tp2', querystring: 'u=https%3A%2F%2Fexample.com%2Fpage%3Fa%3D1&aid=ads' })
  })

  it('missing, invalid or non-http u → 400 with no body', () => {
    const cfg = config({ enableDefaultRedirect: true })
    for (const q of ['', 'u=', 'u=not%20a%20url', 'u=javascript%3Aalert(1)']) {
      const out = run(request({ path: '/r/tp2', rawQuery: q }), cfg)
      expect(out.response.statusCode, q).toBe(400)
      expect(out.response.body).toBe('')
    }
  })

  it('allowed domains restrict the target host', () => {
    const cfg = config({ enableDefaultRedirect: true, redirectDomains: ['example.com'] })
    expect(run(request({ path: '/r/tp2', rawQuery: 'u=https%3A%2F%2Fexample.com%2F' }), cfg).response.statusCode).toBe(302)
    expect(run(request({ path: '/r/tp2', rawQuery: 'u=https%3A%2F%2Fevil.com%2F' }), cfg).response.statusCode).toBe(400)
    expect(run(request({ path: '/r/tp2', rawQuery: 'u=https%3A%2F%2Fsub.example.com%2F' }), cfg).response.statusCode).toBe(400)
  })
})

describe('CORS', () => {
  it('OPTIONS on any path: echo Origin, credentials, allowed headers, max age, no body', () => {
    for (const path of ['/com.snowplowanalytics.snowplow/tp2', '/i', '/anything/at/all']) {
      const out = run(request({ method: 'OPTIONS', path, headers: { origin: 'http://localhost:5173', 'access-control-request-headers': 'content-type,sp-anonymous' } }))
      expect(out.response.statusCode).toBe(200)
      expect(out.response.body).toBe('')
      expect(out.response.headers).toEqual({
        'access-control-allow-origin': 'http://localhost:5173',
        'access-control-allow-credentials': 'true',
        'access-control-allow-headers': 'Content-Type, SP-Anonymous',
        'access-control-max-age': '3600',
      })
      expect(out.records).toEqual([])
    }
  })

  it('without an Origin, allows *', () => {
    expect(run(request({ method: 'OPTIONS', headers: {} })).response.headers?.['access-control-allow-origin']).toBe('*')
    expect(run(request({ headers: { origin: 'null' } })).response.headers?.['access-control-allow-origin']).toBe('*')
  })

  it('max age comes from config', () => {
    expect(run(request({ method: 'OPTIONS' }), config({ cors: { accessControlMaxAgeSeconds: 60 } })).response.headers?.['access-control-max-age']).toBe('60')
  })

  it('tracking responses echo the Origin with credentials', () => {
    for (const out of [run(post()), run(request({ headers: { origin: 'https://shop.example.com' } }))]) {
      expect(out.response.headers).toMatchObject({ 'access-control-allow-origin': 'https://shop.example.com', 'access-control-allow-credentials': 'true' })
    }
  })
})

describe('CollectorPayload fields', () => {
  it('fills every field of a POST as the Scala collector does', () => {
    const req = post({
      headers: {
        host: 'collector.example.com:8080',
        'content-type': 'application/json; charset=UTF-8',
        'user-agent': 'node',
        referer: 'https://shop.example.com/cart',
        'x-forwarded-for': '203.0.113.7, 10.0.0.1',
        origin: 'https://shop.example.com',
      },
      cookies: ['sp=c5f3a09f-75f8-4309-bec5-fea560f78455', 'other=1'],
      rawQuery: 'tv=0',
    })
    const out = run(req)
    const [p] = rawPayloads(out)
    expect(p).toEqual({
      schema: COLLECTOR_PAYLOAD_SCHEMA,
      ipAddress: '203.0.113.7',
      timestamp: NOW,
      encoding: 'UTF-8',
      collector: 'floe-0.1.0-kinesis',
      userAgent: 'node',
      refererUri: 'https://shop.example.com/cart',
      path: '/com.snowplowanalytics.snowplow/tp2',
      querystring: 'tv=0',
      body: tp2Body,
      headers: [
        'Host: collector.example.com:8080',
        'Content-Type: application/json; charset=UTF-8',
        'User-Agent: node',
        'Referer: https://shop.example.com/cart',
        'X-Forwarded-For: 203.0.113.7, 10.0.0.1',
        'Origin: https://shop.example.com',
        'Cookie: sp=c5f3a09f-75f8-4309-bec5-fea560f78455; other=1',
        'application/json; charset=utf-8',
      ],
      contentType: 'application/json; charset=utf-8',
      hostname: 'collector.example.com',
      networkUserId: 'c5f3a09f-75f8-4309-bec5-fea560f78455',
    })
  })

  it('never records credentials: Authorization, Proxy-Authorization and the deployment\'s API key headers, in any case', () => {
    const secret = Buffer.from('floe:AdminPassword2024').toString('base64')
    const headers = {
      host: 'collector.example.com',
      'content-type': 'application/json',
      authorization: `Basic ${secret}`,
      'Proxy-Authorization': `Basic ${secret}`,
      apikey: '2f6bd2b5-3c8a-4c0e-9d55-0d4b0b6a1c11',
      'x-api-key': 'tracking-design-secret',
      'X-API-Key-ID': 'key-id',
      'x-custom': 'kept',
    }
    // an event too large for the stream record too: the size_violation bad row holds no credentials either
    const huge = JSON.stringify({ schema: TP2_SCHEMA, data: [{ e: 'pv', tv: 'js', p: 'web', x: 'a'.repeat(5000) }] })
    for (const req of [post({ headers }), request({ headers, rawQuery: 'e=pv' }), post({ headers, body: Buffer.from(huge) })]) {
      const out = run(req, config({ streams: { maxBytes: 2000 } }))
      expect(out.records.length).toBeGreaterThan(0)
      for (const r of out.records) {
        const text = r.data.toString('latin1')
        for (const s of [secret, 'Authorization', 'authorization', '2f6bd2b5', 'tracking-design-secret', 'key-id']) expect(text).not.toContain(s)
      }
      for (const p of rawPayloads(out)) expect(p.headers).toContain('X-Custom: kept')
    }
  })

  it('GET: no body, no content type (not even from a Content-Type header), query string kept raw, socket IP', () => {
    const [p] = rawPayloads(run(request({ rawQuery: 'e=pv&page=A%20b', headers: { host: 'h', 'content-type': 'image/gif' } })))
    expect(p!.body).toBeUndefined()
    expect(p!.contentType).toBeUndefined()
    expect(p!.headers).toEqual(['Host: h', 'Content-Type: image/gif'])
    expect(p!.querystring).toBe('e=pv&page=A%20b')
    expect(p!.ipAddress).toBe('198.51.100.9')
    expect(p!.userAgent).toBeUndefined()
  })

  it('querystring is always set, possibly empty; ipAddress unknown when nothing is known', () => {
    const [p] = rawPayloads(run(request({ sourceIp: '' })))
    expect(p!.querystring).toBe('')
    expect(p!.ipAddress).toBe('unknown')
  })

  it('partition key is a random UUID, or the client IP when configured', () => {
    expect(run(post()).records[0]!.partitionKey).toMatch(/^00000000-0000-4000-8000-/)
    const cfg = config({ streams: { useIpAddressAsPartitionKey: true } })
    expect(run(post({ headers: { 'x-forwarded-for': '203.0.113.7' } }), cfg).records[0]!.partitionKey).toBe('203.0.113.7')
  })

  it('collector name comes from config', () => {
    expect(rawPayloads(run(post(), config({ collectorName: 'ssc-3.4.0-kinesissink' })))[0]!.collector).toBe('ssc-3.4.0-kinesissink')
  })

  it('hostname drops the port, IPv6 too', () => {
    expect(rawPayloads(run(request({ headers: { host: '[::1]:8080' } })))[0]!.hostname).toBe('[::1]')
    expect(rawPayloads(run(request({ headers: {} })))[0]!.hostname).toBeUndefined()
  })
})

