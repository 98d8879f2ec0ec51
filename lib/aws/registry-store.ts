/**
 * DynamoDB and S3 adapters of the registry ports.
 *
 * `schemas` table: pk = `{vendor}/{name}/{format}`, sk = zero-padded SchemaVer
 * (sorts numerically); gsi1pk = `vendor#{vendor}`, gsi1sk = `{name}/{format}/{sk}`.
 * The body is kept as JSON text so key order survives.
 *
 * `apiKeys` table: pk = `iglu#{sha256 of the key}`; gsi1 lists registry keys by vendor.
 * `settings` table: pk = `registry`, sk = `superApiKey` holds the super key hash (through the secret seal).
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb'
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { compareSchemaVer, formatSchemaVer, parseSchemaVer, toIgluUri, type SchemaKey, type SchemaVer } from '../core/iglu/keys'
import type { KeyAction, Permission, SchemaAction } from '../core/iglu/permissions'
import type { JsonObject } from '../core/iglu/selfdesc'
import { SECRET_PURPOSES, UnopenableSecretError, type SecretSeal } from '../core/secrets-at-rest'
import { runtimeSeal } from '../runtime/secrets-at-rest'
import { sealInPlace, type SealOutcome } from './sealed-items'
import { sortSchemas, type KeyStore, type SchemaStore, type StaticPublisher, type StoredKey, type StoredSchema, type SuperKeyStore } from '../core/iglu/store'
import { queryAll } from './dynamo'

type Item = Record<string, AttributeValue>

const pad = (n: number) => String(n).padStart(6, '0')
export const versionSortKey = (v: SchemaVer) => `${pad(v.model)}-${pad(v.revision)}-${pad(v.addition)}`
const groupPk = (k: { vendor: string; name: string; format: string }) => `${k.vendor}/${k.name}/${k.format}`

function ver(s: string): SchemaVer {
  const p = parseSchemaVer(s)
  if (!p.ok) throw new Error(`Stored schema has an invalid version '${s}'`)
  return p.value
}

function toItem(s: StoredSchema): Item {
  const item: Item = {
    pk: { S: groupPk(s.key) },
    sk: { S: versionSortKey(s.key.version) },
    gsi1pk: { S: `vendor#${s.key.vendor}` },
    gsi1sk: { S: `${s.key.name}/${s.key.format}/${versionSortKey(s.key.version)}` },
    vendor: { S: s.key.vendor },
    name: { S: s.key.name },
    format: { S: s.key.format },
    version: { S: formatSchemaVer(s.key.version) },
    isPublic: { BOOL: s.isPublic },
    body: { S: JSON.stringify(s.body) },
    createdAt: { S: s.createdAt },
    updatedAt: { S: s.updatedAt },
    supersedes: { L: s.supersedes.map((v) => ({ S: formatSchemaVer(v) })) },
  }
  if (s.supersededBy) item.supersededBy = { S: formatSchemaVer(s.supersededBy) }
  return item
}

function fromItem(item: Item): StoredSchema {
  const key: SchemaKey = { vendor: item.vendor!.S!, name: item.name!.S!, format: item.format!.S!, version: ver(item.version!.S!) }
  return {
    key,
    body: JSON.parse(item.body!.S!) as JsonObject,
    isPublic: item.isPublic?.BOOL === true,
    createdAt: item.createdAt!.S!,
    updatedAt: item.updatedAt!.S!,
    supersedes: (item.supersedes?.L ?? []).map((x) => ver(x.S!)),
    ...(item.supersededBy?.S ? { supersededBy: ver(item.supersededBy.S) } : {}),
  }
}

export class DynamoSchemaStore implements SchemaStore {
  readonly kind = 'dynamodb'
  constructor(private readonly ddb: DynamoDBClient, private readonly table: string) {}

  async get(key: SchemaKey) {
    const res = await this.ddb.send(new GetItemCommand({
      TableName: this.table,
      Key: { pk: { S: groupPk(key) }, sk: { S: versionSortKey(key.version) } },
      ConsistentRead: true,
    }))
    return res.Item ? fromItem(res.Item) : undefined
  }

  /** Consistent `BatchGetItem` reads of up to 100 keys each, unprocessed keys retried; keyed by Iglu URI. */
  async getMany(keys: readonly SchemaKey[]): Promise<Map<string, StoredSchema>> {
    const out = new Map<string, StoredSchema>()
    const unique = [...new Map(keys.map((k) => [toIgluUri(k), k])).values()]
    for (let i = 0; i < unique.length; i += 100) {
      let wanted: Item[] = unique.slice(i, i + 100).map((k) => ({ pk: { S: groupPk(k) }, sk: { S: versionSortKey(k.version) } }))
      for (let attempt = 0; wanted.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)))
        const res = await this.ddb.send(new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: wanted, ConsistentRead: true } } }))
        for (const item of res.Responses?.[this.table] ?? []) {
          const s = fromItem(item)
          out.set(toIgluUri(s.key), s)
        }
        wanted = (res.UnprocessedKeys?.[this.table]?.Keys ?? []) as Item[]
      }
    }
    return out
  }

  async listAll() {
    const out: StoredSchema[] = []
    let start: Item | undefined
    do {
      const res = await this.ddb.send(new ScanCommand({ TableName: this.table, ExclusiveStartKey: start, ConsistentRead: true }))
      for (const item of res.Items ?? []) out.push(fromItem(item))
      start = res.LastEvaluatedKey
    } while (start)
    return sortSchemas(out)
  }

  async listVendor(vendor: string) {
    const items = await queryAll(this.ddb, {
      TableName: this.table,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :v',
      ExpressionAttributeValues: { ':v': { S: `vendor#${vendor}` } },
    })
    return sortSchemas(items.map(fromItem))
  }

  /**
   * All formats of vendor/name. The index is eventually consistent, so the
   * `jsonschema` rows (what publication rules mostly depend on) are read from
   * the table with a consistent query and win over the index.
   */
  async listGroup(vendor: string, name: string) {
    const [indexed, direct] = await Promise.all([
      queryAll(this.ddb, {
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :v AND begins_with(gsi1sk, :n)',
        ExpressionAttributeValues: { ':v': { S: `vendor#${vendor}` }, ':n': { S: `${name}/` } },
      }),
      queryAll(this.ddb, {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `${vendor}/${name}/jsonschema` } },
        ConsistentRead: true,
      }),
    ])
    const byUri = new Map<string, StoredSchema>()
    for (const item of indexed) {
      const s = fromItem(item)
      if (s.key.format !== 'jsonschema') byUri.set(toIgluUri(s.key), s)
    }
    for (const item of direct) {
      const s = fromItem(item)
      byUri.set(toIgluUri(s.key), s)
    }
    return sortSchemas([...byUri.values()])
  }

  async put(schema: StoredSchema, opts: { create: boolean }) {
    try {
      await this.ddb.send(new PutItemCommand({
        TableName: this.table,
        Item: toItem(schema),
        ...(opts.create ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      }))
      return 'ok' as const
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException || (err as Error)?.name === 'ConditionalCheckFailedException') return 'exists' as const
      throw err
    }
  }

  async setSupersededBy(key: SchemaKey, by: SchemaVer) {
    const row = await this.get(key)
    if (!row || (row.supersededBy && compareSchemaVer(row.supersededBy, by) >= 0)) return
    await this.ddb.send(new UpdateItemCommand({
      TableName: this.table,
      Key: { pk: { S: groupPk(key) }, sk: { S: versionSortKey(key.version) } },
      UpdateExpression: 'SET supersededBy = :by',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':by': { S: formatSchemaVer(by) } },
    })).catch((err) => {
      if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err
    })
  }

  async delete(key: SchemaKey) {
    await this.ddb.send(new DeleteItemCommand({
      TableName: this.table,
      Key: { pk: { S: groupPk(key) }, sk: { S: versionSortKey(key.version) } },
    }))
  }

  async ping() {
    await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: '#ping' }, sk: { S: '#ping' } } }))
  }
}

