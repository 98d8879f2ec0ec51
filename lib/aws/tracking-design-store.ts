/**
 * DynamoDB adapters of the tracking-design ports.
 *
 * `eventSpecs`: pk = `org#{orgId}`, sk = `spec#{specId}`; `doc` and `latest` are JSON text
 *   (key order survives), `rev` is the optimistic-concurrency counter. Index keys, set only
 *   when the document has the field: gsi1 (`org#{orgId}#status#{status}`, `spec#{id}`),
 *   gsi2 (`org#{orgId}#dataProduct#{dataProductId}`, `spec#{id}`), gsi3
 *   (`org#{orgId}#ds#{data structure hash}`, `{SchemaVer}#{id}`), all projecting the whole item.
 *   Name claims carry none of them, so they never show in the indexes. sk =
 *   `name#{vendor/name/format}#{name}` claims a name within a data structure for `specId`, written
 *   in the same transaction as the specification (names are unique without a race).
 * `specHistory`: pk = `{orgId}#{specId}`, sk = `v#{zero-padded version}#{ISO date}`; `entry` is
 *   the history entry with its snapshot, as JSON text.
 * `apiKeys`: pk = `org-key-id#{keyId}` and pk = `org-key#{sha256 of secret}` (both written in one
 *   transaction); gsi1pk = `org-keys#{orgId}` lists an organization's keys.
 * `settings`: pk = `org#{orgId}` with sk = `org` (the organization), `dataProduct#{id}` and
 *   `sourceApp#{id}`; pk = `tracking-design`, sk = `jwtSecret` holds the token signing secret (through the secret seal).
 */
import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb'
import { StoreInputError, type AccountStore, type CatalogStore, type SpecFilter, type SpecStore, type SpecUpdate, type UpdateAllResult } from '../core/tracking-design/ports'
import type { CatalogKind, HistoryEntry, HistoryRecord, JsonObject, Organization, OrgApiKey, StoredSpec } from '../core/tracking-design/types'
import { nameClaim, sourceKey, type NameClaim } from '../core/tracking-design/validate'
import { dataStructureHash } from '../core/tracking-design/datastructures'
import { formatSchemaVer } from '../core/iglu/keys'
import { itemReader, queryAll } from './dynamo'
import { SECRET_PURPOSES, UnopenableSecretError, type SecretSeal } from '../core/secrets-at-rest'
import { runtimeSeal } from '../runtime/secrets-at-rest'
import { sealInPlace, type SealOutcome } from './sealed-items'

type Item = Record<string, AttributeValue>

/** Most items one TransactWriteItems call takes. */
const TRANSACTION_LIMIT = 100

const isConditionFailure = (err: unknown) => (err as Error)?.name === 'ConditionalCheckFailedException'
/** A transaction cancelled because a condition failed (not a throttle or conflict). */
const isTransactionConditionFailure = (err: unknown) =>
  (err as Error)?.name === 'TransactionCanceledException' &&
  ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed')

/**
 * Runs a transaction, retrying (with a short backoff) when DynamoDB cancels it for a
 * conflict with another transaction in flight on the same items; condition failures are thrown.
 */
async function transact(ddb: DynamoDBClient, items: TransactWriteItem[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ddb.send(new TransactWriteItemsCommand({ TransactItems: items }))
      return
    } catch (err) {
      const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []
      const conflictOnly = (err as Error)?.name === 'TransactionCanceledException' && reasons.some((r) => r.Code === 'TransactionConflict') && !reasons.some((r) => r.Code === 'ConditionalCheckFailed')
      // DynamoDB refuses the input itself (an item over 400 KB, a key over its size): nothing was written.
      if ((err as Error)?.name === 'ValidationException') throw new StoreInputError('spec', `The event specification cannot be stored: ${(err as Error).message}`)
      if (!conflictOnly || attempt >= 4) throw err
      await new Promise((r) => setTimeout(r, 10 * 2 ** attempt + Math.random() * 10))
    }
  }
}

/** Deletes keys in batches of 25, retrying unprocessed items. */
async function batchDelete(ddb: DynamoDBClient, table: string, keys: Item[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 25) {
    let requests = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }))
    for (let attempt = 0; requests.length > 0; attempt++) {
      const res = await ddb.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }))
      requests = (res.UnprocessedItems?.[table] ?? []) as typeof requests
      if (requests.length > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)))
    }
  }
}

