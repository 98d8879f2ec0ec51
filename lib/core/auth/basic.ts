/**
 * HTTP basic authentication of the single-instance pages and APIs: the
 * credential rules, the password hash, and the decision an authorizer makes
 * for one request (authenticated, not, or slowed down).
 *
 * Passwords are kept as scrypt hashes (Node's crypto). Verifying one costs
 * tens of milliseconds on purpose, so verdicts for a header already verified
 * are kept briefly (keyed by a hash of the header and the credentials'
 * version: a change of credentials invalidates them at once where the
 * change is seen).
 */
import { createHash, randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { Backoff, GateTimeoutError, HashGate } from './limits'

export const REALM = 'Floe'
export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 128
export const MAX_USERNAME_LENGTH = 64
/** Longest `Authorization` header looked at; longer ones are refused unread. */
export const MAX_HEADER_LENGTH = 1024

export const PASSWORD_RULE = `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} letters and digits (A-Z, a-z, 0-9), nothing else`
export const USERNAME_RULE = `the username must be 1 to ${MAX_USERNAME_LENGTH} characters among letters, digits, '.', '_', '-' and '@'`

const PASSWORD_RE = new RegExp(`^[A-Za-z0-9]{${MIN_PASSWORD_LENGTH},${MAX_PASSWORD_LENGTH}}$`)
const USERNAME_RE = new RegExp(`^[A-Za-z0-9._@-]{1,${MAX_USERNAME_LENGTH}}$`)

/** Why a username is refused, or undefined. */
export function usernameProblem(username: string): string | undefined {
  return USERNAME_RE.test(username) ? undefined : `invalid username: ${USERNAME_RULE}`
}

/** Why a password is refused, or undefined (the rule is in the message). */
export function passwordProblem(password: string): string | undefined {
  if (PASSWORD_RE.test(password)) return undefined
  if (password.length < MIN_PASSWORD_LENGTH) return `weak password: it has ${password.length} characters; ${PASSWORD_RULE}`
  if (password.length > MAX_PASSWORD_LENGTH) return `invalid password: it has ${password.length} characters; ${PASSWORD_RULE}`
  return `invalid password: it has characters other than letters and digits; ${PASSWORD_RULE}`
}

const ALPHANUMERIC = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'

/** A random alphanumeric password (20 characters, about 116 bits). */
export function generatePassword(length = 20): string {
  let s = ''
  for (let i = 0; i < length; i++) s += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]
  return s
}

/** Stored credentials: the username and the scrypt hash of the password. */
export interface StoredCredentials {
  readonly username: string
  /** base64 */
  readonly hash: string
  /** base64 */
  readonly salt: string
  /** scrypt cost parameters. */
  readonly N: number
  readonly r: number
  readonly p: number
  /** Increases with every change. */
  readonly version: number
  readonly updatedAt: string
}

/** scrypt at N = 2^15, r = 8, p = 1 (32 MiB, OWASP's minimum for scrypt). */
export const SCRYPT_PARAMS = { N: 1 << 15, r: 8, p: 1 } as const
const KEY_LENGTH = 32

function scrypt(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 16 * 1024 * 1024 }
  return new Promise((resolve, reject) => scryptCb(password, salt, KEY_LENGTH, opts, (err, key) => (err ? reject(err) : resolve(key))))
}

export async function hashCredentials(username: string, password: string, version: number, now: Date, params = SCRYPT_PARAMS): Promise<StoredCredentials> {
  const salt = randomBytes(16)
  const hash = await scrypt(password, salt, params)
  return { username, hash: hash.toString('base64'), salt: salt.toString('base64'), ...params, version, updatedAt: now.toISOString() }
}

/** Whether `username` and `password` are the stored ones (constant time in the password hash). */
export async function verifyCredentials(stored: StoredCredentials, username: string, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false
  const key = await scrypt(password, Buffer.from(stored.salt, 'base64'), stored)
  const expected = Buffer.from(stored.hash, 'base64')
  const sameHash = key.length === expected.length && timingSafeEqual(key, expected)
  return sameHash && username === stored.username
}

/** The username and password of an `Authorization: Basic …` header; undefined when it is not one. */
export function parseBasicAuthorization(header: string | undefined): { username: string; password: string } | undefined {
  if (!header || header.length > MAX_HEADER_LENGTH) return undefined
  const m = /^\s*basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header)
  if (!m) return undefined
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/** Where the credentials are kept. */
export interface CredentialStore {
  get(): Promise<StoredCredentials | undefined>
  /** Stores the first credentials; false when some are already stored. */
  putIfAbsent(c: StoredCredentials): Promise<boolean>
  /** Replaces the credentials whose version is `expectedVersion`; false when they changed meanwhile. */
  replace(c: StoredCredentials, expectedVersion: number): Promise<boolean>
}

