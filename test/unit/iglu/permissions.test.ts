import { describe, expect, it } from 'vitest'
import {
  ANONYMOUS, SUPER, canCreateKeys, canCreateKeysFor, canDeleteKeys, canDeleteSchema, canRead, canValidate, canWrite,
  keyPairPermissions, vendorInScope,
} from '../../../lib/core/iglu/permissions'

describe('registry permissions', () => {
  it('matches vendor scopes on dot-separated parts', () => {
    expect(vendorInScope('com.acme', 'com.acme')).toBe(true)
    expect(vendorInScope('com.acme', 'com.acme.sub.x')).toBe(true)
    expect(vendorInScope('com.acme', 'com.acmecorp')).toBe(false)
    expect(vendorInScope('com.acme', 'com')).toBe(false)
    expect(vendorInScope('com.acme', 'org.acme')).toBe(false)
  })
  it('gives read keys read access and write keys write access within their prefix', () => {
    const { read, write } = keyPairPermissions('com.acme')
    expect(canRead(read, 'com.acme.web')).toBe(true)
    expect(canWrite(read, 'com.acme.web')).toBe(false)
    expect(canRead(write, 'com.acme')).toBe(true)
    expect(canWrite(write, 'com.acme')).toBe(true)
    expect(canWrite(write, 'com.acmecorp')).toBe(false)
    expect(canRead(read, 'com.other')).toBe(false)
    for (const p of [read, write]) {
      expect(canCreateKeys(p)).toBe(false)
      expect(canDeleteKeys(p)).toBe(false)
      expect(canDeleteSchema(p, true)).toBe(false)
      expect(canValidate(p)).toBe(true)
    }
  })
  it('treats * or blank prefixes as every vendor', () => {
    expect(keyPairPermissions('*').write.wildcard).toBe(true)
    expect(keyPairPermissions(' ').read.wildcard).toBe(true)
    expect(canWrite(keyPairPermissions('*').write, 'anything.at.all')).toBe(true)
  })
  it('the super key can do everything; deleting schemas also needs patches allowed', () => {
    expect(canRead(SUPER, 'x')).toBe(true)
    expect(canWrite(SUPER, 'x')).toBe(true)
    expect(canCreateKeysFor(SUPER, 'com.acme')).toBe(true)
    expect(canCreateKeysFor(SUPER, '*')).toBe(true)
    expect(canDeleteKeys(SUPER)).toBe(true)
    expect(canDeleteSchema(SUPER, true)).toBe(true)
    expect(canDeleteSchema(SUPER, false)).toBe(false)
  })
  it('key creation stays within the caller scope', () => {
    const scoped = { vendor: 'com.acme', wildcard: false, schemaAction: 'CREATE_VENDOR' as const, keyActions: ['CREATE' as const] }
    expect(canCreateKeysFor(scoped, 'com.acme.sub')).toBe(true)
    expect(canCreateKeysFor(scoped, 'com.other')).toBe(false)
    expect(canCreateKeysFor(scoped, '*')).toBe(false)
  })
  it('anonymous callers can do nothing but read public schemas', () => {
    expect(canRead(ANONYMOUS, 'com.acme')).toBe(false)
    expect(canWrite(ANONYMOUS, 'com.acme')).toBe(false)
    expect(canCreateKeys(ANONYMOUS)).toBe(false)
    expect(canDeleteKeys(ANONYMOUS)).toBe(false)
    expect(canValidate(ANONYMOUS)).toBe(false)
  })
})
