/**
 * Storage ports of the registry, and in-memory implementations (unit tests,
 * embedded use). The DynamoDB adapter lives in `lib/aws/registry-store.ts`.
 */
import { compareSchemaKeys, compareSchemaVer, toIgluUri, type SchemaKey, type SchemaVer } from './keys'
import type { Permission } from './permissions'
import type { JsonObject } from './selfdesc'

export interface StoredSchema {
  readonly key: SchemaKey
  /** JSON Schema body without `$schema`, `self` and superseding fields. */
  readonly body: JsonObject
  readonly isPublic: boolean
  /** ISO-8601 instants. */
  readonly createdAt: string
  readonly updatedAt: string
  readonly supersedes: readonly SchemaVer[]
  readonly supersededBy?: SchemaVer
}

export interface SchemaStore {
  /** `dynamodb`, `inmemory`, … as `meta/server` reports it. */
  readonly kind: string
  get(key: SchemaKey): Promise<StoredSchema | undefined>
  /** Every schema, ordered by vendor, name, format, SchemaVer. */
  listAll(): Promise<StoredSchema[]>
  listVendor(vendor: string): Promise<StoredSchema[]>
  /** Every format and version of vendor/name. */
  listGroup(vendor: string, name: string): Promise<StoredSchema[]>
  /** Writes a schema; with `create`, refuses (answers `exists`) when the version is already there. */
  put(schema: StoredSchema, opts: { create: boolean }): Promise<'ok' | 'exists'>
  setSupersededBy(key: SchemaKey, by: SchemaVer): Promise<void>
  delete(key: SchemaKey): Promise<void>
  /** Throws when the storage is unreachable. */
  ping(): Promise<void>
}

export interface StoredKey {
  /** SHA-256 (hex) of the lower-case key. */
  readonly hash: string
  readonly permission: Permission
  readonly createdAt: string
}

export interface KeyStore {
  get(hash: string): Promise<StoredKey | undefined>
  put(key: StoredKey): Promise<void>
  delete(hash: string): Promise<void>
}

/** Where the hash of the stored super API key is kept. */
export interface SuperKeyStore {
  getSuperKeyHash(): Promise<string | undefined>
  /** With `onlyIfAbsent`, answers false (and writes nothing) when a hash is already stored. */
  putSuperKeyHash(hash: string, opts: { onlyIfAbsent: boolean }): Promise<boolean>
}

/** Object storage receiving the static export (`schemas/{vendor}/{name}/{format}/{version}`). */
export interface StaticPublisher {
  put(path: string, body: string): Promise<void>
  delete(path: string): Promise<void>
}

export function sortSchemas<T extends { key: SchemaKey }>(list: T[]): T[] {
  return list.sort((a, b) => compareSchemaKeys(a.key, b.key))
}

export class MemorySchemaStore implements SchemaStore {
  readonly kind = 'inmemory'
  private readonly rows = new Map<string, StoredSchema>()

  async get(key: SchemaKey) {
    return this.rows.get(toIgluUri(key))
  }
  async listAll() {
    return sortSchemas([...this.rows.values()])
  }
  async listVendor(vendor: string) {
    return sortSchemas([...this.rows.values()].filter((s) => s.key.vendor === vendor))
  }
  async listGroup(vendor: string, name: string) {
    return sortSchemas([...this.rows.values()].filter((s) => s.key.vendor === vendor && s.key.name === name))
  }
  async put(schema: StoredSchema, opts: { create: boolean }) {
    const id = toIgluUri(schema.key)
    if (opts.create && this.rows.has(id)) return 'exists' as const
    this.rows.set(id, schema)
    return 'ok' as const
  }
  async setSupersededBy(key: SchemaKey, by: SchemaVer) {
    const id = toIgluUri(key)
    const row = this.rows.get(id)
    if (row && (!row.supersededBy || compareSchemaVer(row.supersededBy, by) < 0)) this.rows.set(id, { ...row, supersededBy: by })
  }
  async delete(key: SchemaKey) {
    this.rows.delete(toIgluUri(key))
  }
  async ping() {}
}

export class MemoryKeyStore implements KeyStore, SuperKeyStore {
  private readonly keys = new Map<string, StoredKey>()
  private superHash: string | undefined

  async get(hash: string) {
    return this.keys.get(hash)
  }
  async put(key: StoredKey) {
    this.keys.set(key.hash, key)
  }
  async delete(hash: string) {
    this.keys.delete(hash)
  }
  async getSuperKeyHash() {
    return this.superHash
  }
  async putSuperKeyHash(hash: string, opts: { onlyIfAbsent: boolean }) {
    if (opts.onlyIfAbsent && this.superHash) return false
    this.superHash = hash
    return true
  }
  get size() {
    return this.keys.size
  }
}

export class MemoryPublisher implements StaticPublisher {
  readonly objects = new Map<string, string>()
  async put(path: string, body: string) {
    this.objects.set(path, body)
  }
  async delete(path: string) {
    this.objects.delete(path)
  }
}