export type Verdict =
  | { readonly authenticated: true; readonly username: string }
  | { readonly authenticated: false; readonly reason: 'missing' | 'malformed' | 'wrong' }
  /** `throttled`: this username from this address failed too often; `busy`: too many passwords are being checked at once. */
  | { readonly authenticated: false; readonly reason: 'throttled' | 'busy'; readonly retryAfterSeconds: number }

export interface AuthenticatorOptions {
  readonly store: CredentialStore
  /** How long the stored credentials are used before they are read again (default 5 s). */
  readonly credentialsTtlMs?: number
  /** How long a verified header stays verified without a new hash (default 30 s). */
  readonly verdictTtlMs?: number
  /** Failed sign-ins of one username from one address before it waits (default 5). */
  readonly freeFailures?: number
  /** A username and address's failures are forgotten this long after the last one (default 10 min). */
  readonly failureWindowMs?: number
  /** Longest wait imposed on a username and address (default 60 s). */
  readonly maxBlockSeconds?: number
  /** Password hashes computed at once (default 1): scrypt runs on libuv's thread pool, which the rest of the process needs too. */
  readonly maxConcurrentHashes?: number
  /** Sign-ins waiting for a hash beyond those (default 4); more are refused with `busy`. */
  readonly maxQueuedHashes?: number
  /** Longest wait for a hash (default 3 s), then the sign-in is refused with `busy` (a hash is slow on a loaded machine). */
  readonly maxHashWaitMs?: number
  /** How a password is checked against the stored hash (default `verifyCredentials`). */
  readonly verify?: (stored: StoredCredentials, username: string, password: string) => Promise<boolean>
  readonly now?: () => number
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64')

/**
 * Decides requests, keeping the cost of sign-ins bounded:
 * - no `Authorization` header is a challenge (`missing`), never counted nor slowed down;
 * - a verified header is remembered (`verdictTtlMs`), and concurrent checks of
 *   the same header share one hash;
 * - a sign-in is counted as failed for its username and address before its
 *   hash is computed (and cleared by a right password, also one whose
 *   header was verified before and is answered from memory): after
 *   `freeFailures`, that username from that address waits 2, 4, 8 … up to
 *   `maxBlockSeconds` seconds between attempts (`throttled`), other addresses
 *   and usernames are not affected; all usernames other than the stored one
 *   share one count per address;
 * - at most `maxConcurrentHashes` hashes run at once, `maxQueuedHashes` more
 *   wait (at most `maxHashWaitMs`), and further sign-ins are refused at once
 *   (`busy`, retry in 1 s; not counted as failures).
 */
export class Authenticator {
  private stored: { value: StoredCredentials | undefined; at: number } | undefined
  private reading: Promise<StoredCredentials | undefined> | undefined
  private readonly verified = new Map<string, { version: number; username: string; until: number }>()
  private readonly pending = new Map<string, { version: number; result: Promise<boolean> }>()
  private readonly backoff: Backoff
  private readonly gate: HashGate
  private readonly o: Required<Omit<AuthenticatorOptions, 'store'>> & { store: CredentialStore }

  constructor(opts: AuthenticatorOptions) {
    this.o = {
      credentialsTtlMs: 5_000,
      verdictTtlMs: 30_000,
      freeFailures: 5,
      failureWindowMs: 10 * 60_000,
      maxBlockSeconds: 60,
      maxConcurrentHashes: 1,
      maxQueuedHashes: 4,
      maxHashWaitMs: 3_000,
      verify: verifyCredentials,
      now: Date.now,
      ...opts,
    }
    this.backoff = new Backoff({ freeFailures: this.o.freeFailures, forgetAfterMs: this.o.failureWindowMs, firstWaitSeconds: 2, maxWaitSeconds: this.o.maxBlockSeconds, maxKeys: 10_000 })
    this.gate = new HashGate(this.o.maxConcurrentHashes, this.o.maxQueuedHashes, this.o.maxHashWaitMs)
  }

