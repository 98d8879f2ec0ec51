/**
 * The tracking-design API (`/api/msc/v1/organizations/{organizationId}/…`):
 * tokens, event specifications (and their earlier name, tracking scenarios),
 * data products, source applications and the data-structures view of the
 * registry. Transport-neutral: requests in, responses out, storage behind ports.
 */
import { randomUUID } from 'node:crypto'
import { compareSchemaVer, formatSchemaVer, parseSchemaVer, toIgluUri } from '../iglu/keys'
import type { StoredSchema } from '../iglu/store'
import { Router } from '../../http/router'
import { json, type HttpHandler, type HttpRequest, type HttpResponse } from '../../http/types'
import { authorize, checkApiKey, isUuid, issueToken, newSigningSecret } from './auth'
import { checkSource, compatibilityEntries, defaultChecker, type CompatibilityChecker, type SourceReport } from './compat'
import { dataStructureHash, dataStructures, schemaDocument, wire } from './datastructures'
import { CODES, envelope, error, failure, hasError, historyInclude } from './envelope'
import { planCreate, planEdit, type Change } from './lifecycle'
import { aboutListed, alreadyPublished, publishSpec, readPublishBody } from './publish'
import { StoreInputError, type AccountStore, type CatalogStore, type RegistryReader, type SpecStore } from './ports'
import { STATUSES, type CatalogKind, type ErrorEntry, type JsonObject, type StoredSpec } from './types'
import { isObject, nameClaim, nameTaken, readBody, sourceKey, validateSpec, type ValidationContext } from './validate'
import { jsonTextDepth } from '../iglu/json-depth'

export interface TrackingDesignOptions {
  readonly specs: SpecStore
  readonly accounts: AccountStore
  readonly catalog: CatalogStore
  readonly registry: RegistryReader
  readonly checker?: CompatibilityChecker
  /** Signing secret of access tokens; when unset, one is generated on first use and kept by `accounts`. */
  readonly jwtSecret?: string
  readonly now?: () => Date
  readonly newId?: () => string
}

/**
 * A registry reader that answers each lookup once per request (validation and checks
 * share them). A schema is looked up in its data structure's version list (one read
 * gives the current and the latest version a check needs), then on its own.
 */
export function memoRegistry(registry: RegistryReader): RegistryReader {
  const gets = new Map<string, ReturnType<RegistryReader['get']>>()
  const groups = new Map<string, ReturnType<RegistryReader['listGroup']>>()
  const listGroup: RegistryReader['listGroup'] = (vendor, name) => {
    const id = `${vendor}/${name}`
    let p = groups.get(id)
    if (!p) groups.set(id, (p = registry.listGroup(vendor, name)))
    return p
  }
  const get: RegistryReader['get'] = (key) => {
    const id = toIgluUri(key)
    let p = gets.get(id)
    if (!p) {
      p = listGroup(key.vendor, key.name).then(
        (group) => group.find((s) => s.key.format === key.format && compareSchemaVer(s.key.version, key.version) === 0) ?? registry.get(key),
      )
      gets.set(id, p)
    }
    return p
  }
  return {
    get,
    async getMany(keys) {
      // Keys not asked for yet are read together (references are mostly of other structures).
      const fresh = keys.filter((k) => !gets.has(toIgluUri(k)))
      if (fresh.length > 0 && registry.getMany) {
        const batch = registry.getMany(fresh)
        for (const k of fresh) gets.set(toIgluUri(k), batch.then((m) => m.get(toIgluUri(k))))
      }
      const found = await Promise.all(keys.map(get))
      const out = new Map<string, StoredSchema>()
      keys.forEach((k, i) => {
        const s = found[i]
        if (s) out.set(toIgluUri(k), s)
      })
      return out
    },
    listGroup,
    listAll: () => registry.listAll(),
  }
}

export const API_BASE = '/api/msc/v1/organizations/{organizationId}'

/**
 * `live` resolves once the token's API key is known not to be revoked (it throws
 * otherwise): every write awaits it first. The key is looked up while the
 * handler reads, and no answer leaves before the lookup says the key is live.
 */
type Ctx = { req: HttpRequest; org: string; author: string; live: () => Promise<void> }

class KeyRevoked extends Error {}
type Authed = (ctx: Ctx) => Promise<HttpResponse>

