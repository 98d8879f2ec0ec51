/**
 * External Iglu registries added in the control plane, in the settings table
 * (pk `control-plane`, sk `registry#<name>`). Every resolver of the
 * deployment (enrich, the tracking-design API, /micro/iglu) adds them as
 * repositories at its first lookup after a start or a restart, after every
 * built-in repository whatever their priority and vendor prefixes; a disabled
 * one (`enabled: false`) is kept and left out.
 */
import { DeleteItemCommand, PutItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { HttpRepository, RANK, type Repository } from '../core/iglu/repositories'
import type { ExternalRegistry } from '../core/control-plane/registries'

const PK = 'control-plane'
const PREFIX = 'registry#'

export async function listExternalRegistries(ddb: DynamoDBClient, table: string): Promise<ExternalRegistry[]> {
  const out: ExternalRegistry[] = []
  let start: Record<string, never> | undefined
  do {
    const res = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': { S: PK }, ':p': { S: PREFIX } },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    )
    for (const i of res.Items ?? []) {
      out.push({
        name: i.name?.S ?? '',
        uri: i.uri?.S ?? '',
        priority: Number(i.priority?.N ?? 0),
        vendorPrefixes: (i.vendorPrefixes?.L ?? []).map((v) => v.S ?? ''),
        ...(i.apikey?.S ? { apikey: i.apikey.S } : {}),
        addedAt: i.addedAt?.S ?? '',
        ...(i.enabled?.BOOL === false ? { enabled: false } : {}),
      })
    }
    start = res.LastEvaluatedKey as typeof start
  } while (start)
  return out.sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name))
}

/** Adds or replaces (same name) an external registry. */
export async function putExternalRegistry(ddb: DynamoDBClient, table: string, r: ExternalRegistry): Promise<void> {
  await ddb.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        pk: { S: PK },
        sk: { S: `${PREFIX}${r.name}` },
        name: { S: r.name },
        uri: { S: r.uri },
        priority: { N: String(r.priority) },
        vendorPrefixes: { L: r.vendorPrefixes.map((v) => ({ S: v })) },
        ...(r.apikey ? { apikey: { S: r.apikey } } : {}),
        addedAt: { S: r.addedAt },
        ...(r.enabled === false ? { enabled: { BOOL: false } } : {}),
      },
    }),
  )
}

/** Removes an external registry; false when there was none of that name. */
export async function deleteExternalRegistry(ddb: DynamoDBClient, table: string, name: string): Promise<boolean> {
  const res = await ddb.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: PK }, sk: { S: `${PREFIX}${name}` } }, ReturnValues: 'ALL_OLD' }))
  return res.Attributes !== undefined
}

/** The external registries as resolver repositories, ranked after every built-in one (see `RANK`). */
export function externalRepositories(ddb: () => DynamoDBClient, table: string): () => Promise<Repository[]> {
  return async () =>
    (await listExternalRegistries(ddb(), table)).filter((r) => r.enabled !== false).map(
      (r) => new HttpRepository(r.uri, { name: r.name, priority: r.priority, vendorPrefixes: r.vendorPrefixes, apikey: r.apikey, rank: RANK.external }),
    )
}
