import { describe, expect, it } from 'vitest'
import {
  Authenticator, ensureCredentials, generatePassword, hashCredentials, parseBasicAuthorization, passwordProblem, usernameProblem, verifyCredentials,
  type CredentialStore, type StoredCredentials,
} from '../../../lib/core/auth/basic'

const FAST = { N: 1024, r: 8, p: 1 } as const
const header = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`

class MemoryStore implements CredentialStore {
  value: StoredCredentials | undefined
  reads = 0
  async get() {
    this.reads++
    return this.value
  }
  async putIfAbsent(c: StoredCredentials) {
    if (this.value) return false
    this.value = c
    return true
  }
  async replace(c: StoredCredentials, v: number) {
    if (this.value?.version !== v) return false
    this.value = c
    return true
  }
}

async function storeWith(username: string, password: string) {
  const s = new MemoryStore()
  s.value = await hashCredentials(username, password, 1, new Date(), FAST)
  return s
}

describe('credential rules', () => {
  it('passwords: 12 to 128 letters and digits, the rule in the message', () => {
    expect(passwordProblem('abcdefGHIJ12')).toBeUndefined()
    expect(passwordProblem('short1')).toMatch(/^weak password: it has 6 characters; the password must be 12 to 128 letters and digits/)
    expect(passwordProblem('with space 12345')).toMatch(/characters other than letters and digits/)
    expect(passwordProblem('pässwordpässword')).toMatch(/characters other than letters and digits/)
    expect(passwordProblem('a'.repeat(129))).toMatch(/129 characters/)
    expect(generatePassword()).toMatch(/^[A-Za-z0-9]{20}$/)
    expect(passwordProblem(generatePassword())).toBeUndefined()
  })
  it('usernames: no colon, no spaces, 1 to 64 characters', () => {
    expect(usernameProblem('admin@acme.com')).toBeUndefined()
    expect(usernameProblem('a:b')).toMatch(/invalid username/)
    expect(usernameProblem('')).toMatch(/invalid username/)
    expect(usernameProblem('x'.repeat(65))).toMatch(/invalid username/)
  })
})

describe('basic authorization headers', () => {
  it('parses the scheme case-insensitively, passwords may contain colons', () => {
    expect(parseBasicAuthorization(header('u', 'p:q'))).toEqual({ username: 'u', password: 'p:q' })
    expect(parseBasicAuthorization(`basic ${Buffer.from('u:p').toString('base64')}`)).toEqual({ username: 'u', password: 'p' })
    expect(parseBasicAuthorization('Bearer abc')).toBeUndefined()
    expect(parseBasicAuthorization(`Basic ${Buffer.from('nocolon').toString('base64')}`)).toBeUndefined()
    expect(parseBasicAuthorization(`Basic ${'A'.repeat(2000)}`)).toBeUndefined()
  })
})

describe('password hashes', () => {
  it('verifies the right password and username only; the salt differs each time', async () => {
    const a = await hashCredentials('floe', 'CorrectHorse12', 1, new Date(), FAST)
    const b = await hashCredentials('floe', 'CorrectHorse12', 1, new Date(), FAST)
    expect(a.salt).not.toBe(b.salt)
    expect(a.hash).not.toContain('CorrectHorse12')
    expect(await verifyCredentials(a, 'floe', 'CorrectHorse12')).toBe(true)
    expect(await verifyCredentials(a, 'floe', 'CorrectHorse13')).toBe(false)
    expect(await verifyCredentials(a, 'other', 'CorrectHorse12')).toBe(false)
  })
})

describe('Authenticator', () => {
  it('authenticates, and tells a missing header from a malformed or a wrong one', async () => {
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12') })
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '1.1.1.1')).toEqual({ authenticated: true, username: 'floe' })
    expect(await auth.decide(undefined, '1.1.1.1')).toEqual({ authenticated: false, reason: 'missing' })
    expect(await auth.decide('Basic !!!', '1.1.1.1')).toEqual({ authenticated: false, reason: 'malformed' })
    expect(await auth.decide(header('floe', 'nope'), '1.1.1.1')).toEqual({ authenticated: false, reason: 'wrong' })
  })

  it('slows an address down after repeated failures, with growing waits; others are not affected', async () => {
    let now = 1_000_000
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), now: () => now, freeFailures: 3 })
    const bad = header('floe', 'wrongwrongwrong')
    for (let i = 0; i < 2; i++) expect((await auth.decide(bad, '9.9.9.9')).authenticated).toBe(false)
    expect(await auth.decide(bad, '9.9.9.9')).toEqual({ authenticated: false, reason: 'wrong' })
    // blocked now, even with the right password
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '9.9.9.9')).toEqual({ authenticated: false, reason: 'throttled', retryAfterSeconds: 2 })
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '8.8.8.8')).authenticated).toBe(true)
    now += 2_000
    expect(await auth.decide(bad, '9.9.9.9')).toEqual({ authenticated: false, reason: 'wrong' })
    expect(await auth.decide(bad, '9.9.9.9')).toEqual({ authenticated: false, reason: 'throttled', retryAfterSeconds: 4 })
    now += 4_000
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '9.9.9.9')).authenticated).toBe(true)
    expect(await auth.decide(bad, '9.9.9.9')).toEqual({ authenticated: false, reason: 'wrong' })
  })

  it('a right password clears the count, also when its header was verified before (answered from memory)', async () => {
    let now = 1_000_000
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), now: () => now, freeFailures: 5, verdictTtlMs: 30_000 })
    const right = header('floe', 'CorrectHorse12')
    const wrong = header('floe', 'wrongwrongwrong')
    // right, wrong, right, wrong … from one address, all within the verified-header memory
    for (let i = 0; i < 12; i++) {
      expect(await auth.decide(right, '9.9.9.9'), `right password #${i + 1}`).toEqual({ authenticated: true, username: 'floe' })
      expect(await auth.decide(wrong, '9.9.9.9'), `wrong password #${i + 1}`).toEqual({ authenticated: false, reason: 'wrong' })
      now += 1_000
    }
  })

  it('a request without an Authorization header is a challenge: never counted, never slowed down', async () => {
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), freeFailures: 1 })
    for (let i = 0; i < 50; i++) expect(await auth.decide(undefined, '9.9.9.9')).toEqual({ authenticated: false, reason: 'missing' })
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '9.9.9.9')).authenticated).toBe(true)
    // even while the address waits after a wrong password, the challenge stays a challenge
    await auth.decide(header('floe', 'wrongwrongwrong'), '9.9.9.9')
    expect(await auth.decide(undefined, '9.9.9.9')).toEqual({ authenticated: false, reason: 'missing' })
    expect(await auth.decide('', '9.9.9.9')).toEqual({ authenticated: false, reason: 'missing' })
  })

  it('failures are counted before the hash: concurrent wrong sign-ins from one address cost at most freeFailures hashes', async () => {
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), freeFailures: 3, maxQueuedHashes: 1000 })
    const verdicts = await Promise.all(Array.from({ length: 200 }, (_, i) => auth.decide(header('floe', `wrongPassword${i}`), '6.6.6.6')))
    expect(verdicts.filter((v) => !v.authenticated && v.reason === 'wrong')).toHaveLength(3)
    expect(verdicts.filter((v) => !v.authenticated && v.reason === 'throttled')).toHaveLength(197)
    // the right password from another address is not locked out
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '7.7.7.7')).toEqual({ authenticated: true, username: 'floe' })
  })

  it('concurrent checks of the same credentials share one hash: a cold cache under load authenticates them all', async () => {
    let hashes = 0
    const verify = (s: StoredCredentials, u: string, p: string) => (hashes++, verifyCredentials(s, u, p))
    // one hash at a time and no queue: any second hash would be refused as busy
    const store = await storeWith('floe', 'CorrectHorse12')
    const auth = new Authenticator({ store, maxConcurrentHashes: 1, maxQueuedHashes: 0, verify })
    const verdicts = await Promise.all(Array.from({ length: 100 }, (_, i) => auth.decide(header('floe', 'CorrectHorse12'), `10.0.0.${i}`)))
    expect(verdicts.every((v) => v.authenticated)).toBe(true)
    expect(hashes).toBe(1)
    // and one read of the stored credentials
    expect(store.reads).toBe(1)
  })

  it('bounds the hashes computed at once, and refuses beyond a short queue (busy, retry in 1 s)', async () => {
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), maxConcurrentHashes: 1, maxQueuedHashes: 2 })
    const verdicts = await Promise.all(Array.from({ length: 10 }, (_, i) => auth.decide(header('floe', `wrongPassword${i}`), `10.0.1.${i}`)))
    expect(verdicts.filter((v) => !v.authenticated && v.reason === 'wrong')).toHaveLength(3)
    expect(verdicts.filter((v) => !v.authenticated && v.reason === 'busy')).toEqual(Array(7).fill({ authenticated: false, reason: 'busy', retryAfterSeconds: 1 }))
    // the queue drains: the next sign-in is checked
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '10.0.1.99')).authenticated).toBe(true)
  })

  it('a sign-in waits for a hash at most maxHashWaitMs, then is refused as busy and not counted as a failure', async () => {
    let release!: (ok: boolean) => void
    const first = new Promise<boolean>((r) => (release = r))
    const verify = (s: StoredCredentials, u: string, p: string) => (p === 'HangingPassword1' ? first : verifyCredentials(s, u, p))
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), maxConcurrentHashes: 1, maxQueuedHashes: 1, maxHashWaitMs: 20, freeFailures: 1, verify })
    const hanging = auth.decide(header('floe', 'HangingPassword1'), '3.3.3.3')
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '4.4.4.4')).toEqual({ authenticated: false, reason: 'busy', retryAfterSeconds: 1 })
    release(false)
    expect(await hanging).toEqual({ authenticated: false, reason: 'wrong' })
    // the refused one was not counted: 4.4.4.4 (one free failure) is not made to wait
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '4.4.4.4')).toEqual({ authenticated: true, username: 'floe' })
  })

  it('the wait is per username and address, capped, and forgotten after the window', async () => {
    let now = 0
    const auth = new Authenticator({ store: await storeWith('floe', 'CorrectHorse12'), now: () => now, freeFailures: 1, maxBlockSeconds: 8, failureWindowMs: 60_000 })
    // other usernames from this address do not make the owner wait
    expect(await auth.decide(header('guess', 'wrongwrongwrong'), '5.5.5.5')).toMatchObject({ reason: 'wrong' })
    expect(await auth.decide(header('nobody', 'wrongwrongwrong'), '5.5.5.5')).toMatchObject({ reason: 'throttled' })
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '5.5.5.5')).authenticated).toBe(true)
    // the owner's username: waits grow 2, 4, 8, then stay at 8 (the cap)
    const waits: number[] = []
    for (let i = 0; i < 5; i++) {
      const v = await auth.decide(header('floe', `wrongPassword${i}`), '5.5.5.5')
      expect(v).toMatchObject({ reason: 'wrong' })
      const w = await auth.decide(header('floe', 'CorrectHorse12'), '5.5.5.5')
      if (!w.authenticated && w.reason === 'throttled') {
        waits.push(w.retryAfterSeconds)
        now += w.retryAfterSeconds * 1000
      }
    }
    expect(waits).toEqual([2, 4, 8, 8, 8])
    await auth.decide(header('floe', 'wrongPasswordX'), '5.5.5.5')
    expect(await auth.decide(header('floe', 'CorrectHorse12'), '5.5.5.5')).toMatchObject({ reason: 'throttled' })
    now += 61_000 // the window after the last failure: forgotten
    expect((await auth.decide(header('floe', 'CorrectHorse12'), '5.5.5.5')).authenticated).toBe(true)
  })

  it('a change of credentials is seen within the credentials TTL, at once after forget()', async () => {
    let now = 0
    const store = await storeWith('floe', 'CorrectHorse12')
    const auth = new Authenticator({ store, now: () => now, credentialsTtlMs: 5_000 })
    const old = header('floe', 'CorrectHorse12')
    expect((await auth.decide(old, 'ip')).authenticated).toBe(true)
    store.value = await hashCredentials('admin', 'BatteryStaple99', 2, new Date(), FAST)
    expect((await auth.decide(old, 'ip')).authenticated).toBe(true) // cached for up to the TTL
    now += 5_000
    expect((await auth.decide(old, 'ip')).authenticated).toBe(false)
    expect((await auth.decide(header('admin', 'BatteryStaple99'), 'ip')).authenticated).toBe(true)
    store.value = await hashCredentials('admin', 'Another123456', 3, new Date(), FAST)
    auth.forget()
    expect((await auth.decide(header('admin', 'BatteryStaple99'), 'ip')).authenticated).toBe(false)
  })
})

