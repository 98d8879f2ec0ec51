/**
 * What the enrichments that look data up in another system (API request, SQL
 * query) share: the services they call, given by the shell (HTTP, SQL
 * databases, the clock their caches read); their inputs (an atomic field, or
 * a JSON path into the first context, derived context or self-describing
 * event whose schema matches a criterion); and an LRU cache with a time to
 * live that also lets concurrent events wait for the same answer.
 */
import { JSONPath } from 'jsonpath-plus'
import type { EnrichmentFailure, StepResult } from '../steps'
import { criterionMatches, parseCriterion, parseIgluUri, type SchemaCriterion } from '../../iglu/keys'
import { javaFloat, type EnrichedEvent, type Entity, type Value } from '../event'
import { F, FIELD_KINDS, type FieldName } from '../fields'
import { ConfigError } from './module'

import type { HttpRequest, HttpAnswer, HttpClient, SqlDatabaseConfig, SqlRows, SqlDatabase, SqlValue, LookupServices } from './services'
export type { HttpRequest, HttpAnswer, HttpClient, SqlDatabaseConfig, SqlRows, SqlDatabase, SqlValue, LookupServices } from './services'

// ------------------------------------------------------------------ inputs

export type JsonField = 'unstruct_event' | 'contexts' | 'derived_contexts'
const JSON_FIELDS: readonly JsonField[] = ['unstruct_event', 'contexts', 'derived_contexts']

export type InputSource =
  | { readonly kind: 'pojo'; readonly field: FieldName }
  | { readonly kind: 'json'; readonly field: JsonField; readonly criterion: SchemaCriterion; readonly jsonPath: string }

/** What an input found: a field's value, or the JSON value(s) a path found (several as an array, none as `[]`). */
export type Pulled = { readonly kind: 'pojo'; readonly field: FieldName; readonly value: string | number } | { readonly kind: 'json'; readonly value: unknown }

const PROBE = { a: { b: [{ c: 'd' }, 1, null] }, e: [{ f: 'g' }] }

/** Throws `ConfigError` naming `where` when `path` is no JSON path. */
export function checkJsonPath(path: unknown, where: string): string {
  if (typeof path !== 'string' || !path.startsWith('$')) throw new ConfigError(`${where}: ${JSON.stringify(path)} is not a JSON path (it starts with $)`)
  try {
    // a probe with nested objects and arrays, so that filters are evaluated
    JSONPath({ path, json: PROBE, eval: 'safe' })
  } catch (err) {
    throw new ConfigError(`${where}: ${JSON.stringify(path)} is not a JSON path: ${(err as Error).message}`)
  }
  return path
}

/** An input's `pojo` or `json` part; throws `ConfigError` naming `where`. */
export function inputSource(entry: Record<string, any>, where: string): InputSource {
  if (entry.pojo && entry.json) throw new ConfigError(`${where}: either json or pojo input must be specified, both provided`)
  if (entry.pojo) {
    const field = entry.pojo.field
    if (typeof field !== 'string' || !(field in F) || FIELD_KINDS[F[field as FieldName]] === 'json') {
      throw new ConfigError(`${where}: pojo field ${JSON.stringify(field)} is not an atomic field of the enriched event (contexts, unstruct_event and derived_contexts are read with a json input)`)
    }
    return { kind: 'pojo', field: field as FieldName }
  }
  if (entry.json) {
    const { field, schemaCriterion, jsonPath } = entry.json
    if (!JSON_FIELDS.includes(field)) throw new ConfigError(`${where}: json field ${JSON.stringify(field)} is not one of ${JSON_FIELDS.join(', ')}`)
    const c = parseCriterion(String(schemaCriterion))
    if (!c.ok) throw new ConfigError(`${where}: ${JSON.stringify(schemaCriterion)} is not a schema criterion (iglu:vendor/name/format/1-*-*)`)
    return { kind: 'json', field, criterion: c.value, jsonPath: checkJsonPath(jsonPath, where) }
  }
  throw new ConfigError(`${where}: either json or pojo input must be specified, none provided`)
}

function firstMatching(list: readonly Entity[], c: SchemaCriterion): Entity | undefined {
  for (const e of list) {
    const k = parseIgluUri(e.schema)
    if (k.ok && criterionMatches(c, k.value)) return e
  }
  return undefined
}

/** What an input finds in the event; undefined when the field is null or no entity matches. */
export function pull(src: InputSource, ev: EnrichedEvent): Pulled | undefined {
  if (src.kind === 'pojo') {
    const v: Value = ev.f[F[src.field]]!
    return v === null ? undefined : { kind: 'pojo', field: src.field, value: v }
  }
  const list = src.field === 'contexts' ? ev.contexts : src.field === 'derived_contexts' ? ev.derived : ev.unstruct === null ? [] : [ev.unstruct]
  const e = firstMatching(list, src.criterion)
  if (e === undefined) return undefined
  let found: unknown[]
  try {
    found = JSONPath({ path: src.jsonPath, json: JSON.parse(e.data) as object, wrap: true, eval: 'safe' }) as unknown[]
  } catch {
    found = [] // a path that cannot be evaluated on this data finds nothing
  }
  return { kind: 'json', value: found.length === 1 ? found[0] : found }
}

