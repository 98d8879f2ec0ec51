/**
 * The event specification enrichment's source on DynamoDB: every version the
 * tracking-design API keeps in its history table (`specHistory`: pk =
 * `{orgId}#{specId}`, `entry` = the history entry with the specification as
 * written), read with one paginated scan. The enrichment keeps the published
 * ones (see `lib/core/enrich/enrichments/event-spec.ts`).
 */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { EventSpecSource, SpecRecord } from '../core/enrich/enrichments/event-spec'
import type { HistoryEntry } from '../core/tracking-design/types'
import type { Item } from './dynamo'

export class DynamoEventSpecSource implements EventSpecSource {
  constructor(private readonly ddb: DynamoDBClient, private readonly historyTable: string) {}

  async load(): Promise<SpecRecord[]> {
    const out: SpecRecord[] = []
    let start: Item | undefined
    do {
      const res = await this.ddb.send(new ScanCommand({ TableName: this.historyTable, ConsistentRead: true, ProjectionExpression: '#e', ExpressionAttributeNames: { '#e': 'entry' }, ExclusiveStartKey: start }))
      for (const item of res.Items ?? []) {
        const text = item.entry?.S
        if (text === undefined) continue
        let e: HistoryEntry
        try {
          e = JSON.parse(text) as HistoryEntry
        } catch {
          continue
        }
        if (typeof e.eventSpecId !== 'string' || typeof e.version !== 'number' || typeof e.status !== 'string' || typeof e.snapshot !== 'object' || e.snapshot === null) continue
        out.push({ id: e.eventSpecId, version: e.version, status: e.status, snapshot: e.snapshot })
      }
      start = res.LastEvaluatedKey
    } while (start)
    return out
  }
}
