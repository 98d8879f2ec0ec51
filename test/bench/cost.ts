/**
 * The cost model's measured figures and what they cost on AWS (`lib/infra/cost-model.ts`,
 * prices from `lib/infra/prices.ts`): CPU time and bytes of each stage, in this process,
 * for tracker POSTs of 1, 10 and 25 browser events —
 *   collector: the whole handler (request → Thrift → PutRecords through the AWS SDK) against
 *     a Kinesis endpoint in another process that stores nothing, so the SDK's CPU is counted;
 *   enrich: per event, with no enrichments and with the common production set;
 *   archive: gzip objects of the raw and good records.
 * Then the monthly cost of the default deployment at 10, 100 and 1,000 events/s by service,
 * for each ingress and stream capacity mode. CPU times are this machine's (one core taken
 * as one Lambda vCPU); on a busy machine they are upper bounds.
 *
 *   npm run bench -- cost
 */
import { randomUUID } from 'node:crypto'
import { KinesisClient } from '@aws-sdk/client-kinesis'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { KinesisWriter } from '../../lib/aws/kinesis-writer'
import { archiveObjects, type ArchiveRecord } from '../../lib/core/archive'
import { DEFAULT_COLLECTOR_CONFIG } from '../../lib/core/collector/config'
import { Enricher } from '../../lib/core/enrich/enrich'
import { ENRICH_PROCESSOR } from '../../lib/core/enrich/version'
import { defaultResolver } from '../../lib/runtime/default-resolver'
import { monthlyCost, type DeploymentShape, type Ingress, type MeasuredFigures, type StreamCapacityMode } from '../../lib/infra/cost-model'
import { functions, streamTriggers, triggerSettings } from '../../lib/infra/functions'
import { prices } from '../../lib/infra/prices'
import { readSettings } from '../../lib/infra/settings'
import { streams } from '../../lib/infra/resources'
import { collectorHttpHandler } from '../../functions/collector/app'
import { productionSteps } from '../support/enrichments'
import { nullKinesisProcess, runMain } from './support/processes'

import { request, trackerBody, HEADERS, COOKIE } from './support/tracker-requests'

/** CPU milliseconds per call of `fn`, over at least `minMs` of CPU after a warm-up. */
async function cpuMsPer(fn: () => unknown | Promise<unknown>, minMs = 400): Promise<number> {
  for (let i = 0; i < 50; i++) await fn()
  const c0 = process.cpuUsage()
  let n = 0
  let used = 0
  while (used < minMs * 1000) {
    for (let i = 0; i < 20; i++) await fn()
    n += 20
    const c = process.cpuUsage(c0)
    used = c.user + c.system
  }
  return used / 1000 / n
}

const SIZES = [1, 10, 25] as const

