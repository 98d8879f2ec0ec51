/**
 * The "Tracking plans" tab's API (under `/control-plane/tracking-plans`,
 * behind the pages' basic authentication): organizations, their event
 * specifications with their history and compatibility (the tracking-design
 * API's own stores, checks and witnesses), what the search store observed of
 * each, and a draft's rules tried against the newest stored events.
 * Transport-neutral: requests in, responses out, storage behind ports.
 */
import { isUuid } from '../tracking-design/auth'
import { checkSource, compatibilityEntries, defaultChecker, type CompatibilityChecker, type SourceReport } from '../tracking-design/compat'
import type { CatalogStore, RegistryReader, SpecStore } from '../tracking-design/ports'
import { memoRegistry } from '../tracking-design/service'
import { STATUSES, type JsonObject, type Organization, type StoredSpec } from '../tracking-design/types'
import { isObject, sourceKey } from '../tracking-design/validate'
import type { EventSpecState } from '../enrich/enrichments/event-spec-default'
import { formatSchemaVer, parseIgluUri } from '../iglu/keys'
import { jsonTextDepth } from '../iglu/json-depth'
import type { SearchDb } from '../search/store'
import { json, type HttpHandler, type HttpRequest, type HttpResponse } from '../../http/types'
import { lastSeen, observedCounts, observeSpec, type SpecCounts } from './observed'
import { DEFAULT_TRY_EVENTS, MAX_TRY_EVENTS, tryDraft } from './try-draft'

export const TRACKING_PLANS_PATH = '/control-plane/tracking-plans'
/** Largest draft body accepted (bytes), as the tracking-design API's. */
export const MAX_TRY_BODY_BYTES = 256 * 1024
const MAX_TRY_DEPTH = 64
const MAX_SEARCH_CHARS = 200

export interface TrackingPlansDeps {
  readonly specs: SpecStore
  readonly catalog: CatalogStore
  readonly registry: RegistryReader
  readonly checker?: CompatibilityChecker
  listOrgs(): Promise<readonly Organization[]>
  /** The search store; undefined when the deployment has none (`-c searchStore=false`). */
  readonly search?: () => Promise<SearchDb>
  /** Whether enrich tags events with specifications, and why not. */
  enrichment(): Promise<EventSpecState>
  now(): number
}

const NO_SEARCH_STORE = 'this deployment has no search store (it was deployed with -c searchStore=false): nothing observed can be shown, and drafts cannot be tried against stored events'
const problem = (status: number, message: string): HttpResponse => json(status, { message })

/** The registry's view of a schema (the public registry API serves it). */
export function registryLink(uri: string): string | undefined {
  const k = parseIgluUri(uri)
  return k.ok ? `/registry-server/api/schemas/${k.value.vendor}/${k.value.name}/${k.value.format}/${formatSchemaVer(k.value.version)}` : undefined
}

/** The Iglu URIs of a specification's tracked entities. */
function entitySources(doc: JsonObject): string[] {
  const ents = isObject(doc.entities) && Array.isArray(doc.entities.tracked) ? doc.entities.tracked : []
  return ents.flatMap((e) => (isObject(e) && typeof e.source === 'string' ? [e.source] : []))
}

