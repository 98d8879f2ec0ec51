import { QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'

export type Item = Record<string, AttributeValue>

/** Runs a query to the end, following `LastEvaluatedKey` across pages. */
export async function queryAll(ddb: DynamoDBClient, input: ConstructorParameters<typeof QueryCommand>[0]): Promise<Item[]> {
  const out: Item[] = []
  let start: Item | undefined
  do {
    const res = await ddb.send(new QueryCommand({ ...input, ExclusiveStartKey: start }))
    out.push(...(res.Items ?? []))
    start = res.LastEvaluatedKey
  } while (start)
  return out
}
