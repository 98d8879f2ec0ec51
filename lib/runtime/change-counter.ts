/**
 * Change counters in the settings table (pk `control-plane`, sk the
 * counter's name): a writer adds one after each change, before it answers;
 * readers compare the value with the last one they saw (`ChangeWatch`).
 * Used for the registry (`registry-changes`) and the published event
 * specifications (`spec-changes`).
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'

const key = (name: string) => ({ pk: { S: 'control-plane' }, sk: { S: name } })

/** The counter's value (0 before the first change). */
export async function readChangeCounter(ddb: DynamoDBClient, table: string, name: string): Promise<number> {
  const res = await ddb.send(new GetItemCommand({ TableName: table, Key: key(name), ConsistentRead: true, ProjectionExpression: '#c', ExpressionAttributeNames: { '#c': 'count' } }))
  return Number(res.Item?.count?.N ?? 0)
}

/** Adds one to the counter; answers its new value. */
export async function bumpChangeCounter(ddb: DynamoDBClient, table: string, name: string): Promise<number> {
  const res = await ddb.send(
    new UpdateItemCommand({
      TableName: table,
      Key: key(name),
      UpdateExpression: 'ADD #c :one SET updatedAt = :now',
      ExpressionAttributeNames: { '#c': 'count' },
      ExpressionAttributeValues: { ':one': { N: '1' }, ':now': { S: new Date().toISOString() } },
      ReturnValues: 'UPDATED_NEW',
    }),
  )
  return Number(res.Attributes?.count?.N ?? 0)
}
