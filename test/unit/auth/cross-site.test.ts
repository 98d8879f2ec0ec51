/**
 * The cross-site guard of the functions behind basic authentication: which
 * requests change state, when a browser's request comes from another origin,
 * and that every declared function behind basic authentication applies it.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { describe, expect, it } from 'vitest'
import { functions, type FunctionDecl, type RouteDecl } from '../../../lib/infra/functions'
import { changesState, crossSiteProblem, crossSiteRefusalReason, requestOrigin } from '../../../lib/http/cross-site'

const LOCAL = { host: '127.0.0.1:8080' }
const AWS = { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' }

describe('the request’s own origin', () => {
  it('is the Host header with the scheme of X-Forwarded-Proto (http without it), default ports left out', () => {
    expect(requestOrigin(LOCAL)).toBe('http://127.0.0.1:8080')
    expect(requestOrigin(AWS)).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com')
    expect(requestOrigin({ host: 'Floe.Example.com:443', 'x-forwarded-proto': 'https' })).toBe('https://floe.example.com')
    expect(requestOrigin({ host: '[::1]:8080' })).toBe('http://[::1]:8080')
    expect(requestOrigin({ host: 'floe.example.com:80' })).toBe('http://floe.example.com')
    expect(requestOrigin({})).toBeUndefined()
    expect(requestOrigin({ host: 'a b' })).toBeUndefined()
  })
})

describe('a browser request from another origin', () => {
  it('passes without Origin and Sec-Fetch-Site (curl, CI, test suites)', () => {
    expect(crossSiteProblem(LOCAL)).toBeUndefined()
    expect(crossSiteProblem(AWS)).toBeUndefined()
  })

  it('passes from the same origin, default ports and case aside', () => {
    expect(crossSiteProblem({ ...LOCAL, origin: 'http://127.0.0.1:8080' })).toBeUndefined()
    expect(crossSiteProblem({ ...AWS, origin: 'https://ABC123.execute-api.eu-west-1.amazonaws.com:443' })).toBeUndefined()
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:8080' })).toBeUndefined()
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'none' })).toBeUndefined()
  })

  it('is refused from another origin: another host, port or scheme', () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1:8081', 'https://127.0.0.1:8080', 'http://127.0.0.1', 'http://localhost:8080']) {
      expect(crossSiteProblem({ ...LOCAL, origin }), origin).toMatch(/^cross-site request refused: Origin ".*" is not this deployment's origin "http:\/\/127\.0\.0\.1:8080"/)
    }
    // on API Gateway the page is https: an http page of the same host is another origin
    expect(crossSiteProblem({ ...AWS, origin: 'http://abc123.execute-api.eu-west-1.amazonaws.com' })).toMatch(/^cross-site request refused/)
  })

  it('is refused when Origin is null, not one origin, or too long', () => {
    expect(crossSiteProblem({ ...LOCAL, origin: 'null' })).toMatch(/^cross-site request refused: Origin is null/)
    for (const origin of ['http://127.0.0.1:8080 https://evil.example', 'http://127.0.0.1:8080,http://evil.example', 'http://127.0.0.1:8080/path', 'http://user@127.0.0.1:8080', '127.0.0.1:8080', '', `http://${'a'.repeat(3000)}`]) {
      expect(crossSiteProblem({ ...LOCAL, origin }), origin).toMatch(/^cross-site request refused: Origin .* is not a single origin/)
    }
    expect(crossSiteProblem({ origin: 'http://127.0.0.1:8080' })).toMatch(/no valid Host/)
  })

  it('is refused on Sec-Fetch-Site cross-site or same-site, which decides over Origin', () => {
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'cross-site' })).toMatch(/^cross-site request refused: .*another site \(Sec-Fetch-Site: cross-site\)/)
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'same-site', origin: 'http://127.0.0.1:8080' })).toMatch(/\(Sec-Fetch-Site: same-site\)/)
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'Cross-Site' })).toMatch(/^cross-site request refused/)
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'same-origin, cross-site' })).toMatch(/^cross-site request refused/)
    // the browser judged against the page it shows: a proxy that rewrites Host does not break the pages
    expect(crossSiteProblem({ ...AWS, 'sec-fetch-site': 'same-origin', origin: 'https://floe.acme.com' })).toBeUndefined()
    // an unknown value: Origin decides
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'elsewhere', origin: 'https://evil.example' })).toMatch(/^cross-site request refused/)
    expect(crossSiteProblem({ ...LOCAL, 'sec-fetch-site': 'elsewhere' })).toBeUndefined()
  })
})

describe('requests that change state', () => {
  it('are every method but GET, HEAD and OPTIONS, and GET or HEAD on a declared path', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE', 'post', 'PROPFIND']) expect(changesState(m, '/control-plane/credentials'), m).toBe(true)
    for (const m of ['GET', 'HEAD', 'OPTIONS']) expect(changesState(m, '/control-plane/version'), m).toBe(false)
    const gets = ['/micro/reset']
    for (const p of ['/micro/reset', '/micro/reset/', '//micro//reset', '/micro/rese%74', '/MICRO/Reset']) {
      expect(changesState('GET', p, gets), p).toBe(true)
      expect(changesState('HEAD', p, gets), p).toBe(true)
    }
    expect(changesState('GET', '/micro/all', gets)).toBe(false)
    expect(changesState('OPTIONS', '/micro/reset', gets)).toBe(false)
  })

  it('are the only ones refused', () => {
    const evil = { ...LOCAL, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }
    expect(crossSiteRefusalReason({ method: 'GET', path: '/micro/all', headers: evil }, { stateChangingGets: ['/micro/reset'] })).toBeUndefined()
    expect(crossSiteRefusalReason({ method: 'GET', path: '/home', headers: evil })).toBeUndefined()
    expect(crossSiteRefusalReason({ method: 'GET', path: '/micro/reset', headers: evil }, { stateChangingGets: ['/micro/reset'] })).toMatch(/^cross-site request refused/)
    // costly reads: refused from elsewhere, allowed from the page itself and from non-browser clients
    const costly = { costlyReads: ['/micro/good', '/micro/bad'] }
    expect(crossSiteRefusalReason({ method: 'GET', path: '/micro/good', headers: evil }, costly)).toMatch(/^cross-site request refused/)
    expect(crossSiteRefusalReason({ method: 'GET', path: '//MICRO/bad', headers: evil }, costly)).toMatch(/^cross-site request refused/)
    expect(crossSiteRefusalReason({ method: 'GET', path: '/micro/good', headers: {} }, costly)).toBeUndefined()
    expect(crossSiteRefusalReason({ method: 'GET', path: '/micro/goodness', headers: evil }, costly)).toBeUndefined()
    expect(crossSiteRefusalReason({ method: 'OPTIONS', path: '/micro/good', headers: evil }, costly)).toBeUndefined()
    expect(crossSiteRefusalReason({ method: 'POST', path: '/micro/all', headers: evil })).toMatch(/^cross-site request refused/)
  })
})

/** An authenticated API Gateway event for a function behind basic authentication. */
function event(method: string, path: string, headers: Record<string, string>): APIGatewayProxyEventV2 {
  return {
    version: '2.0', routeKey: `ANY ${path}`, rawPath: path, rawQueryString: '', headers: { ...LOCAL, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    requestContext: {
      accountId: '000000000000', apiId: 'local', domainName: '127.0.0.1', domainPrefix: '127', requestId: 'id', routeKey: `ANY ${path}`, stage: '$default', time: '', timeEpoch: 0,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      authorizer: { lambda: { authenticated: true, username: 'floe' } },
    } as APIGatewayProxyEventV2['requestContext'],
    body: 'new_username=evil&new_password=EvilPassword2024', isBase64Encoded: false,
  }
}

describe('every function behind basic authentication', () => {
  const guarded = (Object.entries(functions) as [string, FunctionDecl][]).filter(([, d]) => d.auth === 'basic')

  it.each(guarded.map(([k, d]) => [k, d] as const))('%s refuses a cross-site POST to each of its routes before handling it', async (_key, decl) => {
    const { handler } = (await import(/* @vite-ignore */ `../../../${decl.entry}`)) as { handler: (e: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> }
    for (const r of (decl.routes ?? []) as RouteDecl[]) {
      if (r === '$default') continue
      const path = r.path.replace(/\{proxy\+\}/, 'credentials').replace(/\{[^}]+\}/g, 'x')
      for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }] as Record<string, string>[]) {
        const res = await handler(event('POST', path, headers))
        expect(res.statusCode, `${path} ${JSON.stringify(headers)}`).toBe(403)
        expect(String(res.body)).toContain('cross-site request refused')
      }
    }
  })

  it('the search function answers in each API’s own shape, and refuses a cross-site GET /micro/reset', async () => {
    const { handler } = (await import('../../../functions/search/handler')) as unknown as { handler: (e: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> }
    const es = await handler(event('DELETE', '/search-store/good', { origin: 'https://evil.example' }))
    expect(es.statusCode).toBe(403)
    expect(JSON.parse(String(es.body))).toMatchObject({ status: 403, error: { type: 'security_exception', reason: expect.stringMatching(/^cross-site request refused/) } })
    const reset = await handler(event('GET', '/micro/reset', { 'sec-fetch-site': 'cross-site' }))
    expect(reset.statusCode).toBe(403)
    expect(reset.headers?.['content-type']).toMatch(/^text\/plain/)
    expect(String(reset.body)).toMatch(/^cross-site request refused: /)
  })
})
