/**
 * The Iglu resolver: finds schemas across prioritised repositories, caches
 * hits and misses with a TTL, lists versions of a model, and validates
 * self-describing data with cached compiled validators.
 */
import { compileValidator, instanceErrors, type InstanceError, type ValidateFunction } from './draft04'
import { parseIgluUri, toIgluUri, type SchemaKey } from './keys'
import type { Lookup, RegistryError, Repository } from './repositories'
import { decodeSelfDescribingData, type JsonObject } from './selfdesc'

export interface ResolverOptions {
  readonly repositories: readonly Repository[]
  /** Entries per cache; 0 or less disables caching. Default 500. */
  readonly cacheSize?: number
  /** Seconds; `null` keeps entries forever, 0 disables caching. Default 600. */
  readonly cacheTtl?: number | null
  /** Clock in epoch ms (tests). */
  readonly now?: () => number
}

/** What happened at one repository during a failed lookup. */
export interface RepositoryFailure {
  readonly repository: string
  readonly errors: readonly RegistryError[]
  readonly attempts: number
  readonly lastAttempt: number
}

export type ResolveResult<T> =
  | { ok: true; value: T; repository: string }
  | { ok: false; message: string; failures: readonly RepositoryFailure[] }

export type ValidationOutcome =
  | { ok: true; schema: SchemaKey }
  | { ok: false; reason: 'not-self-describing'; message: string }
  | { ok: false; reason: 'resolution'; schema: SchemaKey; message: string; failures: readonly RepositoryFailure[] }
  | { ok: false; reason: 'invalid-schema'; schema: SchemaKey; message: string }
  | { ok: false; reason: 'invalid-data'; schema: SchemaKey; message: string; errors: InstanceError[] }

interface History {
  errors: RegistryError[]
  attempts: number
  lastAttempt: number
}

type Entry<T> =
  | { storedAt: number; ok: true; value: T; repository: string }
  | { storedAt: number; ok: false; failures: Map<string, History> }

const MAX_ERRORS = 32

/** Delay before a repository that failed (other than not found) is tried again. */
export function retryBackoffMs(attempts: number): number {
  const ms = attempts <= 8 ? 500 + 4 ** attempts : attempts <= 12 ? 3 ** attempts : 2 ** attempts + 5000
  return Math.min(ms, 60_000)
}

/** Plain string prefix, as Iglu clients match vendors to repositories. */
function vendorMatches(repo: Repository, vendor: string): boolean {
  return repo.vendorPrefixes.some((p) => vendor.startsWith(p))
}

/** Repositories in lookup order for a vendor: matching first, then class priority, then priority. */
export function orderRepositories(repos: readonly Repository[], vendor: string): Repository[] {
  return repos
    .map((r, i) => ({ r, i, m: vendorMatches(r, vendor) ? 0 : 1 }))
    .sort((a, b) => a.m - b.m || a.r.classPriority - b.r.classPriority || a.r.priority - b.r.priority || a.i - b.i)
    .map((x) => x.r)
}

function describe(e: RegistryError): string {
  return e.kind === 'NotFound' ? 'not found' : `${e.kind}: ${e.message}`
}

/**
 * Least-recently-used cache. Recency is a counter stamped on each access (no
 * Map reordering per hit); the least recent entry is found by a scan only when
 * an insertion overflows the size.
 */
class TtlCache<T> {
  private readonly map = new Map<string, { e: Entry<T>; used: number }>()
  private tick = 0
  constructor(private readonly size: number) {}
  get(k: string): Entry<T> | undefined {
    const slot = this.map.get(k)
    if (slot === undefined) return undefined
    slot.used = ++this.tick
    return slot.e
  }
  set(k: string, e: Entry<T>): void {
    const slot = this.map.get(k)
    if (slot !== undefined) {
      slot.e = e
      slot.used = ++this.tick
      return
    }
    this.map.set(k, { e, used: ++this.tick })
    while (this.map.size > this.size) {
      let oldest: string | undefined
      let min = Infinity
      for (const [key, s] of this.map) {
        if (s.used < min) {
          min = s.used
          oldest = key
        }
      }
      this.map.delete(oldest as string)
    }
  }
  clear(): void {
    this.map.clear()
  }
}