const truthy = (v: string | undefined) => v !== undefined && /^(true|1)$/i.test(v)

/** Largest request body accepted (bytes): well below the store's item size, so a valid body always fits. */
export const MAX_BODY_BYTES = 256 * 1024
/** Deepest nesting of arrays and objects accepted in a body. */
export const MAX_BODY_DEPTH = 64

/** The deepest nesting in JSON text, read without parsing (shared with the registry). */
export { jsonTextDepth }

function parseJson(req: HttpRequest): { ok: true; value: unknown } | { ok: false; response: HttpResponse } {
  if (req.body.length > MAX_BODY_BYTES) {
    return { ok: false, response: failure(413, CODES.payloadTooLarge, 'body', `The request body has ${req.body.length} bytes; at most ${MAX_BODY_BYTES} are accepted`) }
  }
  const text = req.body.toString('utf8')
  if (text.trim() === '') return { ok: false, response: failure(400, CODES.invalidJson, 'body', 'The request body is empty; a JSON object is expected') }
  const depth = jsonTextDepth(text)
  if (depth > MAX_BODY_DEPTH) {
    return { ok: false, response: failure(422, CODES.invalidValue, 'body', `The request body nests arrays and objects ${depth} levels deep; at most ${MAX_BODY_DEPTH} are accepted`) }
  }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (err) {
    return { ok: false, response: failure(400, CODES.invalidJson, 'body', `The request body is not valid JSON: ${(err as Error).message}`) }
  }
}

/** A write the store refused for its input (a size or key limit): 422 at the field, nothing was stored. */
async function storing<T>(write: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; response: HttpResponse }> {
  try {
    return { ok: true, value: await write() }
  } catch (err) {
    if (err instanceof StoreInputError) return { ok: false, response: envelope(422, [], [], [error(CODES.invalidValue, err.field, err.message)]) }
    throw err
  }
}

/** The earlier generation names the history link `scenarioId`. */
function aliasIncludes(items: unknown[], alias: boolean): unknown[] {
  if (!alias) return items
  return items.map((i) => {
    if (!isObject(i) || i.type !== 'History') return i
    const { eventSpecId, ...rest } = i
    return { ...rest, scenarioId: eventSpecId }
  })
}

