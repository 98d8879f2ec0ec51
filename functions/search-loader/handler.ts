import middy from '@middy/core'
import type { KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda'
import { isStoreUnavailable, loadBatch, type LoaderStream } from '../../lib/core/search/loader'
import { purgeOlderThan } from '../../lib/core/search/store'
import { database } from '../../lib/aws/database'
import { streamKeyOf } from '../../lib/runtime/resources'
import { retentionDays } from '../../lib/core/search/settings'
import { clients } from '../../lib/aws/clients'
import { checkRestarts } from '../../lib/runtime/restarts'
import { DependencyUnavailableError } from '../../lib/runtime/setup-error'
import { searchStoreWritten } from '../../lib/runtime/store-writes'

const PURGE_EVERY_MS = 3_600_000
const debug = /^debug$/i.test(process.env.FLOE_LOG_LEVEL ?? '')
let lastPurge = 0

/**
 * Loads a batch of `good`, `incomplete` or `bad` records into the search
 * store in one transaction (`raw` records: what the collector received, for
 * the Micro API's `rawEvent`). A record that is not what its stream carries is
 * logged and skipped; a record the store refuses is stored sanitized (see
 * `loadBatch`). When the store cannot be written the invocation fails
 * (`DependencyUnavailableError` when it is unavailable: the local trigger
 * waits and `/health` says so), so the batch is retried and nothing is lost.
 */
export const handler = middy<KinesisStreamEvent, KinesisStreamBatchResponse>().handler(async (event) => {
  void checkRestarts(() => clients().ddb)
  const first = event.Records[0]
  if (!first) return { batchItemFailures: [] }
  const physical = first.eventSourceARN.slice(first.eventSourceARN.lastIndexOf('/') + 1)
  const stream = streamKeyOf(physical)
  if (stream !== 'good' && stream !== 'incomplete' && stream !== 'bad' && stream !== 'raw') throw new Error(`the search loader reads good, incomplete, bad and raw, not ${physical}`)
  const records = event.Records.map((r) => {
    const data = Buffer.from(r.kinesis.data, 'base64')
    // raw: binary Thrift, read as bytes
    return stream === 'raw' ? { id: r.kinesis.sequenceNumber, text: '', data } : { id: r.kinesis.sequenceNumber, text: data.toString('utf8') }
  })
  const now = Date.now()
  try {
    const db = await database('search')
    const out = await loadBatch(db, stream as LoaderStream, records, now)
    if (stream !== 'raw' && out.loaded > 0) searchStoreWritten() // a /micro/wait of this process looks now
    for (const r of out.rejected) console.error(JSON.stringify({ level: 'warn', msg: 'record not loaded', stream, sequenceNumber: r.id, error: r.error, sample: r.sample }))
    for (const f of out.fallbacks ?? []) console.error(JSON.stringify({ level: 'warn', msg: 'document refused by the search store; stored in its fallback form', stream, id: f.id, error: f.error }))
    if (debug) console.log(JSON.stringify({ level: 'debug', msg: 'loaded', stream, loaded: out.loaded, rejected: out.rejected.length }))
    if (now - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = now
      const gone = await purgeOlderThan(db, retentionDays(process.env), now)
      if (gone.good + gone.bad > 0) console.log(JSON.stringify({ level: 'info', msg: 'retention', deleted: gone }))
    }
    return { batchItemFailures: [] }
  } catch (err) {
    const message = String((err as Error)?.message ?? err)
    console.error(JSON.stringify({ level: 'error', msg: 'search store write failed; the batch will be retried', stream, error: message }))
    // the batch fails whole (nothing of it was written): the trigger waits (store unavailable) or retries it
    throw isStoreUnavailable(err) ? new DependencyUnavailableError(`cannot write to the search store: ${message}`) : err
  }
})
