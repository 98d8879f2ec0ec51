/**
 * Compatibility checks of an event specification's `event.schema` against its
 * source data structure: the version in `event.source` ("current") and the
 * latest version in the registry, mapped to `errors` entries.
 */
import { checkCompatibility, explainWitness, topProperty } from '../compat/index'
import { compareSchemaVer, formatSchemaVer, parseIgluUri, toIgluUri, type SchemaKey } from '../iglu/keys'
import type { StoredSchema } from '../iglu/store'
import { CODES, error, warning } from './envelope'
import type { RegistryReader } from './ports'
import type { ErrorEntry, JsonObject } from './types'
import { isObject } from './validate'

/** The outcome of "is every instance valid against `a` also valid against `b`?". */
export type CompatOutcome =
  | { readonly result: 'Compatible' }
  | { readonly result: 'SchemaIncompatible'; readonly witness?: unknown; readonly reason?: string; readonly paths?: readonly string[] }
  | { readonly result: 'SchemaUndecidable'; readonly reasons: readonly { keyword: string; path: string; message: string }[] }

/** The port through which the API reaches the schema inclusion checker. */
export interface CompatibilityChecker {
  check(a: object, b: object, resolve: (igluUri: string) => object | undefined): CompatOutcome
}

const NAMES = { a: 'the event specification', b: 'the data structure' }

/**
 * The checker of `lib/core/compat`. An incompatibility carries its witness, the JSON pointers into
 * it where the data structure rejects it (`paths`) and that rejection in words (`reason`).
 */
export const defaultChecker: CompatibilityChecker = {
  check: (a, b, resolve) => {
    const r = checkCompatibility(a, b, { resolve })
    if (r.result !== 'SchemaIncompatible') return r
    const f = explainWitness(b, r.witness, NAMES, resolve)
    return f ? { result: r.result, witness: r.witness, reason: f.reason, paths: f.paths } : { result: r.result, witness: r.witness }
  },
}

/** The entry of an incompatibility, with its witness and reason beside the four fields when known. */
function incompatible(entry: ErrorEntry, r: { witness?: unknown; reason?: string }): ErrorEntry {
  return { ...entry, ...('witness' in r ? { witness: r.witness } : {}), ...(r.reason !== undefined ? { reason: r.reason } : {}) }
}

const IGLU_HTTP = /^https?:\/\/(?:www\.)?iglucentral\.com\/schemas\/([^#]+?)\/?(#.*)?$/
const MAX_REFS = 64

function refsOf(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) for (const x of node) refsOf(x, out)
  else if (isObject(node)) {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const m = IGLU_HTTP.exec(v)
        const uri = v.startsWith('iglu:') ? v.split('#')[0]! : m ? `iglu:${m[1]}` : undefined
        if (uri) out.add(uri)
      } else refsOf(v, out)
    }
  }
}

/**
 * Loads every Iglu schema the given schemas reference (transitively) from the
 * registry, so the synchronous checker can resolve them.
 */
export async function preloadRefs(registry: RegistryReader, roots: readonly unknown[]): Promise<Map<string, object>> {
  const loaded = new Map<string, object>()
  const missing = new Set<string>()
  let pending = new Set<string>()
  for (const r of roots) refsOf(r, pending)
  while (pending.size > 0 && loaded.size + missing.size < MAX_REFS) {
    const batch = [...pending].filter((u) => !loaded.has(u) && !missing.has(u)).slice(0, MAX_REFS - loaded.size - missing.size)
    pending = new Set()
    const wanted: { uri: string; key: SchemaKey }[] = []
    for (const uri of batch) {
      const k = parseIgluUri(uri)
      if (k.ok) wanted.push({ uri, key: k.value })
      else missing.add(uri)
    }
    // One batched read per level of references when the registry offers it.
    const keys = wanted.map((w) => w.key)
    const found = registry.getMany
      ? await registry.getMany(keys)
      : new Map((await Promise.all(keys.map(async (k) => [toIgluUri(k), await registry.get(k)] as const))).flatMap(([u, s]) => (s ? [[u, s] as const] : [])))
    for (const { uri, key } of wanted) {
      const s = found.get(toIgluUri(key))
      if (!s) {
        missing.add(uri)
        continue
      }
      loaded.set(uri, s.body)
      refsOf(s.body, pending)
    }
  }
  return loaded
}

/** The latest version of the data structure (same vendor, name and format). */
export async function latestVersion(registry: RegistryReader, key: SchemaKey): Promise<StoredSchema | undefined> {
  const group = (await registry.listGroup(key.vendor, key.name)).filter((s) => s.key.format === key.format)
  return group.sort((a, b) => compareSchemaVer(a.key.version, b.key.version)).at(-1)
}

const describe = (k: SchemaKey) => `name: ${k.name}, vendor: ${k.vendor}, version: ${formatSchemaVer(k.version)}`

/**
 * The `errors` entries of the compatibility checks of a specification document, for
 * a write (create, edit: incompatible with the current version is an `Error`) or a
 * read (everything is a `Warning`). Nothing when `event.source` or `event.schema` is unset.
 */