describe('first credentials', () => {
  it('from FLOE_USERNAME and FLOE_PASSWORD, never replacing stored ones', async () => {
    const store = new MemoryStore()
    const generated: string[] = []
    expect(await ensureCredentials(store, { FLOE_USERNAME: 'ops', FLOE_PASSWORD: 'FromTheEnv2024' }, (u, p) => generated.push(p))).toEqual({ created: true, username: 'ops' })
    expect(generated).toEqual([])
    expect(await verifyCredentials(store.value!, 'ops', 'FromTheEnv2024')).toBe(true)
    expect(await ensureCredentials(store, { FLOE_USERNAME: 'x', FLOE_PASSWORD: 'OtherPassword12' }, () => {})).toEqual({ created: false, username: 'ops' })
  })
  it('generated and handed over once when no password is configured', async () => {
    const store = new MemoryStore()
    const generated: [string, string][] = []
    await ensureCredentials(store, {}, (u, p) => generated.push([u, p]))
    expect(generated).toHaveLength(1)
    expect(generated[0]![0]).toBe('floe')
    expect(await verifyCredentials(store.value!, 'floe', generated[0]![1])).toBe(true)
  })
  it('a configured password that breaks the rules is refused with the rule', async () => {
    await expect(ensureCredentials(new MemoryStore(), { FLOE_PASSWORD: 'short' }, () => {})).rejects.toThrow(/FLOE_PASSWORD: weak password.*12 to 128 letters and digits/)
  })
})

