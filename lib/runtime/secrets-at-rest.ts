/**
 * The sealing of secrets at rest with a key file (the local stack's
 * `${FLOE_DATA_DIR}/secrets.key`, 32 random bytes, 0600): AES-256-GCM with a
 * random 96-bit nonce per value and the value's purpose as associated data,
 * so a sealed value can be neither read nor moved to another attribute, nor
 * altered, without the key. The key is read from the file named by
 * `FLOE_SECRETS_KEY_FILE` (the variable holds the path, never the key); without
 * it, secrets are stored as they are (AWS).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { SEALED_PREFIX, STORED_AS_IS, UnopenableSecretError, type SecretSeal } from '../core/secrets-at-rest'

export const SECRETS_KEY_FILE_ENV = 'FLOE_SECRETS_KEY_FILE'
export const SECRETS_KEY_BYTES = 32

const VERSION = 'v1'
const PREFIX = `${SEALED_PREFIX}${VERSION}:`
const NONCE_BYTES = 12
const TAG_BYTES = 16

/** A seal with `key` (32 bytes). */
export function sealWithKey(key: Buffer): SecretSeal {
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}`)
  const k = Buffer.from(key) // a copy the caller cannot change
  return {
    seal(plain, purpose) {
      const nonce = randomBytes(NONCE_BYTES)
      const c = createCipheriv('aes-256-gcm', k, nonce, { authTagLength: TAG_BYTES })
      c.setAAD(Buffer.from(purpose, 'utf8'))
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()])
      return `${PREFIX}${nonce.toString('base64url')}.${body.toString('base64url')}`
    },
    open(stored, purpose) {
      if (!stored.startsWith(SEALED_PREFIX)) return stored
      const m = stored.startsWith(PREFIX) ? /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(stored.slice(PREFIX.length)) : null
      if (!m) throw new UnopenableSecretError(`${purpose}: not a sealed value of this version`)
      const nonce = Buffer.from(m[1]!, 'base64url')
      const body = Buffer.from(m[2]!, 'base64url')
      if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) throw new UnopenableSecretError(`${purpose}: a sealed value cut short`)
      try {
        const d = createDecipheriv('aes-256-gcm', k, nonce, { authTagLength: TAG_BYTES })
        d.setAAD(Buffer.from(purpose, 'utf8'))
        d.setAuthTag(body.subarray(body.length - TAG_BYTES))
        return Buffer.concat([d.update(body.subarray(0, body.length - TAG_BYTES)), d.final()]).toString('utf8')
      } catch {
        throw new UnopenableSecretError(`${purpose} cannot be opened with this key (sealed with another key, or altered)`)
      }
    },
    needsSealing: (stored) => !stored.startsWith(SEALED_PREFIX),
  }
}

/** The key in the file at `path`: exactly 32 bytes, else an error naming the file (never its content). */
export function readSecretsKey(path: string): Buffer {
  const key = readFileSync(path)
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`${path} holds ${key.length} bytes; a secrets key file holds ${SECRETS_KEY_BYTES} random bytes`)
  return key
}

let cached: { path: string; seal: SecretSeal } | undefined

/** The seal of this process: with the key file of `FLOE_SECRETS_KEY_FILE` (read once per path), else secrets stored as they are. */
export function runtimeSeal(env: NodeJS.ProcessEnv = process.env): SecretSeal {
  const path = env[SECRETS_KEY_FILE_ENV]?.trim()
  if (!path) return STORED_AS_IS
  if (cached?.path !== path) cached = { path, seal: sealWithKey(readSecretsKey(path)) }
  return cached.seal
}
