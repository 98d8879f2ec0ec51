import { describe, expect, it } from 'vitest'
import { cookieDomain, httpDate } from '../../../lib/core/collector/cookies'
import { ANONYMOUS_NUID, handleCollectorRequest } from '../../../lib/core/collector/service'
import { DEFAULT_COLLECTOR_CONFIG } from '../../../lib/core/collector/config'
import { config, NOW, rawPayloads, request, uuids } from './helpers'

const run = (req = request(), cfg = config()) => handleCollectorRequest(req, cfg, NOW, uuids())
const NUID = 'c5f3a09f-75f8-4309-bec5-fea560f78455'
const EXPIRES = httpDate(NOW + 365 * 86_400_000)

describe('network user id cookie', () => {
  it('a new visitor gets a random nuid, recorded and set with the default attributes', () => {
    const out = run()
    expect(rawPayloads(out)[0]!.networkUserId).toBe('00000000-0000-4000-8000-000000000001')
    expect(out.records[0]!.partitionKey).toBe('00000000-0000-4000-8000-000000000002')
    expect(out.response.cookies).toEqual([`sp=00000000-0000-4000-8000-000000000001; Expires=${EXPIRES}; Path=/; SameSite=None; Secure; HttpOnly`])
    expect(EXPIRES).toBe('Thu, 30 Apr 2026 10:00:00 GMT')
  })

  it('an existing cookie is read back, recorded, and refreshed', () => {
    const out = run(request({ cookies: [`sp=${NUID}`, 'x=y'] }))
    expect(rawPayloads(out)[0]!.networkUserId).toBe(NUID)
    expect(out.response.cookies?.[0]).toMatch(new RegExp(`^sp=${NUID}; Expires=${EXPIRES}`))
  })

  it('reads the Cookie header when the gateway did not split cookies out', () => {
    expect(rawPayloads(run(request({ headers: { cookie: `a=1; sp=${NUID}` } })))[0]!.networkUserId).toBe(NUID)
  })

  it('the nuid query parameter wins over the cookie and is set as the cookie', () => {
    const out = run(request({ rawQuery: 'e=pv&nuid=11111111-2222-4333-8444-555555555555', cookies: [`sp=${NUID}`] }))
    expect(rawPayloads(out)[0]!.networkUserId).toBe('11111111-2222-4333-8444-555555555555')
    expect(out.response.cookies?.[0]).toMatch(/^sp=11111111-2222-4333-8444-555555555555;/)
  })

  it('attributes follow config: name, expiry, Secure, HttpOnly, SameSite, path, client twin', () => {
    const cfg = config({ cookie: { name: 'floe_id', expirationDays: 30, secure: false, httpOnly: false, sameSite: 'Lax', path: '/t', clientCookieName: 'floe_client' } })
    const out = run(request({ cookies: [`floe_id=${NUID}`] }), cfg)
    expect(rawPayloads(out)[0]!.networkUserId).toBe(NUID)
    const exp = httpDate(NOW + 30 * 86_400_000)
    expect(out.response.cookies).toEqual([`floe_id=${NUID}; Expires=${exp}; Path=/t; SameSite=Lax`, `floe_client=${NUID}; Expires=${exp}; Path=/t; SameSite=Lax`])
  })

  it('disabled cookies: no Set-Cookie, the cookie is not read, a fresh nuid each time', () => {
    const out = run(request({ cookies: [`sp=${NUID}`] }), config({ cookie: { enabled: false } }))
    expect(out.response.cookies).toBeUndefined()
    expect(rawPayloads(out)[0]!.networkUserId).not.toBe(NUID)
  })

  describe('domain', () => {
    const cookie = { ...DEFAULT_COLLECTOR_CONFIG.cookie, domains: ['acme.com', '.example.org'], fallbackDomain: 'fallback.net' }
    it('picks the first configured domain equal to or a parent of the Origin host', () => {
      expect(cookieDomain(cookie, 'https://acme.com')).toBe('acme.com')
      expect(cookieDomain(cookie, 'https://www.shop.acme.com:8443')).toBe('acme.com')
      expect(cookieDomain(cookie, 'http://a.example.org')).toBe('.example.org')
      expect(cookieDomain(cookie, 'http://other.com http://b.example.org')).toBe('.example.org')
    })
    it('falls back to fallbackDomain, else host-only', () => {
      expect(cookieDomain(cookie, 'https://notacme.com')).toBe('fallback.net')
      expect(cookieDomain(cookie, undefined)).toBe('fallback.net')
      expect(cookieDomain({ ...cookie, fallbackDomain: undefined }, 'https://x.com')).toBeUndefined()
    })
    it('appears in Set-Cookie', () => {
      const out = run(request({ headers: { origin: 'https://www.acme.com' } }), config({ cookie: { domains: ['acme.com'] } }))
      expect(out.response.cookies?.[0]).toContain('; Domain=acme.com; Path=/')
    })
  })
})

