/**
 * A specification store that says when what enrich reads changed: the event
 * specification enrichment tags events with the published versions of the
 * specifications, so a write that publishes, deprecates or deletes one (or
 * edits a specification that is not a draft) is followed by `changed()`,
 * once the write succeeded and before the API answers. Writes of drafts
 * that were never published change nothing enrich reads and say nothing.
 */
import type { SpecStore, SpecUpdate } from './ports'
import type { HistoryEntry, StoredSpec } from './types'

/** Whether writing `entry` over `previous` (none: a create) can change the published set: not when a draft follows a draft. */
export function touchesPublished(previous: StoredSpec | undefined, entry: HistoryEntry): boolean {
  return entry.status !== 'draft' || (previous !== undefined && previous.latest.status !== 'draft')
}

class AnnouncingSpecStore implements SpecStore {
  constructor(
    private readonly inner: SpecStore,
    private readonly changed: () => Promise<void>,
  ) {}

  get(orgId: string, id: string) {
    return this.inner.get(orgId, id)
  }
  list(...args: Parameters<SpecStore['list']>) {
    return this.inner.list(...args)
  }
  nameOwner(...args: Parameters<SpecStore['nameOwner']>) {
    return this.inner.nameOwner(...args)
  }
  history(orgId: string, id: string) {
    return this.inner.history(orgId, id)
  }
  async create(spec: StoredSpec, entry: HistoryEntry) {
    const r = await this.inner.create(spec, entry)
    if (r === 'ok' && touchesPublished(undefined, entry)) await this.changed()
    return r
  }
  async update(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]) {
    const r = await this.inner.update(previous, spec, entry, discard)
    if (r === 'ok' && touchesPublished(previous, entry)) await this.changed()
    return r
  }
  async updateAll(changes: readonly SpecUpdate[]) {
    const r = await this.inner.updateAll(changes)
    const written = r.status === 'ok' ? changes : r.applied.map((i) => changes[i]!)
    if (written.some((c) => touchesPublished(c.previous, c.entry))) await this.changed()
    return r
  }
  async delete(orgId: string, id: string) {
    const r = await this.inner.delete(orgId, id)
    if (r) await this.changed()
    return r
  }
}

/** `inner`, calling `changed` after each successful write that can change the published specifications. */
export function announcingSpecChanges(inner: SpecStore, changed: () => Promise<void>): SpecStore {
  return new AnnouncingSpecStore(inner, changed)
}
