/**
 * Basic authentication through the gateway and the declared authorizer: the
 * protected routes, the exempt ones, wrong and missing credentials, and
 * addresses that keep failing.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda'
import { describe, expect, it } from 'vitest'
import { functions, type FunctionDecl, type FunctionKey } from '../../../lib/infra/functions'
import { loadHandler } from '../../../lib/local/handlers'
import { fromAddress } from '../../support/from-address'
import { basicAuth, useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ triggers: false })
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.current.url}${path}`, { headers, redirect: 'manual' })

const PROTECTED = ['/search-store', '/search-store/good/_count', '/micro/all', '/control-plane/version', '/control-plane/schemas', '/metrics', '/home', '/dashboard-ui']

describe('basic authentication', () => {
  it('every page and API of the single instance asks for credentials: 401 with WWW-Authenticate', async () => {
    for (const path of PROTECTED) {
      const r = await get(path)
      expect(r.status, path).toBe(401)
      expect(r.headers.get('www-authenticate'), path).toBe('Basic realm="Floe", charset="UTF-8"')
      expect(await r.text(), path).toMatch(/needs the Floe username and password\.\nThe password is .*'npx floe credentials reset' sets a new one/)
    }
  })

  it('the right credentials open them', async () => {
    for (const path of ['/search-store', '/micro/all']) expect((await get(path, withAuth())).status, path).toBe(200)
  })

  it('wrong or malformed credentials are refused with a reason', async () => {
    const wrong = await get('/search-store', { authorization: basicAuth('floe', 'NotThePassword1') })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic realm="Floe"/)
    expect(await wrong.text()).toMatch(/username or password is wrong/)
    const bearer = await get('/search-store', { authorization: 'Bearer abc' })
    expect(bearer.status).toBe(401)
    expect(await bearer.text()).toMatch(/not HTTP basic authentication/)
    const otherUser = await get('/search-store', { authorization: basicAuth('admin', 'TestPassword2024') })
    expect(otherUser.status).toBe(401)
  })

  it('the collector, /health, the registry (API keys) and the tracking-design API (tokens) need no basic authentication', async () => {
    expect((await get('/health')).status).toBe(200)
    expect((await get('/registry-server/api/meta/health')).status).toBe(200)
    expect((await get('/i?e=pv&p=web&tv=js-4.0.0')).status).toBe(200)
    const msc = await get('/api/msc/v1/organizations/00000000-0000-4000-8000-000000000000/event-specs/v1')
    expect(msc.status).toBe(401) // its own token auth, not basic authentication
    expect(msc.headers.get('www-authenticate') ?? '').not.toMatch(/Basic/)
  })

  it('a right password clears the count: right, wrong, right, wrong … from one address never waits, also when the right header was verified before', async () => {
    const right = basicAuth('floe', 'TestPassword2024')
    for (let i = 0; i < 8; i++) {
      expect((await fromAddress(stack.current.url, '/micro/all', '127.0.0.38', { authorization: right })).status, `right password #${i + 1}`).toBe(200)
      expect((await fromAddress(stack.current.url, '/micro/all', '127.0.0.38', { authorization: basicAuth('floe', `Wrong${i}Password1`) })).status, `wrong password #${i + 1}`).toBe(401)
    }
  })

  it('an address that keeps failing is slowed down (429 with Retry-After), others are not', async () => {
    const from = (ip: string, auth: string) => get('/micro/all', { authorization: auth, 'x-test-ip': ip })
    // The gateway reports the socket address; all requests here come from 127.0.0.1, so this test runs last.
    let last: Response | undefined
    for (let i = 0; i < 6; i++) last = await from('127.0.0.1', basicAuth('floe', `Wrong${i}Password1`))
    expect(last!.status).toBe(429)
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await last!.text()).toMatch(/Too many failed sign-ins with this username from this address: try again in \d+ seconds/)
    const right = await get('/micro/all', withAuth())
    expect(right.status).toBe(429)
  })
})

describe('functions behind basic authentication', () => {
  const guarded = (Object.entries(functions) as [FunctionKey, FunctionDecl][]).filter(([, d]) => d.auth === 'basic')

  it('are the pages and APIs of the single instance', () => {
    expect(guarded.map(([k]) => k).sort()).toEqual(['controlPlane', 'metrics', 'microValidate', 'search', 'ui'])
  })

  it.each(guarded.map(([k]) => k))('%s refuses a request that carries no verdict of the authorizer', async (key) => {
    const handler = await loadHandler(key)
    const event = {
      version: '2.0', routeKey: '$default', rawPath: '/x', rawQueryString: '', headers: { authorization: basicAuth() },
      requestContext: { http: { method: 'GET', path: '/x', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' }, timeEpoch: Date.now() },
      isBase64Encoded: false,
    } as unknown as APIGatewayProxyEventV2
    const r = await handler(event, {})
    expect(r.statusCode).toBe(401)
  })
})