describe('SP-Anonymous', () => {
  const anon = (over = {}) =>
    request({
      method: 'POST',
      path: '/com.snowplowanalytics.snowplow/tp2',
      headers: { host: 'c.example.com', 'sp-anonymous': '*', 'x-forwarded-for': '203.0.113.7', 'x-real-ip': '203.0.113.7', 'user-agent': 'ua', 'content-type': 'application/json' },
      cookies: [`sp=${NUID}`],
      body: Buffer.from('{}'),
      ...over,
    })

  it('nuid is all zeros, IP unknown, identifying headers dropped, random partition key', () => {
    const cfg = config({ streams: { useIpAddressAsPartitionKey: true } })
    const out = run(anon({ rawQuery: 'nuid=11111111-2222-4333-8444-555555555555' }), cfg)
    const [p] = rawPayloads(out)
    expect(p!.networkUserId).toBe(ANONYMOUS_NUID)
    expect(p!.ipAddress).toBe('unknown')
    expect(p!.headers).toEqual(['Host: c.example.com', 'Sp-Anonymous: *', 'User-Agent: ua', 'Content-Type: application/json', 'application/json'])
    expect(out.records[0]!.partitionKey).toMatch(/^00000000-0000-4000-8000-/)
  })

  it('an existing sp cookie is expired', () => {
    const out = run(anon())
    expect(out.response.cookies).toEqual(['sp=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; SameSite=None; Secure; HttpOnly'])
  })

  it('without a cookie, none is set', () => {
    expect(run(anon({ cookies: [] })).response.cookies).toBeUndefined()
  })
})

describe('do-not-track cookie', () => {
  const cfg = config({ doNotTrackCookie: { enabled: true, name: 'dnt', value: 'yes|t.ue' } })
  it('a matching cookie: 200 as usual, nothing recorded, no cookie set', () => {
    for (const v of ['yes', 'true']) {
      const out = run(request({ cookies: [`dnt=${v}`] }), cfg)
      expect(out.response.statusCode).toBe(200)
      expect(out.records).toEqual([])
      expect(out.response.cookies).toBeUndefined()
    }
    const postOut = run(request({ method: 'POST', path: '/com.snowplowanalytics.snowplow/tp2', cookies: ['dnt=yes'], body: Buffer.from('{}') }), cfg)
    expect(postOut.response).toMatchObject({ statusCode: 200, body: 'ok' })
    expect(postOut.records).toEqual([])
  })
  it('the regex must match the whole value', () => {
    expect(run(request({ cookies: ['dnt=yes please'] }), cfg).records).toHaveLength(1)
    expect(run(request({ cookies: ['other=yes'] }), cfg).records).toHaveLength(1)
  })
  it('is off by default', () => {
    expect(run(request({ cookies: ['dnt=yes'] })).records).toHaveLength(1)
  })
})

describe('cookie bounce', () => {
  const cfg = config({ cookieBounce: { enabled: true } })
  it('a cookieless pixel request is redirected to itself with n3pc=true and a cookie, nothing recorded', () => {
    const out = run(request({ rawQuery: 'e=pv', headers: { host: 'c.example.com', 'x-forwarded-proto': 'https' } }), cfg)
    expect(out.response.statusCode).toBe(302)
    expect(out.response.headers?.location).toBe('https://c.example.com/i?e=pv&n3pc=true')
    expect(out.response.cookies?.[0]).toMatch(/^sp=00000000-0000-4000-8000-000000000001;/)
    expect(out.records).toEqual([])
  })
  it('coming back without the cookie records the fallback id', () => {
    const out = run(request({ rawQuery: 'e=pv&n3pc=true' }), cfg)
    expect(out.response.statusCode).toBe(200)
    expect(rawPayloads(out)[0]!.networkUserId).toBe('00000000-0000-4000-A000-000000000000')
  })
  it('requests with a cookie, and POSTs, are not bounced', () => {
    expect(run(request({ cookies: [`sp=${NUID}`] }), cfg).response.statusCode).toBe(200)
    expect(run(request({ method: 'POST', path: '/com.snowplowanalytics.snowplow/tp2', body: Buffer.from('{}') }), cfg).response.statusCode).toBe(200)
  })
})
