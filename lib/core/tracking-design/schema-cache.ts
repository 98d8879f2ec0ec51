/**
 * A registry reader that keeps what it resolved for a while, so the checks of
 * consecutive requests (create, edit, retrieve) read the registry once per data
 * structure instead of once per request. Only schemas found are kept (a schema
 * uploaded a moment ago is seen at once); a patched or newly published version
 * is seen at the latest `ttlMs` later, or at once when the deployment's
 * registry tells of its change (`repositoryChanged`). Bounded: the oldest
 * entries go first.
 */
import { toIgluUri, type SchemaKey } from '../iglu/keys'
import type { StoredSchema } from '../iglu/store'
import type { RegistryReader } from './ports'

export interface SchemaCacheOptions {
  /** How long a resolved schema or version list is reused; 0 turns the cache off. */
  readonly ttlMs: number
  /** Most entries kept (schemas and version lists together). */
  readonly maxEntries?: number
  readonly now?: () => number
}

/** Default time a resolved schema is reused by the tracking-design API (seconds). */
export const DEFAULT_SCHEMA_CACHE_SECONDS = 5
/** Longest accepted. */
export const MAX_SCHEMA_CACHE_SECONDS = 3600

/**
 * Reads a cache time from the environment: whole seconds from 0 to `max`, `fallback`
 * when unset; anything else is an error naming the variable.
 */
export function cacheSecondsSetting(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number, max: number): number {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > max) throw new Error(`${name} must be a whole number of seconds from 0 to ${max}, got '${raw}'`)
  return Number(raw)
}

/** Reads `FLOE_SCHEMA_CACHE_SECONDS` (whole seconds, 0 to 3600; default 5). */
export function schemaCacheSeconds(env: Readonly<Record<string, string | undefined>>): number {
  return cacheSecondsSetting(env, 'FLOE_SCHEMA_CACHE_SECONDS', DEFAULT_SCHEMA_CACHE_SECONDS, MAX_SCHEMA_CACHE_SECONDS)
}

/** A `RegistryReader` whose cache a change of a repository empties (without a cache, the reader itself). */
export type CachedRegistry = RegistryReader & { repositoryChanged?(name: string): void }

export function cachedRegistry(inner: RegistryReader, opts: SchemaCacheOptions): CachedRegistry {
  if (opts.ttlMs <= 0) return inner
  const max = opts.maxEntries ?? 2000
  const now = opts.now ?? Date.now
  const entries = new Map<string, { at: number; value: Promise<unknown> }>()
  const fresh = <T>(id: string): Promise<T> | undefined => {
    const e = entries.get(id)
    if (!e) return undefined
    if (now() - e.at < opts.ttlMs) return e.value as Promise<T>
    entries.delete(id)
    return undefined
  }
  /** Keeps `value` unless it fails or `keep` refuses what it resolves to. */
  const remember = <T>(id: string, value: Promise<T>, keep: (v: T) => boolean): Promise<T> => {
    entries.delete(id)
    entries.set(id, { at: now(), value })
    while (entries.size > max) entries.delete(entries.keys().next().value!)
    value.then(
      (v) => {
        if (!keep(v) && entries.get(id)?.value === value) entries.delete(id)
      },
      () => {
        if (entries.get(id)?.value === value) entries.delete(id)
      },
    )
    return value
  }
  const schemaId = (k: SchemaKey) => `schema ${toIgluUri(k)}`
  return {
    get(key) {
      const id = schemaId(key)
      return fresh<StoredSchema | undefined>(id) ?? remember(id, inner.get(key), (s) => s !== undefined)
    },
    async getMany(keys) {
      const out = new Map<string, StoredSchema>()
      const missing: SchemaKey[] = []
      await Promise.all(keys.map(async (k) => {
        const hit = fresh<StoredSchema | undefined>(schemaId(k))
        if (!hit) return void missing.push(k)
        const s = await hit
        if (s) out.set(toIgluUri(k), s)
        else missing.push(k)
      }))
      if (missing.length === 0) return out
      const loaded = inner.getMany ? await inner.getMany(missing) : new Map((await Promise.all(missing.map(async (k) => [toIgluUri(k), await inner.get(k)] as const))).flatMap(([u, s]) => (s ? [[u, s] as const] : [])))
      for (const k of missing) {
        const s = loaded.get(toIgluUri(k))
        if (!s) continue
        out.set(toIgluUri(k), s)
        remember(schemaId(k), Promise.resolve(s), () => true)
      }
      return out
    },
    listGroup(vendor, name) {
      const id = `group ${vendor}/${name}`
      return fresh<StoredSchema[]>(id) ?? remember(id, inner.listGroup(vendor, name), (g) => g.length > 0)
    },
    // The data-structures view lists everything: always read.
    listAll: () => inner.listAll(),
    // Entries mix what every repository answered, for a few seconds: all go.
    repositoryChanged: () => entries.clear(),
  }
}