const specPk = (orgId: string) => `org#${orgId}`
const specSk = (id: string) => `spec#${id}`
const claimKey = (orgId: string, c: NameClaim): Item => ({ pk: { S: specPk(orgId) }, sk: { S: `name#${c.group}#${c.name}` } })
const sameClaim = (a?: NameClaim, b?: NameClaim) => a?.group === b?.group && a?.name === b?.name
/** Which items of a cancelled transaction failed their condition. */
const failedAt = (err: unknown): number[] =>
  ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : []))
const historyPk = (orgId: string, id: string) => `${orgId}#${id}`
const historySk = (h: { version: number; date: string }) => `v#${String(h.version).padStart(10, '0')}#${h.date}`

/** The index keys of a specification (see the module comment); absent fields leave it out of that index. */
export function specIndexKeys(s: Pick<StoredSpec, 'orgId' | 'id' | 'doc'>): Item {
  const out: Item = {}
  const org = specPk(s.orgId)
  if (typeof s.doc.status === 'string' && s.doc.status !== '') {
    out.gsi1pk = { S: `${org}#status#${s.doc.status}` }
    out.gsi1sk = { S: specSk(s.id) }
  }
  if (typeof s.doc.dataProductId === 'string' && s.doc.dataProductId !== '') {
    out.gsi2pk = { S: `${org}#dataProduct#${s.doc.dataProductId}` }
    out.gsi2sk = { S: specSk(s.id) }
  }
  const k = sourceKey(s.doc)
  if (k) {
    out.gsi3pk = { S: `${org}#ds#${dataStructureHash(s.orgId, k.vendor, k.name, k.format)}` }
    out.gsi3sk = { S: `${formatSchemaVer(k.version)}#${s.id}` }
  }
  return out
}

/** The settings-table record saying every specification carries its index keys. */
const INDEXED_MARKER: Item = { pk: { S: 'tracking-design' }, sk: { S: 'specIndexes' } }
const INDEX_VERSION = '1'

/**
 * Gives the index keys to specifications written before the indexes existed (a
 * one-time pass, recorded in the settings table so later starts only read the
 * record). Each record is updated only if its `rev` is unchanged: a concurrent
 * write sets the keys itself. Returns how many records were updated.
 */
