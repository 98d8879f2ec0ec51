/**
 * Self-describing JSON through the Iglu resolver, as enrich checks it: parse
 * (depth guard), self-describing shape (Iglu parse error codes), criterion,
 * validation (superseded schemas followed), with failures as data in the
 * shapes of Iglu client errors.
 */
import { formatSchemaVer, parseIgluUri, toIgluUri, type SchemaKey } from '../iglu/keys'
import type { RepositoryFailure, Resolver } from '../iglu/resolver'
import { instanceErrors, type ValidateFunction } from '../iglu/draft04'
import { withPatternBudget, type PatternBudget } from '../iglu/regex-engine'
import { isObject } from '../iglu/selfdesc'
import { instant } from './time'
import { memo } from './memo'

export type IgluParseCode = 'INVALID_DATA_PAYLOAD' | 'INVALID_IGLUURI' | 'INVALID_SCHEMAVER' | 'INVALID_SCHEMA' | 'INVALID_METASCHEMA'

/** The failure-entity message of each parse code. */
export const PARSE_CODE_MESSAGES: Record<IgluParseCode, string> = {
  INVALID_DATA_PAYLOAD: 'Invalid data payload',
  INVALID_SCHEMAVER: 'Invalid schema version',
  INVALID_IGLUURI: 'Invalid Iglu URI',
  INVALID_SCHEMA: 'Invalid schema',
  INVALID_METASCHEMA: 'Invalid metashema',
}

export interface DataReport {
  readonly message: string
  readonly path: string
  readonly keyword: string
  readonly targets: readonly string[]
}

/** An Iglu client error (`ClientError`), as JSON-ready data. */
export type ClientError =
  | { readonly error: 'ValidationError'; readonly dataReports: readonly DataReport[]; readonly supersededBy?: string }
  | { readonly error: 'ValidationError'; readonly schemaIssues: readonly { path: string; message: string }[] }
  | {
      readonly error: 'ResolutionError'
      readonly lookupHistory: readonly { errors: readonly ({ error: 'NotFound' } | { error: string; message: string })[]; attempts: number; lastAttempt: string; repository: string }[]
    }

/** Self-describing data split into its key and value. */
export type SdjCheck = { ok: true; key: SchemaKey; uri: string; data: unknown } | { ok: false; code: IgluParseCode }

/** Parsed Iglu URIs (the same few schemas recur in every event). */
const uriCache = new Map<string, ReturnType<typeof parseIgluUri>>()

/** The most recently parsed URIs, compared as text before hashing into the map (event texts are fresh strings). */
const RECENT = 8
const recentUris: string[] = new Array<string>(RECENT).fill('')
const recentKeys: ReturnType<typeof parseIgluUri>[] = new Array(RECENT)
let recentNext = 0

function parseUriCached(uri: string): ReturnType<typeof parseIgluUri> {
  for (let i = 0; i < RECENT; i++) if (recentUris[i] === uri) return recentKeys[i]!
  const k = parseUriMap(uri)
  recentUris[recentNext] = uri
  recentKeys[recentNext] = k
  recentNext = (recentNext + 1) % RECENT
  return k
}

function parseUriMap(uri: string): ReturnType<typeof parseIgluUri> {
  return memo(uriCache, uri, 10_000, parseIgluUri)
}

export function asSelfDescribing(v: unknown): SdjCheck {
  if (!isObject(v) || typeof v.schema !== 'string' || !('data' in v)) return { ok: false, code: 'INVALID_DATA_PAYLOAD' }
  const k = parseUriCached(v.schema)
  if (!k.ok) return { ok: false, code: k.code === 'INVALID_SCHEMAVER' ? 'INVALID_SCHEMAVER' : 'INVALID_IGLUURI' }
  return { ok: true, key: k.value, uri: v.schema, data: v.data }
}

/** `iglu:vendor/name/format/M-*-*`-style criterion match on model (and revision when given). */
export function matchesCriterion(k: SchemaKey, vendor: string, name: string, model: number, revision?: number): boolean {
  return k.vendor === vendor && k.name === name && k.format === 'jsonschema' && k.version.model === model && (revision === undefined || k.version.revision === revision)
}

export type Validated =
  | { ok: true; key: SchemaKey; uri: string; superseded?: { originalSchema: string; validatedWith: string } }
  | { ok: false; key: SchemaKey; error: ClientError; reports?: readonly DataReport[]; schemaMessage?: string; resolution?: boolean }

function resolutionError(failures: readonly RepositoryFailure[]): ClientError {
  return {
    error: 'ResolutionError',
    lookupHistory: failures.map((f) => ({
      errors: f.errors.map((e) => (e.kind === 'NotFound' ? { error: 'NotFound' as const } : { error: e.kind, message: e.message })),
      attempts: f.attempts,
      lastAttempt: instant(f.lastAttempt),
      repository: f.repository,
    })),
  }
}

/** Per resolved schema document (so a refreshed document is looked at again): what to validate with and the answer when valid. */
const prepared = new WeakMap<object, { fn: ValidateFunction; valid: Validated }>()

/**
 * Per key (keys come from the parse cache, so one object per schema): its
 * Iglu URI, and the schema document last validated with and what was prepared for it.
 */
