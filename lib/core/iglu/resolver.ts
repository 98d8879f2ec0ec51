/**
 * The Iglu resolver: finds schemas across prioritised repositories, caches
 * hits and misses with a TTL, lists versions of a model, and validates
 * self-describing data with cached compiled validators.
 */
import { compileValidator, instanceErrors, type InstanceError, type ValidateFunction } from './draft04'
import { parseIgluUri, toIgluUri, type SchemaKey } from './keys'
import { RANK, type Lookup, type RegistryError, type Repository } from './repositories'
import { decodeSelfDescribingData, type JsonObject } from './selfdesc'

export interface ResolverOptions {
  readonly repositories: readonly Repository[]
  /** Entries per cache; 0 or less disables caching. Default 500. */
  readonly cacheSize?: number
  /** Seconds; `null` keeps entries forever, 0 disables caching. Default 600. */
  readonly cacheTtl?: number | null
  /** Clock in epoch ms (tests). */
  readonly now?: () => number
  /**
   * Longest time (ms) one lookup spends on repositories that fail (errors
   * other than "not found"): they are tried again with backoff until this
   * budget is spent, then skipped by every lookup for a cool-down (a circuit
   * breaker per repository). Default 10,000.
   */
  readonly lookupTimeoutMs?: number
  /** Waits between attempts (tests). */
  readonly sleep?: (ms: number) => Promise<void>
  /**
   * Repositories known only at run time (the external registries added in
   * the control plane): read before the first lookup that reaches the
   * repositories; a read that fails is tried again by the next such lookup.
   * They always rank as `RANK.external` (or above), whatever they declare: a
   * schema any other repository has is never taken from them, and they are
   * not asked while one of this deployment's own repositories is failing.
   */
  readonly loadRepositories?: () => Promise<readonly Repository[]>
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

/** The default of `ResolverOptions.lookupTimeoutMs`. */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 10_000

/** Wait before the (n+1)-th attempt at a failing repository within one lookup. */
export function attemptDelayMs(n: number): number {
  return Math.min(100 * 2 ** n, 2000)
}

/**
 * A repository that failed every attempt of a whole lookup is skipped until
 * `openUntil`; then one lookup tries it once (while `probing`, others skip it).
 */
interface Breaker {
  /** Lookups in a row that found it failing. */
  trips: number
  openUntil: number
  probing: boolean
  lastError: string
}

type Attempt<T> = { ok: true; value: T } | { ok: false; error: RegistryError; tried: boolean; retry: boolean }

/** Cool-down of a repository's circuit breaker after it failed `attempts` lookups in a row. */
export function retryBackoffMs(attempts: number): number {
  const ms = attempts <= 8 ? 500 + 4 ** attempts : attempts <= 12 ? 3 ** attempts : 2 ** attempts + 5000
  return Math.min(ms, 60_000)
}

/** Plain string prefix, as Iglu clients match vendors to repositories. */
function vendorMatches(repo: Repository, vendor: string): boolean {
  return repo.vendorPrefixes.some((p) => vendor.startsWith(p))
}

/**
 * Repositories in lookup order for a vendor: by rank (see `RANK`), then, as
 * Snowplow's resolver orders them, vendor-matching first, then class
 * priority, then priority.
 */
export function orderRepositories(repos: readonly Repository[], vendor: string, rankOf: (r: Repository) => number = (r) => r.rank ?? RANK.deployment): Repository[] {
  return repos
    .map((r, i) => ({ r, i, k: rankOf(r), m: vendorMatches(r, vendor) ? 0 : 1 }))
    .sort((a, b) => a.k - b.k || a.m - b.m || a.r.classPriority - b.r.classPriority || a.r.priority - b.r.priority || a.i - b.i)
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
  /** Replaces each entry by what `f` answers for it; `undefined` drops it. */
  revise(f: (e: Entry<T>) => Entry<T> | undefined): void {
    for (const [k, slot] of this.map) {
      const e = f(slot.e)
      if (e === undefined) this.map.delete(k)
      else slot.e = e
    }
  }
}

export class Resolver {
  private repos: readonly Repository[]
  private readonly enabled: boolean
  private readonly ttlMs: number | null
  private readonly now: () => number
  private readonly schemas: TtlCache<JsonObject>
  private readonly lists: TtlCache<SchemaKey[]>
  private readonly inflight = new Map<string, Promise<unknown>>()
  private readonly validators = new Map<string, { schema: JsonObject; fn: ValidateFunction }>()
  private readonly validatorLimit: number
  private readonly lookupTimeoutMs: number
  private readonly sleep: (ms: number) => Promise<void>
  private readonly breakers = new Map<string, Breaker>()
  private loadRepositories?: () => Promise<readonly Repository[]>
  private loading?: Promise<void>
  /** The repositories read by `loadRepositories`. */
  private readonly external = new Set<Repository>()
  /** How many times `repositoryChanged` was called: a lookup that began before a change does not cache its answer. */
  private changes = 0