export class Resolver {
  readonly repositories: readonly Repository[]
  private readonly enabled: boolean
  private readonly ttlMs: number | null
  private readonly now: () => number
  private readonly schemas: TtlCache<JsonObject>
  private readonly lists: TtlCache<SchemaKey[]>
  private readonly inflight = new Map<string, Promise<unknown>>()
  private readonly validators = new Map<string, { schema: JsonObject; fn: ValidateFunction }>()
  private readonly validatorLimit: number

  constructor(opts: ResolverOptions) {
    const names = new Set<string>()
    for (const r of opts.repositories) {
      if (names.has(r.name)) throw new Error(`Resolver configuration has two repositories named '${r.name}'`)
      names.add(r.name)
    }
    this.repositories = opts.repositories
    const size = opts.cacheSize ?? 500
    const ttl = opts.cacheTtl === undefined ? 600 : opts.cacheTtl
    this.enabled = size > 0 && ttl !== 0
    this.ttlMs = ttl === null ? null : ttl * 1000
    this.now = opts.now ?? Date.now
    this.schemas = new TtlCache(Math.max(size, 1))
    this.lists = new TtlCache(Math.max(size, 1))
    this.validatorLimit = Math.max(size, 1000)
  }

  clearCache(): void {
    this.schemas.clear()
    this.lists.clear()
    this.validators.clear()
  }

  private fresh(e: { storedAt: number }, now?: number): boolean {
    return this.ttlMs === null || (now ?? this.now()) - e.storedAt < this.ttlMs
  }

  /** The resolver's clock (epoch ms): what `cachedSchema` judges freshness by. */
  clock(): number {
    return this.now()
  }

  /** Serialises concurrent work on the same cache key. */
  private locked<R>(id: string, work: () => Promise<R>): Promise<R> {
    const running = this.inflight.get(id) as Promise<R> | undefined
    if (running) return running
    const p = work().finally(() => this.inflight.delete(id))
    this.inflight.set(id, p)
    return p
  }

  private async resolve<T>(
    id: string,
    vendor: string,
    cache: TtlCache<T>,
    fetchOne: (r: Repository) => Promise<Lookup<T>>,
    what: string,
  ): Promise<ResolveResult<T>> {
    const cached = this.enabled ? cache.get(id) : undefined
    if (cached?.ok && this.fresh(cached)) return { ok: true, value: cached.value, repository: cached.repository }
    return this.locked(id, async () => {
      const entry = this.enabled ? cache.get(id) : undefined
      if (entry?.ok && this.fresh(entry)) return { ok: true, value: entry.value, repository: entry.repository }
      const failures = new Map<string, History>()
      let storedAt = this.now()
      if (entry && !entry.ok) {
        const keepMisses = this.fresh(entry)
        if (keepMisses) storedAt = entry.storedAt
        for (const [name, h] of entry.failures) {
          const errors = keepMisses ? [...h.errors] : h.errors.filter((e) => e.kind !== 'NotFound')
          if (errors.length > 0) failures.set(name, { ...h, errors })
        }
      }
      const now = this.now()
      for (const repo of orderRepositories(this.repositories, vendor)) {
        const h = failures.get(repo.name)
        if (h) {
          if (h.errors.some((e) => e.kind === 'NotFound')) continue
          if (now - h.lastAttempt < retryBackoffMs(h.attempts)) continue
        }
        const r = await fetchOne(repo)
        if (r.ok) {
          if (this.enabled) cache.set(id, { storedAt: this.now(), ok: true, value: r.value, repository: repo.name })
          return { ok: true, value: r.value, repository: repo.name }
        }
        const prev = failures.get(repo.name)
        const errors = prev ? [...prev.errors.filter((e) => describe(e) !== describe(r.error)), r.error].slice(-MAX_ERRORS) : [r.error]
        failures.set(repo.name, { errors, attempts: (prev?.attempts ?? 0) + 1, lastAttempt: this.now() })
      }
      if (entry?.ok) {
        // The registries are failing: keep serving the last good answer.
        if (this.enabled) cache.set(id, { ...entry, storedAt: this.now() })
        return { ok: true, value: entry.value, repository: entry.repository }
      }
      if (this.enabled) cache.set(id, { storedAt, ok: false, failures })
      const list = [...failures].map(([repository, h]) => ({ repository, ...h }))
      const detail = list.length === 0
        ? 'no repository is configured'
        : list.map((f) => `${f.repository}: ${f.errors.map(describe).join('; ')}`).join(' | ')
      return { ok: false, message: `${what} could not be resolved (${detail})`, failures: list }
    })
  }

