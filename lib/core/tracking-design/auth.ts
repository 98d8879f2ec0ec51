/**
 * Organization API keys and access tokens: key generation and hashing, token
 * issue (HS256 JWT scoped to one organization, 24 h) and the decision whether a
 * request may act on an organization. Outcomes are data.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import type { AccountStore } from './ports'
import type { OrgApiKey } from './types'

export const TOKEN_ISSUER = 'floe'
export const TOKEN_AUDIENCE = 'floe-tracking-design'
export const TOKEN_TTL_SECONDS = 24 * 60 * 60

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s)

/** SHA-256 (hex) of a secret key, exactly as given; the only form that is stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

/** A new secret key: 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** A new signing secret for tokens. */
export function newSigningSecret(): string {
  return randomBytes(48).toString('base64url')
}

/** A new key record (and its secret, shown once). */
export function newApiKey(orgId: string, now: Date, ids: { keyId?: string; secret?: string } = {}): { key: OrgApiKey; secret: string } {
  const secret = ids.secret ?? newSecret()
  return { key: { keyId: ids.keyId ?? randomUUID(), orgId, hash: hashSecret(secret), createdAt: now.toISOString() }, secret }
}

export type KeyCheck = { ok: true; key: OrgApiKey } | { ok: false; status: 400 | 401; message: string }

const BAD_KEY = { ok: false, status: 401, message: 'Invalid API key' } as const

/**
 * Checks the credentials of a token request for `orgId`: `keyId` (v3) or none (v2)
 * and the secret key. The answer never says which part was wrong.
 */
export async function checkApiKey(store: AccountStore, orgId: string, secret: string | undefined, keyId?: string): Promise<KeyCheck> {
  if (!secret) return { ok: false, status: 401, message: 'Missing API key (X-API-Key header)' }
  if (keyId !== undefined && keyId.length === 0) return { ok: false, status: 401, message: 'Missing API key id (X-API-Key-ID header)' }
  if (!isUuid(orgId)) return BAD_KEY
  const hash = hashSecret(secret)
  const key = keyId !== undefined ? (isUuid(keyId) ? await store.getKeyById(keyId.toLowerCase()) : undefined) : await store.getKeyByHash(hash)
  if (!key || !sameHex(key.hash, hash) || key.orgId !== orgId.toLowerCase()) return BAD_KEY
  return { ok: true, key }
}

export interface TokenClaims {
  readonly orgId: string
  readonly keyId: string
}

function secretBytes(secret: string): Uint8Array {
  return new TextEncoder().encode(secret)
}

/** Signs an access token for the organization, valid 24 hours from `now`. */
export async function issueToken(secret: string, claims: TokenClaims, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return new SignJWT({ org: claims.orgId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(claims.keyId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + TOKEN_TTL_SECONDS)
    .sign(secretBytes(secret))
}

/**
 * Tokens whose signature and issuer, audience and required claims were verified, by token:
 * checking an HS256 signature through WebCrypto costs more CPU than the rest of a read
 * request. A later request with the same token and signing secret re-checks only its
 * times (`exp`, `nbf`). At most `VERIFIED_TOKENS` entries, least recently used dropped.
 */
const VERIFIED_TOKENS = 1000
interface VerifiedToken {
  readonly secret: string
  readonly exp: number
  readonly nbf?: number
  readonly org: unknown
  readonly sub: unknown
}
const verifiedTokens = new Map<string, VerifiedToken>()

function remember(token: string, v: VerifiedToken): void {
  verifiedTokens.delete(token)
  verifiedTokens.set(token, v)
  if (verifiedTokens.size > VERIFIED_TOKENS) verifiedTokens.delete(verifiedTokens.keys().next().value!)
}

export type AuthDecision =
  | { ok: true; orgId: string; keyId: string }
  | { ok: false; status: 401 | 403; message: string }

/**
 * Decides whether the `authorization` header allows acting on `pathOrgId`: a valid,
 * unexpired token of this deployment, for that organization, whose key is not revoked.
 */
export async function authorize(
  header: string | undefined,
  pathOrgId: string,
  secret: string,
  opts: { now: Date; keyExists: (keyId: string) => Promise<boolean> },
): Promise<AuthDecision> {
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '')
  if (!m) return { ok: false, status: 401, message: 'Missing bearer token (authorization header)' }
  const token = m[1]!
  const nowSeconds = Math.floor(opts.now.getTime() / 1000)
  let payload: { org?: unknown; sub?: unknown }
  const known = verifiedTokens.get(token)
  if (known && known.secret === secret) {
    // Verified before: only the times can have changed (as the verifier checks them, no tolerance).
    if (known.nbf !== undefined && known.nbf > nowSeconds) return { ok: false, status: 401, message: 'Invalid access token' }
    if (known.exp <= nowSeconds) return { ok: false, status: 401, message: 'The access token has expired' }
    payload = known
    remember(token, known)
  } else {
    try {
      const verified = await jwtVerify(token, secretBytes(secret), {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        currentDate: opts.now,
        requiredClaims: ['exp', 'sub', 'org'],
      })
      payload = verified.payload
      remember(token, { secret, exp: verified.payload.exp!, nbf: verified.payload.nbf, org: verified.payload.org, sub: verified.payload.sub })
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired
      return { ok: false, status: 401, message: expired ? 'The access token has expired' : 'Invalid access token' }
    }
  }
  const org = payload.org
  const keyId = payload.sub
  if (typeof org !== 'string' || typeof keyId !== 'string') return { ok: false, status: 401, message: 'Invalid access token' }
  if (org.toLowerCase() !== pathOrgId.toLowerCase()) return { ok: false, status: 403, message: 'The access token does not grant access to this organization' }
  if (!(await opts.keyExists(keyId))) return { ok: false, status: 401, message: 'The API key of this access token has been revoked' }
  return { ok: true, orgId: org, keyId }
}
