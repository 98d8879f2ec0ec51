/**
 * Repositories the resolver reads schemas from: embedded static-layout
 * directories, HTTP registries (Iglu servers and static registries), this
 * deployment's own registry store, and in-memory maps.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { compareSchemaVer, formatSchemaVer, parseIgluUri, parseSchemaVer, toIgluUri, toSchemaPath, type SchemaKey, type SchemaVer } from './keys'
import { canonicalSchema, isObject, type JsonObject } from './selfdesc'
import type { SchemaStore } from './store'
import { boundedGet, MAX_ANSWER_BYTES } from './bounded-get'

/**
 * Why a repository gave no schema. `final` failures (an answer over the size
 * cap, a redirect to another origin, version discovery over its bounds, a
 * registry that cannot be reached: no DNS, connection refused, no route) are
 * not retried within the lookup: asking again cannot help; the repository's
 * circuit breaker opens at once.
 */
export type RegistryError =
  | { readonly kind: 'NotFound' }
  | { readonly kind: 'ClientFailure'; readonly message: string; readonly final?: boolean }
  | { readonly kind: 'RepoFailure'; readonly message: string; readonly final?: boolean }

export type Lookup<T> = { ok: true; value: T } | { ok: false; error: RegistryError }

export const NOT_FOUND: Lookup<never> = { ok: false, error: { kind: 'NotFound' } }
const repoFailure = (message: string, final?: boolean): Lookup<never> => ({ ok: false, error: { kind: 'RepoFailure', message, ...(final ? { final } : {}) } })

/** Class priorities: lower is tried first among equally matching repositories. */
export const CLASS_PRIORITY = { memory: 1, embedded: 2, http: 100 } as const

/**
 * Ranks of repositories. Every repository of a lower rank is tried before any
 * of a higher rank, whatever their vendor prefixes and priorities (Snowplow's
 * ordering applies within a rank): this deployment's own repositories (its
 * registry, the project's schemas, `FLOE_IGLU_DIRS`, the Iglu Central
 * snapshot), then the configured resolver repositories (Iglu Central or
 * `FLOE_RESOLVER_CONFIG`'s), then the external registries added at run time.
 */
export const RANK = { deployment: 0, configured: 1, external: 2 } as const

export interface Repository {
  readonly name: string
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly classPriority: number
  /** See `RANK`; absent means `RANK.deployment`. */
  readonly rank?: number
  /** The full self-describing schema document. `signal` abandons the work (the lookup's budget ran out). */
  lookup(key: SchemaKey, signal?: AbortSignal): Promise<Lookup<JsonObject>>
  /** Keys of vendor/name/jsonschema/{model}.*, in SchemaVer order. */
  list(vendor: string, name: string, model: number, signal?: AbortSignal): Promise<Lookup<SchemaKey[]>>
}

export interface RepositoryRef {
  readonly name: string
  readonly priority?: number
  readonly vendorPrefixes?: readonly string[]
  /** See `RANK`. Default `RANK.deployment`. */
  readonly rank?: number
}

/**
 * A schema document served for `key`. Its `self` block is not compared with
 * the key: as in Snowplow's resolver, what a repository serves at a key's path
 * is that key's schema (a mismatch is a publishing mistake, not an outage).
 */
function checkSelf(key: SchemaKey, doc: unknown, where: string): Lookup<JsonObject> {
  void key
  if (!isObject(doc)) return repoFailure(`${where} is not a JSON object`)
  return { ok: true, value: doc }
}

const sortVersions = (keys: SchemaKey[]) => keys.sort((a, b) => compareSchemaVer(a.version, b.version))

/**
 * A directory in static layout. `path` is either a root holding `schemas/`
 * (as Iglu's embedded repositories) or the `schemas` directory itself.
 */
export class EmbeddedRepository implements Repository {
  readonly classPriority = CLASS_PRIORITY.embedded
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly name: string
  readonly rank: number
  private dir: Promise<string> | undefined

  constructor(readonly path: string, ref: Partial<RepositoryRef> = {}) {
    this.name = ref.name ?? `Embedded ${path}`
    this.priority = ref.priority ?? 0
    this.vendorPrefixes = ref.vendorPrefixes ?? []
    this.rank = ref.rank ?? RANK.deployment
  }

  private schemasDir(): Promise<string> {
    this.dir ??= stat(join(this.path, 'schemas'))
      .then((s) => (s.isDirectory() ? join(this.path, 'schemas') : this.path))
      .catch(() => this.path)
    return this.dir
  }

  async lookup(key: SchemaKey): Promise<Lookup<JsonObject>> {
    const file = join(await this.schemasDir(), toSchemaPath(key))
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' ? NOT_FOUND : repoFailure(`cannot read ${file}: ${(err as Error).message}`)
    }
    try {
      return checkSelf(key, JSON.parse(text), file)
    } catch (err) {
      return repoFailure(`${file} is not valid JSON: ${(err as Error).message}`)
    }
  }

  async list(vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>> {
    let files: string[]
    try {
      files = await readdir(join(await this.schemasDir(), vendor, name, 'jsonschema'))
    } catch {
      return NOT_FOUND
    }
    const keys: SchemaKey[] = []
    for (const f of files) {
      if (!f.startsWith(`${model}-`)) continue
      const v = parseSchemaVer(f)
      if (v.ok && v.value.model === model) keys.push({ vendor, name, format: 'jsonschema', version: v.value })
    }
    return keys.length > 0 ? { ok: true, value: sortVersions(keys) } : NOT_FOUND
  }
}

