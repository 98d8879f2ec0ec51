/**
 * The Iglu-compatible registry server as a pure request handler over storage
 * ports. Serves everything under `{basePath}/api/...` (basePath defaults to
 * `/registry-server`); status codes and messages follow Iglu Server 0.14.
 */
import type { HttpRequest, HttpResponse } from '../../http/types'
import { hashKey, isUuid, isUuidV4, newKey, sameHash } from './apikeys'
import { compileValidator, compileWithRefs, instanceErrors, remoteRefs, type ValidateFunction } from './draft04'
import { formatSchemaVer, makeSchemaKey, parseIgluUri, parseSchemaVer, toIgluUri, toSchemaPath, type SchemaKey } from './keys'
import { jsonTextDepth } from './json-depth'
import { DEFAULT_MAX_JSON_DEPTH, hasErrors, lint, reportOf } from './lint'
import {
  ANONYMOUS, SUPER, authInfo, canCreateKeys, canCreateKeysFor, canDeleteKeys, canDeleteSchema, canRead, canValidate, canWrite,
  isSuper, isWildcardPrefix, keyPairPermissions, type Permission,
} from './permissions'
import {
  canonicalSchema, decodeSelfDescribingData, decodeSelfDescribingSchema, isObject, readSupersedes, schemaBody, selfOf,
  type JsonObject,
} from './selfdesc'
import { META_SCHEMA_URI } from './metaschema'
import type { KeyStore, SchemaStore, StaticPublisher, StoredSchema, SuperKeyStore } from './store'
import { checkPublish, supersedingUpdates } from './versioning'

export const IGLU_SERVER_VERSION = '0.14.0'
export const DEFAULT_MAX_PAYLOAD_SIZE = 100_000

export const MESSAGES = {
  endpointNotFound: 'The endpoint does not exist',
  invalidApiKey: 'Invalid UUID for ApiKey',
  malformed: 'The request body was malformed.',
  invalid: 'The request body was invalid.',
  tooLarge: 'The payload is too large',
  noSchemas: 'No schemas available',
  schemaNotFound: 'The schema is not found',
  cannotDecode: 'Cannot decode JSON schema',
  mismatch: 'Mismatch: the schema metadata does not match the payload and URI',
  notAuthorized: 'Authentication error: not authorized',
  notConform: 'The schema does not conform to a JSON Schema v4 specification',
  deleteForbidden: 'DELETE is forbidden on production registry',
  notEnoughPermissions: 'Not enough permissions',
  schemaDeleted: 'Schema deleted',
  cannotCreateKeys: 'Not sufficient privileges to create keys',
  cannotDeleteKeys: 'Not sufficient privileges to delete key',
  keysDeleted: 'Keys have been deleted',
  keygenQuery:
    'The vendor prefix must be sent in the JSON request body, e.g. {"vendorPrefix":"com.acme"}; the vendorPrefix query parameter is no longer supported',
  unknownSchemaFormat: 'Unknown schema format',
  invalidInstance: 'The data for a field instance is invalid against its schema',
  superKeyV4: 'The super API key must be a UUID v4',
  superKeyChanged: 'Super API key changed',
  cannotChangeSuperKey: 'Not sufficient privileges to change the super API key',
} as const

export interface RegistryServiceOptions {
  readonly schemas: SchemaStore
  readonly keys: KeyStore
  readonly superKeys: SuperKeyStore
  /** Receives the static export of public schemas; optional. */
  readonly publisher?: StaticPublisher
  /** A super API key (UUID v4) from configuration; always valid besides the stored one. */
  readonly superApiKey?: string
  /** Allow overwriting an existing version and DELETE (development registries). Default false. */
  readonly patchesAllowed?: boolean
  readonly maxPayloadSize?: number
  readonly maxJsonDepth?: number
  /** Path prefix the API is mounted under. Default `/registry-server`. */
  readonly basePath?: string
  readonly now?: () => Date
  /**
   * Called once when no super key is configured nor stored and one was
   * generated; the default says so on stdout without the key (what a
   * function prints goes to its log, and a secret never does).
   */
  readonly onSuperKeyGenerated?: (key: string) => void
  /** Called with problems that do not fail the request (e.g. static export errors). */
  readonly onError?: (msg: string, err: unknown) => void
  /** How long the stored super key hash is cached in memory. Default 30 s. */
  readonly superKeyCacheMs?: number
  /**
   * Called after schemas were written or deleted, before the request is
   * answered (the deployment's resolvers forget what they cached of this
   * registry); a failure fails the request. Also called once before the
   * first answer of this service: the process before it may have died
   * between a write and this call.
   */
  readonly schemasChanged?: () => Promise<void>
}

