/**
 * `pii_enrichment_config`: pseudonymises personal data, as the last step
 * before the event is written. Atomic fields (`pojo`) and the values a JSON
 * path finds in contexts, the self-describing event or derived contexts of a
 * matching schema (`json`) become the lower-case hex digest of the UTF-8 text
 * of value + salt. Only strings are replaced (also strings inside an array a
 * path finds); numbers, objects and nulls are left as they are, and a path
 * never adds a field. With `emitEvent`, what was changed is recorded as a
 * `pii_transformation` event on the pii output; with `anonymousOnly`, only
 * requests sent with an `SP-Anonymous` header are pseudonymised.
 */
import { createHash } from 'node:crypto'
import md2 from 'js-md2'
import { JSONPath } from 'jsonpath-plus'
import { criterionMatches, parseCriterion, parseIgluUri, type SchemaCriterion } from '../../iglu/keys'
import type { Entity } from '../event'
import { F } from '../fields'
import { quote } from '../json'
import type { Enrichment } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'

const POJO_FIELDS = [
  'user_id', 'user_ipaddress', 'user_fingerprint', 'domain_userid', 'network_userid', 'ip_organization', 'ip_domain', 'tr_orderid', 'ti_orderid',
  'mkt_term', 'mkt_content', 'se_category', 'se_action', 'se_label', 'se_property', 'mkt_clickid', 'refr_domain_userid', 'domain_sessionid',
] as const
type PojoField = (typeof POJO_FIELDS)[number]
type JsonField = 'unstruct_event' | 'contexts' | 'derived_contexts'

const HASHES: Record<string, (text: string) => string> = {
  MD2: (t) => md2(t),
  MD5: (t) => createHash('md5').update(t, 'utf8').digest('hex'),
  'SHA-1': (t) => createHash('sha1').update(t, 'utf8').digest('hex'),
  'SHA-256': (t) => createHash('sha256').update(t, 'utf8').digest('hex'),
  'SHA-384': (t) => createHash('sha384').update(t, 'utf8').digest('hex'),
  'SHA-512': (t) => createHash('sha512').update(t, 'utf8').digest('hex'),
}

const PROBE = { a: { b: [{ c: 'd' }, 1, null] }, e: [{ f: 'g' }] }

interface Locator {
  readonly criterion: SchemaCriterion
  readonly jsonPath: string
}

export interface PiiSettings {
  readonly pojo: readonly PojoField[]
  readonly json: Readonly<Record<JsonField, readonly Locator[]>>
  readonly hashFunction: string
  readonly salt: string
  readonly emitEvent: boolean
  readonly anonymousOnly: boolean
}

type Modified = { fieldName: string; originalValue: string; modifiedValue: string; jsonPath?: string; schema?: string }

/** The settings of a configuration's `data`; throws `ConfigError` for what cannot be used. */
export function piiSettings(data: Record<string, any>): PiiSettings {
  const p = data.parameters ?? {}
  const pojo: PojoField[] = []
  const json: Record<JsonField, Locator[]> = { unstruct_event: [], contexts: [], derived_contexts: [] }
  for (const [i, entry] of ((p.pii ?? []) as any[]).entries()) {
    if (entry?.pojo) {
      if (!POJO_FIELDS.includes(entry.pojo.field)) throw new ConfigError(`pii[${i}]: the specified pojo field ${entry.pojo.field} is not supported`)
      pojo.push(entry.pojo.field)
    } else if (entry?.json) {
      const { field, schemaCriterion, jsonPath } = entry.json
      if (!(field in json)) throw new ConfigError(`pii[${i}]: the specified json field ${field} is not supported`)
      const c = parseCriterion(String(schemaCriterion))
      if (!c.ok) throw new ConfigError(`pii[${i}]: could not parse schema criterion ${schemaCriterion}`)
      try {
        // a probe with nested objects and arrays, so that filters are evaluated
        JSONPath({ path: String(jsonPath), json: PROBE, eval: 'safe' })
      } catch (err) {
        throw new ConfigError(`pii[${i}]: ${JSON.stringify(jsonPath)} is not a JSON path: ${(err as Error).message}`)
      }
      json[field as JsonField].push({ criterion: c.value, jsonPath: String(jsonPath) })
    } else throw new ConfigError(`pii[${i}] includes neither 'pojo' nor 'json'`)
  }
  const s = p.strategy?.pseudonymize
  if (!s || !HASHES[s.hashFunction]) throw new ConfigError(`strategy.pseudonymize.hashFunction must be one of ${Object.keys(HASHES).join(', ')}`)
  return { pojo, json, hashFunction: s.hashFunction, salt: String(s.salt ?? ''), emitEvent: data.emitEvent === true, anonymousOnly: data.anonymousOnly === true }
}

