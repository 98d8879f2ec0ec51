/**
 * Validation of the `spec` of create and edit requests. Errors are `Error`
 * entries whose `source` names the offending field (`spec.event.source`, …).
 */
import { schemaPatternProblems } from '../iglu/regex-engine'
import { parseIgluUri, toIgluUri, type SchemaKey } from '../iglu/keys'
import { isUuid } from './auth'
import { CODES, error, hasError } from './envelope'
import { STATUSES, type ErrorEntry, type HistoryEntry, type JsonObject, type NameClaim, type SpecStatus } from './types'

export type { NameClaim } from './types'

export const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Reads the request body: `{spec, message?}` (the earlier generation wrapped the spec in `scenario`). */
export function readBody(body: unknown): { ok: true; spec: JsonObject; message: string } | { ok: false; errors: ErrorEntry[] } {
  if (!isObject(body)) return { ok: false, errors: [error(CODES.invalidRequest, 'body', 'The request body must be a JSON object with a spec field')] }
  const spec = body.spec ?? body.scenario
  const errors: ErrorEntry[] = []
  if (!isObject(spec)) errors.push(error(CODES.invalidRequest, 'spec', 'spec is required and must be an object'))
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') errors.push(error(CODES.invalidValue, 'message', 'message must be a string'))
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, spec: spec as JsonObject, message: typeof body.message === 'string' ? body.message : '' }
}

/** The data structure a specification belongs to: vendor/name/format of `event.source`. */
export function sourceKey(doc: JsonObject): SchemaKey | undefined {
  const event = doc.event
  if (!isObject(event) || typeof event.source !== 'string') return undefined
  const k = parseIgluUri(event.source)
  return k.ok ? k.value : undefined
}

export const groupOf = (k: { vendor: string; name: string; format: string }) => `${k.vendor}/${k.name}/${k.format}`

/** The name claim of a specification document; none without a valid `event.source` or a name. */
export function nameClaim(doc: JsonObject): NameClaim | undefined {
  const k = sourceKey(doc)
  return k && typeof doc.name === 'string' && doc.name !== '' ? { group: groupOf(k), name: doc.name } : undefined
}

/** What validation needs to look up. */
export interface ValidationContext {
  readonly mode: 'create' | 'edit'
  /** Whether the schema exists in this deployment's registry. */
  schemaExists(key: SchemaKey): Promise<boolean>
  dataProductExists(id: string): Promise<boolean>
  /** The id of the specification holding a name within a data structure, if any. */
  nameOwner(claim: NameClaim): Promise<string | undefined>
  /**
   * `withOtherErrors`: look the name up only when the specification has other errors, to
   * report them all at once; a valid specification's name is then left to the store, which
   * claims it atomically with the write (one read fewer per create). Default `always`.
   */
  readonly nameLookup?: 'always' | 'withOtherErrors'
  /** Edit: the specification's remaining history. */
  readonly history?: readonly HistoryEntry[]
  /** Edit: the id in the path. */
  readonly pathId?: string
}

export interface ValidSpec {
  readonly id?: string
  readonly version?: number
  readonly status?: SpecStatus
  readonly name: string
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
}

const absent = (v: unknown) => v === undefined || v === null

/** The highest published version among history entries, if any. */
export function lastPublished(history: readonly HistoryEntry[]): number | undefined {
  let max: number | undefined
  for (const h of history) if (h.status === 'published' && (max === undefined || h.version > max)) max = h.version
  return max
}

export const nameTaken = (claim: NameClaim) =>
  error(CODES.nameNotUnique, 'spec.name', `An event specification named '${claim.name}' already exists for data structure ${claim.group}`)

/** Checks every documented rule for create and edit; every problem is reported, not only the first. */
/** Longest `spec.name` (it is part of a stored key, whose size is limited). */
export const MAX_NAME_LENGTH = 512

