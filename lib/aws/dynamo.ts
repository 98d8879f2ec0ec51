import { BatchGetItemCommand, GetItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb'

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

/** One table's key as text: attribute names sorted, with their typed values. */
function keyText(table: string, key: Item): string {
  return `${table}\u0000${Object.keys(key).sort().map((k) => `${k}=${JSON.stringify(key[k])}`).join('\u0000')}`
}

/** Keys per BatchGetItem call (the API's limit). */
export const BATCH_GET_LIMIT = 100

interface PendingRead {
  readonly table: string
  readonly key: Item
  readonly waiters: { resolve: (item: Item | undefined) => void; reject: (err: unknown) => void }[]
}

/**
 * Consistent reads of single items, coalesced: every read asked for in one turn of the
 * event loop goes out in one call — `GetItem` for a lone key, else `BatchGetItem` across
 * tables (up to 100 distinct keys per call; a key asked for twice is read once; unprocessed
 * keys are retried with backoff). The reads of one request (its API key and its record)
 * share a call, and so do those of concurrent requests in one process. A failed call
 * fails every read it carried.
 */
export class ItemReader {
  private pending: Map<string, PendingRead> | undefined

  constructor(
    private readonly ddb: Pick<DynamoDBClient, 'send'>,
    private readonly opts: { maxAttempts?: number; sleep?: (ms: number) => Promise<void> } = {},
  ) {}

  get(table: string, key: Item): Promise<Item | undefined> {
    if (!this.pending) {
      this.pending = new Map()
      setImmediate(() => this.flush())
    }
    const id = keyText(table, key)
    let read = this.pending.get(id)
    if (!read) {
      read = { table, key, waiters: [] }
      this.pending.set(id, read)
    }
    const waiters = read.waiters
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }))
  }

  private flush(): void {
    const reads = [...this.pending!.values()]
    this.pending = undefined
    for (let i = 0; i < reads.length; i += BATCH_GET_LIMIT) {
      const chunk = reads.slice(i, i + BATCH_GET_LIMIT)
      this.read(chunk).then(
        (found) => chunk.forEach((r, k) => r.waiters.forEach((w) => w.resolve(found[k]))),
        (err: unknown) => chunk.forEach((r) => r.waiters.forEach((w) => w.reject(err))),
      )
    }
  }

  /** The items of `reads`, in their order (`undefined` where there is none). */
  private async read(reads: readonly PendingRead[]): Promise<(Item | undefined)[]> {
    if (reads.length === 1) {
      const res = await this.ddb.send(new GetItemCommand({ TableName: reads[0]!.table, Key: reads[0]!.key, ConsistentRead: true }))
      return [res.Item]
    }
    const index = new Map(reads.map((r, i) => [keyText(r.table, r.key), i]))
    const found: (Item | undefined)[] = reads.map(() => undefined)
    let wanted: Record<string, { Keys: Item[]; ConsistentRead: true }> = {}
    for (const r of reads) (wanted[r.table] ??= { Keys: [], ConsistentRead: true }).Keys.push(r.key)
    const maxAttempts = this.opts.maxAttempts ?? 8
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
    for (let attempt = 1; ; attempt++) {
      const res = await this.ddb.send(new BatchGetItemCommand({ RequestItems: wanted }))
      for (const [table, items] of Object.entries(res.Responses ?? {})) {
        const attrs = Object.keys(wanted[table]?.Keys[0] ?? {})
        for (const item of items) {
          const i = index.get(keyText(table, Object.fromEntries(attrs.map((a) => [a, item[a]!]))))
          if (i !== undefined) found[i] = item
        }
      }
      const rest = Object.entries(res.UnprocessedKeys ?? {}).filter(([, v]) => (v.Keys?.length ?? 0) > 0)
      if (rest.length === 0) return found
      if (attempt >= maxAttempts) throw new Error(`DynamoDB left ${rest.reduce((n, [, v]) => n + v.Keys!.length, 0)} key(s) unread after ${attempt} BatchGetItem attempts`)
      wanted = Object.fromEntries(rest.map(([table, v]) => [table, { Keys: v.Keys!, ConsistentRead: true as const }]))
      await sleep(Math.min(1000, 25 * 2 ** (attempt - 1)))
    }
  }
}

const readers = new WeakMap<object, ItemReader>()

/** The item reader of a client: reads through the same client share calls. */
export function itemReader(ddb: DynamoDBClient): ItemReader {
  let r = readers.get(ddb)
  if (!r) readers.set(ddb, (r = new ItemReader(ddb)))
  return r
}
