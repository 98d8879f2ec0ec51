import type { KinesisClient } from '@aws-sdk/client-kinesis'
import { decodeCollectorPayload, type DecodedCollectorPayload } from '../../lib/core/thrift/collector-payload'
import { readStream } from '../../lib/local/rehearse/scenarios/streams'

/** Every record in a stream (all shards, from the start), as bytes or as UTF-8 text: the rehearsal's own read-back. */
export { readStream, readTexts } from '../../lib/local/rehearse/scenarios/streams'

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
