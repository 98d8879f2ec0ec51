/**
 * Storage ports of the tracking-design API. DynamoDB adapters live in
 * `lib/aws/tracking-design-store.ts`; unit tests use in-memory fakes.
 */
import type { SchemaKey } from '../iglu/keys'
import type { StoredSchema } from '../iglu/store'
import type { CatalogKind, HistoryEntry, JsonObject, NameClaim, Organization, OrgApiKey, StoredSpec } from './types'

export interface SpecStore {
  get(orgId: string, id: string): Promise<StoredSpec | undefined>
  /**
   * The specifications of the organization, narrowed by `filter` with a key or index
   * query (never a scan): at least every specification matching the filter, possibly
   * more (the caller applies the full predicate). Without a filter, all of them.
   */
  list(orgId: string, filter?: SpecFilter): Promise<StoredSpec[]>
  /** The id of the specification holding a name within a data structure (see `nameClaim`), if any. */
  nameOwner(orgId: string, claim: NameClaim): Promise<string | undefined>
  /** Every remaining history entry, ordered by version then date. */
  history(orgId: string, id: string): Promise<HistoryEntry[]>
  /**
   * Writes a new specification, its first history entry and its name claim atomically;
   * `exists` when the id is taken, `nameTaken` when another specification holds the name.
   */
  create(spec: StoredSpec, entry: HistoryEntry): Promise<'ok' | 'exists' | 'nameTaken'>
  /**
   * Atomically replaces `previous` by `spec` (only if the stored `rev` is still `previous.rev`),
   * moves the name claim, appends `entry` and removes the `discard`ed history entries (the
   * versions squashed by a publish).
   */
  update(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]): Promise<'ok' | 'conflict' | 'nameTaken'>
  /**
   * Several `update`s, in order. When all of them fit in one transaction they are written
   * together or not at all (`applied` is then empty on failure); otherwise each is its own
   * transaction, as `update`, and the first failure stops the rest: `applied` lists the
   * indexes written before it. Either way no single specification is ever half-written.
   */
  updateAll(changes: readonly SpecUpdate[]): Promise<UpdateAllResult>
  /** Removes the specification, its name claim and its whole history; false when it did not exist. */
  delete(orgId: string, id: string): Promise<boolean>
}

/**
 * What a list asks for. `dataStructures`: hashes of data structures (see
 * `dataStructureHash`), one of which `event.source` must belong to; `sourceVersion`
 * (with `dataStructures` only) the SchemaVer of `event.source`.
 */
export interface SpecFilter {
  readonly status?: string
  readonly dataProductId?: string
  readonly dataStructures?: readonly string[]
  readonly sourceVersion?: string
}

/** The arguments of one `SpecStore.update`. */
export interface SpecUpdate {
  readonly previous: StoredSpec
  readonly spec: StoredSpec
  readonly entry: HistoryEntry
  readonly discard: readonly HistoryEntry[]
}

export type UpdateAllResult =
  | { readonly status: 'ok' }
  /** `index`: the change that failed; `applied`: the changes written before it. */
  | { readonly status: 'conflict' | 'nameTaken'; readonly index: number; readonly applied: readonly number[] }

export interface AccountStore {
  getOrg(id: string): Promise<Organization | undefined>
  putOrg(org: Organization): Promise<void>
  getKeyById(keyId: string): Promise<OrgApiKey | undefined>
  getKeyByHash(hash: string): Promise<OrgApiKey | undefined>
  /** Stores both lookups of a key atomically. */
  putKey(key: OrgApiKey): Promise<void>
  /** False when no such key. */
  deleteKey(keyId: string): Promise<boolean>
  /** The JWT signing secret; `candidate` is stored (and returned) when none exists yet. */
  signingSecret(candidate: string): Promise<string>
}

export interface CatalogStore {
  get(orgId: string, kind: CatalogKind, id: string): Promise<JsonObject | undefined>
  list(orgId: string, kind: CatalogKind): Promise<JsonObject[]>
  put(orgId: string, kind: CatalogKind, id: string, doc: JsonObject, opts: { create: boolean }): Promise<'ok' | 'exists'>
  delete(orgId: string, kind: CatalogKind, id: string): Promise<boolean>
}

/** What the API reads from this deployment's schema registry (the registry's `SchemaStore` fits). */
export interface RegistryReader {
  get(key: SchemaKey): Promise<StoredSchema | undefined>
  /** Several `get`s in as few reads as the store allows (missing keys are absent from the answer); keyed by Iglu URI. */
  getMany?(keys: readonly SchemaKey[]): Promise<Map<string, StoredSchema>>
  listGroup(vendor: string, name: string): Promise<StoredSchema[]>
  listAll(): Promise<StoredSchema[]>
}

/**
 * Thrown by a store that refuses a write for its input (an item or key over
 * the store's size limits): the API answers 422 at `field`, and nothing was written.
 */
export class StoreInputError extends Error {
  override readonly name = 'StoreInputError'
  constructor(readonly field: string, message: string) {
    super(message)
  }
}
