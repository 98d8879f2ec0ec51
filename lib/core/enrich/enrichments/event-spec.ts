/**
 * `event_spec_enrichment_config`: ties events to the published event
 * specifications of this deployment's tracking-design API.
 *
 * - An event that does not say which specification it follows is matched
 *   against the latest published version of every specification: its event
 *   schema (the unstructured event's, or `page_view`/`page_ping` built from the
 *   page fields, as Snowplow does), the entities the specification requires
 *   (`minCardinality` ≥ 1) among the tracker's contexts, every cardinality and
 *   the JSON Schema rules (`schema`) of the event and of each entity. Each
 *   specification it satisfies adds an `event_specification` context
 *   `{id, name, version}`.
 * - An event whose tracker sent an `event_specification` entity with an `id`
 *   and a `version` of a published specification is checked against that
 *   version instead; each rule it breaks is an enrichment failure naming the
 *   specification and the rule. A claim of a version this deployment has not
 *   published is left alone.
 *
 * The specifications come from an `EventSpecSource` (the shell reads the
 * tracking-design history table) and are read again in the background every
 * `refreshPeriodSeconds` (default 60), and at once when the shell says they
 * changed (`EventSpecContext.follow`: a publish); a failed refresh keeps the
 * current set.
 */
import type { ValidateFunction } from 'ajv'
import { compileValidator, instanceErrors } from '../../iglu/draft04'
import { parseIgluUri, toIgluUri } from '../../iglu/keys'
import { isObject } from '../../iglu/selfdesc'
import type { EnrichedEvent, Entity } from '../event'
import { F } from '../fields'
import { quote } from '../json'
import { memo } from '../memo'
import type { Enrichment, EnrichmentFailure, StepResult } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'
import type { SpecRecord, EventSpecSource, EventSpecContext } from './services'
export type { SpecRecord, EventSpecSource, EventSpecContext } from './services'

export const EVENT_SPEC_CONTEXT = 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4'
const IDENTIFIER = 'event-specification'
const PAGE_VIEW = 'iglu:com.snowplowanalytics.snowplow/page_view/jsonschema/1-0-0'
const PAGE_PING = 'iglu:com.snowplowanalytics.snowplow/page_ping/jsonschema/1-0-0'
const PAGE_FIELDS = ['page_url', 'page_title', 'page_referrer', 'page_urlscheme', 'page_urlhost', 'page_urlport', 'page_urlpath', 'page_urlquery', 'page_urlfragment'] as const
const PING_FIELDS = ['pp_xoffset_min', 'pp_xoffset_max', 'pp_yoffset_min', 'pp_yoffset_max'] as const

interface CompiledEntity {
  readonly schema: string
  readonly min: number
  readonly max: number
  readonly constraint?: ValidateFunction
}

export interface CompiledSpec {
  readonly id: string
  readonly name: string
  readonly version: number
  readonly event: string
  readonly constraint?: ValidateFunction
  readonly entities: readonly CompiledEntity[]
  /** Schemas of the entities it requires (minCardinality ≥ 1). */
  readonly required: readonly string[]
  /** The `event_specification` context data. */
  readonly tag: string
}

/** A set of specifications ready for matching. */
export interface SpecIndex {
  /** Latest published version of each specification, by event schema. */
  readonly byEvent: ReadonlyMap<string, readonly CompiledSpec[]>
  /** Every published version, by `id#version`. */
  readonly byVersion: ReadonlyMap<string, CompiledSpec>
  /** Versions that could not be used, with why. */
  readonly skipped: readonly string[]
}

/** Canonical forms of recently seen URIs ('' for not an Iglu URI). */
const canonicalCache = new Map<string, string>()

/** An Iglu URI in its canonical form, or undefined. */
function canonical(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return undefined
  const c = memo(canonicalCache, uri, 1000, (u) => {
    const k = parseIgluUri(u)
    return k.ok ? toIgluUri(k.value) : ''
  })
  return c === '' ? undefined : c
}

const cardinality = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback)

function compileConstraint(schema: unknown, where: string): ValidateFunction | undefined {
  if (schema === undefined || schema === null) return undefined
  if (!isObject(schema)) throw new Error(`${where}: the schema is not an object`)
  try {
    return compileValidator(schema)
  } catch (err) {
    throw new Error(`${where}: the schema does not compile: ${(err as Error).message}`)
  }
}