export class Pseudonymizer {
  private readonly hash: (text: string) => string
  constructor(readonly settings: PiiSettings) {
    this.hash = HASHES[settings.hashFunction]!
  }

  scramble(value: string): string {
    return this.hash(value + this.settings.salt)
  }

  /** The entity with its matching values replaced (the same object when nothing changed), recording each change. */
  entity(e: Entity, field: JsonField, out: Modified[]): Entity {
    const locators = this.settings.json[field]
    if (locators.length === 0) return e
    const key = parseIgluUri(e.schema)
    if (!key.ok) return e
    const matching = locators.filter((l) => criterionMatches(l.criterion, key.value))
    if (matching.length === 0) return e
    const data = JSON.parse(e.data) as unknown
    const before = out.length
    for (const l of matching) {
      let hits: { value: unknown; parent: any; parentProperty: string | number }[]
      try {
        hits = JSONPath({ path: l.jsonPath, json: data as object, resultType: 'all', eval: 'safe' })
      } catch {
        continue // a path that cannot be evaluated on this data finds nothing
      }
      for (const hit of hits) {
        if (hit.parent === null || hit.parent === undefined) continue
        const record = (original: string) => {
          const modified = this.scramble(original)
          out.push({ fieldName: field, originalValue: original, modifiedValue: modified, jsonPath: l.jsonPath, schema: e.schema })
          return modified
        }
        if (typeof hit.value === 'string') hit.parent[hit.parentProperty] = record(hit.value)
        else if (Array.isArray(hit.value)) hit.parent[hit.parentProperty] = hit.value.map((v) => (typeof v === 'string' ? record(v) : v))
      }
    }
    return out.length === before ? e : { schema: e.schema, data: JSON.stringify(data) }
  }
}

/** The `pii_transformation` event's data: each list newest first, as Snowplow writes it. */
export function piiTransformation(changes: readonly Modified[], hashFunction: string): string {
  const pojo = changes.filter((c) => c.jsonPath === undefined).reverse()
  const json = changes.filter((c) => c.jsonPath !== undefined).reverse()
  const field = (c: Modified) =>
    `{"fieldName":${quote(c.fieldName)},"originalValue":${quote(c.originalValue)},"modifiedValue":${quote(c.modifiedValue)}${c.jsonPath === undefined ? '' : `,"jsonPath":${quote(c.jsonPath)},"schema":${quote(c.schema!)}`}}`
  const lists = [...(pojo.length ? [`"pojo":[${pojo.map(field).join(',')}]`] : []), ...(json.length ? [`"json":[${json.map(field).join(',')}]`] : [])]
  return `{"pii":{${lists.join(',')}},"strategy":{"pseudonymize":{"hashFunction":${quote(hashFunction)}}}}`
}

export const piiPseudonymizer: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'pii_enrichment_config',
  models: [2],
  create(config): Enrichment {
    const settings = piiSettings(config.data as Record<string, any>)
    const p = new Pseudonymizer(settings)
    return {
      id: 'pii',
      order: ORDER.pii,
      run(ev, input) {
        if (settings.anonymousOnly && !input.raw.payload.headers.some((h) => h.toLowerCase().startsWith('sp-anonymous'))) return {}
        const changes: Modified[] = []
        for (const name of settings.pojo) {
          const v = ev.f[F[name]]
          if (v === null || v === undefined) continue
          const original = String(v)
          const modified = p.scramble(original)
          ev.f[F[name]] = modified
          changes.push({ fieldName: name, originalValue: original, modifiedValue: modified })
        }
        if (ev.unstruct) ev.unstruct = p.entity(ev.unstruct, 'unstruct_event', changes)
        if (settings.json.contexts.length) ev.contexts = ev.contexts.map((e) => p.entity(e, 'contexts', changes))
        if (settings.json.derived_contexts.length) ev.derived = ev.derived.map((e) => p.entity(e, 'derived_contexts', changes))
        if (settings.emitEvent && changes.length > 0) ev.pii = piiTransformation(changes, settings.hashFunction)
        return {}
      },
    }
  },
}
