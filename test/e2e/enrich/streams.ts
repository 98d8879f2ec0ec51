import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'

/** Every record currently in a stream (all shards, from the start), as UTF-8 text. */
export async function readTexts(kinesis: KinesisClient, streamName: string): Promise<string[]> {
  const shards = (await kinesis.send(new ListShardsCommand({ StreamName: streamName }))).Shards ?? []
  const out: string[] = []
  for (const shard of shards) {
    let iterator = (await kinesis.send(new GetShardIteratorCommand({ StreamName: streamName, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator
    while (iterator) {
      const res = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }))
      for (const r of res.Records ?? []) out.push(Buffer.from(r.Data!).toString('utf8'))
      if (!res.Records?.length || res.MillisBehindLatest === 0) break
      iterator = res.NextShardIterator
    }
  }
  return out
}
