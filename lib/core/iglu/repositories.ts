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

export type RegistryError =
  | { readonly kind: 'NotFound' }
  | { readonly kind: 'ClientFailure'; readonly message: string }
  | { readonly kind: 'RepoFailure'; readonly message: string }

export type Lookup<T> = { ok: true; value: T } | { ok: false; error: RegistryError }

export const NOT_FOUND: Lookup<never> = { ok: false, error: { kind: 'NotFound' } }
const repoFailure = (message: string): Lookup<never> => ({ ok: false, error: { kind: 'RepoFailure', message } })

/** Class priorities: lower is tried first among equally matching repositories. */
export const CLASS_PRIORITY = { memory: 1, embedded: 2, http: 100 } as const

export interface Repository {
  readonly name: string
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly classPriority: number
  /** The full self-describing schema document. */
  lookup(key: SchemaKey): Promise<Lookup<JsonObject>>
  /** Keys of vendor/name/jsonschema/{model}.*, in SchemaVer order. */
  list(vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>>
}

export interface RepositoryRef {
  readonly name: string
  readonly priority?: number
  readonly vendorPrefixes?: readonly string[]
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
  private dir: Promise<string> | undefined

  constructor(readonly path: string, ref: Partial<RepositoryRef> = {}) {
    this.name = ref.name ?? `Embedded ${path}`
    this.priority = ref.priority ?? 0
    this.vendorPrefixes = ref.vendorPrefixes ?? []
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
  readonly fetch?: typeof fetch
}

/**
 * An Iglu server (`uri` ends in `/api`) or a static registry (`uri` is the
 * root above `schemas/`). Static registries without list files are listed by
 * probing versions in sequence.
 */
export class HttpRepository implements Repository {
  readonly classPriority = CLASS_PRIORITY.http
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly name: string
  readonly uri: string
  private readonly apikey?: string
  private readonly timeoutMs: number
  private readonly fetchFn: typeof fetch

  constructor(uri: string, opts: HttpRepositoryOptions = {}) {
    this.uri = uri.replace(/\/+$/, '')
    this.name = opts.name ?? this.uri
    this.priority = opts.priority ?? 0
    this.vendorPrefixes = opts.vendorPrefixes ?? []
    this.apikey = opts.apikey ?? undefined
    this.timeoutMs = opts.timeoutMs ?? 5000
    this.fetchFn = opts.fetch ?? fetch
  }

  private async get(path: string): Promise<Lookup<unknown>> {
    const url = `${this.uri}/schemas/${path}`
    let res: Response
    try {
      res = await this.fetchFn(url, {
        headers: { accept: 'application/json', ...(this.apikey ? { apikey: this.apikey } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
      })
    } catch (err) {
      return repoFailure(`GET ${url} failed: ${(err as Error).message}`)
    }
    const text = await res.text().catch(() => '')
    if (res.status === 404) return NOT_FOUND
    if (res.status >= 400 && res.status < 500) return { ok: false, error: { kind: 'ClientFailure', message: `GET ${url}: HTTP ${res.status} ${text.slice(0, 200)}`.trim() } }
    if (res.status < 200 || res.status >= 300) return repoFailure(`GET ${url}: HTTP ${res.status} ${text.slice(0, 200)}`.trim())
    try {
      return { ok: true, value: JSON.parse(text) as unknown }
    } catch {
      return repoFailure(`GET ${url}: the response is not JSON`)
    }
  }

  async lookup(key: SchemaKey): Promise<Lookup<JsonObject>> {
    const r = await this.get(toSchemaPath(key))
    return r.ok ? checkSelf(key, r.value, `${this.uri}/schemas/${toSchemaPath(key)}`) : r
  }

  async list(vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>> {
    const r = await this.get(`${vendor}/${name}/jsonschema/${model}`)
    if (r.ok) {
      if (!Array.isArray(r.value)) return repoFailure(`the list of ${vendor}/${name}/jsonschema/${model} is not an array`)
      const keys: SchemaKey[] = []
      for (const u of r.value) {
        const k = typeof u === 'string' ? parseIgluUri(u) : undefined
        if (!k?.ok) return repoFailure(`the list of ${vendor}/${name}/jsonschema/${model} has an invalid entry ${JSON.stringify(u)}`)
        keys.push(k.value)
      }
      return keys.length > 0 ? { ok: true, value: sortVersions(keys) } : NOT_FOUND
    }
    if (r.error.kind !== 'NotFound' && r.error.kind !== 'ClientFailure') return r
    return discover(this, vendor, name, model)
  }
}

/**
 * Finds the versions of a model without a list: from `M-0-0`, increment the
 * addition until a miss, then the next revision at addition 0, until a
 * revision has no `M-R-0`.
 */
export async function discover(repo: Pick<Repository, 'lookup'>, vendor: string, name: string, model: number): Promise<Lookup<SchemaKey[]>> {
  const keys: SchemaKey[] = []
  const key = (v: SchemaVer): SchemaKey => ({ vendor, name, format: 'jsonschema', version: v })
  for (let revision = 0; ; revision++) {
    let found = false
    for (let addition = 0; ; addition++) {
      const k = key({ model, revision, addition })
      const r = await repo.lookup(k)
      if (!r.ok) {
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