export async function backfillSpecIndexKeys(ddb: DynamoDBClient, specsTable: string, settingsTable: string): Promise<number> {
  const marker = await ddb.send(new GetItemCommand({ TableName: settingsTable, Key: INDEXED_MARKER, ConsistentRead: true }))
  if (marker.Item?.version?.S === INDEX_VERSION) return 0
  let updated = 0
  let start: Item | undefined
  do {
    const page = await ddb.send(new ScanCommand({
      TableName: specsTable,
      ExclusiveStartKey: start,
      FilterExpression: 'begins_with(sk, :spec) AND attribute_not_exists(gsi1pk)',
      ExpressionAttributeValues: { ':spec': { S: 'spec#' } },
      ConsistentRead: true,
    }))
    for (const item of page.Items ?? []) {
      const orgId = item.pk!.S!.replace(/^org#/, '')
      const keys = specIndexKeys(fromSpecItem(orgId, item))
      const names = Object.keys(keys)
      if (names.length === 0) continue
      try {
        await ddb.send(new UpdateItemCommand({
          TableName: specsTable,
          Key: { pk: item.pk!, sk: item.sk! },
          UpdateExpression: `SET ${names.map((n) => `${n} = :${n}`).join(', ')}`,
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': item.rev!, ...Object.fromEntries(names.map((n) => [`:${n}`, keys[n]!])) },
        }))
        updated++
      } catch (err) {
        if (!isConditionFailure(err)) throw err
      }
    }
    start = page.LastEvaluatedKey
  } while (start)
  await ddb.send(new PutItemCommand({ TableName: settingsTable, Item: { ...INDEXED_MARKER, version: { S: INDEX_VERSION }, updatedAt: { S: new Date().toISOString() }, records: { N: String(updated) } } }))
  return updated
}

function specItem(s: StoredSpec): Item {
  return {
    pk: { S: specPk(s.orgId) },
    sk: { S: specSk(s.id) },
    id: { S: s.id },
    rev: { N: String(s.rev) },
    status: { S: s.latest.status },
    doc: { S: JSON.stringify(s.doc) },
    latest: { S: JSON.stringify(s.latest) },
    ...specIndexKeys(s),
  }
}

function fromSpecItem(orgId: string, item: Item): StoredSpec {
  return { orgId, id: item.id!.S!, rev: Number(item.rev!.N), doc: JSON.parse(item.doc!.S!) as JsonObject, latest: JSON.parse(item.latest!.S!) as HistoryRecord }
}

export class DynamoSpecStore implements SpecStore {
  constructor(private readonly ddb: DynamoDBClient, private readonly specsTable: string, private readonly historyTable: string) {}

  async get(orgId: string, id: string) {
    const item = await itemReader(this.ddb).get(this.specsTable, { pk: { S: specPk(orgId) }, sk: { S: specSk(id) } })
    return item ? fromSpecItem(orgId, item) : undefined
  }

  /**
   * Without a filter, one consistent query of the organization's partition. With one, a
   * query of the most selective index the filter names: data structure (and version), then
   * data product, then status. Index reads are eventually consistent (a write shows up in
   * them within about a second on AWS).
   */
  async list(orgId: string, filter: SpecFilter = {}) {
    const org = specPk(orgId)
    let queries: ConstructorParameters<typeof QueryCommand>[0][]
    if (filter.dataStructures !== undefined) {
      queries = [...new Set(filter.dataStructures)].map((hash) => ({
        TableName: this.specsTable,
        IndexName: 'gsi3',
        KeyConditionExpression: filter.sourceVersion !== undefined ? 'gsi3pk = :pk AND begins_with(gsi3sk, :v)' : 'gsi3pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `${org}#ds#${hash}` }, ...(filter.sourceVersion !== undefined ? { ':v': { S: `${filter.sourceVersion}#` } } : {}) },
      }))
    } else if (filter.dataProductId !== undefined) {
      queries = [{ TableName: this.specsTable, IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': { S: `${org}#dataProduct#${filter.dataProductId}` } } }]
    } else if (filter.status !== undefined) {
      queries = [{ TableName: this.specsTable, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': { S: `${org}#status#${filter.status}` } } }]
    } else {
      queries = [{ TableName: this.specsTable, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': { S: org }, ':p': { S: 'spec#' } }, ConsistentRead: true }]
    }
    const pages = await Promise.all(queries.map((q) => queryAll(this.ddb, q)))
    const seen = new Set<string>()
    const out: StoredSpec[] = []
    for (const item of pages.flat()) {
      const s = fromSpecItem(orgId, item)
      if (!seen.has(s.id)) out.push(s), seen.add(s.id)
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  async nameOwner(orgId: string, claim: NameClaim) {
    const item = await itemReader(this.ddb).get(this.specsTable, claimKey(orgId, claim))
    return item?.specId?.S
  }

  async history(orgId: string, id: string) {
    const items = await queryAll(this.ddb, {
      TableName: this.historyTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: historyPk(orgId, id) } },
      ConsistentRead: true,
    })
    return items.map((i) => JSON.parse(i.entry!.S!) as HistoryEntry)
  }

  private historyPut(orgId: string, entry: HistoryEntry): TransactWriteItem {
    return {
      Put: {
        TableName: this.historyTable,
        Item: { pk: { S: historyPk(orgId, entry.eventSpecId) }, sk: { S: historySk(entry) }, version: { N: String(entry.version) }, entry: { S: JSON.stringify(entry) } },
      },
    }
  }

  /** Claims a name for the specification: free, or already its own. */
  private claimPut(orgId: string, claim: NameClaim, specId: string): TransactWriteItem {
    return {
      Put: {
        TableName: this.specsTable,
        Item: { ...claimKey(orgId, claim), specId: { S: specId } },
        ConditionExpression: 'attribute_not_exists(pk) OR specId = :id',
        ExpressionAttributeValues: { ':id': { S: specId } },
      },
    }
  }

  private claimDelete(orgId: string, claim: NameClaim, specId: string): TransactWriteItem {
    return {
      Delete: {
        TableName: this.specsTable,
        Key: claimKey(orgId, claim),
        ConditionExpression: 'attribute_not_exists(pk) OR specId = :id',
        ExpressionAttributeValues: { ':id': { S: specId } },
      },
    }
  }

  async create(spec: StoredSpec, entry: HistoryEntry) {
    const claim = nameClaim(spec.doc)
    try {
      await transact(this.ddb, [
        { Put: { TableName: this.specsTable, Item: specItem(spec), ConditionExpression: 'attribute_not_exists(pk)' } },
        this.historyPut(spec.orgId, entry),
        ...(claim ? [this.claimPut(spec.orgId, claim, spec.id)] : []),
      ])
      return 'ok' as const
    } catch (err) {
      if (!isTransactionConditionFailure(err)) throw err
      return failedAt(err).includes(0) ? ('exists' as const) : ('nameTaken' as const)
    }
  }

  /**
   * The transaction items of an update: the record (only if its `rev` is still the one read),
   * its history entry, the name-claim moves, then the deletes of squashed history entries.
   * `deletes` are the keys of every discarded entry.
   */
  private updateItems(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]) {
    const before = nameClaim(previous.doc)
    const after = nameClaim(spec.doc)
    const claims: TransactWriteItem[] = []
    if (!sameClaim(before, after)) {
      if (after) claims.push(this.claimPut(spec.orgId, after, spec.id))
      if (before) claims.push(this.claimDelete(spec.orgId, before, spec.id))
    }
    const head: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.specsTable,
          Item: specItem(spec),
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': { N: String(previous.rev) } },
        },
      },
      this.historyPut(spec.orgId, entry),
      ...claims,
    ]
    const deletes = discard.map((h) => ({ pk: { S: historyPk(spec.orgId, h.eventSpecId) }, sk: { S: historySk(h) } }))
    return { head, deletes }
  }

  async update(previous: StoredSpec, spec: StoredSpec, entry: HistoryEntry, discard: readonly HistoryEntry[]) {
    const { head, deletes } = this.updateItems(previous, spec, entry, discard)
    const inline = deletes.slice(0, TRANSACTION_LIMIT - head.length)
    try {
      await transact(this.ddb, [...head, ...inline.map((Key) => ({ Delete: { TableName: this.historyTable, Key } }))])
    } catch (err) {
      if (!isTransactionConditionFailure(err)) throw err
      return failedAt(err).includes(0) ? ('conflict' as const) : ('nameTaken' as const)
    }
    // A squash of more versions than one transaction holds finishes with plain deletes.
    await batchDelete(this.ddb, this.historyTable, deletes.slice(inline.length))
    return 'ok' as const
  }

  /**
   * One transaction for every change when they fit (at most 100 items, squashed versions
   * included): all written or none. Otherwise one `update` per change, in order, stopping at
   * the first failure; each of those is atomic on its own, the sequence is not.
   */
  async updateAll(changes: readonly SpecUpdate[]): Promise<UpdateAllResult> {
    if (changes.length === 0) return { status: 'ok' }
    const built = changes.map((c) => this.updateItems(c.previous, c.spec, c.entry, c.discard))
    const size = built.reduce((n, b) => n + b.head.length + b.deletes.length, 0)
    if (size <= TRANSACTION_LIMIT) {
      const items: TransactWriteItem[] = []
      // For each transaction item: the change it belongs to, and whether it is the record's Put.
      const owners: { index: number; record: boolean }[] = []
      built.forEach((b, index) => {
        b.head.forEach((item, k) => {
          items.push(item)
          owners.push({ index, record: k === 0 })
        })
        for (const Key of b.deletes) {
          items.push({ Delete: { TableName: this.historyTable, Key } })
          owners.push({ index, record: false })
        }
      })
      try {
        await transact(this.ddb, items)
        return { status: 'ok' }
      } catch (err) {
        if (!isTransactionConditionFailure(err)) throw err
        const failed = failedAt(err).map((i) => owners[i]!)
        const first = failed.find((o) => o.record) ?? failed[0] ?? { index: 0, record: true }
        return { status: first.record ? 'conflict' : 'nameTaken', index: first.index, applied: [] }
      }
    }
    const applied: number[] = []
    for (const [index, c] of changes.entries()) {
      const stored = await this.update(c.previous, c.spec, c.entry, c.discard)
      if (stored !== 'ok') return { status: stored, index, applied }
      applied.push(index)
    }
    return { status: 'ok' }
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    const current = await this.get(orgId, id)
    if (!current) return false
    const claim = nameClaim(current.doc)
    try {
      await transact(this.ddb, [
          {
            Delete: {
              TableName: this.specsTable,
              Key: { pk: { S: specPk(orgId) }, sk: { S: specSk(id) } },
              ConditionExpression: 'rev = :rev',
              ExpressionAttributeValues: { ':rev': { N: String(current.rev) } },
            },
          },
          ...(claim ? [this.claimDelete(orgId, claim, id)] : []),
      ])
    } catch (err) {
      // Deleted or changed meanwhile: the caller sees it as gone only if it is.
      if (isTransactionConditionFailure(err)) return this.delete(orgId, id)
      throw err
    }
    const items = await queryAll(this.ddb, {
      TableName: this.historyTable,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: historyPk(orgId, id) } },
      ProjectionExpression: 'pk, sk',
    })
    await batchDelete(this.ddb, this.historyTable, items.map((i) => ({ pk: i.pk!, sk: i.sk! })))
    return true
  }
}

function keyFromItem(item: Item | undefined): OrgApiKey | undefined {
  if (!item?.keyId?.S || !item.orgId?.S || !item.hash?.S) return undefined
  return { keyId: item.keyId.S, orgId: item.orgId.S, hash: item.hash.S, createdAt: item.createdAt?.S ?? '' }
}

export class DynamoAccountStore implements AccountStore {
  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly keysTable: string,
    private readonly settingsTable: string,
    private readonly seal: SecretSeal = runtimeSeal(),
  ) {}

  async getOrg(id: string): Promise<Organization | undefined> {
    const item = await itemReader(this.ddb).get(this.settingsTable, { pk: { S: `org#${id.toLowerCase()}` }, sk: { S: 'org' } })
    return item ? { id: item.id!.S!, name: item.name?.S ?? '', createdAt: item.createdAt?.S ?? '' } : undefined
  }

  /** Every organization, oldest first (the `orgs` list of the settings table's gsi1). */
  async listOrgs(): Promise<Organization[]> {
    const items = await queryAll(this.ddb, { TableName: this.settingsTable, IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'orgs' } } })
    return items.flatMap((i) => (i.id?.S ? [{ id: i.id.S, name: i.name?.S ?? '', createdAt: i.createdAt?.S ?? '' }] : []))
  }

  async putOrg(org: Organization) {
    await this.ddb.send(new PutItemCommand({
      TableName: this.settingsTable,
      Item: { pk: { S: `org#${org.id}` }, sk: { S: 'org' }, gsi1pk: { S: 'orgs' }, gsi1sk: { S: `${org.createdAt}#${org.id}` }, id: { S: org.id }, name: { S: org.name }, createdAt: { S: org.createdAt } },
    }))
  }

  async getKeyById(keyId: string) {
    return keyFromItem(await itemReader(this.ddb).get(this.keysTable, { pk: { S: `org-key-id#${keyId.toLowerCase()}` } }))
  }

  async getKeyByHash(hash: string) {
    return keyFromItem(await itemReader(this.ddb).get(this.keysTable, { pk: { S: `org-key#${hash}` } }))
  }

  async putKey(key: OrgApiKey) {
    const attrs: Item = { kind: { S: 'organization' }, keyId: { S: key.keyId }, orgId: { S: key.orgId }, hash: { S: key.hash }, createdAt: { S: key.createdAt } }
    await this.ddb.send(new TransactWriteItemsCommand({
      TransactItems: [
        {
          Put: {
            TableName: this.keysTable,
            Item: { pk: { S: `org-key-id#${key.keyId}` }, gsi1pk: { S: `org-keys#${key.orgId}` }, gsi1sk: { S: `${key.createdAt}#${key.keyId}` }, ...attrs },
          },
        },
        { Put: { TableName: this.keysTable, Item: { pk: { S: `org-key#${key.hash}` }, ...attrs } } },
      ],
    }))
  }

  async deleteKey(keyId: string) {
    const key = await this.getKeyById(keyId)
    if (!key) return false
    await this.ddb.send(new TransactWriteItemsCommand({
      TransactItems: [
        { Delete: { TableName: this.keysTable, Key: { pk: { S: `org-key-id#${key.keyId}` } } } },
        { Delete: { TableName: this.keysTable, Key: { pk: { S: `org-key#${key.hash}` } } } },
      ],
    }))
    return true
  }

  /**
   * The token signing secret, stored sealed (`candidate` when none is stored yet). One that cannot be
   * opened (the key file was replaced) is replaced by `candidate`: the tokens signed with it stop working.
   */
  async signingSecret(candidate: string): Promise<string> {
    const purpose = SECRET_PURPOSES.signingSecret
    for (let attempt = 0; ; attempt++) {
      const res = await this.ddb.send(new GetItemCommand({ TableName: this.settingsTable, Key: SIGNING_SECRET, ConsistentRead: true }))
      const stored = res.Item?.secret?.S
      if (stored) {
        try {
          return this.seal.open(stored, purpose)
        } catch (err) {
          if (!(err instanceof UnopenableSecretError) || attempt >= 2) throw err
        }
      }
      try {
        await this.ddb.send(new PutItemCommand({
          TableName: this.settingsTable,
          Item: { ...SIGNING_SECRET, secret: { S: this.seal.seal(candidate, purpose) }, createdAt: { S: new Date().toISOString() } },
          ...(stored ? { ConditionExpression: 'secret = :old', ExpressionAttributeValues: { ':old': { S: stored } } } : { ConditionExpression: 'attribute_not_exists(pk)' }),
        }))
        return candidate
      } catch (err) {
        if (!isConditionFailure(err) || attempt >= 4) throw err
        // another instance stored one first: use it
      }
    }
  }

  /** Seals a signing secret written in clear (by an older version). */
  sealStoredSigningSecret(): Promise<SealOutcome> {
    return sealInPlace(this.ddb, this.settingsTable, SIGNING_SECRET, 'secret', SECRET_PURPOSES.signingSecret, this.seal)
  }
}

