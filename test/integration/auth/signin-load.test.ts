/**
 * Sign-ins under load, through the gateway and the declared authorizer: many
 * concurrent wrong passwords cost bounded work and never a 5xx, the right
 * password from another address still gets in, concurrent right passwords
 * with a cold cache all get in, and requests without credentials are
 * challenges that never count against anyone.
 */
import { describe, expect, it } from 'vitest'
import { fromAddress } from '../../support/from-address'
import { basicAuth, useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ triggers: false })
const get = (ip: string, headers: Record<string, string> = {}) => fromAddress(stack.current.url, '/micro/all', ip, headers)

describe('sign-ins under load', () => {
  it('100 concurrent sign-ins with the right password and a cold cache all get in', { timeout: 120_000 }, async () => {
    // the functions loaded (a challenge: nothing verified, the cache stays cold)
    expect((await get('127.0.0.6')).status).toBe(401)
    const answers = await Promise.all(Array.from({ length: 100 }, () => get('127.0.0.4', withAuth())))
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200))
  })

  it('200 concurrent wrong sign-ins from one address: no 5xx, refusals say when to retry, and the right password still gets in from another address', { timeout: 120_000 }, async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => get('127.0.0.3', { authorization: basicAuth('floe', `WrongPassword${i}`) })))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s >= 500)).toEqual([])
    expect(new Set(statuses)).toEqual(new Set([401, 429]))
    for (const a of answers.filter((x) => x.status === 429)) expect(Number(a.headers['retry-after'])).toBeGreaterThan(0)
    // the right password, from another address, at once
    expect((await get('127.0.0.2', withAuth())).status).toBe(200)
  })

  it('requests without credentials are challenges: never counted, and still challenges while an address waits', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await get('127.0.0.5')
      expect(r.status).toBe(401)
      expect(r.headers['www-authenticate']).toBe('Basic realm="Floe", charset="UTF-8"')
    }
    expect((await get('127.0.0.5', withAuth())).status).toBe(200)
    // 127.0.0.3 waits after the wrong passwords above, yet a page load without credentials is asked for them
    const challenge = await get('127.0.0.3')
    expect(challenge.status).toBe(401)
    expect(challenge.headers['www-authenticate']).toMatch(/^Basic realm="Floe"/)
    expect(challenge.body).toMatch(/'npx floe credentials reset' sets a new one/)
  })
})
