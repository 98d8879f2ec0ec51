/**
 * What the tracking-design API reads as "the registry": this deployment's own
 * registry first, then the resolver's repositories (the project's schemas, the
 * Iglu Central snapshot, Iglu Central and any configured registry), so that a
 * specification may name Snowplow's or another public vendor's schemas. The
 * data-structures view (`listAll`) stays this deployment's own.
 */
import { toIgluUri, type SchemaKey } from '../iglu/keys'
import type { Resolver } from '../iglu/resolver'
import { readSupersedes, schemaBody, type JsonObject } from '../iglu/selfdesc'
import type { StoredSchema } from '../iglu/store'
import type { RegistryReader } from './ports'

/** Models probed when listing a data structure that only the resolver knows. */
const MAX_MODELS = 20
/** Versions read when listing a data structure that only the resolver knows (all models together). */
export const MAX_GROUP_VERSIONS = 500
/** Versions looked up at once while listing. */
const CONCURRENCY = 8

function fromDocument(key: SchemaKey, doc: JsonObject): StoredSchema {
  const supersedes = readSupersedes(doc)
  return { key, body: schemaBody(doc), isPublic: true, createdAt: '', updatedAt: '', supersedes: supersedes.ok ? supersedes.value : [] }
}

export function resolvingRegistry(own: RegistryReader, resolver: Resolver): RegistryReader {
  const lookup = async (key: SchemaKey) => {
    const r = await resolver.lookupSchema(key)
    return r.ok ? fromDocument(key, r.value) : undefined
  }
  return {
    async get(key) {
      return (await own.get(key)) ?? lookup(key)
    },
    async getMany(keys) {
      const found = own.getMany ? await own.getMany(keys) : new Map<string, StoredSchema>()
      const rest = keys.filter((k) => !found.has(toIgluUri(k)))
      const more = await Promise.all(rest.map(async (k) => (own.getMany ? undefined : await own.get(k)) ?? lookup(k)))
      rest.forEach((k, i) => {
        const s = more[i]
        if (s) found.set(toIgluUri(k), s)
      })
      return found
    },
    async listGroup(vendor, name) {
      const mine = await own.listGroup(vendor, name)
      if (mine.length > 0) return mine
      const out: StoredSchema[] = []
      let budget = MAX_GROUP_VERSIONS
      for (let model = 1; model <= MAX_MODELS && budget > 0; model++) {
        const l = await resolver.listSchemas(vendor, name, model)
        if (!l.ok) break
        const keys = l.value.slice(0, budget)
        budget -= keys.length
        for (let i = 0; i < keys.length; i += CONCURRENCY) {
          const docs = await Promise.all(keys.slice(i, i + CONCURRENCY).map(lookup))
          for (const d of docs) if (d) out.push(d)
        }
      }
      return out
    },
    listAll: () => own.listAll(),
  }
}