  /** The rank a repository is ordered by: its own, and never below `RANK.external` for run-time ones. */
  rankOf(r: Repository): number {
    const own = r.rank ?? RANK.deployment
    return this.external.has(r) ? Math.max(own, RANK.external) : own
  }

  /** The repositories, run-time ones included once read. */
  get repositories(): readonly Repository[] {
    return this.repos
  }

  /** Adds the run-time repositories once (see `ResolverOptions.loadRepositories`). */
  private async loaded(): Promise<void> {
    const load = this.loadRepositories
    if (!load) return
    this.loading ??= load().then(
      (more) => {
        const names = new Set(this.repos.map((r) => r.name))
        const added = more.filter((r) => !names.has(r.name))
        for (const r of added) this.external.add(r)
        this.repos = [...this.repos, ...added]
        this.loadRepositories = undefined
      },
      () => {
        this.loading = undefined
      },
    )
    await this.loading
  }

  constructor(opts: ResolverOptions) {
    const names = new Set<string>()
    for (const r of opts.repositories) {
      if (names.has(r.name)) throw new Error(`Resolver configuration has two repositories named '${r.name}'`)
      names.add(r.name)
    }
    this.repos = opts.repositories
    this.loadRepositories = opts.loadRepositories
    const size = opts.cacheSize ?? 500
    const ttl = opts.cacheTtl === undefined ? 600 : opts.cacheTtl
    this.enabled = size > 0 && ttl !== 0
    this.ttlMs = ttl === null ? null : ttl * 1000
    this.now = opts.now ?? Date.now
    this.schemas = new TtlCache(Math.max(size, 1))
    this.lists = new TtlCache(Math.max(size, 1))
    this.validatorLimit = Math.max(size, 1000)
    this.lookupTimeoutMs = opts.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
  }

  /** Drops every cached schema, list, validator and repository failure: the next lookups ask the repositories again. */
  clearCache(): void {
    this.schemas.clear()
    this.lists.clear()
    this.validators.clear()
    this.breakers.clear()
  }

  /**
   * The repository named `name` has changed (a schema was written to or
   * deleted from it): drops the cached lookups it answered (schemas and
   * version lists, and their validators) and forgets that it did not have
   * the others, so that the next lookup asks it again. What every other
   * repository answered keeps its TTL, and so does its "not found".
   */
  repositoryChanged(name: string): void {
    this.changes++
    const revise = <T>(e: Entry<T>): Entry<T> | undefined => {
      if (e.ok) return e.repository === name ? undefined : e
      if (!e.failures.has(name)) return e
      const failures = new Map(e.failures)
      failures.delete(name)
      return { ...e, failures }
    }
    this.schemas.revise(revise)
    this.lists.revise(revise)
  }