async function main() {
  const kinesis = await nullKinesisProcess()
  try {
    // ---- collector ----------------------------------------------------------------------------
    const client = new KinesisClient({ region: 'us-east-1', endpoint: kinesis.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, requestHandler: new NodeHttpHandler({ connectionTimeout: 2000 }) })
    const writer = new KinesisWriter(client)
    let recordBytes = 0
    const handler = collectorHttpHandler(async (records) => {
      const raw = records.filter((r) => r.stream === 'raw')
      recordBytes = raw.reduce((n, r) => n + r.data.length, 0)
      await writer.write('raw', raw)
    }, () => DEFAULT_COLLECTOR_CONFIG)
    const collector = new Map<number, MeasuredFigures['collector']>()
    const rawRecords = new Map<number, Buffer[]>()
    // Twice: the first pass warms the code up, the second is kept.
    for (const n of [...SIZES, ...SIZES]) {
      const body = trackerBody(n)
      const cpu = await cpuMsPer(async () => {
        const r = await handler(request(body))
        if (r.statusCode !== 200) throw new Error(`collector answered ${r.statusCode}`)
      })
      const headerBytes = Object.entries(HEADERS).reduce((s, [k, v]) => s + k.length + v.length + 4, 0) + COOKIE.length + 60
      collector.set(n, { cpuMsPerRequest: cpu, requestBytes: body.length + headerBytes, recordBytes })
      const records: Buffer[] = []
      await collectorHttpHandler(async (rs) => void records.push(...rs.filter((r) => r.stream === 'raw').map((r) => Buffer.from(r.data))), () => DEFAULT_COLLECTOR_CONFIG)(request(body))
      rawRecords.set(n, records)
    }

    // ---- enrich ---------------------------------------------------------------------------------
    const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
    const plain = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
    const common = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: await productionSteps(resolver) })
    const record10 = rawRecords.get(10)![0]!
    const batch = { etlTimestamp: Date.now(), newEventId: () => randomUUID() }
    const enrichOf = async (e: Enricher) => {
      let good: string[] = []
      const cpu = (await cpuMsPer(async () => {
        const o = await e.enrichRecord(record10, batch)
        good = o.outputs.flatMap((x) => (x.kind === 'good' ? [x.tsv] : []))
      })) / 10
      if (good.length !== 10) throw new Error(`enrich gave ${good.length} good events of 10`)
      return { cpuMsPerEvent: cpu, goodBytesPerEvent: good.reduce((n, t) => n + Buffer.byteLength(t), 0) / good.length, good }
    }
    const enrichPlain = await enrichOf(plain)
    const enrichCommon = await enrichOf(common)

    // ---- archive --------------------------------------------------------------------------------
    // 50 different requests of 10 events (repeating one would flatter gzip).
    const archiveInput: ArchiveRecord[] = []
    const collect = collectorHttpHandler(async (rs) => {
      for (const r of rs) if (r.stream === 'raw') {
        archiveInput.push({ stream: 'raw', shardId: 'shardId-000000000000', sequenceNumber: String(1e6 + archiveInput.length), arrivalMs: Date.now(), data: Buffer.from(r.data) })
        const o = await common.enrichRecord(r.data, batch)
        for (const x of o.outputs) if (x.kind === 'good') archiveInput.push({ stream: 'good', shardId: 'shardId-000000000000', sequenceNumber: String(2e6 + archiveInput.length), arrivalMs: Date.now(), data: Buffer.from(x.tsv) })
      }
    }, () => DEFAULT_COLLECTOR_CONFIG)
    for (let i = 0; i < 50; i++) await collect(request(trackerBody(10)))
    if (archiveInput.length !== 550) throw new Error(`archive input has ${archiveInput.length} records, expected 550`)
    let stored = 0
    const archiveCpu = (await cpuMsPer(() => {
      stored = archiveObjects(archiveInput, (s) => s === 'raw').reduce((n, o) => n + o.body.length, 0)
    })) / archiveInput.length
    const archive = { cpuMsPerRecord: archiveCpu, storedBytesPerEvent: stored / 500 }

    // ---- report ---------------------------------------------------------------------------------
    console.log(`Measured (CPU ms at one core of this machine; bytes):`)
    for (const n of SIZES) {
      const c = collector.get(n)!
      console.log(`  collector, ${String(n).padStart(2)} events/request   ${c.cpuMsPerRequest.toFixed(3)} ms/request (handler + Thrift + SDK PutRecords)   request ${c.requestBytes} B, raw record ${c.recordBytes} B`)
    }
    console.log(`  enrich, no enrichments           ${enrichPlain.cpuMsPerEvent.toFixed(3)} ms/event   good TSV ${enrichPlain.goodBytesPerEvent.toFixed(0)} B/event`)
    console.log(`  enrich, common production set    ${enrichCommon.cpuMsPerEvent.toFixed(3)} ms/event   good TSV ${enrichCommon.goodBytesPerEvent.toFixed(0)} B/event`)
    console.log(`  archive (raw + good, gzip)       ${archive.cpuMsPerRecord.toFixed(4)} ms/record   ${archive.storedBytesPerEvent.toFixed(0)} B stored/event`)

    // The deploy settings' defaults (`lib/infra/settings.ts`), as `cdk deploy` without -c options builds them.
    const defaults = readSettings({}, {})
    if (!defaults.ok) throw new Error(defaults.errors.join('\n'))
    const enrichDeclared = triggerSettings(streamTriggers.find((t) => t.function === 'enrich')!)
    const enrichTrigger = { ...enrichDeclared, batchSize: defaults.settings.enrich.batchSize ?? enrichDeclared.batchSize, maxBatchingWindowSeconds: defaults.settings.enrich.batchingWindowSeconds, parallelizationFactor: defaults.settings.enrich.parallelizationFactor }
    const archiveTrigger = triggerSettings(streamTriggers.find((t) => t.function === 'archive')!)
    const shape = (ingress: Ingress, streamMode: StreamCapacityMode): DeploymentShape => ({
      ingress,
      streamMode,
      collector: { memoryMb: functions.collector.memoryMb ?? 512, ioMs: ASSUMED.collectorIoMs },
      enrich: { memoryMb: defaults.settings.enrich.memoryMb, batchSize: enrichTrigger.batchSize, maxBatchingWindowSeconds: enrichTrigger.maxBatchingWindowSeconds, parallelizationFactor: enrichTrigger.parallelizationFactor, ioMs: ASSUMED.enrichIoMs },
      archive: { memoryMb: functions.archive.memoryMb ?? 512, batchSize: archiveTrigger.batchSize, maxBatchingWindowSeconds: archiveTrigger.maxBatchingWindowSeconds, parallelizationFactor: archiveTrigger.parallelizationFactor, ioMs: ASSUMED.archiveIoMs },
      shards: { raw: streams.raw.shards, good: streams.good.shards, incomplete: streams.incomplete.shards, bad: streams.bad.shards, pii: streams.pii.shards },
      shardHeadroom: ASSUMED.shardHeadroom,
      newConnectionShare: ASSUMED.newConnectionShare,
      searchStore: true,
      searchStoreAcu: ASSUMED.searchStoreAcu,
    })
    console.log(`\nDefault deployment: -c ingress=${defaults.settings.ingress} -c streamMode=${defaults.settings.streamMode}; enrich ${defaults.settings.enrich.memoryMb} MB, batches of up to ${enrichTrigger.batchSize} records, window ${enrichTrigger.maxBatchingWindowSeconds} s, parallelization ${enrichTrigger.parallelizationFactor}; archive batches of up to ${archiveTrigger.batchSize} records, window ${archiveTrigger.maxBatchingWindowSeconds} s.`)
    console.log(`Assumed: ${Object.entries(ASSUMED).map(([k, v]) => `${k} ${v}`).join(', ')}; common production set of enrichments.`)
    console.log(`Prices: lib/infra/prices.ts, ${prices.region}, as of ${prices.asOf}, ${prices.currency}; a month is ${prices.hoursPerMonth} h. Search store shown apart (not in the totals).\n`)
    const usd = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3)).padStart(8)
    console.log(`${'events/s'.padStart(8)} ${'ev/req'.padStart(6)}  ${'ingress'.padEnd(12)} ${'streams'.padEnd(11)} ${'ingress'.padStart(8)} ${'Lambda'.padStart(8)} ${'Kinesis'.padStart(8)} ${'S3'.padStart(8)} ${'DynamoDB'.padStart(8)} ${'total/mo'.padStart(9)} ${'$/M ev'.padStart(7)} ${'search'.padStart(7)}`)
    // 0 events/s: what a deployment costs idle (the declared shards, the ALB's hours; the search store paused)
    for (const rate of [0, 10, 100, 1000]) {
      for (const n of rate === 0 ? [1] : SIZES) {
        const measured: MeasuredFigures = { collector: collector.get(n)!, enrich: enrichCommon, archive }
        for (const ingress of ['apigateway', 'alb', 'function-url'] as const) {
          for (const mode of ['on-demand', 'provisioned'] as const) {
            const m = monthlyCost({ eventsPerSecond: rate, eventsPerRequest: n }, measured, shape(ingress, mode))
            const b = m.byService
            console.log(`${String(rate).padStart(8)} ${(rate === 0 ? '-' : String(n)).padStart(6)}  ${ingress.padEnd(12)} ${mode.padEnd(11)} ${usd(b.ingress)} ${usd(b.Lambda)} ${usd(b.Kinesis)} ${usd(b.S3)} ${usd(b.DynamoDB)} ${usd(m.total).padStart(9)} ${m.perMillionEvents.toFixed(3).padStart(7)} ${usd(m.searchStore).padStart(7)}`)
          }
        }
      }
    }
    const target = monthlyCost({ eventsPerSecond: 1000, eventsPerRequest: 10 }, { collector: collector.get(10)!, enrich: enrichCommon, archive }, shape('function-url', 'provisioned'))
    console.log(`\n1,000 events/s, 10 events/request, function URL, provisioned streams: $${target.perMillionEvents.toFixed(3)} per million events (target < $0.10); lines:`)
    for (const l of target.lines) if (l.service !== 'search store') console.log(`  ${l.service.padEnd(9)} ${l.item.padEnd(48)} $${l.usd.toFixed(2)}`)
  } finally {
    await kinesis.stop()
  }
}

/** What the model does not measure here (network waits on AWS, capacity choices). */
const ASSUMED = {
  /** One PutRecords round trip inside the region, ms. */
  collectorIoMs: 8,
  /** Reading a batch and writing its outputs (PutRecords per 500 records), ms per invocation. */
  enrichIoMs: 40,
  /** One S3 PUT per invocation, ms. */
  archiveIoMs: 40,
  shardHeadroom: 0.8,
  newConnectionShare: 0.5,
  searchStoreAcu: 0.5,
}

runMain(main)