/** Compiles one published version; throws with the reason when it cannot be used. */
export function compileSpec(r: SpecRecord): CompiledSpec {
  const s = r.snapshot
  const name = typeof s.name === 'string' ? s.name : ''
  const event = isObject(s.event) ? s.event : {}
  const eventUri = canonical(event.source)
  if (eventUri === undefined) throw new Error('it names no event schema (event.source)')
  const constraint = compileConstraint(event.schema, 'event.schema')
  const tracked = isObject(s.entities) && Array.isArray(s.entities.tracked) ? s.entities.tracked : []
  const entities: CompiledEntity[] = tracked.map((e, i) => {
    const where = `entities.tracked[${i}]`
    if (!isObject(e)) throw new Error(`${where} is not an object`)
    const schema = canonical(e.source)
    if (schema === undefined) throw new Error(`${where}.source is not an Iglu URI`)
    const c = compileConstraint(e.schema, `${where}.schema`)
    return { schema, min: cardinality(e.minCardinality, 0), max: cardinality(e.maxCardinality, Number.POSITIVE_INFINITY), ...(c ? { constraint: c } : {}) }
  })
  const tag = `{"id":${quote(r.id)},"name":${name === '' ? 'null' : quote(name)},"version":${r.version}}`
  return { id: r.id, name, version: r.version, event: eventUri, ...(constraint ? { constraint } : {}), entities, required: entities.filter((e) => e.min >= 1).map((e) => e.schema), tag }
}

/** The index of the published versions among `records` (inference uses a specification only while its latest version is published). */
export function indexSpecs(records: readonly SpecRecord[]): SpecIndex {
  const latest = new Map<string, SpecRecord>()
  for (const r of records) {
    const l = latest.get(r.id)
    if (l === undefined || r.version > l.version) latest.set(r.id, r)
  }
  const byVersion = new Map<string, CompiledSpec>()
  const byEvent = new Map<string, CompiledSpec[]>()
  const skipped: string[] = []
  for (const r of records) {
    if (r.status !== 'published') continue
    let c: CompiledSpec
    try {
      c = compileSpec(r)
    } catch (err) {
      skipped.push(`event specification ${r.id} version ${r.version}: ${(err as Error).message}`)
      continue
    }
    byVersion.set(`${r.id}#${r.version}`, c)
    if (latest.get(r.id) === r) {
      const list = byEvent.get(c.event)
      if (list) list.push(c)
      else byEvent.set(c.event, [c])
    }
  }
  return { byEvent, byVersion, skipped }
}

/** The event as self-describing data: the unstructured event, or `page_view`/`page_ping` from the page fields. */
function eventData(ev: EnrichedEvent): { schema: string; data: () => unknown } | undefined {
  if (ev.unstruct !== null) {
    const u = ev.unstruct
    const schema = canonical(u.schema)
    return schema === undefined ? undefined : { schema, data: () => JSON.parse(u.data) as unknown }
  }
  const name = ev.f[F.event_name]
  if (name !== 'page_view' && name !== 'page_ping') return undefined
  const fields: readonly string[] = name === 'page_view' ? PAGE_FIELDS : [...PAGE_FIELDS, ...PING_FIELDS]
  return {
    schema: name === 'page_view' ? PAGE_VIEW : PAGE_PING,
    data: () => Object.fromEntries(fields.map((f) => [f, ev.f[F[f as keyof typeof F]] ?? null])),
  }
}

/** The tracker's contexts by canonical schema. */
function contextsBySchema(contexts: readonly Entity[]): Map<string, Entity[]> {
  const out = new Map<string, Entity[]>()
  for (const c of contexts) {
    const k = canonical(c.schema) ?? c.schema
    const l = out.get(k)
    if (l) l.push(c)
    else out.set(k, [c])
  }
  return out
}

const errorsOf = (v: ValidateFunction, data: unknown): string[] => (v(data) ? [] : instanceErrors(v.errors, data).map((e) => e.message))

/** The rules of `spec` the event breaks (empty when it satisfies them all); `all` false stops at the first. */
export function brokenRules(spec: CompiledSpec, ev: EnrichedEvent, all = true): string[] {
  const out: string[] = []
  const e = eventData(ev)
  if (e === undefined || e.schema !== spec.event) {
    out.push(`the event is ${e?.schema ?? `a ${String(ev.f[F.event] ?? 'unknown')} event without a schema`}, the specification's event is ${spec.event}`)
    if (!all) return out
  } else if (spec.constraint) {
    for (const m of errorsOf(spec.constraint, e.data())) out.push(`event ${spec.event}: ${m}`)
    if (!all && out.length > 0) return out
  }
  const present = contextsBySchema(ev.contexts)
  for (const en of spec.entities) {
    const found = present.get(en.schema) ?? []
    if (found.length < en.min) out.push(`entity ${en.schema}: expected at least ${en.min}, found ${found.length}`)
    if (found.length > en.max) out.push(`entity ${en.schema}: expected at most ${en.max}, found ${found.length}`)
    if (en.constraint) for (const c of found) for (const m of errorsOf(en.constraint, JSON.parse(c.data))) out.push(`entity ${en.schema}: ${m}`)
    if (!all && out.length > 0) return out
  }
  return out
}