/** An atomic field's value as Snowplow's event object prints it (floats as Java does). */
export function pojoText(field: FieldName, v: string | number): string {
  return typeof v === 'number' && FIELD_KINDS[F[field]] === 'float' ? javaFloat(v) : String(v)
}

/** A JSON value as text: strings as they are, arrays joined with commas (flattened), objects as compact JSON. */
export function jsonText(v: unknown): string {
  if (typeof v === 'string') return v
  if (v === null || v === undefined) return 'null'
  if (Array.isArray(v)) return v.map(jsonText).join(',')
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

// ------------------------------------------------------------------- cache

/** Answers larger than this (characters of context data) are used but not kept. */
export const MAX_KEPT_CHARS = 64 * 1024

/** What a lookup found: the contexts to add (maybe none), or why there are none. */
export type LookupOutcome = { readonly contexts: readonly Entity[] } | { readonly errors: readonly string[] }

/** The characters of an answer: its contexts' data, or its error messages. */
export function outcomeChars(o: LookupOutcome): number {
  let n = 0
  if ('contexts' in o) for (const c of o.contexts) n += c.schema.length + c.data.length
  else for (const e of o.errors) n += e.length
  return n
}

/** How long to keep contexts: `ttlMs`, or not at all when they are larger than `MAX_KEPT_CHARS`. */
export function keepFor(contexts: readonly Entity[], ttlMs: number): number {
  let n = 0
  for (const c of contexts) n += c.data.length
  return n > MAX_KEPT_CHARS ? 0 : ttlMs
}

type Slot<V> = { value: V; expires: number; chars: number }

/** Characters of kept answers per cache, at most (least recently used out first beyond). */
export const MAX_CACHE_CHARS = 32 * 1024 * 1024

/**
 * At most `size` answers by key, least recently used out first, each kept for
 * its time to live, and at most `maxChars` characters of them in all (as
 * `charsOf` counts); answers still being computed are shared by the callers
 * that ask meanwhile. A size or time to live of 0 keeps nothing.
 */
export class LookupCache<V> {
  private readonly slots = new Map<string, Slot<V>>()
  private readonly pending = new Map<string, Promise<V>>()
  private chars = 0
  constructor(
    private readonly size: number,
    private readonly now: () => number,
    private readonly charsOf: (v: V) => number = () => 0,
    private readonly maxChars: number = MAX_CACHE_CHARS,
  ) {}

  /** The kept answer, when fresh. */
  get(key: string): V | undefined {
    const s = this.slots.get(key)
    if (s === undefined) return undefined
    if (s.expires <= this.now()) {
      this.drop(key, s)
      return undefined
    }
    // most recently used last
    this.slots.delete(key)
    this.slots.set(key, s)
    return s.value
  }

  /** The answer for `key`: kept, being computed, or computed now by `compute`, which says how long to keep it (ms). */
  async through(key: string, compute: () => Promise<{ value: V; ttlMs: number }>): Promise<V> {
    const hit = this.get(key)
    if (hit !== undefined) return hit
    const running = this.pending.get(key)
    if (running) return running
    const p = compute().then(({ value, ttlMs }) => {
      this.put(key, value, ttlMs)
      return value
    })
    this.pending.set(key, p)
    try {
      return await p
    } finally {
      this.pending.delete(key)
    }
  }

  private drop(key: string, s: Slot<V>): void {
    this.slots.delete(key)
    this.chars -= s.chars
  }

  private put(key: string, value: V, ttlMs: number): void {
    if (this.size <= 0 || ttlMs <= 0) return
    const chars = key.length + this.charsOf(value)
    if (chars > this.maxChars) return
    const before = this.slots.get(key)
    if (before) this.drop(key, before)
    this.slots.set(key, { value, expires: this.now() + ttlMs, chars })
    this.chars += chars
    while (this.slots.size > this.size || this.chars > this.maxChars) {
      const [oldest, s] = this.slots.entries().next().value as [string, Slot<V>]
      this.drop(oldest, s)
    }
  }

  get length(): number {
    return this.slots.size
  }
}

// ------------------------------------------------------------ the step

/**
 * The step both lookup enrichments are: an outcome per question (the cache
 * key), answered from the cache when held, else computed once for every
 * event asking meanwhile; contexts are added, errors become enrichment
 * failures (identified as `identifier`) unless `ignoreOnError`.
 */
export abstract class CachedLookup {
  private readonly cache: LookupCache<LookupOutcome>
  readonly info: { readonly schemaKey: string; readonly identifier: string }

  constructor(cacheSize: number, now: () => number, schemaKey: string, identifier: string, private readonly ignoreOnError: boolean) {
    this.cache = new LookupCache<LookupOutcome>(cacheSize, now, outcomeChars)
    this.info = { schemaKey, identifier }
  }

  /** The step's result for `key`; `compute` gives the outcome and how long to keep it. */
  protected answer(key: string, compute: () => Promise<{ value: LookupOutcome; ttlMs: number }>): StepResult | Promise<StepResult> {
    const hit = this.cache.get(key)
    if (hit !== undefined) return this.result(hit)
    return this.cache.through(key, compute).then((o) => this.result(o))
  }

  private result(o: LookupOutcome): StepResult {
    if ('contexts' in o) return o.contexts.length > 0 ? { contexts: o.contexts } : {}
    if (this.ignoreOnError) return {}
    return { failures: o.errors.map((error): EnrichmentFailure => ({ enrichment: this.info, message: { error } })) }
  }
}
