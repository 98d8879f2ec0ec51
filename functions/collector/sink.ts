import { clients } from '../../lib/aws/clients'
import { CoalescingKinesisWriter, KinesisWriter } from '../../lib/aws/kinesis-writer'
import { streamName } from '../../lib/runtime/resources'
import type { RecordSink } from './app'

let writer: { client: unknown; writer: CoalescingKinesisWriter } | undefined

/**
 * Writes raw records to the raw stream and bad rows to the bad stream (or the
 * names the configuration gives). Concurrent requests in one process share
 * PutRecords calls; on Lambda (one request at a time) each write goes out at once.
 */
export const kinesisSink: RecordSink = async (records, config) => {
  const client = clients().kinesis
  if (!writer || writer.client !== client) writer = { client, writer: new CoalescingKinesisWriter(new KinesisWriter(client)) }
  const raw = records.filter((r) => r.stream === 'raw')
  const bad = records.filter((r) => r.stream === 'bad')
  await Promise.all([
    writer.writer.write(config.streams.good ?? streamName('raw'), raw),
    writer.writer.write(config.streams.bad ?? streamName('bad'), bad),
  ])
}
