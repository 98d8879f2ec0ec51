/**
 * Registry permissions: a vendor scope, an optional schema action and a set of
 * key actions. Anonymous callers (no key, or a key nobody knows) have none.
 */

export type SchemaAction = 'READ' | 'BUMP' | 'CREATE' | 'CREATE_VENDOR'
export type KeyAction = 'CREATE' | 'DELETE'

export interface Permission {
  /** Vendor prefix the key is bound to; ignored when `wildcard`. */
  readonly vendor: string
  readonly wildcard: boolean
  readonly schemaAction: SchemaAction | null
  readonly keyActions: readonly KeyAction[]
}

export const ANONYMOUS: Permission = { vendor: '', wildcard: false, schemaAction: null, keyActions: [] }
export const SUPER: Permission = { vendor: '', wildcard: true, schemaAction: 'CREATE_VENDOR', keyActions: ['CREATE', 'DELETE'] }

export function isSuper(p: Permission): boolean {
  return p.wildcard && p.schemaAction === 'CREATE_VENDOR' && p.keyActions.includes('CREATE') && p.keyActions.includes('DELETE')
}

export function isAnonymous(p: Permission): boolean {
  return p.schemaAction === null && p.keyActions.length === 0
}

/** `*` or blank means every vendor. */
export function isWildcardPrefix(prefix: string): boolean {
  return prefix.trim() === '' || prefix.trim() === '*'
}

/**
 * Dot-aware vendor scope: `com.acme` covers `com.acme` and `com.acme.sub.x`,
 * not `com.acmecorp` and not `com`.
 */
export function vendorInScope(scope: string, vendor: string): boolean {
  const s = scope.split('.')
  const v = vendor.split('.')
  if (s.length > v.length) return false
  return s.every((part, i) => part === v[i])
}

export function coversVendor(p: Permission, vendor: string): boolean {
  return p.wildcard || vendorInScope(p.vendor, vendor)
}

/** Read a private schema of `vendor`. */
export function canRead(p: Permission, vendor: string): boolean {
  return (p.schemaAction !== null || p.keyActions.length > 0) && coversVendor(p, vendor)
}

/** Create or update a schema of `vendor`. */
export function canWrite(p: Permission, vendor: string): boolean {
  return ((p.schemaAction !== null && p.schemaAction !== 'READ') || p.keyActions.length > 0) && coversVendor(p, vendor)
}

export function canDeleteSchema(p: Permission, patchesAllowed: boolean): boolean {
  return patchesAllowed && isSuper(p)
}

export function canCreateKeys(p: Permission): boolean {
  return p.keyActions.includes('CREATE')
}

/** The requested prefix must lie inside the caller's own scope. */
export function canCreateKeysFor(p: Permission, prefix: string): boolean {
  if (!canCreateKeys(p)) return false
  if (p.wildcard) return true
  return !isWildcardPrefix(prefix) && vendorInScope(p.vendor, prefix)
}

export function canDeleteKeys(p: Permission): boolean {
  return p.keyActions.includes('DELETE')
}

/** Validation endpoints need a known key of any kind. */
export function canValidate(p: Permission): boolean {
  return p.schemaAction !== null || p.keyActions.length > 0
}

/** The read/write pair keygen creates for a prefix. */
export function keyPairPermissions(prefix: string): { read: Permission; write: Permission } {
  const wildcard = isWildcardPrefix(prefix)
  const vendor = wildcard ? '' : prefix.trim()
  return {
    read: { vendor, wildcard, schemaAction: 'READ', keyActions: [] },
    write: { vendor, wildcard, schemaAction: 'CREATE_VENDOR', keyActions: [] },
  }
}

/** `authInfo` as `meta/server` reports it. */
export function authInfo(p: Permission): { vendor: string; schema: SchemaAction | null; key: KeyAction[] } {
  return { vendor: p.wildcard ? '' : p.vendor, schema: p.schemaAction, key: [...p.keyActions] }
}
