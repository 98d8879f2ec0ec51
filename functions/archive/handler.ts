import { PutObjectCommand } from '@aws-sdk/client-s3'
import middy from '@middy/core'
import type { KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda'
import { clients } from '../../lib/aws/clients'
import { archiveObjects } from '../../lib/core/archive'
import { bucketName, streamFormat } from '../../lib/runtime/resources'

/** Archives a batch; an object that could not be written is reported from its first record on. */
export const handler = middy<KinesisStreamEvent, KinesisStreamBatchResponse>().handler(async (event) => {
  const records = event.Records.map((r) => ({
    stream: r.eventSourceARN.slice(r.eventSourceARN.lastIndexOf('/') + 1),
    shardId: r.eventID.slice(0, r.eventID.indexOf(':')),
    sequenceNumber: r.kinesis.sequenceNumber,
    arrivalMs: Math.round(r.kinesis.approximateArrivalTimestamp * 1000),
    data: Buffer.from(r.kinesis.data, 'base64'),
  }))
  const objects = archiveObjects(records, (stream) => streamFormat(stream) === 'thrift')
  const results = await Promise.allSettled(
    objects.map((o) => clients().s3.send(new PutObjectCommand({ Bucket: bucketName('archive'), Key: o.key, Body: o.body, ContentType: 'application/gzip' }))),
  )
  return {
    batchItemFailures: objects.flatMap((o, i) => (results[i]!.status === 'rejected' ? [{ itemIdentifier: o.records[0]!.sequenceNumber }] : [])),
  }
})
