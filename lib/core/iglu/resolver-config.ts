/**
 * Resolver configuration in Iglu `resolver-config` format (1-0-0 … 1-0-3), and
 * Floe's default configuration.
 */
import { readFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { parseIgluUri } from './keys'
import { EmbeddedRepository, HttpRepository, RANK, StoreRepository, type Repository } from './repositories'
import { Resolver } from './resolver'
import { isObject } from './selfdesc'
import type { SchemaStore } from './store'

export interface RepositoryConfig {
  readonly name: string
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly connection: { readonly embedded: { readonly path: string } } | { readonly http: { readonly uri: string; readonly apikey?: string | null } }
}

export interface ResolverConfig {
  readonly cacheSize: number
  readonly cacheTtl?: number | null
  readonly repositories: readonly RepositoryConfig[]
}

export type ConfigParse = { ok: true; value: ResolverConfig } | { ok: false; errors: string[] }

export const IGLU_CENTRAL_URI = 'https://iglucentral.com'

/** The name of the repository of this deployment's own registry (its store) in the resolver. */
export const OWN_REGISTRY = 'Floe registry'

/** Reads a resolver configuration: the self-describing envelope or its bare `data`. */
export function parseResolverConfig(json: unknown): ConfigParse {
  const errors: string[] = []
  let data = json
  if (isObject(json) && typeof json.schema === 'string') {
    const k = parseIgluUri(json.schema)
    if (!k.ok || k.value.vendor !== 'com.snowplowanalytics.iglu' || k.value.name !== 'resolver-config' || k.value.version.model !== 1 || k.value.version.revision !== 0) {
      return { ok: false, errors: [`schema must be iglu:com.snowplowanalytics.iglu/resolver-config/jsonschema/1-0-*, got ${json.schema}`] }
    }
    data = json.data
  }
  if (!isObject(data)) return { ok: false, errors: ['the configuration must be a JSON object'] }
  if (typeof data.cacheSize !== 'number') errors.push('cacheSize must be a number')
  const ttl = data.cacheTtl
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || ttl < 0)) errors.push('cacheTtl must be a non-negative number or null')
  if (!Array.isArray(data.repositories)) errors.push('repositories must be an array')
  const repos: RepositoryConfig[] = []
  const names = new Set<string>()
  for (const [i, r] of (Array.isArray(data.repositories) ? data.repositories : []).entries()) {
    const at = `repositories[${i}]`
    if (!isObject(r)) {
      errors.push(`${at} must be an object`)
      continue
    }
    if (typeof r.name !== 'string') errors.push(`${at}.name must be a string`)
    else if (names.has(r.name)) errors.push(`${at}.name '${r.name}' is used twice`)
    else names.add(r.name)
    if (typeof r.priority !== 'number') errors.push(`${at}.priority must be a number`)
    if (!Array.isArray(r.vendorPrefixes) || !r.vendorPrefixes.every((p) => typeof p === 'string')) errors.push(`${at}.vendorPrefixes must be an array of strings`)
    const c = r.connection
    let connection: RepositoryConfig['connection'] | undefined
    if (isObject(c) && isObject(c.embedded) && typeof c.embedded.path === 'string') connection = { embedded: { path: c.embedded.path } }
    else if (isObject(c) && isObject(c.http) && typeof c.http.uri === 'string') {
      const apikey = c.http.apikey
      if (apikey !== undefined && apikey !== null && typeof apikey !== 'string') errors.push(`${at}.connection.http.apikey must be a string or null`)
      connection = { http: { uri: c.http.uri, apikey: typeof apikey === 'string' ? apikey : null } }
    } else errors.push(`${at}.connection must have embedded.path or http.uri`)
    if (connection && typeof r.name === 'string') {
      repos.push({ name: r.name, priority: Number(r.priority), vendorPrefixes: (r.vendorPrefixes as string[]) ?? [], connection })
    }
  }
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, value: { cacheSize: data.cacheSize as number, cacheTtl: ttl as number | null | undefined, repositories: repos } }
}

export interface BuildOptions {
  /** Directory relative embedded paths are resolved against. Default: the working directory. */
  readonly baseDir?: string
  readonly fetch?: typeof fetch
  /** Extra repositories (e.g. this deployment's own registry). */
  readonly extra?: readonly Repository[]
  /** See `ResolverOptions.lookupTimeoutMs`. */
  readonly lookupTimeoutMs?: number
  /** See `ResolverOptions.loadRepositories`. */
  readonly loadRepositories?: () => Promise<readonly Repository[]>
}

/** A configured repository: it ranks after the deployment's own (`RANK.configured`). */
export function repositoryFromConfig(r: RepositoryConfig, opts: BuildOptions = {}): Repository {
  const ref = { name: r.name, priority: r.priority, vendorPrefixes: r.vendorPrefixes, rank: RANK.configured }
  if ('embedded' in r.connection) {
    const p = r.connection.embedded.path
    return new EmbeddedRepository(isAbsolute(p) ? p : resolve(opts.baseDir ?? process.cwd(), p), ref)
  }
  return new HttpRepository(r.connection.http.uri, { ...ref, apikey: r.connection.http.apikey, fetch: opts.fetch })
}

