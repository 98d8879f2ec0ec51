/**
 * A Kinesis endpoint that accepts every write and stores nothing, in a
 * process of its own: it separates the cost of the collector (gateway, handler,
 * Thrift, the SDK's PutRecords) from the cost of the Kinesis emulator. Answers
 * the calls the local stack makes; prints its URL, stops on SIGTERM.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

let seq = 0n
const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop()
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as { Records?: unknown[]; ShardCount?: number }) : {}
    let out: unknown = {}
    if (op === 'PutRecords') {
      out = { FailedRecordCount: 0, Records: (body.Records ?? []).map(() => ({ SequenceNumber: String(++seq), ShardId: 'shardId-000000000000' })) }
    } else if (op === 'DescribeStreamSummary') {
      out = { StreamDescriptionSummary: { StreamStatus: 'ACTIVE', OpenShardCount: 1, RetentionPeriodHours: 24 } }
    } else if (op === 'ListShards') {
      out = { Shards: [{ ShardId: 'shardId-000000000000' }] }
    }
    const text = JSON.stringify(out)
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  })
})
server.keepAliveTimeout = 65_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