export async function compatibilityEntries(
  doc: JsonObject,
  op: 'read' | 'write',
  registry: RegistryReader,
  checker: CompatibilityChecker,
): Promise<ErrorEntry[]> {
  const event = doc.event
  if (!isObject(event) || typeof event.source !== 'string' || !isObject(event.schema)) return []
  const parsed = parseIgluUri(event.source)
  if (!parsed.ok) return []
  const id = String(doc.id ?? '')
  // The current and the latest version come from one read of the data structure's versions.
  const group = (await registry.listGroup(parsed.value.vendor, parsed.value.name)).filter((s) => s.key.format === parsed.value.format)
  const current = group.find((s) => compareSchemaVer(s.key.version, parsed.value.version) === 0) ?? (await registry.get(parsed.value))
  const latest = group.sort((a, b) => compareSchemaVer(a.key.version, b.key.version)).at(-1)
  const targets: { which: 'current' | 'latest'; schema: StoredSchema }[] = []
  if (current) targets.push({ which: 'current', schema: current })
  if (latest && (!current || compareSchemaVer(latest.key.version, current.key.version) !== 0)) targets.push({ which: 'latest', schema: latest })
  if (targets.length === 0) {
    // A write has already failed validation; a read reports the missing structure.
    return op === 'read' ? [warning(CODES.schemaNotFound, 'event.source', `Event specification with id: ${id}, data structure ${toIgluUri(parsed.value)} does not exist in the registry`)] : []
  }
  const refs = await preloadRefs(registry, [event.schema, ...targets.map((t) => t.schema.body)])
  const resolve = (uri: string) => refs.get(uri)
  const out: ErrorEntry[] = []
  for (const t of targets) {
    const r = checker.check(event.schema, t.schema.body, resolve)
    if (r.result === 'SchemaIncompatible') {
      const title = `Event specification with id: ${id}, event schema is INCOMPATIBLE with schema with ${describe(t.schema.key)}`
      const entry = op === 'write' && t.which === 'current' ? error(CODES.schemaIncompatible, 'event.schema', title) : warning(CODES.schemaIncompatible, 'event.schema', title)
      out.push(incompatible(entry, r))
    } else if (r.result === 'SchemaUndecidable') {
      const why = r.reasons[0] ? ` (${r.reasons[0].keyword} at ${r.reasons[0].path}: ${r.reasons[0].message})` : ''
      out.push(warning(CODES.schemaUndecidable, 'event.schema', `Event specification with id: ${id}, event schema compatibility is UNDECIDABLE with schema with ${describe(t.schema.key)}${why}; compatibility is the user's responsibility`))
    }
  }
  return out
}

/** Lower-case status of one check, as the compatibility endpoint reports it. */
export type SourceStatus = 'compatible' | 'incompatible' | 'undecidable'

export interface SourceReport {
  readonly source: string
  readonly status: SourceStatus
  readonly properties: Record<string, SourceStatus>
  readonly message?: string
  /** For an incompatible source: an instance the rules accept and the structure rejects, and why. */
  readonly witness?: unknown
  readonly reason?: string
}

/** One schema against the version its source names (the compatibility endpoint). */
export async function checkSource(source: unknown, schema: unknown, registry: RegistryReader, checker: CompatibilityChecker): Promise<SourceReport> {
  const src = typeof source === 'string' ? source : String(source)
  const k = typeof source === 'string' ? parseIgluUri(source) : undefined
  if (!k || !k.ok) return { source: src, status: 'incompatible', properties: {}, message: `${src} is not a valid Iglu URI` }
  const found = await registry.get(k.value)
  if (!found) return { source: src, status: 'incompatible', properties: {}, message: `${src} does not exist in the registry` }
  if (!isObject(schema)) return { source: src, status: 'compatible', properties: {} }
  const refs = await preloadRefs(registry, [schema, found.body])
  const r = checker.check(schema, found.body, (u) => refs.get(u))
  const properties: Record<string, SourceStatus> = {}
  if (r.result === 'Compatible') return { source: src, status: 'compatible', properties }
  // Name each top-level property of the rules by checking it alone against the structure's property.
  const props = isObject(schema.properties) ? schema.properties : {}
  const target = isObject(found.body.properties) ? found.body.properties : {}
  for (const [name, rule] of Object.entries(props)) {
    const other = target[name]
    if (!isObject(rule) || !isObject(other)) continue
    const p = checker.check(rule, other, (u) => refs.get(u))
    properties[name] = p.result === 'Compatible' ? 'compatible' : p.result === 'SchemaIncompatible' ? 'incompatible' : 'undecidable'
  }
  if (r.result === 'SchemaIncompatible') {
    // The properties the witness breaks on are incompatible, whatever they give checked alone; a
    // failure of the instance itself (required, additionalProperties, type) is said in `reason`.
    for (const path of r.paths ?? []) {
      const top = topProperty(path)
      if (top !== undefined) properties[top] = 'incompatible'
    }
    const why = r.reason !== undefined ? `: ${r.reason}` : ''
    return { source: src, status: 'incompatible', properties, message: `the rules are incompatible with ${src}${why}`, ...('witness' in r ? { witness: r.witness } : {}), ...(r.reason !== undefined ? { reason: r.reason } : {}) }
  }
  return { source: src, status: 'undecidable', properties, message: r.reasons.map((x) => `${x.keyword} at ${x.path}: ${x.message}`).join('; ') }
}
