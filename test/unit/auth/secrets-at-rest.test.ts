import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SEALED_PREFIX, STORED_AS_IS, UnopenableSecretError } from '../../../lib/core/secrets-at-rest'
import { ensureSecretsKey } from '../../../lib/local/secrets-key'
import { readSecretsKey, runtimeSeal, sealWithKey, SECRETS_KEY_FILE_ENV } from '../../../lib/runtime/secrets-at-rest'

const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'floe-seal-'))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('sealing with a key', () => {
  const key = randomBytes(32)
  const seal = sealWithKey(key)

  it('opens what it sealed, under the same purpose only; the value is not in what is stored', () => {
    const sealed = seal.seal('the signing secret', 'a/b')
    expect(sealed.startsWith(SEALED_PREFIX)).toBe(true)
    expect(sealed).not.toContain('the signing secret')
    expect(sealed).not.toContain(Buffer.from('the signing secret').toString('base64'))
    expect(seal.open(sealed, 'a/b')).toBe('the signing secret')
    expect(seal.seal('the signing secret', 'a/b')).not.toBe(sealed) // a fresh nonce each time
    expect(() => seal.open(sealed, 'a/c')).toThrow(UnopenableSecretError)
    expect(seal.needsSealing(sealed)).toBe(false)
  })

  it('refuses an altered value or another key, and opens a value written in clear as it is (to be sealed)', () => {
    const sealed = seal.seal('hash', 'p')
    const body = sealed.slice(sealed.lastIndexOf('.') + 1)
    const flipped = Buffer.from(body, 'base64url')
    flipped[0]! ^= 1
    expect(() => seal.open(`${sealed.slice(0, sealed.lastIndexOf('.') + 1)}${flipped.toString('base64url')}`, 'p')).toThrow(UnopenableSecretError)
    expect(() => seal.open(sealed.slice(0, -4), 'p')).toThrow(UnopenableSecretError)
    expect(() => sealWithKey(randomBytes(32)).open(sealed, 'p')).toThrow(UnopenableSecretError)
    expect(() => seal.open(`${SEALED_PREFIX}v9:abc.def`, 'p')).toThrow(UnopenableSecretError)
    expect(seal.open('written in clear', 'p')).toBe('written in clear')
    expect(seal.needsSealing('written in clear')).toBe(true)
    expect(() => sealWithKey(randomBytes(16))).toThrow(/32 bytes/)
  })

  it('without a key (AWS), values are stored as they are; a sealed one cannot be opened', () => {
    expect(STORED_AS_IS.seal('x', 'p')).toBe('x')
    expect(STORED_AS_IS.open('x', 'p')).toBe('x')
    expect(STORED_AS_IS.needsSealing('x')).toBe(false)
    expect(() => STORED_AS_IS.open(seal.seal('x', 'p'), 'p')).toThrow(UnopenableSecretError)
    expect(runtimeSeal({})).toBe(STORED_AS_IS)
  })
})

describe('the key file', () => {
  it('is made once: 32 random bytes, 0600, no temporary file left; the functions get its path', () => {
    const dir = tempDir()
    const lines: string[] = []
    const path = ensureSecretsKey(dir, (l) => lines.push(l))
    expect(path).toBe(join(dir, 'secrets.key'))
    const key = readFileSync(path)
    expect(key.length).toBe(32)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir)).toEqual(['secrets.key'])
    expect(lines).toEqual([`secrets at rest: made ${path}, the key that seals the stored secrets (keep it with the data directory)`])
    expect(lines.join('\n')).not.toContain(key.toString('hex'))
    // kept at the next start
    expect(ensureSecretsKey(dir, (l) => lines.push(l))).toBe(path)
    expect(readFileSync(path).equals(key)).toBe(true)
    expect(lines).toHaveLength(1)
    // the runtime reads it through the path
    const sealed = runtimeSeal({ [SECRETS_KEY_FILE_ENV]: path }).seal('s', 'p')
    expect(sealWithKey(key).open(sealed, 'p')).toBe('s')
  })

  it('a start killed before its key file was in place left a partial temporary file: a whole key is made, and the leftover removed', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'secrets.key.99999.tmp'), randomBytes(7))
    const path = ensureSecretsKey(dir)
    expect(readFileSync(path).length).toBe(32)
    expect(readdirSync(dir)).toEqual(['secrets.key'])
    // and when the key was in place already, it is kept
    const key = readFileSync(path)
    writeFileSync(join(dir, 'secrets.key.99998.tmp'), randomBytes(32))
    ensureSecretsKey(dir)
    expect(readFileSync(path).equals(key)).toBe(true)
    expect(readdirSync(dir)).toEqual(['secrets.key'])
  })

  it('a data directory that does not exist yet is made, 0700', () => {
    const dir = join(tempDir(), 'new', 'data')
    ensureSecretsKey(dir)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(readFileSync(join(dir, 'secrets.key')).length).toBe(32)
  })

  it('a looser key file is tightened; one that is not 32 bytes is refused, naming the file and not its content', () => {
    const dir = tempDir()
    const path = join(dir, 'secrets.key')
    writeFileSync(path, randomBytes(32))
    chmodSync(path, 0o644)
    ensureSecretsKey(dir)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    writeFileSync(path, 'short secret')
    expect(() => ensureSecretsKey(dir)).toThrow(`${path} holds 12 bytes; a secrets key file holds 32 random bytes`)
  })
})