export async function validateSpec(spec: JsonObject, ctx: ValidationContext): Promise<{ errors: ErrorEntry[]; value: ValidSpec }> {
  const errors: ErrorEntry[] = []
  const lookups: Promise<void>[] = []

  // id
  let id: string | undefined
  if (!absent(spec.id) && spec.id !== '') {
    if (!isUuid(spec.id)) errors.push(error(CODES.invalidValue, 'spec.id', 'spec.id must be a UUID'))
    else {
      id = spec.id.toLowerCase()
      if (ctx.mode === 'edit' && ctx.pathId && id !== ctx.pathId.toLowerCase()) {
        errors.push(error(CODES.invalidValue, 'spec.id', `spec.id ${spec.id} does not match the event specification id in the path`))
      }
    }
  }

  // version
  let version: number | undefined
  if (!absent(spec.version)) {
    if (!isNonNegativeInt(spec.version)) errors.push(error(CODES.invalidValue, 'spec.version', 'spec.version must be an integer >= 0'))
    else {
      version = spec.version
      if (ctx.mode === 'edit') {
        const history = ctx.history ?? []
        if (history.some((h) => h.version === version)) {
          errors.push(error(CODES.versionExists, 'spec.version', `Version ${version} already exists for this event specification`))
        }
        const published = lastPublished(history)
        if (published !== undefined && version <= published) {
          errors.push(error(CODES.versionNotAfterPublished, 'spec.version', `spec.version must be greater than the last published version ${published}`))
        }
      }
    }
  }

  // status ("" means the default)
  let status: SpecStatus | undefined
  if (!absent(spec.status) && spec.status !== '') {
    if (typeof spec.status !== 'string' || !(STATUSES as readonly string[]).includes(spec.status)) {
      errors.push(error(CODES.invalidValue, 'spec.status', `spec.status must be one of ${STATUSES.join(', ')}`))
    } else status = spec.status as SpecStatus
  }

  // name
  const name = typeof spec.name === 'string' ? spec.name : ''
  if (typeof spec.name !== 'string' || spec.name.trim() === '') errors.push(error(CODES.invalidValue, 'spec.name', 'spec.name is required and must be a non-empty string'))
  else if (spec.name.length > MAX_NAME_LENGTH) errors.push(error(CODES.invalidValue, 'spec.name', `spec.name has ${spec.name.length} characters; at most ${MAX_NAME_LENGTH} are accepted`))
  if (!absent(spec.description) && typeof spec.description !== 'string') errors.push(error(CODES.invalidValue, 'spec.description', 'spec.description must be a string'))

  // event
  let source: SchemaKey | undefined
  if (!absent(spec.event)) {
    if (!isObject(spec.event)) errors.push(error(CODES.invalidValue, 'spec.event', 'spec.event must be an object'))
    else {
      const ev = spec.event
      if (!absent(ev.source)) {
        const k = typeof ev.source === 'string' ? parseIgluUri(ev.source) : undefined
        if (!k || !k.ok) errors.push(error(CODES.invalidIgluUri, 'spec.event.source', `spec.event.source must be an Iglu URI such as iglu:com.acme/event/jsonschema/1-0-0, got ${JSON.stringify(ev.source)}`))
        else {
          source = k.value
          const key = k.value
          lookups.push(ctx.schemaExists(key).then((ok) => {
            if (!ok) errors.push(error(CODES.schemaNotFound, 'spec.event.source', `Data structure ${toIgluUri(key)} does not exist in the registry`))
          }))
        }
      }
      if (!absent(ev.schema) && !isObject(ev.schema)) errors.push(error(CODES.invalidValue, 'spec.event.schema', 'spec.event.schema must be a JSON Schema object'))
      else if (isObject(ev.schema)) {
        for (const p of schemaPatternProblems(ev.schema)) errors.push(error(CODES.invalidValue, `spec.event.schema${p.pointer.replace(/\//g, '.')}`, p.message))
      }
    }
  }

  // entities
  if (!absent(spec.entities)) {
    if (!isObject(spec.entities)) errors.push(error(CODES.invalidValue, 'spec.entities', 'spec.entities must be an object with the lists tracked and enriched'))
    else {
      for (const list of ['tracked', 'enriched'] as const) {
        const items = spec.entities[list]
        if (absent(items)) continue
        const path = `spec.entities.${list}`
        if (!Array.isArray(items)) {
          errors.push(error(CODES.invalidValue, path, `${path} must be an array`))
          continue
        }
        const seen = new Set<string>()
        items.forEach((item, i) => {
          const at = `${path}[${i}]`
          if (!isObject(item)) return void errors.push(error(CODES.invalidValue, at, `${at} must be an object with a source`))
          const k = typeof item.source === 'string' ? parseIgluUri(item.source) : undefined
          if (!k || !k.ok) return void errors.push(error(CODES.invalidIgluUri, `${at}.source`, `${at}.source must be an Iglu URI, got ${JSON.stringify(item.source)}`))
          const uri = toIgluUri(k.value)
          if (seen.has(uri)) errors.push(error(CODES.duplicateEntity, `${at}.source`, `Entity ${uri} is listed more than once in ${path}`))
          seen.add(uri)
          const key = k.value
          lookups.push(ctx.schemaExists(key).then((ok) => {
            if (!ok) errors.push(error(CODES.schemaNotFound, `${at}.source`, `Entity data structure ${uri} does not exist in the registry`))
          }))
          for (const c of ['minCardinality', 'maxCardinality'] as const) {
            if (!absent(item[c]) && !isNonNegativeInt(item[c])) errors.push(error(CODES.invalidValue, `${at}.${c}`, `${at}.${c} must be an integer >= 0 or null`))
          }
          if (isNonNegativeInt(item.minCardinality) && isNonNegativeInt(item.maxCardinality) && item.maxCardinality < item.minCardinality) {
            errors.push(error(CODES.invalidValue, `${at}.maxCardinality`, `${at}.maxCardinality must not be below minCardinality`))
          }
          if (!absent(item.schema) && !isObject(item.schema)) errors.push(error(CODES.invalidValue, `${at}.schema`, `${at}.schema must be a JSON Schema object`))
        })
      }
    }
  }

  // dataProductId ("" means none)
  if (!absent(spec.dataProductId) && spec.dataProductId !== '') {
    const dp = spec.dataProductId
    if (typeof dp !== 'string') errors.push(error(CODES.invalidValue, 'spec.dataProductId', 'spec.dataProductId must be a string'))
    else {
      lookups.push(ctx.dataProductExists(dp).then((ok) => {
        if (!ok) errors.push(error(CODES.dataProductNotFound, 'spec.dataProductId', `Data product ${dp} does not exist`))
      }))
    }
  }

  // name unique within the data structure (vendor/name/format of event.source)
  let nameCheck: (() => Promise<void>) | undefined
  if (source && name) {
    const claim = { group: groupOf(source), name }
    const self = (id ?? ctx.pathId)?.toLowerCase()
    nameCheck = () => ctx.nameOwner(claim).then((owner) => {
      if (owner !== undefined && owner !== self) errors.push(nameTaken(claim))
    })
    if (ctx.nameLookup !== 'withOtherErrors') lookups.push(nameCheck())
  }

  await Promise.all(lookups)
  if (nameCheck && ctx.nameLookup === 'withOtherErrors' && hasError(errors)) await nameCheck()
  // Stable order whatever order the lookups finished in.
  errors.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
  return { errors, value: { id, version, status, name } }
}
