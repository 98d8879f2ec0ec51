/**
 * The basic-authentication credentials in the settings table: pk `dashboard`,
 * sk `credentials` (username, scrypt hash, salt, cost parameters, version).
 */
import { GetItemCommand, PutItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { CredentialStore, StoredCredentials } from '../core/auth/basic'

const KEY = { pk: { S: 'dashboard' }, sk: { S: 'credentials' } }

function toItem(c: StoredCredentials): Record<string, AttributeValue> {
  return {
    ...KEY,
    username: { S: c.username },
    hash: { S: c.hash },
    salt: { S: c.salt },
    N: { N: String(c.N) },
    r: { N: String(c.r) },
    p: { N: String(c.p) },
    version: { N: String(c.version) },
    updatedAt: { S: c.updatedAt },
  }
}

export class DynamoCredentialStore implements CredentialStore {
  constructor(private readonly ddb: DynamoDBClient, private readonly table: string) {}

  async get(): Promise<StoredCredentials | undefined> {
    const res = await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: KEY, ConsistentRead: true }))
    const i = res.Item
    if (!i?.hash?.S || !i.username?.S) return undefined
    return {
      username: i.username.S,
      hash: i.hash.S,
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
      await this.ddb.send(new PutItemCommand({ TableName: this.table, Item: toItem(c), ConditionExpression: condition, ExpressionAttributeValues: values }))
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
}