const SUPER_KEY = { pk: { S: 'registry' }, sk: { S: 'superApiKey' } }

export class DynamoKeyStore implements KeyStore, SuperKeyStore {
  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly keysTable: string,
    private readonly settingsTable: string,
    private readonly seal: SecretSeal = runtimeSeal(),
  ) {}

  async get(hash: string): Promise<StoredKey | undefined> {
    const res = await this.ddb.send(new GetItemCommand({ TableName: this.keysTable, Key: { pk: { S: `iglu#${hash}` } }, ConsistentRead: true }))
    const item = res.Item
    if (!item || !item.hash?.S) return undefined
    const permission: Permission = {
      vendor: item.vendor?.S ?? '',
      wildcard: item.wildcard?.BOOL === true,
      schemaAction: (item.schemaAction?.S ?? null) as SchemaAction | null,
      keyActions: (item.keyActions?.L ?? []).map((x) => x.S as KeyAction),
    }
    return { hash: item.hash.S, permission, createdAt: item.createdAt?.S ?? '' }
  }

  async put(key: StoredKey) {
    const p = key.permission
    const item: Item = {
      pk: { S: `iglu#${key.hash}` },
      gsi1pk: { S: 'iglu-keys' },
      gsi1sk: { S: `${p.wildcard ? '*' : p.vendor}#${key.createdAt}` },
      kind: { S: 'registry' },
      hash: { S: key.hash },
      vendor: { S: p.vendor },
      wildcard: { BOOL: p.wildcard },
      keyActions: { L: p.keyActions.map((a) => ({ S: a })) },
      createdAt: { S: key.createdAt },
    }
    if (p.schemaAction) item.schemaAction = { S: p.schemaAction }
    await this.ddb.send(new PutItemCommand({ TableName: this.keysTable, Item: item }))
  }

  async delete(hash: string) {
    await this.ddb.send(new DeleteItemCommand({ TableName: this.keysTable, Key: { pk: { S: `iglu#${hash}` } } }))
  }

  /** The stored super key's hash; none when it cannot be opened (the key file was replaced: `floe registry superkey --reset` sets a new one). */
  async getSuperKeyHash() {
    const res = await this.ddb.send(new GetItemCommand({ TableName: this.settingsTable, Key: SUPER_KEY, ConsistentRead: true }))
    const stored = res.Item?.hash?.S
    if (stored === undefined) return undefined
    try {
      return this.seal.open(stored, SECRET_PURPOSES.superKeyHash)
    } catch (err) {
      if (err instanceof UnopenableSecretError) return undefined
      throw err
    }
  }

  /** Seals a super key hash written in clear (by an older version). */
  sealStoredSuperKey(): Promise<SealOutcome> {
    return sealInPlace(this.ddb, this.settingsTable, SUPER_KEY, 'hash', SECRET_PURPOSES.superKeyHash, this.seal)
  }

  async putSuperKeyHash(hash: string, opts: { onlyIfAbsent: boolean }) {
    try {
      await this.ddb.send(new PutItemCommand({
        TableName: this.settingsTable,
        Item: { ...SUPER_KEY, hash: { S: this.seal.seal(hash, SECRET_PURPOSES.superKeyHash) }, updatedAt: { S: new Date().toISOString() } },
        ...(opts.onlyIfAbsent ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      }))
      return true
    } catch (err) {
      if ((err as Error)?.name === 'ConditionalCheckFailedException') return false
      throw err
    }
  }
}

/** Writes the static export to a bucket, optionally under a key prefix. */
export class S3Publisher implements StaticPublisher {
  constructor(private readonly s3: S3Client, private readonly bucket: string, private readonly prefix = '') {}

  private key(path: string) {
    return this.prefix ? `${this.prefix.replace(/\/+$/, '')}/${path}` : path
  }

  async put(path: string, body: string) {
    await this.s3.send(new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.key(path),
      Body: body,
      ContentType: 'application/json; charset=utf-8',
    }))
  }

  async delete(path: string) {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(path) }))
  }
}
