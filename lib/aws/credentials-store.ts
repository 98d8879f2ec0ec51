/**
 * The basic-authentication credentials in the settings table: pk `dashboard`,
 * sk `credentials` (username, scrypt hash, salt, cost parameters, version).
 * The hash goes through the secret seal (sealed locally, as it is on AWS): a
 * reader of the table cannot test passwords against it.
 */
import { GetItemCommand, PutItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { CredentialStore, StoredCredentials } from '../core/auth/basic'
import { SECRET_PURPOSES, UnopenableSecretError, type SecretSeal } from '../core/secrets-at-rest'
import { runtimeSeal } from '../runtime/secrets-at-rest'
import { sealInPlace, type SealOutcome } from './sealed-items'

const KEY = { pk: { S: 'dashboard' }, sk: { S: 'credentials' } }
const PURPOSE = SECRET_PURPOSES.passwordHash

function toItem(c: StoredCredentials, seal: SecretSeal): Record<string, AttributeValue> {
  return {
    ...KEY,
    username: { S: c.username },
    hash: { S: seal.seal(c.hash, PURPOSE) },
    salt: { S: c.salt },
    N: { N: String(c.N) },
    r: { N: String(c.r) },
    p: { N: String(c.p) },
    version: { N: String(c.version) },
    updatedAt: { S: c.updatedAt },
  }
}

export class DynamoCredentialStore implements CredentialStore {
  constructor(private readonly ddb: DynamoDBClient, private readonly table: string, private readonly seal: SecretSeal = runtimeSeal()) {}

  /** The stored credentials; a hash that cannot be opened (the key file was replaced) is one no password matches, until the credentials are reset. */
  async get(): Promise<StoredCredentials | undefined> {
    const res = await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: KEY, ConsistentRead: true }))
    const i = res.Item
    if (!i?.hash?.S || !i.username?.S) return undefined
    let hash: string
    try {
      hash = this.seal.open(i.hash.S, PURPOSE)
    } catch (err) {
      if (!(err instanceof UnopenableSecretError)) throw err
      hash = ''
    }
    return {
      username: i.username.S,
      hash,
      salt: i.salt?.S ?? '',
      N: Number(i.N?.N),
      r: Number(i.r?.N),
      p: Number(i.p?.N),
      version: Number(i.version?.N ?? 1),
      updatedAt: i.updatedAt?.S ?? '',
    }
  }

  private async put(c: StoredCredentials, condition: string, values?: Record<string, AttributeValue>): Promise<boolean> {
    try {
      await this.ddb.send(new PutItemCommand({ TableName: this.table, Item: toItem(c, this.seal), ConditionExpression: condition, ExpressionAttributeValues: values }))
      return true
    } catch (err) {
      if ((err as Error)?.name === 'ConditionalCheckFailedException') return false
      throw err
    }
  }

  putIfAbsent(c: StoredCredentials): Promise<boolean> {
    return this.put(c, 'attribute_not_exists(pk)')
  }

  replace(c: StoredCredentials, expectedVersion: number): Promise<boolean> {
    return this.put(c, 'version = :v', { ':v': { N: String(expectedVersion) } })
  }

  /** Seals a hash written in clear (by an older version). */
  sealStored(): Promise<SealOutcome> {
    return sealInPlace(this.ddb, this.table, KEY, 'hash', PURPOSE, this.seal)
  }
}
