/**
 * `npm run bench -- enrich-batch`: how many raw records one enrich invocation
 * can get. Lambda hands a Kinesis batch to the function as one JSON event of at
 * most 6 MB (each record's data base64-encoded, with its metadata), whatever
 * the batch size; the batch size is the shipped configuration's
 * `input.retrievalMode.maxRecords`. Prints the raw record of a tracker POST of
 * 1 and 10 events and of a GET pixel, the records of each kind that fit in 6 MB,
 * and the shipped batch size next to Snowplow's default (10,000).
 */
import { randomUUID } from 'node:crypto'
import { DEFAULT_COLLECTOR_CONFIG } from '../../lib/core/collector/config'
import { handleCollectorRequest } from '../../lib/core/collector/service'
import { enrichDeployment } from '../../lib/core/enrich/deploy'
import type { HttpRequest } from '../../lib/http/types'
import { request, trackerBody } from './support/tracker-requests'

/** Lambda's limit on an invocation's event (bytes). */
const LAMBDA_EVENT_LIMIT = 6 * 1024 * 1024

/** One record of Lambda's Kinesis event as it is serialized: the data base64-encoded, with every field Lambda sends. */
function eventRecord(data: Uint8Array): number {
  return Buffer.byteLength(
    JSON.stringify({
      kinesis: { kinesisSchemaVersion: '1.0', partitionKey: randomUUID(), sequenceNumber: '49590338271490256608559692538361571095921575989136588898', data: Buffer.from(data).toString('base64'), approximateArrivalTimestamp: 1545084650.987 },
      eventSource: 'aws:kinesis', eventVersion: '1.0', eventID: 'shardId-000000000006:49590338271490256608559692538361571095921575989136588898', eventName: 'aws:kinesis:record',
      invokeIdentityArn: 'arn:aws:iam::123456789012:role/FloeApp-EnrichServiceRole-ABCDEFGHIJKL', awsRegion: 'eu-west-1', eventSourceARN: 'arn:aws:kinesis:eu-west-1:123456789012:stream/FloeData-RawStream-ABCDEFGHIJKL',
    }),
  ) + 1
}

const rawRecord = (req: HttpRequest) => handleCollectorRequest(req, DEFAULT_COLLECTOR_CONFIG, Date.now(), randomUUID).records[0]!.data

const get: HttpRequest = { ...request(''), method: 'GET', path: '/i', rawQuery: `e=pv&p=web&tv=js-4.10.1&aid=shop&url=${encodeURIComponent('https://shop.example.com/products/1')}&eid=${randomUUID()}`, body: Buffer.alloc(0) }
const kinds: [string, Uint8Array][] = [
  ['tracker POST, 10 events', rawRecord(request(trackerBody(10)))],
  ['tracker POST, 1 event', rawRecord(request(trackerBody(1)))],
  ['GET pixel', rawRecord(get)],
]
const shipped = enrichDeployment({ ACCEPT_LIMITED_USE_LICENSE: 'yes' }).batchSize
console.log(`shipped batch size (input.retrievalMode.maxRecords): ${shipped}; Snowplow's default: 10000; Lambda's event limit: ${LAMBDA_EVENT_LIMIT} bytes`)
for (const [name, data] of kinds) {
  const size = eventRecord(data)
  const fit = Math.floor(LAMBDA_EVENT_LIMIT / size)
  console.log(`${name.padEnd(24)} raw record ${String(data.length).padStart(6)} B, in Lambda's event ${String(size).padStart(6)} B: ${String(fit).padStart(5)} records per 6 MB, so a batch of ${Math.min(fit, shipped)} with ${shipped}, of ${Math.min(fit, 10_000)} with 10000`)
}