  /**
   * The schema document of `uri` when the cache holds a hit for it that is
   * fresh at `now` (default: the resolver's clock), else `undefined` (then use
   * `lookupSchema`). No I/O; counts as a use of the entry.
   */
  cachedSchema(uri: string, now?: number): JsonObject | undefined {
    if (!this.enabled) return undefined
    const e = this.schemas.get(uri)
    return e !== undefined && e.ok && this.fresh(e, now) ? e.value : undefined
  }

  /** Looks a schema up; answers the full self-describing schema document. */
  async lookupSchema(key: SchemaKey | string): Promise<ResolveResult<JsonObject>> {
    let k: SchemaKey
    if (typeof key === 'string') {
      const p = parseIgluUri(key)
      if (!p.ok) return { ok: false, message: p.message, failures: [] }
      k = p.value
    } else k = key
    const uri = toIgluUri(k)
    return this.resolve(uri, k.vendor, this.schemas, (r) => r.lookup(k), `Schema ${uri}`)
  }

  /** Every version of vendor/name/jsonschema/{model}, in SchemaVer order. */
  async listSchemas(vendor: string, name: string, model: number): Promise<ResolveResult<SchemaKey[]>> {
    const id = `${vendor}/${name}/jsonschema/${model}`
    return this.resolve(id, vendor, this.lists, (r) => r.list(vendor, name, model), `The list of ${id}`)
  }

  /** The latest version within a model: the last element of its list. */
  async latestSchemaKey(vendor: string, name: string, model: number): Promise<ResolveResult<SchemaKey>> {
    const l = await this.listSchemas(vendor, name, model)
    if (!l.ok) return l
    return { ok: true, value: l.value[l.value.length - 1]!, repository: l.repository }
  }

  /** A compiled validator for a schema, reused while the resolved schema is the same. */
  async validatorFor(key: SchemaKey): Promise<
    { ok: true; fn: ValidateFunction } | { ok: false; reason: 'resolution' | 'invalid-schema'; message: string; failures: readonly RepositoryFailure[] }
  > {
    const uri = toIgluUri(key)
    const found = await this.lookupSchema(key)
    if (!found.ok) return { ok: false, reason: 'resolution', message: found.message, failures: found.failures }
    const cached = this.validators.get(uri)
    if (cached && cached.schema === found.value) return { ok: true, fn: cached.fn }
    try {
      const fn = compileValidator(found.value)
      this.validators.delete(uri)
      this.validators.set(uri, { schema: found.value, fn })
      while (this.validators.size > this.validatorLimit) this.validators.delete(this.validators.keys().next().value as string)
      return { ok: true, fn }
    } catch (err) {
      return { ok: false, reason: 'invalid-schema', message: `Schema ${uri} cannot be compiled: ${(err as Error).message}`, failures: [] }
    }
  }

  /** Validates self-describing data `{schema, data}` against its schema. */
  async validate(instance: unknown): Promise<ValidationOutcome> {
    const sd = decodeSelfDescribingData(instance)
    if (!sd.ok) return { ok: false, reason: 'not-self-describing', message: sd.message }
    const key = sd.value.schema
    const v = await this.validatorFor(key)
    if (!v.ok) {
      return v.reason === 'resolution'
        ? { ok: false, reason: 'resolution', schema: key, message: v.message, failures: v.failures }
        : { ok: false, reason: 'invalid-schema', schema: key, message: v.message }
    }
    if (v.fn(sd.value.data)) return { ok: true, schema: key }
    const errors = instanceErrors(v.fn.errors, sd.value.data)
    return { ok: false, reason: 'invalid-data', schema: key, message: `Instance is not valid against ${toIgluUri(key)}`, errors }
  }
}