export interface HttpRepositoryOptions extends Partial<RepositoryRef> {
  readonly apikey?: string | null
  /** Per-request timeout. Default 5000 ms. */
  readonly timeoutMs?: number
  /** Largest answer read, in bytes. Default `MAX_ANSWER_BYTES` (1 MiB). */
  readonly maxBytes?: number
  /** Bounds of version discovery (listing a model without a list file). */
  readonly discovery?: Partial<DiscoveryLimits>
  readonly fetch?: typeof fetch
}

/** Most versions a list may name (a SchemaVer model of Iglu Central has a handful). */
export const MAX_LIST_ENTRIES = 500

/**
 * An Iglu server (`uri` ends in `/api`) or a static registry (`uri` is the
 * root above `schemas/`). Static registries without list files are listed by
 * probing versions in sequence, within `DiscoveryLimits`. Every answer is
 * capped in size and redirects are followed only within the same origin
 * (see `boundedGet`).
 */
export class HttpRepository implements Repository {
  readonly classPriority = CLASS_PRIORITY.http
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly name: string
  readonly rank: number
  readonly uri: string
  private readonly apikey?: string
  private readonly timeoutMs: number
  private readonly maxBytes: number
  private readonly discovery: DiscoveryLimits
  private readonly fetchFn?: typeof fetch

  constructor(uri: string, opts: HttpRepositoryOptions = {}) {
    this.uri = uri.replace(/\/+$/, '')
    this.name = opts.name ?? this.uri
    this.priority = opts.priority ?? 0
    this.vendorPrefixes = opts.vendorPrefixes ?? []
    this.rank = opts.rank ?? RANK.deployment
    this.apikey = opts.apikey ?? undefined
    this.timeoutMs = opts.timeoutMs ?? 5000
    this.maxBytes = opts.maxBytes ?? MAX_ANSWER_BYTES
    this.discovery = { ...DISCOVERY_LIMITS, ...opts.discovery }
    this.fetchFn = opts.fetch
  }

  private async get(path: string, signal?: AbortSignal): Promise<Lookup<unknown>> {
    const url = `${this.uri}/schemas/${path}`
    const res = await boundedGet(url, {
      headers: { accept: 'application/json', ...(this.apikey ? { apikey: this.apikey } : {}) },
      timeoutMs: this.timeoutMs,
      maxBytes: this.maxBytes,
      signal,
      fetch: this.fetchFn,
    })
    if (!res.ok) return repoFailure(res.message, res.final)
    const text = res.text
    if (res.status === 404) return NOT_FOUND
    if (res.status >= 400 && res.status < 500) return { ok: false, error: { kind: 'ClientFailure', message: `GET ${url}: HTTP ${res.status} ${text.slice(0, 200)}`.trim() } }
    if (res.status < 200 || res.status >= 300) return repoFailure(`GET ${url}: HTTP ${res.status} ${text.slice(0, 200)}`.trim())
    try {
      return { ok: true, value: JSON.parse(text) as unknown }
    } catch {
      return repoFailure(`GET ${url}: the response is not JSON`)
    }
  }

  async lookup(key: SchemaKey, signal?: AbortSignal): Promise<Lookup<JsonObject>> {
    const r = await this.get(toSchemaPath(key), signal)
    return r.ok ? checkSelf(key, r.value, `${this.uri}/schemas/${toSchemaPath(key)}`) : r
  }

  async list(vendor: string, name: string, model: number, signal?: AbortSignal): Promise<Lookup<SchemaKey[]>> {
    const id = `${vendor}/${name}/jsonschema/${model}`
    const r = await this.get(id, signal)
    if (r.ok) {
      if (!Array.isArray(r.value)) return repoFailure(`the list of ${id} is not an array`)
      if (r.value.length > MAX_LIST_ENTRIES) return repoFailure(`the list of ${id} names ${r.value.length} versions (at most ${MAX_LIST_ENTRIES} are read)`, true)
      const keys: SchemaKey[] = []
      const seen = new Set<string>()
      for (const u of r.value) {
        const k = typeof u === 'string' ? parseIgluUri(u) : undefined
        if (!k?.ok) return repoFailure(`the list of ${id} has an invalid entry ${JSON.stringify(u).slice(0, 200)}`)
        const v = k.value
        if (v.vendor !== vendor || v.name !== name || v.format !== 'jsonschema' || v.version.model !== model || seen.has(u as string)) {
          return repoFailure(`the list of ${id} has an entry of another schema or a duplicate: ${(u as string).slice(0, 200)}`)
        }
        seen.add(u as string)
        keys.push(v)
      }
      return keys.length > 0 ? { ok: true, value: sortVersions(keys) } : NOT_FOUND
    }
    if (r.error.kind !== 'NotFound' && r.error.kind !== 'ClientFailure') return r
    return discover(this, vendor, name, model, { ...this.discovery, signal })
  }
}

