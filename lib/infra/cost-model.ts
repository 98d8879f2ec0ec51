/**
 * The monthly AWS cost of a deployment under a steady load, from measured
 * per-event figures (`npm run bench -- cost` measures them) and the one price
 * table (`./prices.ts`). Pure arithmetic: every figure it does not measure is
 * an assumption named in `DeploymentShape` and printed by the benchmark.
 *
 * Lambda duration: CPU time measured at one full vCPU, stretched by
 * `mbPerVcpu / memoryMb` below one vCPU (Lambda gives CPU in proportion to
 * memory; single-threaded code gains nothing above one vCPU), plus the time a
 * call waits on the network (`ioMs`). Stream triggers: at high rates one
 * invocation per `batchSize` records (fewer when they pass Lambda's 6 MB batch
 * payload); at low rates one per shard (times the
 * parallelization factor) per batching window (at least one second, Lambda's
 * polling interval), never more than one per record.
 */
import { prices as listPrices, type Prices } from './prices'

export type Ingress = 'apigateway' | 'alb' | 'function-url'
export type StreamCapacityMode = 'on-demand' | 'provisioned'

/** What the benchmark measures (CPU time at one full vCPU, sizes in bytes). */
export interface MeasuredFigures {
  /** The collector's work for one request of `eventsPerRequest` events. */
  readonly collector: { readonly cpuMsPerRequest: number; readonly requestBytes: number; readonly recordBytes: number }
  /** Enrich per event, and the enriched TSV line it writes to the good stream. */
  readonly enrich: { readonly cpuMsPerEvent: number; readonly goodBytesPerEvent: number }
  /** The archive loader per record archived, and the gzip bytes it stores per event (raw and good together). */
  readonly archive: { readonly cpuMsPerRecord: number; readonly storedBytesPerEvent: number }
}

export interface TriggerShape {
  readonly memoryMb: number
  readonly batchSize: number
  readonly maxBatchingWindowSeconds: number
  readonly parallelizationFactor: number
  /** Network wait of one invocation (reading the batch, writing its output). */
  readonly ioMs: number
}

export interface DeploymentShape {
  readonly ingress: Ingress
  readonly streamMode: StreamCapacityMode
  readonly collector: { readonly memoryMb: number; readonly ioMs: number }
  readonly enrich: TriggerShape
  readonly archive: TriggerShape
  /** Shards of each stream in provisioned mode (at least these; more when the load needs them). */
  readonly shards: Readonly<Record<'raw' | 'good' | 'incomplete' | 'bad' | 'pii', number>>
  /** Fraction of a shard's write limits used before another shard is added (provisioned mode). */
  readonly shardHeadroom: number
  /** Share of collector requests that open a new connection (ALB's new-connection dimension). */
  readonly newConnectionShare: number
  /** Whether the search store is deployed (its line is shown apart, outside the target). */
  readonly searchStore: boolean
  /** Aurora capacity held under continuous load (ACUs). */
  readonly searchStoreAcu: number
}

export interface Load {
  readonly eventsPerSecond: number
  readonly eventsPerRequest: number
}

export type Service = 'ingress' | 'Lambda' | 'Kinesis' | 'S3' | 'DynamoDB' | 'search store'

export interface CostLine {
  readonly service: Service
  readonly item: string
  readonly usd: number
}

export interface MonthlyCost {
  readonly eventsPerMonth: number
  readonly lines: readonly CostLine[]
  /** By service, search store excluded. */
  readonly byService: Readonly<Record<Exclude<Service, 'search store'>, number>>
  /** Everything but the search store. */
  readonly total: number
  readonly perMillionEvents: number
  /** The search store's own cost (0 when not deployed). */
  readonly searchStore: number
}

const GB = 1024 ** 3

/** Most bytes of records Lambda hands one invocation of a stream trigger (its synchronous payload limit). */
export const LAMBDA_BATCH_PAYLOAD_BYTES = 6 * 1024 * 1024

