/** In-memory fakes of the tracking-design ports, for unit tests. */
import type { AccountStore, CatalogStore, SpecStore, SpecUpdate, UpdateAllResult } from '../../../lib/core/tracking-design/ports'
import type { CatalogKind, HistoryEntry, JsonObject, Organization, OrgApiKey, StoredSpec } from '../../../lib/core/tracking-design/types'
import type { HttpRequest } from '../../../lib/http/types'
import { nameClaim, type NameClaim } from '../../../lib/core/tracking-design/validate'

const clone = <T>(v: T): T => structuredClone(v)

export class MemorySpecStore implements SpecStore {
  readonly specs = new Map<string, StoredSpec>()
  readonly hist = new Map<string, HistoryEntry[]>()
  private k = (org: string, id: string) => `${org}/${id}`

  async get(org: string, id: string) {
    const s = this.specs.get(this.k(org, id))
    return s && clone(s)
  }
  async list(org: string) {
    return [...this.specs.values()].filter((s) => s.orgId === org).map(clone)
  }
  async nameOwner(org: string, claim: NameClaim) {
    return [...this.specs.values()].find((s) => {
      const c = s.orgId === org ? nameClaim(s.doc) : undefined
      return c?.group === claim.group && c.name === claim.name
    })?.id
  }
  async history(org: string, id: string) {
    return clone(this.hist.get(this.k(org, id)) ?? []).sort((a, b) => a.version - b.version || a.date.localeCompare(b.date))
  }
  private taken(spec: StoredSpec) {
    const c = nameClaim(spec.doc)
    return c ? [...this.specs.values()].some((o) => o.orgId === spec.orgId && o.id !== spec.id && nameClaim(o.doc)?.group === c.group && nameClaim(o.doc)?.name === c.name) : false
  }
  async create(spec: StoredSpec, entry: HistoryEntry) {
    const k = this.k(spec.orgId, spec.id)
    if (this.specs.has(k)) return 'exists' as const
    if (this.taken(spec)) return 'nameTaken' as const
    this.specs.set(k, clone(spec))
    this.hist.set(k, [clone(entry)])
    return 'ok' as const
  }
  async update(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]) {
    const k = this.k(spec.orgId, spec.id)
    if (this.specs.get(k)?.rev !== previous.rev) return 'conflict' as const
    if (this.taken(spec)) return 'nameTaken' as const
    this.specs.set(k, clone(spec))
    const gone = new Set(discard.map((d) => `${d.version}#${d.date}`))
    this.hist.set(k, [...(this.hist.get(k) ?? []).filter((h) => !gone.has(`${h.version}#${h.date}`)), clone(entry)])
    return 'ok' as const
  }
  /** All or nothing, like one DynamoDB transaction. */
  async updateAll(changes: readonly SpecUpdate[]): Promise<UpdateAllResult> {
    for (const [index, c] of changes.entries()) {
      if (this.specs.get(this.k(c.spec.orgId, c.spec.id))?.rev !== c.previous.rev) return { status: 'conflict', index, applied: [] }
      if (this.taken(c.spec)) return { status: 'nameTaken', index, applied: [] }
    }
    for (const c of changes) await this.update(c.previous, c.spec, c.entry, c.discard)
    return { status: 'ok' }
  }
  async delete(org: string, id: string) {
    const k = this.k(org, id)
    this.hist.delete(k)
    return this.specs.delete(k)
  }
}

export class MemoryAccountStore implements AccountStore {
  readonly orgs = new Map<string, Organization>()
  readonly keys = new Map<string, OrgApiKey>()
  secret: string | undefined
  async getOrg(id: string) {
    return this.orgs.get(id)
  }
  async putOrg(org: Organization) {
    this.orgs.set(org.id, org)
  }
  async getKeyById(keyId: string) {
    return this.keys.get(keyId)
  }
  async getKeyByHash(hash: string) {
    return [...this.keys.values()].find((k) => k.hash === hash)
  }
  async putKey(key: OrgApiKey) {
    this.keys.set(key.keyId, key)
  }
  async deleteKey(keyId: string) {
    return this.keys.delete(keyId)
  }
  async signingSecret(candidate: string) {
    this.secret ??= candidate
    return this.secret
  }
}

export class MemoryCatalogStore implements CatalogStore {
  readonly docs = new Map<string, JsonObject>()
  private k = (org: string, kind: CatalogKind, id: string) => `${org}/${kind}/${id.toLowerCase()}`
  async get(org: string, kind: CatalogKind, id: string) {
    return this.docs.get(this.k(org, kind, id))
  }
  async list(org: string, kind: CatalogKind) {
    return [...this.docs.entries()].filter(([k]) => k.startsWith(`${org}/${kind}/`)).map(([, v]) => v)
  }
  async put(org: string, kind: CatalogKind, id: string, doc: JsonObject, opts: { create: boolean }) {
    const k = this.k(org, kind, id)
    if (opts.create && this.docs.has(k)) return 'exists' as const
    this.docs.set(k, doc)
    return 'ok' as const
  }
  async delete(org: string, kind: CatalogKind, id: string) {
    return this.docs.delete(this.k(org, kind, id))
  }
}

export function request(method: string, path: string, init: { headers?: Record<string, string>; body?: unknown; query?: Record<string, string> } = {}): HttpRequest {
  const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
  const body = init.body === undefined ? Buffer.alloc(0) : Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body))
  const query = init.query ?? {}
  return { method, path, headers, query, rawQuery: new URLSearchParams(query).toString(), cookies: [], body, sourceIp: '127.0.0.1', params: {}, timeEpochMs: Date.now() }
}