/** Bounds of one version discovery. */
export interface DiscoveryLimits {
  /** Lookups one discovery makes at most. */
  readonly maxRequests: number
  /** Time one discovery spends at most, in ms. */
  readonly budgetMs: number
}

export const DISCOVERY_LIMITS: DiscoveryLimits = { maxRequests: 64, budgetMs: 10_000 }

/**
 * Finds the versions of a model without a list: from `M-0-0`, increment the
 * addition until a miss, then the next revision at addition 0, until a
 * revision has no `M-R-0`. Stops (a final failure, never a partial list) after
 * `maxRequests` lookups or `budgetMs`, or when `signal` aborts; nothing of it
 * runs after it has answered.
 */
export async function discover(
  repo: Pick<Repository, 'lookup'>,
  vendor: string,
  name: string,
  model: number,
  limits: Partial<DiscoveryLimits> & { readonly signal?: AbortSignal } = {},
): Promise<Lookup<SchemaKey[]>> {
  const { maxRequests, budgetMs } = { ...DISCOVERY_LIMITS, ...limits }
  const budget = AbortSignal.timeout(budgetMs)
  const signal = limits.signal ? AbortSignal.any([budget, limits.signal]) : budget
  const keys: SchemaKey[] = []
  const key = (v: SchemaVer): SchemaKey => ({ vendor, name, format: 'jsonschema', version: v })
  let requests = 0
  const id = `${vendor}/${name}/jsonschema/${model}`
  for (let revision = 0; ; revision++) {
    let found = false
    for (let addition = 0; ; addition++) {
      if (requests >= maxRequests) return repoFailure(`listing ${id} without a list file stopped after ${maxRequests} lookups; publish the list file schemas/${id}`, true)
      if (signal.aborted) return repoFailure(`listing ${id} without a list file stopped after ${budget.aborted ? `${budgetMs} ms` : 'the lookup ran out of time'} (${requests} lookups)`, true)
      const k = key({ model, revision, addition })
      requests++
      const r = await repo.lookup(k, signal)
      if (!r.ok) {
        if (signal.aborted) continue
        if (r.error.kind === 'RepoFailure') return r
        break
      }
      keys.push(k)
      found = true
    }
    if (!found) break
  }
  return keys.length > 0 ? { ok: true, value: keys } : NOT_FOUND
}

/** This deployment's own registry, read straight from its store (private schemas included). */
export class StoreRepository implements Repository {
  readonly classPriority = CLASS_PRIORITY.memory
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly name: string

  constructor(private readonly store: SchemaStore, ref: Partial<RepositoryRef> = {}) {
    this.name = ref.name ?? 'Floe registry'
    this.priority = ref.priority ?? 0
    this.vendorPrefixes = ref.vendorPrefixes ?? []
  }

  async lookup(key: SchemaKey): Promise<Lookup<JsonObject>> {
    try {
      const s = await this.store.get(key)
      if (!s) return NOT_FOUND
      return { ok: true, value: canonicalSchema(s.key, s.body, { supersededBy: s.supersededBy, supersedes: s.supersedes }) }
    } catch (err) {
      return repoFailure(`registry store: ${(err as Error).message}`)
    }
  }

  async list(vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>> {
    try {
      const keys = (await this.store.listGroup(vendor, name))
        .filter((s) => s.key.format === 'jsonschema' && s.key.version.model === model)
        .map((s) => s.key)
      return keys.length > 0 ? { ok: true, value: sortVersions(keys) } : NOT_FOUND
    } catch (err) {
      return repoFailure(`registry store: ${(err as Error).message}`)
    }
  }
}

/** Schemas held in memory, keyed by Iglu URI. */
export class MemoryRepository implements Repository {
  readonly classPriority = CLASS_PRIORITY.memory
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly name: string
  private readonly schemas = new Map<string, JsonObject>()

  constructor(schemas: readonly JsonObject[] = [], ref: Partial<RepositoryRef> = {}) {
    this.name = ref.name ?? 'In-memory'
    this.priority = ref.priority ?? 0
    this.vendorPrefixes = ref.vendorPrefixes ?? []
    for (const s of schemas) this.add(s)
  }

  add(schema: JsonObject): void {
    const self = schema.self as Record<string, string>
    this.schemas.set(`iglu:${self.vendor}/${self.name}/${self.format}/${self.version}`, schema)
  }

  async lookup(key: SchemaKey): Promise<Lookup<JsonObject>> {
    const s = this.schemas.get(toIgluUri(key))
    return s ? { ok: true, value: s } : NOT_FOUND
  }

  async list(vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>> {
    const keys = [...this.schemas.keys()]
      .map((u) => parseIgluUri(u))
      .flatMap((k) => (k.ok ? [k.value] : []))
      .filter((k) => k.vendor === vendor && k.name === name && k.format === 'jsonschema' && k.version.model === model)
    return keys.length > 0 ? { ok: true, value: sortVersions(keys) } : NOT_FOUND
  }
}