export function createTrackingDesignService(opts: TrackingDesignOptions): HttpHandler {
  const { specs, accounts, catalog, registry } = opts
  const checker = opts.checker ?? defaultChecker
  const now = opts.now ?? (() => new Date())
  const newId = opts.newId ?? randomUUID
  let secret: Promise<string> | undefined = opts.jwtSecret ? Promise.resolve(opts.jwtSecret) : undefined
  const signingSecret = () => {
    if (!secret) {
      secret = accounts.signingSecret(newSigningSecret())
      secret.catch(() => (secret = undefined))
    }
    return secret
  }

  // ---- auth -----------------------------------------------------------------
  const guarded = (handler: Authed): HttpHandler => async (req) => {
    const org = req.params.organizationId ?? ''
    // The token's signature, expiry and organization are checked first, without I/O; the key's
    // revocation is looked up alongside the handler's reads (see `Ctx.live`).
    let keyLive: Promise<boolean> = Promise.resolve(true)
    const decision = await authorize(req.headers.authorization, org, await signingSecret(), {
      now: now(),
      keyExists: async (keyId) => {
        keyLive = accounts.getKeyById(keyId).then((k) => k?.orgId === org.toLowerCase())
        keyLive.catch(() => {}) // awaited below
        return true
      },
    })
    if (!decision.ok) {
      const code = decision.status === 401 ? CODES.unauthorized : CODES.forbidden
      return failure(decision.status, code, 'authorization', decision.message)
    }
    const live = async () => {
      if (!(await keyLive)) throw new KeyRevoked()
    }
    const [key, answer] = await Promise.allSettled([keyLive, handler({ req, org: org.toLowerCase(), author: decision.keyId, live })])
    if (key.status === 'rejected') throw key.reason
    if (!key.value) return failure(401, CODES.unauthorized, 'authorization', 'The API key of this access token has been revoked')
    if (answer.status === 'rejected') throw answer.reason
    return answer.value
  }

  const token = (v3: boolean): HttpHandler => async (req) => {
    const org = req.params.organizationId ?? ''
    const check = await checkApiKey(accounts, org, req.headers['x-api-key'], v3 ? req.headers['x-api-key-id'] ?? '' : undefined)
    if (!check.ok) return json(check.status, { message: check.message })
    if (!(await accounts.getOrg(check.key.orgId))) return json(401, { message: 'Invalid API key' })
    const accessToken = await issueToken(await signingSecret(), { orgId: check.key.orgId, keyId: check.key.keyId }, now())
    return json(200, { accessToken })
  }

  // ---- event specifications --------------------------------------------------
  const validationContext = (org: string, mode: 'create' | 'edit', extra: Partial<ValidationContext>, reg: RegistryReader): ValidationContext => ({
    mode,
    nameOwner: (claim) => specs.nameOwner(org, claim),
    schemaExists: async (key) => (await reg.get(key)) !== undefined,
    dataProductExists: async (id) => (await catalog.get(org, 'dataProduct', id)) !== undefined,
    ...extra,
  })

  /**
   * The data structures a `sourceId` names: its hash, `vendor/name/format`,
   * `iglu:vendor/name/format`, or `vendor/name` (its `jsonschema` structure, the format
   * Iglu schemas have). Nothing for any other text.
   */
  const structureHashes = (org: string, sourceId: string): string[] => {
    if (/^[0-9a-f]{64}$/.test(sourceId)) return [sourceId]
    const parts = sourceId.replace(/^iglu:/, '').split('/')
    if (parts.some((p) => p === '')) return []
    if (parts.length === 3) return [dataStructureHash(org, parts[0]!, parts[1]!, parts[2]!)]
    if (parts.length !== 2 || sourceId.startsWith('iglu:')) return []
    return [dataStructureHash(org, parts[0]!, parts[1]!, 'jsonschema')]
  }

  const list = (alias: boolean): Authed => async ({ req, org }) => {
    const q = req.query
    if (q.status !== undefined && !(STATUSES as readonly string[]).includes(q.status)) {
      return failure(422, CODES.invalidValue, 'status', `status must be one of ${STATUSES.join(', ')}`)
    }
    const sourceId = q.sourceId ?? q.dataStructureId
    const structures = sourceId !== undefined ? structureHashes(org, sourceId) : undefined
    let rows = await specs.list(org, {
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(q.dataProductId !== undefined ? { dataProductId: q.dataProductId } : {}),
      ...(structures !== undefined ? { dataStructures: structures } : {}),
      ...(structures !== undefined && q.sourceVersion !== undefined ? { sourceVersion: q.sourceVersion } : {}),
    })
    rows = rows.filter((s) => {
      if (q.status !== undefined && s.doc.status !== q.status) return false
      if (q.dataProductId !== undefined && s.doc.dataProductId !== q.dataProductId) return false
      if (sourceId !== undefined || q.sourceVersion !== undefined) {
        const k = sourceKey(s.doc)
        if (!k) return false
        if (sourceId !== undefined) {
          const group = `${k.vendor}/${k.name}/${k.format}`
          const ids = [dataStructureHash(org, k.vendor, k.name, k.format), group, `iglu:${group}`, `${k.vendor}/${k.name}`]
          if (!ids.includes(sourceId)) return false
        }
        if (q.sourceVersion !== undefined && formatSchemaVer(k.version) !== q.sourceVersion) return false
      }
      return true
    })
    const includes = truthy(q.withLatestHistory) ? rows.map((s) => historyInclude(s.latest)) : []
    return envelope(200, rows.map((s) => s.doc), aliasIncludes(includes, alias))
  }

  const retrieve = (alias: boolean): Authed => async ({ req, org }) => {
    const id = req.params.eventSpecId!
    const found = isUuid(id) ? await specs.get(org, id.toLowerCase()) : undefined
    if (!found) return failure(404, CODES.notFound, 'eventSpecId', `Event specification ${id} not found`)
    const status = req.query.status
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
      return failure(422, CODES.invalidValue, 'status', `status must be one of ${STATUSES.join(', ')}`)
    }
    const withHistory = truthy(req.query.withHistory)
    const history = withHistory || (status !== undefined && found.doc.status !== status) ? await specs.history(org, found.id) : []
    let doc = found.doc
    if (status !== undefined && doc.status !== status) {
      const match = [...history].reverse().find((h) => h.status === status)
      if (!match) return failure(404, CODES.notFound, 'status', `Event specification ${id} has no ${status} version`)
      doc = match.snapshot
    }
    const errors = await compatibilityEntries(doc, 'read', registry, checker)
    const includes = withHistory ? history.map(historyInclude) : []
    return envelope(200, [doc], aliasIncludes(includes, alias), errors)
  }

  const create = (alias: boolean): Authed => async ({ req, org, author, live }) => {
    const parsed = parseJson(req)
    if (!parsed.ok) return parsed.response
    const body = readBody(parsed.value)
    if (!body.ok) return envelope(422, [], [], body.errors)
    const reg = memoRegistry(registry)
    const { errors, value } = await validateSpec(body.spec, validationContext(org, 'create', { nameLookup: 'withOtherErrors' }, reg))
    if (hasError(errors)) return envelope(422, [], [], errors)
    const id = value.id ?? newId()
    const change = planCreate(body.spec, value, id, { orgId: org, author, message: body.message, now: now() })
    const compat = await compatibilityEntries(change.spec.doc, 'write', reg, checker)
    if (hasError(compat)) return envelope(422, [], [], compat)
    await live()
    const written = await storing(() => specs.create(change.spec, change.entry))
    if (!written.ok) return written.response
    const stored = written.value
    if (stored === 'exists') return failure(409, CODES.alreadyExists, 'spec.id', `Event specification ${id} already exists`)
    if (stored === 'nameTaken') return envelope(422, [], [], [nameTaken(nameClaim(change.spec.doc)!)])
    return envelope(201, [change.spec.doc], aliasIncludes([historyInclude(change.entry)], alias), compat)
  }

  const edit = (alias: boolean): Authed => async ({ req, org, author, live }) => {
    const id = req.params.eventSpecId!
    const current = isUuid(id) ? await specs.get(org, id.toLowerCase()) : undefined
    if (!current) return failure(404, CODES.notFound, 'eventSpecId', `Event specification ${id} not found`)
    const parsed = parseJson(req)
    if (!parsed.ok) return parsed.response
    const body = readBody(parsed.value)
    if (!body.ok) return envelope(422, [], [], body.errors)
    const reg = memoRegistry(registry)
    const history = await specs.history(org, current.id)
    const { errors, value } = await validateSpec(body.spec, validationContext(org, 'edit', { history, pathId: current.id }, reg))
    if (hasError(errors)) return envelope(422, [], [], errors)
    const change = planEdit(current, history, body.spec, value, { orgId: org, author, message: body.message, now: now() })
    const compat = await compatibilityEntries(change.spec.doc, 'write', reg, checker)
    if (hasError(compat)) return envelope(422, [], [], compat)
    await live()
    const written = await storing(() => specs.update(current, change.spec, change.entry, change.discard))
    if (!written.ok) return written.response
    const stored = written.value
    if (stored === 'conflict') return failure(409, CODES.conflict, 'eventSpecId', `Event specification ${id} was changed concurrently; retry`)
    if (stored === 'nameTaken') return envelope(422, [], [], [nameTaken(nameClaim(change.spec.doc)!)])
    return envelope(200, [change.spec.doc], aliasIncludes([historyInclude(change.entry)], alias), compat)
  }

  /**
   * Publishes the latest version of every listed specification, each exactly as an edit
   * with `status: "published"` would (see `publishSpec`); latest versions already published
   * are left as they are. Everything is read, validated and checked before anything is
   * written: an unknown id (404) or any `Error` (422) publishes nothing. The writes go
   * through `SpecStore.updateAll`: one transaction when they fit, else one per specification.
   */
  const publish = (alias: boolean): Authed => async ({ req, org, author, live }) => {
    const parsed = parseJson(req)
    if (!parsed.ok) return parsed.response
    const body = readPublishBody(parsed.value)
    if (!body.ok) return envelope(422, [], [], body.errors)
    const found = await Promise.all(body.ids.map((id) => specs.get(org, id)))
    const currents: StoredSpec[] = []
    const missing: ErrorEntry[] = []
    found.forEach((s, i) => (s ? currents.push(s) : missing.push(error(CODES.notFound, `eventSpecIds[${i}]`, `Event specification ${body.ids[i]} not found`))))
    if (missing.length > 0) return envelope(404, [], [], missing)
    const reg = memoRegistry(registry)
    const ctx = { orgId: org, author, message: body.message, now: now() }
    const plans = await Promise.all(currents.map(async (current, i): Promise<{ current: StoredSpec; change?: Change; errors: ErrorEntry[] }> => {
      if (alreadyPublished(current)) return { current, errors: [] }
      const history = await specs.history(org, current.id)
      const raw = publishSpec(current, history)
      const { errors, value } = await validateSpec(raw, validationContext(org, 'edit', { history, pathId: current.id }, reg))
      if (hasError(errors)) return { current, errors: errors.map((e) => aboutListed(e, i, current.id)) }
      const change = planEdit(current, history, raw, value, ctx)
      const compat = await compatibilityEntries(change.spec.doc, 'write', reg, checker)
      return { current, change, errors: compat.map((e) => aboutListed(e, i, current.id)) }
    }))
    const entries = plans.flatMap((p) => p.errors)
    if (hasError(entries)) return envelope(422, [], [], entries)
    const writes = plans.flatMap((p) => (p.change ? [{ previous: p.current, spec: p.change.spec, entry: p.change.entry, discard: p.change.discard }] : []))
    await live()
    const stored = await specs.updateAll(writes)
    if (stored.status !== 'ok') {
      // Lost a race with an edit (or a rename) made after the checks above.
      const failed = writes[stored.index]!.spec
      const done = stored.applied.map((k) => writes[k]!.spec.id)
      const outcome = done.length === 0 ? 'nothing was published' : `only ${done.join(', ')} ${done.length === 1 ? 'was' : 'were'} published`
      const index = body.ids.indexOf(failed.id)
      if (stored.status === 'conflict') {
        return failure(409, CODES.conflict, `eventSpecIds[${index}]`, `Event specification ${failed.id} was changed concurrently; ${outcome}; retry`)
      }
      const claim = nameClaim(failed.doc)
      const taken = claim ? nameTaken(claim) : error(CODES.nameNotUnique, 'spec.name', 'The name of the event specification is taken')
      return envelope(422, [], [], [aboutListed({ ...taken, title: `${taken.title}; ${outcome}` }, index, failed.id)])
    }
    const data = plans.map((p) => (p.change ? p.change.spec.doc : p.current.doc))
    const includes = plans.flatMap((p) => (p.change ? [historyInclude(p.change.entry)] : []))
    return envelope(202, data, aliasIncludes(includes, alias), entries)
  }

  const remove: Authed = async ({ req, org, live }) => {
    const id = req.params.eventSpecId!
    await live()
    const done = isUuid(id) && (await specs.delete(org, id.toLowerCase()))
    if (!done) return failure(404, CODES.notFound, 'eventSpecId', `Event specification ${id} not found`)
    return { statusCode: 204 }
  }

  const compatibility: Authed = async ({ req }) => {
    const parsed = parseJson(req)
    if (!parsed.ok) return parsed.response
    const spec = isObject(parsed.value) ? (parsed.value.spec ?? parsed.value.scenario) : undefined
    if (!isObject(spec)) return failure(422, CODES.invalidRequest, 'spec', 'spec is required and must be an object')
    const jobs: Promise<SourceReport>[] = []
    if (isObject(spec.event) && spec.event.source !== undefined && spec.event.source !== null) {
      jobs.push(checkSource(spec.event.source, spec.event.schema, registry, checker))
    }
    const ents = isObject(spec.entities) ? spec.entities : {}
    for (const list of ['tracked', 'enriched']) {
      const items = ents[list]
      if (Array.isArray(items)) for (const e of items) if (isObject(e) && e.source !== undefined) jobs.push(checkSource(e.source, e.schema, registry, checker))
    }
    const sources = await Promise.all(jobs)
    const status = sources.some((s) => s.status === 'incompatible') ? 'incompatible' : sources.some((s) => s.status === 'undecidable') ? 'undecidable' : 'compatible'
    const message = sources.filter((s) => s.message).map((s) => `${s.source}: ${s.message}`).join('; ')
    return json(200, { status, sources, message })
  }

  // ---- data products and source applications --------------------------------
  const specUrl = (org: string, id: string) => `/api/msc/v1/organizations/${org}/event-specs/v1/${id}`

  async function productView(org: string, products: JsonObject[]) {
    const [allSpecs, apps] = await Promise.all([specs.list(org), catalog.list(org, 'sourceApp')])
    const ids = new Set(products.map((p) => p.id))
    const related = allSpecs.filter((s) => typeof s.doc.dataProductId === 'string' && ids.has(s.doc.dataProductId))
    const appIds = new Set<string>()
    for (const p of products) if (Array.isArray(p.sourceApplications)) for (const a of p.sourceApplications) if (typeof a === 'string') appIds.add(a)
    for (const s of related) if (Array.isArray(s.doc.sourceApplications)) for (const a of s.doc.sourceApplications) if (typeof a === 'string') appIds.add(a)
    const data = products.map((p) => ({
      ...p,
      eventSpecs: related.filter((s) => s.doc.dataProductId === p.id).map((s) => ({ id: s.id, url: specUrl(org, s.id) })),
    }))
    const eventSpecs = related.map((s) => ({ ...s.doc, author: s.latest.author, message: s.latest.message, date: s.latest.date }))
    return { data, includes: { owners: [], eventSpecs, sourceApplications: apps.filter((a) => appIds.has(String(a.id))) }, errors: [], metadata: null }
  }

  const catalogRoutes = (kind: CatalogKind, label: string) => {
    const view = async (org: string, docs: JsonObject[]) => (kind === 'dataProduct' ? productView(org, docs) : { data: docs, includes: [], errors: [] })
    const read = (req: HttpRequest): { ok: true; doc: JsonObject } | { ok: false; response: HttpResponse } => {
      const parsed = parseJson(req)
      if (!parsed.ok) return parsed
      const v = parsed.value
      const doc = isObject(v) && isObject(v[kind]) ? (v[kind] as JsonObject) : v
      if (!isObject(doc)) return { ok: false, response: failure(422, CODES.invalidRequest, 'body', `The ${label} must be a JSON object`) }
      const errors: ErrorEntry[] = []
      if (typeof doc.name !== 'string' || doc.name.trim() === '') errors.push(error(CODES.invalidValue, 'name', 'name is required and must be a non-empty string'))
      if (doc.id !== undefined && doc.id !== null && doc.id !== '' && !isUuid(doc.id)) errors.push(error(CODES.invalidValue, 'id', 'id must be a UUID'))
      if (errors.length > 0) return { ok: false, response: envelope(422, [], [], errors) }
      return { ok: true, doc }
    }
    const notFound = (id: string) => failure(404, CODES.notFound, 'id', `${label[0]!.toUpperCase()}${label.slice(1)} ${id} not found`)
    return {
      list: (async ({ org }) => json(200, await view(org, await catalog.list(org, kind)))) as Authed,
      get: (async ({ req, org }) => {
        const doc = await catalog.get(org, kind, req.params.id!)
        return doc ? json(200, await view(org, [doc])) : notFound(req.params.id!)
      }) as Authed,
      create: (async ({ req, org, live }) => {
        const r = read(req)
        if (!r.ok) return r.response
        const id = typeof r.doc.id === 'string' && r.doc.id !== '' ? r.doc.id.toLowerCase() : newId()
        const doc = { ...r.doc, id }
        await live()
        if ((await catalog.put(org, kind, id, doc, { create: true })) === 'exists') return failure(409, CODES.alreadyExists, 'id', `${label} ${id} already exists`)
        return json(201, await view(org, [doc]))
      }) as Authed,
      update: (async ({ req, org, live }) => {
        const id = req.params.id!
        if (!(await catalog.get(org, kind, id))) return notFound(id)
        const r = read(req)
        if (!r.ok) return r.response
        if (r.doc.id !== undefined && r.doc.id !== null && r.doc.id !== '' && String(r.doc.id).toLowerCase() !== id.toLowerCase()) {
          return failure(422, CODES.invalidValue, 'id', 'id does not match the id in the path')
        }
        const doc = { ...r.doc, id }
        await live()
        await catalog.put(org, kind, id, doc, { create: false })
        return json(200, await view(org, [doc]))
      }) as Authed,
      remove: (async ({ req, org, live }) => {
        await live()
        return (await catalog.delete(org, kind, req.params.id!)) ? { statusCode: 204 } : notFound(req.params.id!)
      }) as Authed,
    }
  }

  // ---- data structures (read view of the registry) ---------------------------
  const page = <T>(items: T[], q: Readonly<Record<string, string>>): T[] => {
    const from = Math.max(0, Number.parseInt(q.from ?? '0', 10) || 0)
    const size = q.size !== undefined ? Math.max(0, Number.parseInt(q.size, 10) || 0) : items.length
    return items.slice(from, from + size)
  }
  const envOf = (q: Readonly<Record<string, string>>): { ok: true; env?: 'DEV' | 'PROD' } | { ok: false; response: HttpResponse } => {
    if (q.env === undefined || q.env === '') return { ok: true }
    const env = q.env.toUpperCase()
    if (env !== 'DEV' && env !== 'PROD') return { ok: false, response: json(400, { message: `env must be DEV or PROD, got '${q.env}'` }) }
    return { ok: true, env }
  }
  const structure = async (org: string, hash: string) => dataStructures(org, await registry.listAll()).find((d) => d.hash === hash.toLowerCase())

  const dsList: Authed = async ({ req, org }) => {
    const q = req.query
    const all = dataStructures(org, await registry.listAll()).filter((d) => (q.vendor === undefined || d.vendor === q.vendor) && (q.name === undefined || d.name === q.name))
    return json(200, page(all.map(wire), q))
  }
  const dsGet: Authed = async ({ req, org }) => {
    const ds = await structure(org, req.params.hash!)
    return ds ? json(200, wire(ds)) : json(404, { message: `Data structure ${req.params.hash} not found` })
  }
  const dsVersion: Authed = async ({ req, org }) => {
    const env = envOf(req.query)
    if (!env.ok) return env.response
    const v = parseSchemaVer(req.params.version!)
    const ds = v.ok ? await structure(org, req.params.hash!) : undefined
    const found = v.ok ? ds?.versions.find((s) => formatSchemaVer(s.key.version) === formatSchemaVer(v.value)) : undefined
    return found ? json(200, schemaDocument(found)) : json(404, { message: `Data structure ${req.params.hash} has no version ${req.params.version}` })
  }
  const dsDeployments: Authed = async ({ req, org }) => {
    const env = envOf(req.query)
    if (!env.ok) return env.response
    const ds = await structure(org, req.params.hash!)
    if (!ds) return json(404, { message: `Data structure ${req.params.hash} not found` })
    return json(200, page(ds.deployments.filter((d) => !env.env || d.env === env.env), req.query))
  }

  // ---- routes ----------------------------------------------------------------
  const router = new Router()
  const b = API_BASE
  router.get(`${b}/credentials/v2/token`, token(false))
  router.get(`${b}/credentials/v3/token`, token(true))
  for (const [path, alias] of [['event-specs/v1', false], ['tracking-scenarios/v1', true], ['tracking-scenarios/v2', true]] as const) {
    router.get(`${b}/${path}`, guarded(list(alias)))
    router.post(`${b}/${path}`, guarded(create(alias)))
    router.post(`${b}/${path}/compatibility`, guarded(compatibility))
    router.post(`${b}/${path}/publish`, guarded(publish(alias)))
    router.get(`${b}/${path}/{eventSpecId}`, guarded(retrieve(alias)))
    router.put(`${b}/${path}/{eventSpecId}`, guarded(edit(alias)))
    router.delete(`${b}/${path}/{eventSpecId}`, guarded(remove))
  }
  for (const [path, kind, label] of [['data-products/v2', 'dataProduct', 'data product'], ['source-apps/v1', 'sourceApp', 'source application']] as const) {
    const r = catalogRoutes(kind, label)
    router.get(`${b}/${path}`, guarded(r.list))
    router.post(`${b}/${path}`, guarded(r.create))
    router.get(`${b}/${path}/{id}`, guarded(r.get))
    router.put(`${b}/${path}/{id}`, guarded(r.update))
    router.delete(`${b}/${path}/{id}`, guarded(r.remove))
  }
  router.get(`${b}/data-structures/v1`, guarded(dsList))
  router.get(`${b}/data-structures/v1/{hash}`, guarded(dsGet))
  router.get(`${b}/data-structures/v1/{hash}/versions/{version}`, guarded(dsVersion))
  router.get(`${b}/data-structures/v1/{hash}/deployments`, guarded(dsDeployments))
  router.fallback((req) => json(404, { message: `No route for ${req.method} ${req.path}` }))
  return (req) => router.handle(req)
}