/** Invocations of a stream trigger in a month, for records of `recordBytes` each. */
export function triggerInvocations(records: number, recordBytes: number, shards: number, t: TriggerShape, secondsPerMonth: number): number {
  if (records <= 0) return 0
  const batch = Math.max(1, Math.min(t.batchSize, Math.floor(LAMBDA_BATCH_PAYLOAD_BYTES / Math.max(1, recordBytes))))
  const byBatch = records / batch
  const byWindow = shards * t.parallelizationFactor * (secondsPerMonth / Math.max(1, t.maxBatchingWindowSeconds))
  return Math.min(records, Math.max(byBatch, byWindow))
}

/** Shards a provisioned stream needs for a write rate. */
export function shardsNeeded(recordsPerSecond: number, bytesPerSecond: number, minimum: number, headroom: number, p: Prices = listPrices): number {
  const k = p.kinesis.provisioned
  return Math.max(minimum, Math.ceil(bytesPerSecond / (k.shardBytesPerSecond * headroom)), Math.ceil(recordsPerSecond / (k.shardRecordsPerSecond * headroom)))
}

export function monthlyCost(load: Load, measured: MeasuredFigures, shape: DeploymentShape, p: Prices = listPrices): MonthlyCost {
  const seconds = p.hoursPerMonth * 3600
  const events = load.eventsPerSecond * seconds
  const requests = events / load.eventsPerRequest
  const lines: CostLine[] = []
  const add = (service: Service, item: string, usd: number) => lines.push({ service, item, usd })
  const lambda = (name: string, invocations: number, msEach: number, memoryMb: number) => {
    add('Lambda', `${name}: ${fmtCount(invocations)} requests`, (invocations / 1e6) * p.lambda.perMillionRequests)
    add('Lambda', `${name}: ${memoryMb} MB × ${msEach.toFixed(1)} ms`, invocations * (memoryMb / 1024) * (msEach / 1000) * p.lambda.perGbSecond)
  }
  const stretch = (memoryMb: number) => Math.max(1, p.lambda.mbPerVcpu / memoryMb)

  // Ingress
  if (shape.ingress === 'apigateway') {
    const units = Math.max(1, Math.ceil(measured.collector.requestBytes / p.apiGateway.meteringBytes))
    add('ingress', 'API Gateway HTTP API requests', ((requests * units) / 1e6) * p.apiGateway.perMillionRequests)
  } else if (shape.ingress === 'alb') {
    const l = p.alb.lcu
    const perSecond = requests / seconds
    const gbPerHour = (perSecond * 3600 * measured.collector.requestBytes) / GB
    const lcu = Math.max(perSecond * shape.newConnectionShare / l.newConnectionsPerSecond, gbPerHour / l.lambdaGbPerHour, perSecond / l.ruleEvaluationsPerSecond)
    add('ingress', 'Application Load Balancer hours', p.hoursPerMonth * p.alb.perHour)
    add('ingress', `Application Load Balancer ${lcu.toFixed(2)} LCU`, lcu * p.hoursPerMonth * p.alb.perLcuHour)
  } else {
    add('ingress', 'Lambda function URL', (requests / 1e6) * p.functionUrl.perMillionRequests)
  }

  // Collector
  lambda('collector', requests, measured.collector.cpuMsPerRequest * stretch(shape.collector.memoryMb) + shape.collector.ioMs, shape.collector.memoryMb)

  // Streams: raw holds one record per request, good one per event; the other three carry failures only.
  const rawRecords = requests
  const goodRecords = events
  const streamLoad = {
    raw: { records: rawRecords, bytes: measured.collector.recordBytes, consumers: 2 },
    good: { records: goodRecords, bytes: measured.enrich.goodBytesPerEvent, consumers: shape.searchStore ? 2 : 1 },
    incomplete: { records: 0, bytes: 0, consumers: 1 },
    bad: { records: 0, bytes: 0, consumers: 1 },
    pii: { records: 0, bytes: 0, consumers: 1 },
  }
  const shardsOf: Record<string, number> = {}
  for (const [name, s] of Object.entries(streamLoad)) {
    const declared = shape.shards[name as keyof typeof shape.shards]
    if (shape.streamMode === 'on-demand') {
      const k = p.kinesis.onDemand
      const inGb = (s.records * Math.ceil(s.bytes / k.recordRoundingBytes) * k.recordRoundingBytes) / GB
      add('Kinesis', `${name}: on-demand stream hours`, p.hoursPerMonth * k.perStreamHour)
      if (s.records > 0) {
        add('Kinesis', `${name}: ${inGb.toFixed(0)} GB in`, inGb * k.perGbIn)
        add('Kinesis', `${name}: read by ${s.consumers}`, ((s.records * s.bytes * s.consumers) / GB) * k.perGbOut)
      }
      shardsOf[name] = Math.max(1, Math.ceil((s.records * s.bytes) / seconds / p.kinesis.provisioned.shardBytesPerSecond))
    } else {
      const k = p.kinesis.provisioned
      const shards = shardsNeeded(s.records / seconds, (s.records * s.bytes) / seconds, declared, shape.shardHeadroom, p)
      shardsOf[name] = shards
      add('Kinesis', `${name}: ${shards} shard${shards === 1 ? '' : 's'}`, shards * p.hoursPerMonth * k.perShardHour)
      if (s.records > 0) add('Kinesis', `${name}: PUT payload units`, ((s.records * Math.ceil(s.bytes / k.putUnitBytes)) / 1e6) * k.perMillionPutUnits)
    }
  }

  // Enrich reads the raw stream; the archive loader reads raw and good.
  const enrichCalls = triggerInvocations(rawRecords, measured.collector.recordBytes, shardsOf.raw!, shape.enrich, seconds)
  const eventsPerEnrichCall = enrichCalls > 0 ? events / enrichCalls : 0
  lambda('enrich', enrichCalls, eventsPerEnrichCall * measured.enrich.cpuMsPerEvent * stretch(shape.enrich.memoryMb) + shape.enrich.ioMs, shape.enrich.memoryMb)
  const archiveRaw = triggerInvocations(rawRecords, measured.collector.recordBytes, shardsOf.raw!, shape.archive, seconds)
  const archiveGood = triggerInvocations(goodRecords, measured.enrich.goodBytesPerEvent, shardsOf.good!, shape.archive, seconds)
  const archiveCalls = archiveRaw + archiveGood
  const recordsPerArchiveCall = archiveCalls > 0 ? (rawRecords + goodRecords) / archiveCalls : 0
  lambda('archive', archiveCalls, recordsPerArchiveCall * measured.archive.cpuMsPerRecord * stretch(shape.archive.memoryMb) + shape.archive.ioMs, shape.archive.memoryMb)

  // S3: one object per archive invocation; a month of archive kept for the month.
  add('S3', `${fmtCount(archiveCalls)} archive PUTs`, (archiveCalls / 1000) * p.s3.perThousandPuts)
  const storedGb = (events * measured.archive.storedBytesPerEvent) / GB
  add('S3', `${storedGb.toFixed(0)} GB archived`, storedGb * p.s3.perGbMonth)

  // DynamoDB: the event path reads the registry at cold starts only (resolved schemas are cached).
  add('DynamoDB', 'registry reads at cold starts', 0)

  let searchStore = 0
  if (shape.searchStore) {
    // Idle, the cluster pauses (minimum capacity 0): no compute is billed.
    const acu = events > 0 ? shape.searchStoreAcu : 0
    searchStore = acu * p.hoursPerMonth * p.aurora.perAcuHour + ((events * measured.enrich.goodBytesPerEvent) / GB) * p.aurora.perGbMonth
    add('search store', events > 0 ? `Aurora Serverless v2 ${acu} ACU and a month of events` : 'Aurora Serverless v2 paused (minimum capacity 0)', searchStore)
  }

  const byService = { ingress: 0, Lambda: 0, Kinesis: 0, S3: 0, DynamoDB: 0 }
  for (const l of lines) if (l.service !== 'search store') byService[l.service] += l.usd
  const total = Object.values(byService).reduce((a, b) => a + b, 0)
  return { eventsPerMonth: events, lines, byService, total, perMillionEvents: events > 0 ? total / (events / 1e6) : 0, searchStore }
}

function fmtCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`
  return n.toFixed(0)
}