  /** Repositories currently skipped after failing, with when they are tried again (epoch ms). */
  failingRepositories(): { repository: string; until: number; lastError: string }[] {
    return [...this.breakers].map(([repository, b]) => ({ repository, until: b.openUntil, lastError: b.lastError }))
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

  /**
   * One attempt at `repo`, bounded by `deadline`. A repository whose breaker is
   * open is not tried; one whose cool-down has passed is tried once (a probe,
   * not retried within this lookup).
   */
  private async attempt<T>(repo: Repository, fetchOne: (r: Repository, signal: AbortSignal) => Promise<Lookup<T>>, deadline: number): Promise<Attempt<T>> {
    const b = this.breakers.get(repo.name)
    if (b !== undefined && (b.probing || this.now() < b.openUntil)) {
      const next = b.probing ? 'being tried by another lookup' : `next attempt after ${new Date(b.openUntil).toISOString()}`
      return { ok: false, tried: false, retry: false, error: { kind: 'RepoFailure', message: `not tried: failing (${next}); last error: ${b.lastError}` } }
    }
    if (b !== undefined) b.probing = true
    const r = await this.bounded((signal) => fetchOne(repo, signal), deadline - performance.now())
    if (b !== undefined) b.probing = false
    if (r.ok || r.error.kind === 'NotFound') {
      this.breakers.delete(repo.name)
      return r.ok ? r : { ...r, tried: true, retry: false }
    }
    // A final failure (too large, redirected away, discovery over its bounds, unreachable) cannot get better by asking again soon.
    const final = r.error.final === true
    if (b !== undefined || final) this.trip(repo.name, r.error)
    return { ok: false, error: r.error, tried: true, retry: b === undefined && !final }
  }

  /**
   * `work`, or a repository failure when it has not answered within `ms`;
   * then its signal is aborted, so that nothing of it goes on in the background.
   */
  private async bounded<T>(work: (signal: AbortSignal) => Promise<Lookup<T>>, ms: number): Promise<Lookup<T>> {
    const abort = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<Lookup<T>>((resolve) => {
      timer = setTimeout(() => {
        abort.abort()
        resolve({ ok: false, error: { kind: 'RepoFailure', message: `no answer within ${Math.max(0, Math.round(ms))} ms` } })
      }, Math.max(0, ms))
    })
    try {
      const running = Promise.resolve()
        .then(() => work(abort.signal))
        .catch((err: unknown) => ({ ok: false as const, error: { kind: 'RepoFailure' as const, message: (err as Error).message } }))
      return await Promise.race([running, timeout])
    } finally {
      clearTimeout(timer)
      abort.abort()
    }
  }

  /** Opens (again) the breaker of a repository that failed a whole lookup. */
  private trip(name: string, error: RegistryError): void {
    const trips = (this.breakers.get(name)?.trips ?? 0) + 1
    this.breakers.set(name, { trips, openUntil: this.now() + retryBackoffMs(trips), probing: false, lastError: describe(error) })
  }

  private async resolve<T>(
    id: string,
    vendor: string,
    cache: TtlCache<T>,
    fetchOne: (r: Repository, signal: AbortSignal) => Promise<Lookup<T>>,
    what: string,
  ): Promise<ResolveResult<T>> {
    const cached = this.enabled ? cache.get(id) : undefined
    if (cached?.ok && this.fresh(cached)) return { ok: true, value: cached.value, repository: cached.repository }
    await this.loaded()
    // An answer found while a repository changed may be older than the change: it is given, not cached,
    // and a lookup that begins after the change does not wait for it.
    const epoch = this.changes
    return this.locked(`${epoch}|${id}`, async () => {
      const caching = () => this.enabled && this.changes === epoch
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
      const record = (name: string, a: Extract<Attempt<T>, { ok: false }>) => {
        const prev = failures.get(name)
        const errors = prev ? [...prev.errors.filter((e) => describe(e) !== describe(a.error)), a.error].slice(-MAX_ERRORS) : [a.error]
        const attempts = (prev?.attempts ?? 0) + (a.tried ? 1 : 0)
        failures.set(name, { errors, attempts, lastAttempt: a.tried ? this.now() : (prev?.lastAttempt ?? this.now()) })
      }
      // The budget is wall-clock time, whatever clock judges cache freshness.
      const deadline = performance.now() + this.lookupTimeoutMs
      const hit = (value: T, repository: string): ResolveResult<T> => {
        if (caching()) cache.set(id, { storedAt: this.now(), ok: true, value, repository })
        return { ok: true, value, repository }
      }
      let again: Repository[] = []
      // External registries are not asked while one of the deployment's own repositories fails: it may have the schema.
      let held: Repository[] = []
      const ownFailing = new Set<string>()
      const tryOne = async (repo: Repository): Promise<ResolveResult<T> | undefined> => {
        const a = await this.attempt(repo, fetchOne, deadline)
        if (a.ok) return hit(a.value, repo.name)
        record(repo.name, a)
        if (this.rankOf(repo) === RANK.deployment) {
          if (a.error.kind === 'NotFound') ownFailing.delete(repo.name)
          else ownFailing.add(repo.name)
        }
        if (a.retry) again.push(repo)
        return undefined
      }
      for (const repo of orderRepositories(this.repos, vendor, (r) => this.rankOf(r))) {
        if (failures.get(repo.name)?.errors.some((e) => e.kind === 'NotFound')) continue
        if (ownFailing.size > 0 && this.rankOf(repo) >= RANK.external) {
          held.push(repo)
          continue
        }
        const r = await tryOne(repo)
        if (r) return r
      }
      // Nobody had it and some repositories failed: try those again with backoff while the budget lasts
      // (not when a stale copy can be served instead); the held external registries once the deployment's own have answered.
      for (let n = 0; (again.length > 0 || (held.length > 0 && ownFailing.size === 0)) && !entry?.ok && performance.now() + attemptDelayMs(n) < deadline; n++) {
        if (again.length > 0) await this.sleep(attemptDelayMs(n))
        const retrying = again
        again = []
        for (const repo of retrying) {
          const r = await tryOne(repo)
          if (r) return r
        }
        if (ownFailing.size > 0) continue
        const waiting = held
        held = []
        for (const repo of waiting) {
          const r = await tryOne(repo)
          if (r) return r
        }
      }
      for (const repo of held) {
        record(repo.name, { ok: false, tried: false, retry: false, error: { kind: 'RepoFailure', message: "not asked: one of this deployment's own repositories failed, so it may have the schema" } })
      }
      for (const repo of again) {
        const errs = failures.get(repo.name)!.errors
        this.trip(repo.name, errs[errs.length - 1]!)
      }
      if (entry?.ok) {
        // The registries are failing: keep serving the last good answer.
        if (caching()) cache.set(id, { ...entry, storedAt: this.now() })
        return { ok: true, value: entry.value, repository: entry.repository }
      }
      if (caching()) cache.set(id, { storedAt, ok: false, failures })
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
    return this.resolve(uri, k.vendor, this.schemas, (r, signal) => r.lookup(k, signal), `Schema ${uri}`)
  }

  /** Every version of vendor/name/jsonschema/{model}, in SchemaVer order. */
  async listSchemas(vendor: string, name: string, model: number): Promise<ResolveResult<SchemaKey[]>> {
    const id = `${vendor}/${name}/jsonschema/${model}`
    return this.resolve(id, vendor, this.lists, (r, signal) => r.list(vendor, name, model, signal), `The list of ${id}`)
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
    const errors = instanceErrors(v.fn.errors, sd.value.data, v.fn.schema)
    return { ok: false, reason: 'invalid-data', schema: key, message: `Instance is not valid against ${toIgluUri(key)}`, errors }
  }
}