export function resolverFromConfig(config: ResolverConfig, opts: BuildOptions = {}): Resolver {
  return new Resolver({
    cacheSize: config.cacheSize,
    cacheTtl: config.cacheTtl,
    repositories: [...(opts.extra ?? []), ...config.repositories.map((r) => repositoryFromConfig(r, opts))],
    lookupTimeoutMs: opts.lookupTimeoutMs,
    loadRepositories: opts.loadRepositories,
  })
}


/** The name of the resolver's repository for a directory of `FLOE_IGLU_DIRS`. */
export const igluDirRepositoryName = (dir: string): string => `Embedded ${dir}`

/** Splits `FLOE_IGLU_DIRS`: `:` or `,` separated. */
export function igluDirs(value: string | undefined): string[] {
  return (value ?? '').split(/[:,]/).map((s) => s.trim()).filter(Boolean)
}

export interface DefaultResolverOptions {
  readonly env?: NodeJS.ProcessEnv
  /** The project's `schemas/` directory (Iglu static layout, with the Iglu Central snapshot in `iglu-central/`); `FLOE_SCHEMAS_DIR` overrides it. */
  readonly schemasDir: string
  /** This deployment's registry store; becomes the 'Floe registry' repository, tried first. */
  readonly store?: SchemaStore
  readonly fetch?: typeof fetch
  /** Repositories read at run time (the deployment's external registries). */
  readonly loadRepositories?: () => Promise<readonly Repository[]>
}

/** A non-negative number of seconds from the environment, or `undefined` when unset. */
function seconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim()
  if (!raw) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of seconds (0 or more), got '${raw}'`)
  return n
}

/** The Iglu Central snapshot shipped in the project's `schemas/iglu-central` (Apache-2.0). */
export function igluCentralSnapshot(schemasDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(env.FLOE_SCHEMAS_DIR ?? schemasDir, 'iglu-central')
}

/**
 * Floe's resolver configuration. Repositories, in lookup order (the first
 * four rank as `RANK.deployment`, the fifth as `RANK.configured`, and the
 * external registries of `loadRepositories` after all of them):
 * 1. this deployment's own registry, when a store is given (private schemas included);
 * 2. the project's `schemas/` directory (embedded);
 * 3. each directory of `FLOE_IGLU_DIRS` (embedded);
 * 4. the Iglu Central snapshot in `schemas/iglu-central` (embedded), so tracker
 *    events validate without internet access;
 * 5. `FLOE_RESOLVER_CONFIG`'s repositories (a JSON document or a path to one)
 *    when set, else Iglu Central (`FLOE_IGLU_CENTRAL_URL`, default
 *    https://iglucentral.com; empty disables it).
 * `FLOE_RESOLVER_CACHE_TTL` (seconds) overrides the cache TTL and
 * `FLOE_RESOLVER_LOOKUP_TIMEOUT` (seconds, default 10) bounds how long one
 * lookup waits for a failing repository.
 */
export function defaultResolverConfig(opts: DefaultResolverOptions): { config: ResolverConfig; extra: Repository[]; lookupTimeoutMs?: number } {
  const env = opts.env ?? process.env
  let config: ResolverConfig
  const raw = env.FLOE_RESOLVER_CONFIG?.trim()
  if (raw) {
    const text = raw.startsWith('{') ? raw : readFileSync(raw, 'utf8')
    const parsed = parseResolverConfig(JSON.parse(text))
    if (!parsed.ok) throw new Error(`FLOE_RESOLVER_CONFIG is invalid: ${parsed.errors.join('; ')}`)
    config = parsed.value
  } else {
    const central = env.FLOE_IGLU_CENTRAL_URL ?? IGLU_CENTRAL_URI
    config = {
      cacheSize: 500,
      cacheTtl: 600,
      repositories: central
        ? [{ name: 'Iglu Central', priority: 10, vendorPrefixes: [], connection: { http: { uri: central } } }]
        : [],
    }
  }
  const ttl = seconds(env, 'FLOE_RESOLVER_CACHE_TTL')
  if (ttl !== undefined) config = { ...config, cacheTtl: ttl }
  const timeout = seconds(env, 'FLOE_RESOLVER_LOOKUP_TIMEOUT')
  const extra: Repository[] = []
  if (opts.store) extra.push(new StoreRepository(opts.store, { name: OWN_REGISTRY, priority: 0 }))
  extra.push(new EmbeddedRepository(env.FLOE_SCHEMAS_DIR ?? opts.schemasDir, { name: 'Floe embedded', priority: 0 }))
  const dirs = igluDirs(env.FLOE_IGLU_DIRS)
  dirs.forEach((d, i) => {
    extra.push(new EmbeddedRepository(resolve(d), { name: igluDirRepositoryName(d), priority: 1 + i }))
  })
  extra.push(new EmbeddedRepository(igluCentralSnapshot(opts.schemasDir, env), { name: 'Iglu Central snapshot', priority: 1 + dirs.length }))
  return { config, extra, lookupTimeoutMs: timeout === undefined ? undefined : timeout * 1000 }
}

export function defaultResolver(opts: DefaultResolverOptions): Resolver {
  const { config, extra, lookupTimeoutMs } = defaultResolverConfig(opts)
  return resolverFromConfig(config, { extra, fetch: opts.fetch, lookupTimeoutMs, loadRepositories: opts.loadRepositories })
}
