import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import { decodeCollectorPayload, type DecodedCollectorPayload } from '../../lib/core/thrift/collector-payload'

/** Every record currently in a stream, all shards, from the start. */
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

/** Every record currently in a stream (all shards, from the start), as UTF-8 text. */
export async function readTexts(kinesis: KinesisClient, streamName: string): Promise<string[]> {
  return (await readStream(kinesis, streamName)).map((b) => b.toString('utf8'))
}

/** The decoded CollectorPayloads of a raw stream. */
export async function readPayloads(kinesis: KinesisClient, streamName: string): Promise<DecodedCollectorPayload[]> {
  return (await readStream(kinesis, streamName)).map((b) => {
    const d = decodeCollectorPayload(b)
    if (!d.ok) throw new Error(`undecodable record: ${d.error}`)
    return d.payload
  })
}

/** Tracker events (query-string or POST-body parameter maps) carried by payloads. */
export function eventsOf(payloads: readonly DecodedCollectorPayload[]): Record<string, string>[] {
  const events: Record<string, string>[] = []
  for (const p of payloads) {
    if (p.body) {
      const body = JSON.parse(p.body) as { data: Record<string, string>[] }
      events.push(...body.data)
    } else if (p.querystring) {
      events.push(Object.fromEntries(new URLSearchParams(p.querystring)))
    }
  }
  return events
}