const SIGNING_SECRET = { pk: { S: 'tracking-design' }, sk: { S: 'jwtSecret' } }

export class DynamoCatalogStore implements CatalogStore {
  constructor(private readonly ddb: DynamoDBClient, private readonly table: string) {}

  private key(orgId: string, kind: CatalogKind, id: string): Item {
    return { pk: { S: `org#${orgId}` }, sk: { S: `${kind}#${id.toLowerCase()}` } }
  }

  async get(orgId: string, kind: CatalogKind, id: string) {
    const item = await itemReader(this.ddb).get(this.table, this.key(orgId, kind, id))
    return item?.doc?.S ? (JSON.parse(item.doc.S) as JsonObject) : undefined
  }

  async list(orgId: string, kind: CatalogKind) {
    const items = await queryAll(this.ddb, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': { S: `org#${orgId}` }, ':p': { S: `${kind}#` } },
      ConsistentRead: true,
    })
    return items.map((i) => JSON.parse(i.doc!.S!) as JsonObject)
  }

  async put(orgId: string, kind: CatalogKind, id: string, doc: JsonObject, opts: { create: boolean }) {
    try {
      await this.ddb.send(new PutItemCommand({
        TableName: this.table,
        Item: { ...this.key(orgId, kind, id), kind: { S: kind }, doc: { S: JSON.stringify(doc) }, updatedAt: { S: new Date().toISOString() } },
        ...(opts.create ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      }))
      return 'ok' as const
    } catch (err) {
      if (opts.create && isConditionFailure(err)) return 'exists' as const
      throw err
    }
  }

  async delete(orgId: string, kind: CatalogKind, id: string) {
    try {
      await this.ddb.send(new DeleteItemCommand({ TableName: this.table, Key: this.key(orgId, kind, id), ConditionExpression: 'attribute_exists(pk)' }))
      return true
    } catch (err) {
      if (isConditionFailure(err)) return false
      throw err
    }
  }
}
