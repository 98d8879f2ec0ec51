/** Reading back what landed in a Kinesis stream of the rehearsal (every shard, from the oldest record). */
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import { decodeCollectorPayload } from '../../../core/thrift/collector-payload'

/** Every record now in the stream, all shards, from the start. */
export async function readStream(kinesis: KinesisClient, streamName: string): Promise<Buffer[]> {
  const shards = (await kinesis.send(new ListShardsCommand({ StreamName: streamName }))).Shards ?? []
  const out: Buffer[] = []
  for (const shard of shards) {
    let iterator = (await kinesis.send(new GetShardIteratorCommand({ StreamName: streamName, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator
    while (iterator) {
      const res = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }))
      for (const r of res.Records ?? []) out.push(Buffer.from(r.Data!))
      if (!res.Records?.length || res.MillisBehindLatest === 0) break
      iterator = res.NextShardIterator
    }
  }
  return out
}

/** The records of a stream as text. */
export async function readTexts(kinesis: KinesisClient, streamName: string): Promise<string[]> {
  return (await readStream(kinesis, streamName)).map((b) => b.toString('utf8'))
}

/** The tracker events (parameter maps) of a raw stream's collector payloads; undecodable records are left out. */
export async function rawEvents(kinesis: KinesisClient, streamName: string): Promise<Record<string, string>[]> {
  const events: Record<string, string>[] = []
  for (const b of await readStream(kinesis, streamName)) {
    const d = decodeCollectorPayload(b)
    if (!d.ok) continue
    const p = d.payload as { body?: string; querystring?: string }
    if (p.body) {
      try {
        events.push(...(JSON.parse(p.body) as { data: Record<string, string>[] }).data)
      } catch { /* not a tracker body */ }
    } else if (p.querystring) events.push(Object.fromEntries(new URLSearchParams(p.querystring)))
  }
  return events
}