export function trackingPlansApi(deps: TrackingPlansDeps, basePath = TRACKING_PLANS_PATH): HttpHandler {
  const checker = deps.checker ?? defaultChecker

  async function observedState() {
    const enrichment = await deps.enrichment()
    return { enrichment, observed: deps.search ? { available: true } : { available: false, reason: NO_SEARCH_STORE } }
  }

  async function summary(org: string, status: string | undefined, q: string | undefined): Promise<HttpResponse> {
    const [rows, products] = await Promise.all([deps.specs.list(org, status ? { status } : undefined), deps.catalog.list(org, 'dataProduct')])
    const needle = q?.trim().toLowerCase() ?? ''
    const chosen = rows.filter((s) => (status === undefined || s.doc.status === status) && (needle === '' || String(s.doc.name ?? '').toLowerCase().includes(needle)))
    chosen.sort((a, b) => String(a.doc.name ?? '').localeCompare(String(b.doc.name ?? '')))
    let counts: Map<string, SpecCounts> | undefined
    const never = new Set<string>()
    if (deps.search) {
      const db = await deps.search()
      counts = await observedCounts(db, deps.now())
      // A published specification with nothing in the last day: seen at all within the store's retention?
      const quiet = chosen.filter((s) => s.doc.status === 'published' && !counts!.get(s.id.toLowerCase())?.day)
      const seen = await Promise.all(quiet.map((s) => lastSeen(db, s.id)))
      quiet.forEach((s, i) => seen[i] === undefined && never.add(s.id))
    }
    const productName = new Map(products.map((p) => [String(p.id), String(p.name ?? p.id)]))
    const specs = chosen.map((s) => {
      const k = sourceKey(s.doc)
      const dp = typeof s.doc.dataProductId === 'string' ? s.doc.dataProductId : undefined
      const c = counts?.get(s.id.toLowerCase())
      return {
        id: s.id,
        name: s.doc.name ?? null,
        status: s.doc.status ?? null,
        version: s.doc.version ?? null,
        source: k ? `iglu:${k.vendor}/${k.name}/${k.format}` : null,
        sourceVersion: k ? formatSchemaVer(k.version) : null,
        dataProduct: dp ? { id: dp, name: productName.get(dp) ?? dp } : null,
        updated: s.latest.date,
        ...(counts ? { observed: { hour: c?.hour ?? 0, day: c?.day ?? 0, brokenDay: c?.brokenDay ?? 0, neverSeen: never.has(s.id) } } : {}),
      }
    })
    return json(200, { specs, ...(await observedState()) })
  }

  async function detail(org: string, found: StoredSpec): Promise<HttpResponse> {
    const doc = found.doc
    const reg = memoRegistry(deps.registry)
    const event = isObject(doc.event) ? doc.event : {}
    const entities = isObject(doc.entities) && Array.isArray(doc.entities.tracked) ? doc.entities.tracked.filter(isObject) : []
    const checks: Promise<SourceReport>[] = []
    if (typeof event.source === 'string' && isObject(event.schema)) checks.push(checkSource(event.source, event.schema, reg, checker))
    for (const e of entities) if (typeof e.source === 'string' && isObject(e.schema)) checks.push(checkSource(e.source, e.schema, reg, checker))
    const sourceUri = typeof event.source === 'string' ? event.source : undefined
    const sourceKeyed = sourceUri ? parseIgluUri(sourceUri) : undefined
    const [history, compat, sources, source, product, observed] = await Promise.all([
      deps.specs.history(org, found.id),
      compatibilityEntries(doc, 'read', reg, checker),
      Promise.all(checks),
      sourceKeyed?.ok ? reg.get(sourceKeyed.value) : Promise.resolve(undefined),
      typeof doc.dataProductId === 'string' ? deps.catalog.get(org, 'dataProduct', doc.dataProductId) : Promise.resolve(undefined),
      deps.search ? deps.search().then((db) => observeSpec(db, found.id, entitySources(doc), deps.now())) : Promise.resolve(undefined),
    ])
    const links: Record<string, string> = {}
    for (const uri of [sourceUri, ...entitySources(doc)]) {
      const l = uri ? registryLink(uri) : undefined
      if (uri && l) links[uri] = l
    }
    return json(200, {
      spec: doc,
      history: history.map(({ snapshot: _s, ...h }) => h).reverse(),
      compatibility: compat,
      sources: sources.filter((s) => s.status !== 'compatible'),
      sourceSchema: source?.body ?? null,
      dataProduct: product ? { id: product.id, name: product.name ?? product.id } : null,
      registryLinks: links,
      ...(observed ? { observation: observed } : {}),
      ...(await observedState()),
    })
  }

  async function tryIt(req: HttpRequest, found: StoredSpec): Promise<HttpResponse> {
    if (!deps.search) return problem(409, NO_SEARCH_STORE)
    if (req.body.length > MAX_TRY_BODY_BYTES) return problem(413, `the body has ${req.body.length} bytes; at most ${MAX_TRY_BODY_BYTES} are accepted`)
    const type = (req.headers['content-type'] ?? '').toLowerCase()
    if (req.body.length > 0 && !type.startsWith('application/json')) return problem(415, 'send the draft as application/json: {"spec": {…}, "events": 200}')
    const text = req.body.toString('utf8')
    let body: unknown = {}
    if (text.trim() !== '') {
      if (jsonTextDepth(text) > MAX_TRY_DEPTH) return problem(422, `the body nests arrays and objects more than ${MAX_TRY_DEPTH} levels deep`)
      try {
        body = JSON.parse(text)
      } catch (err) {
        return problem(400, `the body is not valid JSON: ${(err as Error).message}`)
      }
    }
    if (!isObject(body)) return problem(400, 'the body must be a JSON object: {"spec": {…}, "events": 200}')
    const spec = body.spec === undefined ? found.doc : body.spec
    if (!isObject(spec)) return problem(422, 'spec must be an object (the specification as it would be written)')
    const events = body.events === undefined ? DEFAULT_TRY_EVENTS : body.events
    if (typeof events !== 'number' || !Number.isInteger(events) || events < 1 || events > MAX_TRY_EVENTS) return problem(422, `events must be an integer from 1 to ${MAX_TRY_EVENTS}`)
    const report = await tryDraft(await deps.search(), found.id, spec, events)
    return report.ok ? json(200, report) : problem(422, report.message)
  }

  return async (req) => {
    const rest = req.path.startsWith(basePath) ? req.path.slice(basePath.length).replace(/^\/+|\/+$/g, '') : undefined
    if (rest === undefined) return problem(404, `not found: the tracking plans are under ${basePath}`)
    const parts = rest === '' ? [] : rest.split('/').map((p) => decodeURIComponent(p))
    const method = req.method === 'HEAD' ? 'GET' : req.method
    if (parts.length === 0) {
      if (method !== 'GET') return problem(405, 'only GET is supported')
      const orgs = await deps.listOrgs()
      return json(200, { organizations: orgs.map((o) => ({ id: o.id, name: o.name, createdAt: o.createdAt })), ...(await observedState()) })
    }
    const [org, collection, id, action] = parts
    if (!isUuid(org!) || collection !== 'specs' || parts.length > 4) return problem(404, `not found: ${basePath}/{organizationId}/specs[/{eventSpecId}[/try]]`)
    const orgId = org!.toLowerCase()
    if (id === undefined) {
      if (method !== 'GET') return problem(405, 'only GET is supported')
      const status = req.query.status
      if (status !== undefined && status !== '' && !(STATUSES as readonly string[]).includes(status)) return problem(422, `status must be one of ${STATUSES.join(', ')}`)
      const q = req.query.q
      if (q !== undefined && q.length > MAX_SEARCH_CHARS) return problem(422, `q is longer than ${MAX_SEARCH_CHARS} characters`)
      return summary(orgId, status || undefined, q)
    }
    const found = isUuid(id) ? await deps.specs.get(orgId, id.toLowerCase()) : undefined
    if (!found) return problem(404, `event specification ${id} not found in organization ${orgId}`)
    if (action === undefined) {
      if (method !== 'GET') return problem(405, 'only GET is supported')
      return detail(orgId, found)
    }
    if (action !== 'try') return problem(404, `not found: ${basePath}/{organizationId}/specs/{eventSpecId}/try`)
    if (method !== 'POST') return problem(405, 'only POST is supported')
    return tryIt(req, found)
  }
}