  /** The stored credentials; concurrent requests share one read of the store. */
  private async credentials(): Promise<StoredCredentials | undefined> {
    const now = this.o.now()
    if (this.stored && now - this.stored.at < this.o.credentialsTtlMs) return this.stored.value
    if (!this.reading) {
      const reading = this.o.store.get().then(
        (value) => {
          if (this.reading === reading) {
            this.stored = { value, at: now }
            this.reading = undefined
          }
          return value
        },
        (err: unknown) => {
          if (this.reading === reading) this.reading = undefined
          throw err
        },
      )
      this.reading = reading
    }
    return this.reading
  }

  async decide(authorization: string | undefined, sourceIp: string): Promise<Verdict> {
    if (authorization === undefined || authorization.trim() === '') return { authenticated: false, reason: 'missing' }
    const parsed = parseBasicAuthorization(authorization)
    if (!parsed) return { authenticated: false, reason: 'malformed' }
    const stored = await this.credentials()
    if (!stored) return { authenticated: false, reason: 'wrong' }
    // From here to the count below nothing awaits: concurrent sign-ins see each other's counts.
    const now = this.o.now()
    const bucket = `${parsed.username === stored.username ? `u:${parsed.username}` : 'other'}\n${sourceIp}`
    const wait = this.backoff.waitSeconds(bucket, now)
    if (wait > 0) return { authenticated: false, reason: 'throttled', retryAfterSeconds: wait }
    const key = sha256(authorization.trim())
    const hit = this.verified.get(key)
    if (hit && hit.version === stored.version && hit.until > now) {
      // a right password clears the count, whether or not its header was verified before
      this.backoff.clear(bucket)
      return { authenticated: true, username: hit.username }
    }
    let check = this.pending.get(key)
    let counted = false
    if (!check || check.version !== stored.version) {
      if (!this.gate.hasRoom) return { authenticated: false, reason: 'busy', retryAfterSeconds: 1 }
      this.backoff.fail(bucket, now)
      counted = true
      const result = this.gate.run(() => this.o.verify(stored, parsed.username, parsed.password))
      const entry = { version: stored.version, result }
      check = entry
      this.pending.set(key, entry)
      void result.then(
        (ok) => {
          if (this.pending.get(key) === entry) this.pending.delete(key)
          if (!ok) return
          if (this.verified.size >= 1000) this.verified.clear()
          this.verified.set(key, { version: stored.version, username: stored.username, until: this.o.now() + this.o.verdictTtlMs })
        },
        () => {
          if (this.pending.get(key) === entry) this.pending.delete(key)
        },
      )
    }
    let ok: boolean
    try {
      ok = await check.result
    } catch (err) {
      if (!(err instanceof GateTimeoutError)) throw err
      // not checked after all: not a failure
      if (counted) this.backoff.unfail(bucket)
      return { authenticated: false, reason: 'busy', retryAfterSeconds: 1 }
    }
    if (!ok) return { authenticated: false, reason: 'wrong' }
    this.backoff.clear(bucket)
    return { authenticated: true, username: stored.username }
  }

  /** Forgets the cached credentials and verdicts (after a change of credentials). */
  forget(): void {
    this.stored = undefined
    this.reading = undefined
    this.verified.clear()
    this.pending.clear()
  }
}

/**
 * The credentials of a first start: `FLOE_USERNAME` and `FLOE_PASSWORD` when
 * set (checked against the rules), else the username `floe` (or
 * `FLOE_USERNAME`) with a generated password, handed to `onGenerated` (the
 * only time it is shown). Stored credentials are never replaced here.
 */
export async function ensureCredentials(
  store: CredentialStore,
  env: NodeJS.ProcessEnv,
  onGenerated: (username: string, password: string) => void,
  now = new Date(),
): Promise<{ created: boolean; username: string }> {
  const existing = await store.get()
  if (existing) return { created: false, username: existing.username }
  const username = env.FLOE_USERNAME?.trim() || 'floe'
  const userProblem = usernameProblem(username)
  if (userProblem) throw new CredentialsConfigError(`FLOE_USERNAME: ${userProblem}`)
  const configured = env.FLOE_PASSWORD?.trim()
  if (configured) {
    const problem = passwordProblem(configured)
    if (problem) throw new CredentialsConfigError(`FLOE_PASSWORD: ${problem}`)
  }
  const password = configured || generatePassword()
  const created = await store.putIfAbsent(await hashCredentials(username, password, 1, now))
  if (!created) return { created: false, username: (await store.get())?.username ?? username }
  if (!configured) onGenerated(username, password)
  return { created: true, username }
}

export class CredentialsConfigError extends Error {
  override readonly name = 'CredentialsConfigError'
}
