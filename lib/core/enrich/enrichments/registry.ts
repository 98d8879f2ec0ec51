/**
 * Enrichment configuration files → steps. Each file is a self-describing JSON
 * document validated against its schema through the resolver; a file that is
 * malformed, fails validation or names an unknown (or removed) enrichment
 * stops enrich with the file name and the reason. `enabled: false` files are
 * read and skipped. The assets the configurations name are listed first so
 * the shell can download them; the steps are then built once, at start.
 */
import { parseIgluUri, toIgluUri, type SchemaKey } from '../../iglu/keys'
import type { Resolver } from '../../iglu/resolver'
import { isObject, type JsonObject } from '../../iglu/selfdesc'
import type { Enrichment } from '../steps'
import { MODULES } from './index'
import { ConfigError, type AssetRef, type BuildContext, type EnrichmentConfig, type EnrichmentModule } from './module'

/** Configuration schemas of enrichments that no longer exist, with why. */
const REMOVED: Record<string, string> = {
  user_agent_utils_config:
    'the user-agent-utils enrichment was removed from Snowplow enrich (its library is unmaintained); use ua_parser_config or yauaa_enrichment_config instead',
}

export interface ConfigFile {
  /** A file name or object key, for messages. */
  readonly source: string
  readonly text: string
}

export type LoadResult = { ok: true; configs: EnrichmentConfig[]; skipped: string[] } | { ok: false; errors: string[] }

function moduleFor(key: SchemaKey, modules: readonly EnrichmentModule[]): EnrichmentModule | string {
  if (REMOVED[key.name]) return REMOVED[key.name]!
  const byName = modules.filter((m) => m.name === key.name)
  if (byName.length === 0) return `${toIgluUri(key)} is not an enrichment this version knows (known: ${[...modules.map((m) => m.name)].sort().join(', ')})`
  const m = byName.find((x) => x.vendor === key.vendor && x.models.includes(key.version.model))
  if (!m) {
    const want = byName.map((x) => `iglu:${x.vendor}/${x.name}/jsonschema/${x.models.join('|')}-*-*`).join(' or ')
    return `${toIgluUri(key)} is not a supported version of the ${key.name} enrichment (expected ${want})`
  }
  return m
}

/**
 * A configuration's data without the module's extension parameters (undefined
 * when it has none), and the problems with their values.
 */
function extensionsOf(m: EnrichmentModule, data: JsonObject): { doc?: JsonObject; errors: string[] } {
  const params = data.parameters
  if (!m.extensions || !isObject(params)) return { errors: [] }
  const names = Object.keys(m.extensions).filter((n) => Object.hasOwn(params, n))
  if (names.length === 0) return { errors: [] }
  const errors = names.map((n) => m.extensions![n]!(params[n])).filter((e): e is string => e !== undefined)
  const rest: JsonObject = {}
  for (const [k, v] of Object.entries(params)) if (!names.includes(k)) rest[k] = v
  return { doc: { ...data, parameters: rest }, errors }
}

/** Reads and validates enrichment configuration files. */
export async function loadEnrichmentConfigs(files: readonly ConfigFile[], resolver: Resolver, modules: readonly EnrichmentModule[] = MODULES): Promise<LoadResult> {
  const r = await readEnrichmentConfigs(files, resolver, modules)
  return r.errors.length > 0 ? { ok: false, errors: r.errors } : { ok: true, configs: r.configs, skipped: r.skipped }
}

/** `loadEnrichmentConfigs` that also gives the usable configurations when others have errors. */
export async function readEnrichmentConfigs(
  files: readonly ConfigFile[],
  resolver: Resolver,
  modules: readonly EnrichmentModule[] = MODULES,
): Promise<{ errors: string[]; configs: EnrichmentConfig[]; skipped: string[] }> {
  const errors: string[] = []
  const configs: EnrichmentConfig[] = []
  const skipped: string[] = []
  for (const f of files) {
    const fail = (why: string) => errors.push(`${f.source}: ${why}`)
    let doc: unknown
    try {
      doc = JSON.parse(f.text)
    } catch (err) {
      fail(`not valid JSON: ${(err as Error).message}`)
      continue
    }
    if (!isObject(doc) || typeof doc.schema !== 'string' || !isObject(doc.data)) {
      fail('an enrichment configuration is a self-describing JSON document {"schema": "iglu:…", "data": {…}}')
      continue
    }
    const k = parseIgluUri(doc.schema)
    if (!k.ok) {
      fail(`"schema" is not an Iglu URI: ${k.message}`)
      continue
    }
    const m = moduleFor(k.value, modules)
    if (typeof m === 'string') {
      fail(m)
      continue
    }
    const ext = extensionsOf(m, doc.data)
    if (ext.errors.length > 0) {
      for (const e of ext.errors) fail(e)
      continue
    }
    const v = await resolver.validate(ext.doc === undefined ? doc : { schema: doc.schema, data: ext.doc })
    if (!v.ok) {
      const detail = v.reason === 'invalid-data' ? v.errors.map((e) => e.message).join('; ') : v.message
      fail(`invalid against ${doc.schema}: ${detail}`)
      continue
    }
    const data = doc.data as JsonObject
    if (data.enabled === false) {
      skipped.push(f.source)
      continue
    }
    configs.push({ source: f.source, schema: k.value, data, parameters: isObject(data.parameters) ? data.parameters : {} })
  }
  const names = new Map<string, string>()
  for (const c of configs) {
    // Every enrichment runs once, except the JavaScript enrichment (one step per script).
    if (c.schema.name === 'javascript_script_config') continue
    const before = names.get(c.schema.name)
    if (before) errors.push(`${c.source}: the ${c.schema.name} enrichment is configured twice (also in ${before})`)
    names.set(c.schema.name, c.source)
  }
  return { errors, configs, skipped }
}

/** Why enrich cannot read an asset at this location (only `s3://`, `http(s)://` and `file://` are read), or undefined. */
export function assetLocationProblem(location: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase()
  if (scheme === 's3' || scheme === 'http' || scheme === 'https' || scheme === 'file') return undefined
  return `${location}: assets can be read from s3://, http(s):// and file:// locations${scheme ? `, not ${scheme}://` : ''}`
}

/** The assets the configurations name, each once. */
export function assetsOf(configs: readonly EnrichmentConfig[], modules: readonly EnrichmentModule[] = MODULES): (AssetRef & { source: string })[] {
  const out = new Map<string, AssetRef & { source: string }>()
  for (const c of configs) {
    const m = moduleFor(c.schema, modules) as EnrichmentModule
    for (const a of m.assets?.(c) ?? []) if (!out.has(a.location)) out.set(a.location, { ...a, source: c.source })
  }
  return [...out.values()]
}

export type BuildResult = { ok: true; enrichments: Enrichment[] } | { ok: false; errors: string[] }

/** Builds the steps of validated configurations (assets already downloaded). */
export async function buildEnrichments(configs: readonly EnrichmentConfig[], ctx: BuildContext, modules: readonly EnrichmentModule[] = MODULES): Promise<BuildResult> {
  const errors: string[] = []
  const enrichments: Enrichment[] = []
  for (const c of configs) {
    const m = moduleFor(c.schema, modules) as EnrichmentModule
    try {
      enrichments.push(await m.create(c, ctx))
    } catch (err) {
      if (!(err instanceof ConfigError) && !(err instanceof Error)) throw err
      errors.push(`${c.source}: ${(err as Error).message}`)
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, enrichments }
}