interface KeySlot {
  readonly uri: string
  doc: object | undefined
  prepared: { fn: ValidateFunction; valid: Validated } | undefined
}
const keySlots = new WeakMap<SchemaKey, KeySlot>()
function keySlot(key: SchemaKey): KeySlot {
  let slot = keySlots.get(key)
  if (slot === undefined) {
    slot = { uri: toIgluUri(key), doc: undefined, prepared: undefined }
    keySlots.set(key, slot)
  }
  return slot
}

/**
 * The answer of `validateData` without any lookup, when the schema is cached
 * (fresh at `now`, by the resolver's clock) and was validated against before
 * (so it is not superseded); `undefined` otherwise (then call `validateData`,
 * which resolves what is missing).
 */
export function validateCached(resolver: Resolver, key: SchemaKey, data: unknown, now?: number, patterns?: PatternBudget): Validated | undefined {
  const slot = keySlot(key)
  const doc = resolver.cachedSchema(slot.uri, now)
  if (doc === undefined) return undefined
  if (slot.doc !== doc) {
    const p = prepared.get(doc)
    if (p === undefined) return undefined
    slot.doc = doc
    slot.prepared = p
  }
  const p = slot.prepared!
  return run(p.fn, data, patterns) ? p.valid : invalid(key, p.fn, data)
}

/** `fn(data)`, its pattern checks charged to `patterns` when given (else to a budget of the call's own). */
function run(fn: ValidateFunction, data: unknown, patterns: PatternBudget | undefined): boolean {
  return (patterns === undefined ? fn(data) : withPatternBudget(patterns, () => fn(data))) === true
}

/**
 * `validateCached` for an entity an enrichment answers from its own cache
 * (the same object for the same input): the answer is kept with the entity
 * and reused while the resolver still holds the same schema document, so an
 * enrichment's repeated context is parsed and validated once.
 */
const entityAnswers = new WeakMap<object, { readonly uri: string; readonly doc: unknown; readonly v: Validated }>()
export function validateEntityCached(resolver: Resolver, entity: { readonly schema: string; readonly data: string }, now?: number): Validated | undefined {
  const a = entityAnswers.get(entity)
  if (a !== undefined && resolver.cachedSchema(a.uri, now) === a.doc) return a.v
  return undefined
}

/** Keeps the answer `validateCached` gave for an entity (see `validateEntityCached`). */
export function keepEntityAnswer(resolver: Resolver, entity: object, key: SchemaKey, v: Validated, now?: number): void {
  const uri = keySlot(key).uri
  const doc = resolver.cachedSchema(uri, now)
  if (doc !== undefined) entityAnswers.set(entity, { uri, doc, v })
}

/** The failure of `data`, just found invalid by `fn` against the schema of `key` (not superseded). */
function invalid(key: SchemaKey, fn: ValidateFunction, data: unknown): Validated {
  const reports = instanceErrors(fn.errors, data, fn.schema).map((e) => ({ message: e.message, path: e.path, keyword: e.keyword, targets: e.targets }))
  return { ok: false, key, error: { error: 'ValidationError', dataReports: reports }, reports }
}

/**
 * Validates `data` against the schema `key` names, following `$supersededBy`.
 * A schema that cannot be resolved (not found anywhere, or a repository still
 * failing once the resolver's lookup budget is spent) is a `ResolutionError`
 * whose lookup history names each repository and what it answered.
 */
export async function validateData(resolver: Resolver, key: SchemaKey, data: unknown, patterns?: PatternBudget): Promise<Validated> {
  const found = await resolver.lookupSchema(key)
  if (!found.ok) return { ok: false, key, error: resolutionError(found.failures), resolution: true }
  const p = prepared.get(found.value)
  if (p) return run(p.fn, data, patterns) ? p.valid : invalid(key, p.fn, data)
  let target = key
  let superseded: { originalSchema: string; validatedWith: string } | undefined
  const by = found.value.$supersededBy
  if (typeof by === 'string') {
    const k = parseIgluUri(`iglu:${key.vendor}/${key.name}/${key.format}/${by}`)
    if (k.ok) {
      target = k.value
      superseded = { originalSchema: toIgluUri(key), validatedWith: by }
    }
  }
  const v = await resolver.validatorFor(target)
  if (!v.ok) {
    if (v.reason === 'resolution') return { ok: false, key: target, error: resolutionError(v.failures), resolution: true }
    const message = `Invalid schema: ${toIgluUri(target)} - ${v.message}`
    return { ok: false, key: target, error: { error: 'ValidationError', schemaIssues: [{ path: '$', message: v.message }] }, schemaMessage: message }
  }
  if (target === key) prepared.set(found.value, { fn: v.fn, valid: { ok: true, key: target, uri: toIgluUri(target), superseded } })
  if (run(v.fn, data, patterns)) return { ok: true, key: target, uri: toIgluUri(target), superseded }
  const reports = instanceErrors(v.fn.errors, data, v.fn.schema).map((e) => ({ message: e.message, path: e.path, keyword: e.keyword, targets: e.targets }))
  const error: ClientError = superseded
    ? { error: 'ValidationError', dataReports: reports, supersededBy: formatSchemaVer(target.version) }
    : { error: 'ValidationError', dataReports: reports }
  return { ok: false, key: target, error, reports }
}
