/**
 * The licence's acceptance recorded from the control plane: an item of the
 * settings table, next to the other control-plane items. Enrich counts it as
 * acceptance, like `license.accept` and ACCEPT_LIMITED_USE_LICENSE.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'

export const LICENCE_KEY = { pk: { S: 'control-plane' }, sk: { S: 'licence' } }

export interface LicenceRecord {
  /** The signed-in user who accepted it. */
  readonly by: string
  /** ISO time. */
  readonly at: string
}

export async function recordedLicence(ddb: DynamoDBClient, table: string): Promise<LicenceRecord | undefined> {
  const res = await ddb.send(new GetItemCommand({ TableName: table, Key: LICENCE_KEY, ConsistentRead: true }))
  const by = res.Item?.by?.S
  const at = res.Item?.at?.S
  return by !== undefined && at !== undefined ? { by, at } : undefined
}

export async function recordLicence(ddb: DynamoDBClient, table: string, r: LicenceRecord): Promise<void> {
  await ddb.send(new PutItemCommand({ TableName: table, Item: { ...LICENCE_KEY, by: { S: r.by }, at: { S: r.at } } }))
}
