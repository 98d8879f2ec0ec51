import { clients } from '../../lib/aws/clients'
import { KinesisWriter } from '../../lib/aws/kinesis-writer'
import { streamName } from '../../lib/runtime/resources'
import type { RecordSink } from './app'

let writer: { client: unknown; writer: KinesisWriter } | undefined

/** Writes raw records to the raw stream and bad rows to the bad stream (or the names the configuration gives). */
export const kinesisSink: RecordSink = async (records, config) => {
  const client = clients().kinesis
  if (!writer || writer.client !== client) writer = { client, writer: new KinesisWriter(client) }
  const raw = records.filter((r) => r.stream === 'raw')
  const bad = records.filter((r) => r.stream === 'bad')
  await Promise.all([
    raw.length > 0 ? writer.writer.write(config.streams.good ?? streamName('raw'), raw) : undefined,
    bad.length > 0 ? writer.writer.write(config.streams.bad ?? streamName('bad'), bad) : undefined,
  ])
}