/** The specification the tracker says the event follows (`event_specification` entity with `id` and `version`). */
function claimed(ev: EnrichedEvent): { claims: boolean; id?: string; version?: number } {
  for (const c of ev.contexts) {
    if (!c.schema.includes('/event_specification/')) continue
    const k = parseIgluUri(c.schema)
    if (!k.ok || k.value.vendor !== 'com.snowplowanalytics.snowplow' || k.value.name !== 'event_specification') continue
    let d: unknown
    try {
      d = JSON.parse(c.data)
    } catch {
      return { claims: true }
    }
    if (isObject(d) && typeof d.id === 'string' && typeof d.version === 'number' && Number.isInteger(d.version)) return { claims: true, id: d.id, version: d.version }
    return { claims: true }
  }
  return { claims: false }
}

/** Tags or checks one event against an index. */
export function matchEvent(index: SpecIndex, ev: EnrichedEvent, info: { schemaKey: string; identifier: string }): StepResult {
  const claim = claimed(ev)
  if (claim.claims) {
    if (claim.id === undefined) return {}
    const spec = index.byVersion.get(`${claim.id}#${claim.version}`)
    if (spec === undefined) return {}
    const broken = brokenRules(spec, ev)
    if (broken.length === 0) return {}
    const label = `event specification ${spec.name ? `"${spec.name}" ` : ''}(${spec.id}, version ${spec.version})`
    return { failures: broken.map((m): EnrichmentFailure => ({ enrichment: info, message: { error: `${label}: ${m}` } })) }
  }
  const e = eventData(ev)
  if (e === undefined) return {}
  const candidates = index.byEvent.get(e.schema)
  if (candidates === undefined) return {}
  let present: Set<string> | undefined
  const tags: Entity[] = []
  for (const spec of candidates) {
    if (spec.required.length > 0) {
      present ??= new Set(ev.contexts.map((c) => canonical(c.schema) ?? c.schema))
      if (!spec.required.every((s) => present!.has(s))) continue
    }
    if (brokenRules(spec, ev, false).length === 0) tags.push({ schema: EVENT_SPEC_CONTEXT, data: spec.tag })
  }
  return tags.length > 0 ? { contexts: tags } : {}
}

/** The step over a source, refreshed every `refreshMs` and when the shell calls the `reload` it was given. */
export async function createEventSpecEnrichment(ctx: EventSpecContext, refreshMs: number, info: { schemaKey: string; identifier: string }): Promise<Enrichment & { current(): SpecIndex; reload(): Promise<void> }> {
  let index: SpecIndex
  try {
    index = indexSpecs(await ctx.source.load())
  } catch (err) {
    throw new ConfigError(`cannot read the event specifications: ${(err as Error).message}`)
  }
  for (const s of index.skipped) ctx.warn?.(s)
  let loadedAt = ctx.now()
  let loading = false
  // Each read is numbered: only the latest one started replaces the set (a reload asked for
  // after a publish must not be overtaken by a read that began before it).
  let reads = 0
  const load = (): Promise<void> => {
    const n = ++reads
    loading = true
    const settled = () => {
      if (n !== reads) return
      loadedAt = ctx.now()
      loading = false
    }
    return ctx.source.load().then(
      (records) => {
        if (n === reads) {
          index = indexSpecs(records)
          for (const s of index.skipped) ctx.warn?.(s)
        }
        settled()
      },
      (err: Error) => {
        ctx.warn?.(`event specifications not refreshed, keeping the current ones: ${err.message}`)
        settled()
      },
    )
  }
  const step = {
    id: IDENTIFIER,
    order: ORDER.eventSpec,
    current: () => index,
    reload: load,
    run(ev: EnrichedEvent) {
      if (!loading && ctx.now() - loadedAt >= refreshMs) void load()
      return matchEvent(index, ev, info)
    },
  }
  // the step itself follows (a shell may hold it weakly: it lives as long as enrich uses it)
  ctx.follow?.(step)
  return step
}

export const eventSpec: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'event_spec_enrichment_config',
  models: [1],
  create(config, ctx) {
    if (ctx.eventSpecs === undefined) throw new ConfigError('the event specification enrichment reads the specifications of this deployment\'s tracking-design API, which this variant of enrich cannot reach')
    const p = config.parameters.refreshPeriodSeconds
    const refreshMs = (typeof p === 'number' ? p : 60) * 1000
    return createEventSpecEnrichment(ctx.eventSpecs, refreshMs, { schemaKey: toIgluUri(config.schema), identifier: IDENTIFIER })
  },
}
