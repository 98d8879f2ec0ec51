/**
 * Hostile values in `nuid`, cookies and headers: the cookie never carries
 * attributes from a request, and no answer can fail once the payload was
 * written (the whole response is checked first).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { collectorHttpHandler } from '../../../functions/collector/app'
import { handleCollectorRequest, isValidNetworkUserId } from '../../../lib/core/collector/service'
import { decodeHeaderValue, responseProblem } from '../../../lib/http/headers'
import type { CollectorRecord } from '../../../lib/core/collector/service'
import { config, rawPayloads, request, uuids } from './helpers'

const COOKIE_ATTRIBUTES = ['Expires', 'Path', 'SameSite', 'Secure', 'HttpOnly']
/** The attribute names of a Set-Cookie value, and its cookie value. */
function parseSetCookie(c: string): { name: string; value: string; attributes: string[] } {
  const [first, ...rest] = c.split('; ')
  const eq = first!.indexOf('=')
  return { name: first!.slice(0, eq), value: first!.slice(eq + 1), attributes: rest.map((a) => a.split('=')[0]!) }
}

describe('nuid', () => {
  it('a nuid with cookie attributes is not written into Set-Cookie, and is recorded as received', () => {
    const poison = 'abc; Domain=evil.example; Max-Age=999999999'
    const out = handleCollectorRequest(request({ rawQuery: `e=pv&nuid=${encodeURIComponent(poison)}` }), config(), Date.now(), uuids())
    expect(out.response.cookies).toHaveLength(1)
    const c = parseSetCookie(out.response.cookies![0]!)
    expect(c.attributes).toEqual(COOKIE_ATTRIBUTES)
    expect(isValidNetworkUserId(c.value)).toBe(true)
    expect(c.value).toBe('00000000-0000-4000-8000-000000000001')
    const [p] = rawPayloads(out)
    expect(p!.networkUserId).toBe(poison)
    expect(p!.querystring).toContain(`nuid=${encodeURIComponent(poison)}`)
  })

  it('a valid nuid is the cookie; a poisoned cookie is replaced by a fresh id', () => {
    const ok = handleCollectorRequest(request({ rawQuery: 'nuid=6b9a1f2e-1111-4222-8333-444455556666' }), config(), Date.now(), uuids())
    expect(parseSetCookie(ok.response.cookies![0]!).value).toBe('6b9a1f2e-1111-4222-8333-444455556666')
    const poisoned = handleCollectorRequest(request({ cookies: ['sp="a b"'] }), config(), Date.now(), uuids())
    expect(parseSetCookie(poisoned.response.cookies![0]!).value).toBe('00000000-0000-4000-8000-000000000001')
  })

  it('accepts only cookie-octets, 1 to 128 of them', () => {
    for (const v of ['abc', '6b9a1f2e-1111-4222-8333-444455556666', 'x'.repeat(128), '!#$%&\'()*+-./:<=>?@[]^_`{|}~']) expect(isValidNetworkUserId(v), v).toBe(true)
    for (const v of ['', 'x'.repeat(129), 'a b', 'a;b', 'a,b', 'a"b', 'a\\b', 'a\u0000b', 'é', 'a\tb']) expect(isValidNetworkUserId(v), JSON.stringify(v)).toBe(false)
  })
})

describe('no answer fails after the write', () => {
  function app() {
    const written: CollectorRecord[][] = []
    const handler = collectorHttpHandler(async (records) => void written.push([...records]), () => config())
    return { handler, written }
  }

  it('a nuid with a NUL or a non-Latin-1 character is answered 200 with a sendable response, written once', async () => {
    for (const nuid of ['a\u0000b', 'ñ\u0100\u{1F600}']) {
      const { handler, written } = app()
      const res = await handler(request({ rawQuery: `e=pv&nuid=${encodeURIComponent(nuid)}` }))
      expect(res.statusCode).toBe(200)
      expect(responseProblem(res)).toBeUndefined()
      expect(written).toHaveLength(1)
    }
  })

  it('a response that could not be sent is refused with a 400 before anything is written', async () => {
    const { handler, written } = app()
    const res = await handler(request({ headers: { host: 'c.example', origin: 'https://\u0100.example' }, rawQuery: 'e=pv' }))
    expect(res.statusCode).toBe(400)
    expect(res.body).toMatch(/^Bad Request: header access-control-allow-origin has a character that cannot be sent/)
    expect(written).toEqual([])
  })

  it('a redirect target outside ASCII is percent-encoded in Location', () => {
    const out = handleCollectorRequest(request({ path: '/r/tp2', rawQuery: `u=${encodeURIComponent('https://example.com/ñ?q=é')}` }), config({ enableDefaultRedirect: true }), Date.now(), uuids())
    expect(out.response.statusCode).toBe(302)
    expect(out.response.headers!.location).toBe('https://example.com/%C3%B1?q=%C3%A9')
  })

  it('property: whatever the nuid, cookies and headers, the handler answers, every answer can be sent, the cookie has only its own attributes, and a 2xx was written exactly once', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 60 })
    await fc.assert(fc.asyncProperty(
      fc.record({ nuid: fc.option(text), cookie: fc.option(text), ua: text, referer: text, xff: text, origin: fc.option(text), q: text }),
      async (v) => {
        const { handler, written } = app()
        const headers: Record<string, string> = { host: 'c.example', 'user-agent': v.ua, referer: v.referer, 'x-forwarded-for': v.xff }
        if (v.origin !== null) headers.origin = v.origin
        const query: Record<string, string> = { e: 'pv', x: v.q }
        if (v.nuid !== null) query.nuid = v.nuid
        const rawQuery = Object.entries(query).map(([k, x]) => `${k}=${encodeURIComponent(x)}`).join('&')
        const res = await handler(request({ headers, query, rawQuery, cookies: v.cookie === null ? [] : [`sp=${v.cookie}`] }))
        expect(responseProblem(res)).toBeUndefined()
        for (const c of res.cookies ?? []) {
          const p = parseSetCookie(c)
          expect(p.attributes).toEqual(COOKIE_ATTRIBUTES)
          expect(isValidNetworkUserId(p.value)).toBe(true)
        }
        if (res.statusCode < 300) expect(written).toHaveLength(1)
        else expect(written).toEqual([])
      },
    ), { numRuns: 300 })
  })
})

describe('header bytes', () => {
  it('UTF-8 bytes read as Latin-1 are decoded as UTF-8; other bytes are kept', () => {
    const utf8AsLatin1 = Buffer.from('Mozilla/5.0 (Ünïcødé 😀)', 'utf8').toString('latin1')
    expect(decodeHeaderValue(utf8AsLatin1)).toBe('Mozilla/5.0 (Ünïcødé 😀)')
    expect(decodeHeaderValue('caf\u00e9')).toBe('caf\u00e9') // a lone Latin-1 byte is not UTF-8
    expect(decodeHeaderValue('plain')).toBe('plain')
  })
})