describe('the answer of a function behind basic authentication', async () => {
  const { basicAuthRefusal } = await import('../../../lib/aws/lambda')
  const event = (lambda?: Record<string, unknown>) => ({ requestContext: lambda ? { authorizer: { lambda } } : {} }) as never
  it('lets an authenticated request through', () => {
    expect(basicAuthRefusal(event({ authenticated: true, username: 'floe' }))).toBeUndefined()
  })
  it('asks for credentials (401) without a verdict, or when they are missing or wrong', () => {
    for (const v of [undefined, { authenticated: false, reason: 'missing' }, { authenticated: false, reason: 'wrong' }, { authenticated: 'false' }]) {
      const r = basicAuthRefusal(event(v))!
      expect(r.statusCode).toBe(401)
      expect(r.headers?.['www-authenticate']).toBe('Basic realm="Floe", charset="UTF-8"')
      // where the password comes from
      expect(String(r.body)).toMatch(/shown on the terminal of 'npm start'.*'npx floe credentials reset' sets a new one/)
    }
  })
  it('slows down (429, Retry-After) and reports an unavailable credential store (503, Retry-After)', () => {
    const slow = basicAuthRefusal(event({ authenticated: false, reason: 'throttled', retryAfter: 8 }))!
    expect(slow.statusCode).toBe(429)
    expect(slow.headers?.['retry-after']).toBe('8')
    const busy = basicAuthRefusal(event({ authenticated: false, reason: 'busy', retryAfter: 1 }))!
    expect(busy.statusCode).toBe(429)
    expect(busy.headers?.['retry-after']).toBe('1')
    expect(String(busy.body)).toMatch(/Too many sign-ins are being checked right now: try again in 1 second\./)
    const down = basicAuthRefusal(event({ authenticated: false, reason: 'unavailable', detail: 'ECONNREFUSED' }))!
    expect(down.statusCode).toBe(503)
    expect(down.headers?.['retry-after']).toBe('5')
    expect(String(down.body)).toMatch(/credentials cannot be checked: ECONNREFUSED/)
  })
})
