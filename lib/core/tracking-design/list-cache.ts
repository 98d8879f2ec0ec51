/**
 * A specification store whose unfiltered lists are reused for a short while.
 *
 * A whole organization's list is the largest read of the tracking-design API (every
 * specification, each a full document: on DynamoDB hundreds of read units per call).
 * Within `ttlMs` of a read, later lists of the same organization get its result, and
 * concurrent lists share one read. Writes made through this store (create, update,
 * publish, delete) drop their organization's entry when they complete, so a client sees
 * its own changes at once; a change made by another function instance is seen at most
 * `ttlMs` later — as filtered lists, which read eventually consistent indexes, already are.
 * Filtered lists, single reads and history are never cached.
 */
import type { SpecFilter, SpecStore, SpecUpdate } from './ports'
import { cacheSecondsSetting } from './schema-cache'
import type { HistoryEntry, StoredSpec } from './types'
import type { NameClaim } from './types'

export interface ListCacheOptions {
  /** How long an unfiltered list is reused; 0 turns the cache off. */
  readonly ttlMs: number
  /** Most organizations kept (least recently read dropped first). */
  readonly maxOrganizations?: number
  readonly now?: () => number
}

/** Default time an unfiltered list is reused (seconds). */
export const DEFAULT_LIST_CACHE_SECONDS = 1
/** Longest accepted. */
export const MAX_LIST_CACHE_SECONDS = 60

/** Reads `FLOE_SPEC_LIST_CACHE_SECONDS` (whole seconds, 0 to 60; default 1). */
export function listCacheSeconds(env: Readonly<Record<string, string | undefined>>): number {
  return cacheSecondsSetting(env, 'FLOE_SPEC_LIST_CACHE_SECONDS', DEFAULT_LIST_CACHE_SECONDS, MAX_LIST_CACHE_SECONDS)
}

const unfiltered = (f?: SpecFilter) =>
  !f || (f.status === undefined && f.dataProductId === undefined && f.dataStructures === undefined && f.sourceVersion === undefined)

class ListCachingSpecStore implements SpecStore {
  private readonly lists = new Map<string, { at: number; value: Promise<StoredSpec[]> }>()
  private readonly max: number
  private readonly now: () => number

  constructor(
    private readonly inner: SpecStore,
    private readonly ttlMs: number,
    opts: ListCacheOptions,
  ) {
    this.max = opts.maxOrganizations ?? 100
    this.now = opts.now ?? Date.now
  }

  async list(orgId: string, filter?: SpecFilter): Promise<StoredSpec[]> {
    if (!unfiltered(filter)) return this.inner.list(orgId, filter)
    const hit = this.lists.get(orgId)
    if (hit && this.now() - hit.at < this.ttlMs) {
      this.lists.delete(orgId)
      this.lists.set(orgId, hit)
      return [...(await hit.value)]
    }
    // Timed from before the read: the entry is never younger than what it holds.
    const entry = { at: this.now(), value: this.inner.list(orgId, filter) }
    this.lists.delete(orgId)
    this.lists.set(orgId, entry)
    while (this.lists.size > this.max) this.lists.delete(this.lists.keys().next().value!)
    entry.value.catch(() => {
      if (this.lists.get(orgId) === entry) this.lists.delete(orgId)
    })
    return [...(await entry.value)]
  }

  /** Runs a write and then forgets the organization's list, whatever the write's outcome. */
  private async writing<T>(orgIds: readonly string[], write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } finally {
      for (const org of orgIds) this.lists.delete(org)
    }
  }

  get(orgId: string, id: string) {
    return this.inner.get(orgId, id)
  }
  nameOwner(orgId: string, claim: NameClaim) {
    return this.inner.nameOwner(orgId, claim)
  }
  history(orgId: string, id: string) {
    return this.inner.history(orgId, id)
  }
  create(spec: StoredSpec, entry: HistoryEntry) {
    return this.writing([spec.orgId], () => this.inner.create(spec, entry))
  }
  update(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]) {
    return this.writing([previous.orgId, spec.orgId], () => this.inner.update(previous, spec, entry, discard))
  }
  updateAll(changes: readonly SpecUpdate[]) {
    return this.writing([...new Set(changes.flatMap((c) => [c.previous.orgId, c.spec.orgId]))], () => this.inner.updateAll(changes))
  }
  delete(orgId: string, id: string) {
    return this.writing([orgId], () => this.inner.delete(orgId, id))
  }
}

export function cachedLists(inner: SpecStore, opts: ListCacheOptions): SpecStore {
  return opts.ttlMs > 0 ? new ListCachingSpecStore(inner, opts.ttlMs, opts) : inner
}
