/**
 * Sealing, in place, a secret attribute written in clear by an older version:
 * read, sealed, and written back only if it is still the value read (a
 * concurrent change wins). A start does it for every sealed attribute, so an
 * existing data directory keeps working and its secrets stop being readable.
 */
import { GetItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { SecretSeal } from '../core/secrets-at-rest'

/** `absent`: nothing stored; `sealed`: it was in clear and is sealed now; `kept`: it was already as the seal stores it; `unopenable`: sealed with another key. */
export type SealOutcome = 'absent' | 'sealed' | 'kept' | 'unopenable'

export async function sealInPlace(
  ddb: DynamoDBClient,
  table: string,
  key: Record<string, AttributeValue>,
  attribute: string,
  purpose: string,
  seal: SecretSeal,
  attempts = 5,
): Promise<SealOutcome> {
  const res = await ddb.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))
  const stored = res.Item?.[attribute]?.S
  if (stored === undefined) return 'absent'
  if (!seal.needsSealing(stored)) {
    try {
      seal.open(stored, purpose)
      return 'kept'
    } catch {
      return 'unopenable'
    }
  }
  try {
    await ddb.send(new UpdateItemCommand({
      TableName: table,
      Key: key,
      UpdateExpression: 'SET #a = :sealed',
      ConditionExpression: '#a = :clear',
      ExpressionAttributeNames: { '#a': attribute },
      ExpressionAttributeValues: { ':sealed': { S: seal.seal(stored, purpose) }, ':clear': { S: stored } },
    }))
  } catch (err) {
    if ((err as Error)?.name !== 'ConditionalCheckFailedException' || attempts <= 1) throw err
    return sealInPlace(ddb, table, key, attribute, purpose, seal, attempts - 1) // changed meanwhile: look again
  }
  return 'sealed'
}
