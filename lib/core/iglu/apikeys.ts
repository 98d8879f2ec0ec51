/** API keys: UUID checks, hashing for storage, constant-time comparison. */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

export function isUuid(s: string): boolean {
  return UUID_RE.test(s)
}

export function isUuidV4(s: string): boolean {
  return UUID_V4_RE.test(s)
}

/** SHA-256 hex of the lower-case key; only this is ever stored. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key.trim().toLowerCase()).digest('hex')
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

export function newKey(): string {
  return randomUUID()
}