type Repr = 'uri' | 'meta' | 'canonical'

class HttpError extends Error {
  constructor(readonly response: HttpResponse) {
    super('http error')
  }
}

function jsonRes(status: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { statusCode: status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) }
}
const msg = (status: number, message: string) => jsonRes(status, { message })
const fail = (status: number, message: string): never => {
  throw new HttpError(msg(status, message))
}

/** Builds the registry request handler. */
export function createRegistryService(opts: RegistryServiceOptions): (req: HttpRequest) => Promise<HttpResponse> {
  if (opts.superApiKey !== undefined && !isUuidV4(opts.superApiKey)) {
    throw new Error(`The configured super API key is not a UUID v4; refusing to start the registry`)
  }
  const basePath = (opts.basePath ?? '/registry-server').replace(/\/+$/, '')
  const patchesAllowed = opts.patchesAllowed ?? false
  const maxPayload = opts.maxPayloadSize ?? DEFAULT_MAX_PAYLOAD_SIZE
  const maxDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH
  const now = opts.now ?? (() => new Date())
  const onError = opts.onError ?? ((m, e) => console.error(JSON.stringify({ level: 'error', msg: m, error: String((e as Error)?.message ?? e) })))
  const configuredHash = opts.superApiKey ? hashKey(opts.superApiKey) : undefined
  const superCacheMs = opts.superKeyCacheMs ?? 30_000
  let storedSuper: { hash: string | undefined; at: number } | undefined
  let generation: Promise<void> | undefined
  const validators = new Map<string, { updatedAt: string; fn: ValidateFunction }>()

  async function storedSuperHash(): Promise<string | undefined> {
    if (storedSuper && Date.now() - storedSuper.at < superCacheMs) return storedSuper.hash
    const hash = await opts.superKeys.getSuperKeyHash()
    storedSuper = { hash, at: Date.now() }
    return hash
  }

  /** Without any super key, generates one, stores its hash and shows it once. */
  async function ensureSuperKey(): Promise<void> {
    if (configuredHash) return
    generation ??= (async () => {
      if (await opts.superKeys.getSuperKeyHash()) return
      const key = newKey()
      if (await opts.superKeys.putSuperKeyHash(hashKey(key), { onlyIfAbsent: true })) {
        storedSuper = undefined
        // The key is shown nowhere by default: a function's output goes to a log, and a secret never does.
        const show = opts.onSuperKeyGenerated ?? (() => {
          process.stdout.write(
            `Floe registry: no super API key was configured; one was generated and stored hashed, and is not shown. ` +
              `Set FLOE_SUPER_API_KEY, or get a new key with 'npx floe registry superkey --reset' (add --stack <name> for a deployment).\n`,
          )
        })
        show(key)
      }
    })().catch((err) => {
      generation = undefined
      throw err
    })
    await generation
  }

  async function permissionOf(req: HttpRequest): Promise<Permission> {
    const raw = req.headers.apikey
    if (raw === undefined || raw.trim() === '') return ANONYMOUS
    const key = raw.trim()
    if (!isUuid(key)) fail(400, MESSAGES.invalidApiKey)
    const hash = hashKey(key)
    if (configuredHash && sameHash(hash, configuredHash)) return SUPER
    const stored = await storedSuperHash()
    if (stored && sameHash(hash, stored)) return SUPER
    const found = await opts.keys.get(hash)
    return found && sameHash(found.hash, hash) ? found.permission : ANONYMOUS
  }

  const bodies = new WeakMap<HttpRequest, unknown>()

  /**
   * The JSON body, decoded once per request: over the payload limit is 413,
   * undecodable 400, nested deeper than the JSON depth limit 422 (measured on
   * the text before parsing, so nothing later walks a deeper value).
   */
  function readBody(req: HttpRequest): unknown {
    if (bodies.has(req)) return bodies.get(req)
    if (req.body.length > maxPayload) fail(413, MESSAGES.tooLarge)
    const text = req.body.toString('utf8')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      fail(400, MESSAGES.malformed)
    }
    if (jsonTextDepth(text) > maxDepth) fail(422, MESSAGES.invalid)
    bodies.set(req, value)
    return value
  }

  function reprOf(req: HttpRequest, fallback: Repr): Repr {
    const raw = req.query.repr
    if (raw === undefined) return fallback
    const r = raw.toLowerCase()
    if (r === 'uri' || r === 'meta' || r === 'canonical') return r
    return fail(400, `Unknown schema representation format: '${raw}'`)
  }

  function render(s: StoredSchema, repr: Repr): unknown {
    if (repr === 'uri') return toIgluUri(s.key)
    if (repr === 'canonical') return canonicalSchema(s.key, s.body, { supersededBy: s.supersededBy, supersedes: s.supersedes })
    return metaRepresentation(s)
  }

  const readable = (p: Permission) => (s: StoredSchema) => s.isPublic || canRead(p, s.key.vendor)

  function listResponse(req: HttpRequest, p: Permission, rows: StoredSchema[], emptyIs404: boolean): HttpResponse {
    const repr = reprOf(req, 'uri')
    // Publication order, as Iglu Server lists (by creation time, then version); the stores return key order.
    const visible = rows.filter(readable(p)).sort(byPublication)
    if (visible.length === 0 && emptyIs404) return msg(404, MESSAGES.noSchemas)
    return jsonRes(200, visible.map((s) => render(s, repr)))
  }

  function keyFromPath(v: string, n: string, f: string, ver: string): SchemaKey {
    const parsed = parseSchemaVer(ver)
    if (!parsed.ok) fail(400, parsed.message)
    const k = makeSchemaKey(v, n, f, ver)
    if (!k.ok) fail(400, k.message)
    return (k as { ok: true; value: SchemaKey }).value
  }

  // ---- static export --------------------------------------------------------

  async function exportGroup(vendor: string, name: string, changed: readonly SchemaKey[], deleted: readonly SchemaKey[]) {
    const pub = opts.publisher
    if (!pub) return
    try {
      const group = await opts.schemas.listGroup(vendor, name)
      const byUri = new Map(group.map((s) => [toIgluUri(s.key), s]))
      for (const k of deleted) await pub.delete(`schemas/${toSchemaPath(k)}`)
      for (const k of changed) {
        const s = byUri.get(toIgluUri(k))
        if (s?.isPublic) {
          const doc = canonicalSchema(s.key, s.body, { supersededBy: s.supersededBy, supersedes: s.supersedes })
          await pub.put(`schemas/${toSchemaPath(s.key)}`, JSON.stringify(doc, null, 2))
        } else if (!s) await pub.delete(`schemas/${toSchemaPath(k)}`)
      }
      const models = new Set([...changed, ...deleted].filter((k) => k.format === 'jsonschema').map((k) => k.version.model))
      for (const m of models) {
        const path = `schemas/${vendor}/${name}/jsonschema/${m}`
        const list = group.filter((s) => s.isPublic && s.key.format === 'jsonschema' && s.key.version.model === m)
        if (list.length > 0) await pub.put(path, JSON.stringify(list.map((s) => toIgluUri(s.key))))
        else await pub.delete(path)
      }
    } catch (err) {
      onError('static export of the registry failed', err)
    }
  }

  // ---- schemas ---------------------------------------------------------------

  async function publish(req: HttpRequest, p: Permission, urlKey: SchemaKey | undefined): Promise<HttpResponse> {
    let body = readBody(req)
    if (!isObject(body)) return msg(422, MESSAGES.invalid)
    // The `{"json": <schema>}` wrapper of older single-instance stack documentation.
    if (isObject(body.json) && !('self' in body) && !('$schema' in body)) body = body.json as JsonObject
    const doc = body as JsonObject
    const supersedes = readSupersedes(doc)
    if (!supersedes.ok) return msg(400, supersedes.error)
    const stripped: JsonObject = { ...doc }
    delete stripped.$supersededBy
    delete stripped.$supersedes
    const decoded = decodeSelfDescribingSchema(stripped)

    let key: SchemaKey
    let normalised: JsonObject
    if (decoded.ok) {
      key = decoded.value.key
      if (urlKey && toIgluUri(urlKey) !== toIgluUri(key)) {
        return jsonRes(400, { uriSchemaKey: toIgluUri(urlKey), payloadSchemaKey: toIgluUri(key), message: MESSAGES.mismatch })
      }
      normalised = stripped
    } else if (!urlKey) {
      return jsonRes(400, { message: MESSAGES.cannotDecode, reasons: decoded.errors })
    } else {
      key = urlKey
      normalised = { $schema: META_SCHEMA_URI, self: selfOf(urlKey), ...stripped }
    }

    if (key.format !== 'jsonschema') return msg(400, `Only the jsonschema format is supported; '${key.format}' schemas cannot be stored`)
    if (!canWrite(p, key.vendor)) return msg(403, MESSAGES.notAuthorized)

    const lintMessages = lint(normalised, { maxJsonDepth: maxDepth })
    if (hasErrors(lintMessages)) return jsonRes(400, { message: MESSAGES.notConform, report: reportOf(lintMessages) })

    const isPublic = (req.query.isPublic ?? req.query.ispublic ?? '').toLowerCase() === 'true'
    const group = await opts.schemas.listGroup(key.vendor, key.name)
    const check = checkPublish(
      group.map((g) => ({ format: g.key.format, version: g.key.version, isPublic: g.isPublic })),
      { format: key.format, version: key.version, isPublic, supersedes: supersedes.value },
      patchesAllowed,
    )
    if (!check.ok) return msg(409, check.message)

    const at = now().toISOString()
    const previous = group.find((g) => toIgluUri(g.key) === toIgluUri(key))
    const row: StoredSchema = previous
      ? { ...previous, body: schemaBody(normalised), isPublic, createdAt: at, updatedAt: at }
      : { key, body: schemaBody(normalised), isPublic, createdAt: at, updatedAt: at, supersedes: supersedes.value }
    const written = await opts.schemas.put(row, { create: !previous })
    if (written === 'exists') return msg(409, 'Schema already exists')

    const changed: SchemaKey[] = [key]
    if (!previous && supersedes.value.length > 0) {
      const sameFormat = group.filter((g) => g.key.format === key.format)
      const updates = supersedingUpdates(
        sameFormat.map((g) => ({ version: g.key.version, supersededBy: g.supersededBy })),
        supersedes.value,
        key.version,
      )
      for (const v of updates) {
        const k = { ...key, version: v }
        await opts.schemas.setSupersededBy(k, key.version)
        changed.push(k)
      }
    }
    await opts.schemasChanged?.()
    await exportGroup(key.vendor, key.name, changed, [])
    const location = toIgluUri(key)
    return previous
      ? jsonRes(200, { message: 'Schema updated', updated: true, location, status: 200 })
      : jsonRes(201, { message: 'Schema created', updated: false, location, status: 201 })
  }

  async function schemas(req: HttpRequest, p: Permission, seg: string[]): Promise<HttpResponse> {
    const m = req.method
    // Deprecated: POST /api/schemas/validate/{v}/{n}/{f}/{ver}
    if (seg[0] === 'validate' && seg.length === 5 && m === 'POST') return validateSchema(req, p, 'jsonschema')
    if (seg.length === 0) {
      if (m === 'GET' || m === 'HEAD') return listResponse(req, p, await opts.schemas.listAll(), false)
      if (m === 'POST') return publish(req, p, undefined)
      return notFound()
    }
    if (seg.length === 1 && m === 'GET') return listResponse(req, p, await opts.schemas.listVendor(seg[0]!), true)
    if (seg.length === 2 && m === 'GET') return listResponse(req, p, await opts.schemas.listGroup(seg[0]!, seg[1]!), true)
    if (seg.length === 3 && m === 'GET') {
      const rows = (await opts.schemas.listGroup(seg[0]!, seg[1]!)).filter((s) => s.key.format === seg[2])
      return listResponse(req, p, rows, true)
    }
    if (seg.length === 4) {
      const [v, n, f, last] = seg as [string, string, string, string]
      if (m === 'GET' && f === 'jsonschema' && /^[0-9]+$/.test(last)) {
        const model = Number(last)
        const rows = (await opts.schemas.listGroup(v, n)).filter((s) => s.key.format === f && s.key.version.model === model)
        return listResponse(req, p, rows, true)
      }
      const key = keyFromPath(v, n, f, last)
      if (m === 'GET' || m === 'HEAD') {
        const repr = reprOf(req, 'canonical')
        const s = await opts.schemas.get(key)
        if (!s || !readable(p)(s)) return msg(404, MESSAGES.schemaNotFound)
        return jsonRes(200, render(s, repr))
      }
      if (m === 'PUT') return publish(req, p, key)
      if (m === 'DELETE') {
        if (!canDeleteSchema(p, true)) return msg(401, MESSAGES.notEnoughPermissions)
        if (!patchesAllowed) return msg(405, MESSAGES.deleteForbidden)
        await opts.schemas.delete(key)
        await opts.schemasChanged?.()
        await exportGroup(key.vendor, key.name, [], [key])
        return msg(200, MESSAGES.schemaDeleted)
      }
    }
    return notFound()
  }

  // ---- validation ------------------------------------------------------------

  function validateSchema(req: HttpRequest, p: Permission, format: string): HttpResponse {
    if (format !== 'jsonschema') return msg(400, `${MESSAGES.unknownSchemaFormat}: '${format}'`)
    if (!canValidate(p)) return msg(403, '')
    const doc = readBody(req)
    const messages = lint(doc, { maxJsonDepth: maxDepth })
    if (messages.length === 0) {
      const key = (decodeSelfDescribingSchema(doc) as { ok: true; value: { key: SchemaKey } }).value.key
      return msg(200, `The schema provided is a valid self-describing ${toIgluUri(key)} schema`)
    }
    return jsonRes(200, { message: MESSAGES.notConform, report: reportOf(messages) })
  }

  async function validateInstance(req: HttpRequest, p: Permission): Promise<HttpResponse> {
    const decoded = decodeSelfDescribingData(readBody(req))
    if (!decoded.ok) return msg(400, decoded.message)
    if (!canValidate(p)) return msg(404, MESSAGES.schemaNotFound)
    const s = await opts.schemas.get(decoded.value.schema)
    if (!s || !readable(p)(s)) return msg(404, MESSAGES.schemaNotFound)
    const uri = toIgluUri(s.key)
    let cached = validators.get(uri)
    if (!cached || cached.updatedAt !== s.updatedAt) {
      // Schemas it references (`$ref` to other schemas) are followed in this registry; one that is not there is reported.
      const refs = new Map<string, unknown>()
      const pending = remoteRefs(s.body)
      while (pending.length > 0) {
        const ref = pending.pop()!
        if (refs.has(ref) || ref === uri) continue
        const k = parseIgluUri(ref)
        const found = k.ok ? await opts.schemas.get(k.value) : undefined
        if (!found || !readable(p)(found)) return msg(422, `The schema ${uri} references ${ref}, which this registry cannot resolve; the instance was not validated`)
        refs.set(ref, found.body)
        pending.push(...remoteRefs(found.body))
      }
      try {
        cached = { updatedAt: s.updatedAt, fn: refs.size === 0 ? compileValidator(s.body) : compileWithRefs(s.body, refs) }
      } catch (err) {
        return msg(422, `The schema ${uri} cannot be compiled: ${(err as Error).message}`)
      }
      if (refs.size === 0) validators.set(uri, cached)
    }
    if (cached.fn(decoded.value.data)) return msg(200, `Instance is valid ${uri}`)
    return jsonRes(200, { message: MESSAGES.invalidInstance, report: instanceErrors(cached.fn.errors, decoded.value.data, cached.fn.schema) })
  }

  // ---- keys ------------------------------------------------------------------

  async function keygen(req: HttpRequest, p: Permission): Promise<HttpResponse> {
    if (req.method === 'DELETE') {
      if (!canDeleteKeys(p)) return msg(403, MESSAGES.cannotDeleteKeys)
      const key = req.query.key
      if (key === undefined || key === '') return msg(400, 'The key query parameter is required: DELETE /api/auth/keygen?key=<uuid>')
      if (!isUuid(key)) return msg(400, 'Invalid UUID for key')
      await opts.keys.delete(hashKey(key))
      return msg(200, MESSAGES.keysDeleted)
    }
    if (req.method !== 'POST') return notFound()
    if (!canCreateKeys(p)) return msg(403, MESSAGES.cannotCreateKeys)
    if ('vendorPrefix' in req.query || 'vendor_prefix' in req.query) return msg(400, MESSAGES.keygenQuery)
    if (req.body.length === 0) return msg(400, MESSAGES.keygenQuery)
    const body = readBody(req)
    if (!isObject(body) || typeof body.vendorPrefix !== 'string') return msg(422, MESSAGES.invalid)
    const prefix = body.vendorPrefix.trim()
    if (!isWildcardPrefix(prefix) && !/^[a-zA-Z0-9\-_.]+$/.test(prefix)) return msg(422, MESSAGES.invalid)
    if (!canCreateKeysFor(p, prefix)) return msg(403, `Cannot create ${prefix} using your permissions`)
    const pair = keyPairPermissions(prefix)
    const read = newKey()
    const write = newKey()
    const at = now().toISOString()
    await opts.keys.put({ hash: hashKey(read), permission: pair.read, createdAt: at })
    await opts.keys.put({ hash: hashKey(write), permission: pair.write, createdAt: at })
    return jsonRes(200, { read, write })
  }

  async function superKey(req: HttpRequest, p: Permission): Promise<HttpResponse> {
    if (req.method !== 'PUT' && req.method !== 'POST') return notFound()
    if (!isSuper(p)) return msg(403, MESSAGES.cannotChangeSuperKey)
    const body = readBody(req)
    const key = isObject(body) ? body.superApiKey : undefined
    if (typeof key !== 'string' || !isUuidV4(key.trim())) return msg(400, MESSAGES.superKeyV4)
    await opts.superKeys.putSuperKeyHash(hashKey(key), { onlyIfAbsent: false })
    storedSuper = undefined
    return msg(200, MESSAGES.superKeyChanged)
  }

  // ---- meta ------------------------------------------------------------------

  async function meta(req: HttpRequest, p: Permission, seg: string[]): Promise<HttpResponse> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound()
    const path = seg.join('/')
    const plain = (status: number, body: string): HttpResponse => ({ statusCode: status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body })
    if (path === 'health') return plain(200, 'OK')
    if (path === 'health/db') {
      try {
        await opts.schemas.ping()
        return plain(200, 'OK')
      } catch {
        return plain(503, 'Service Unavailable')
      }
    }
    if (path === 'server') {
      const count = p.schemaAction === null && p.keyActions.length === 0
        ? 0
        : (await opts.schemas.listAll()).filter((s) => canRead(p, s.key.vendor)).length
      return jsonRes(200, {
        version: IGLU_SERVER_VERSION,
        authInfo: authInfo(p),
        database: opts.schemas.kind,
        schemaCount: count,
        debug: false,
        patchesAllowed,
      })
    }
    return notFound()
  }

  const notFound = () => msg(404, MESSAGES.endpointNotFound)

  function cors(req: HttpRequest, res: HttpResponse): HttpResponse {
    const origin = req.headers.origin
    if (!origin) return res
    return { ...res, headers: { ...res.headers, 'access-control-allow-origin': origin, vary: 'Origin' } }
  }

  async function route(req: HttpRequest): Promise<HttpResponse> {
    let path = req.path
    if (basePath && (path === basePath || path.startsWith(`${basePath}/`))) path = path.slice(basePath.length)
    const seg = path.split('/').filter((s) => s.length > 0).map(decodeSegment)
    if (seg[0] !== 'api' || seg.length < 2) return notFound()
    if (req.method === 'OPTIONS') {
      return {
        statusCode: 200,
        headers: {
          'access-control-allow-methods': 'GET, POST, PUT, OPTIONS, DELETE',
          'access-control-allow-headers': 'content-type, apikey',
          'access-control-max-age': '86400',
        },
        body: '',
      }
    }
    // As Iglu Server: the payload limit and body decoding come before permissions.
    if (req.body.length > maxPayload) fail(413, MESSAGES.tooLarge)
    if ((req.method === 'POST' || req.method === 'PUT') && req.body.length > 0 && ['schemas', 'auth', 'validation'].includes(seg[1]!)) readBody(req)
    await ensureSuperKey()
    const p = await permissionOf(req)
    const rest = seg.slice(2)
    switch (seg[1]) {
      case 'schemas':
        return schemas(req, p, rest)
      case 'meta':
        return meta(req, p, rest)
      case 'auth':
        if (rest.length === 1 && rest[0] === 'keygen') return keygen(req, p)
        if (rest.length === 1 && rest[0] === 'superkey') return superKey(req, p)
        return notFound()
      case 'validation':
        if (req.method === 'POST' && rest.length === 3 && rest[0] === 'validate' && rest[1] === 'schema') return validateSchema(req, p, rest[2]!)
        if (req.method === 'POST' && rest.length === 2 && rest[0] === 'validate' && rest[1] === 'instance') return validateInstance(req, p)
        return notFound()
      default:
        return notFound()
    }
  }

  // Told once before the first answer (see `schemasChanged`); told again by the next request if it fails.
  let started: Promise<void> | undefined
  return async (req) => {
    if (opts.schemasChanged) {
      started ??= opts.schemasChanged().catch((err: unknown) => {
        started = undefined
        throw err
      })
      await started
    }
    try {
      return cors(req, await route(req))
    } catch (err) {
      if (err instanceof HttpError) return cors(req, err.response)
      throw err
    }
  }
}

/** A schema as `?repr=meta` answers it. As Iglu Server: the superseding fields come first, then self and metadata. */
export function metaRepresentation(s: StoredSchema): JsonObject {
  const out: JsonObject = {}
  if (s.supersededBy) out.$supersededBy = formatSchemaVer(s.supersededBy)
  if (s.supersedes.length > 0) out.$supersedes = s.supersedes.map(formatSchemaVer)
  out.self = selfOf(s.key)
  out.metadata = { createdAt: s.createdAt, updatedAt: s.updatedAt, isPublic: s.isPublic }
  for (const [k, v] of Object.entries(s.body)) if (!(k in out)) out[k] = v
  return out
}

/** Publication order, as Iglu Server lists: by creation time, then version. */
export function byPublication(a: StoredSchema, b: StoredSchema): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  const va = a.key.version
  const vb = b.key.version
  return va.model - vb.model || va.revision - vb.revision || va.addition - vb.addition
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

