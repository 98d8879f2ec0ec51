import { describe, expect, it } from 'vitest'
import { monthlyCost, shardsNeeded, triggerInvocations, type DeploymentShape, type MeasuredFigures } from '../../../lib/infra/cost-model'
import { prices } from '../../../lib/infra/prices'

const measured: MeasuredFigures = {
  collector: { cpuMsPerRequest: 1, requestBytes: 10_000, recordBytes: 10_240 },
  enrich: { cpuMsPerEvent: 0.05, goodBytesPerEvent: 2_000 },
  archive: { cpuMsPerRecord: 0.03, storedBytesPerEvent: 300 },
}
const trigger = { memoryMb: 1024, batchSize: 100, maxBatchingWindowSeconds: 1, parallelizationFactor: 1, ioMs: 40 }
const shape = (over: Partial<DeploymentShape> = {}): DeploymentShape => ({
  ingress: 'apigateway',
  streamMode: 'provisioned',
  collector: { memoryMb: 512, ioMs: 8 },
  enrich: trigger,
  archive: { ...trigger, batchSize: 500, maxBatchingWindowSeconds: 5 },
  shards: { raw: 2, good: 2, incomplete: 1, bad: 1, pii: 1 },
  shardHeadroom: 0.8,
  newConnectionShare: 0.5,
  searchStore: true,
  searchStoreAcu: 0.5,
  ...over,
})
const SECONDS = prices.hoursPerMonth * 3600
const line = (m: ReturnType<typeof monthlyCost>, item: RegExp) => m.lines.filter((l) => item.test(l.item)).reduce((n, l) => n + l.usd, 0)

describe('monthlyCost', () => {
  it('bills API Gateway per request, the function URL nothing, and the ALB per hour and per LCU of its busiest dimension', () => {
    const load = { eventsPerSecond: 1000, eventsPerRequest: 10 }
    const requests = 100 * SECONDS
    expect(monthlyCost(load, measured, shape()).byService.ingress).toBeCloseTo((requests / 1e6) * prices.apiGateway.perMillionRequests, 6)
    expect(monthlyCost(load, measured, shape({ ingress: 'function-url' })).byService.ingress).toBe(0)
    // 100 requests/s of 10,000 B: 3.35 GB/h for a Lambda target is 8.4 LCU, more than 2 LCU of new connections
    const lcu = (100 * 3600 * 10_000) / 1024 ** 3 / prices.alb.lcu.lambdaGbPerHour
    expect(monthlyCost(load, measured, shape({ ingress: 'alb' })).byService.ingress).toBeCloseTo(prices.hoursPerMonth * (prices.alb.perHour + lcu * prices.alb.perLcuHour), 6)
  })

  it('idle, bills only what is provisioned: the declared shards (or on-demand stream hours) and the ALB hours; the search store is paused', () => {
    const idle = { eventsPerSecond: 0, eventsPerRequest: 1 }
    const m = monthlyCost(idle, measured, shape())
    expect(m.byService.Lambda).toBe(0)
    expect(m.byService.ingress).toBe(0)
    expect(m.byService.S3).toBe(0)
    expect(m.byService.Kinesis).toBeCloseTo(7 * prices.hoursPerMonth * prices.kinesis.provisioned.perShardHour, 6)
    expect(m.total).toBeCloseTo(m.byService.Kinesis, 6)
    expect(m.searchStore).toBe(0)
    expect(m.lines.find((l) => l.service === 'search store')?.item).toBe('Aurora Serverless v2 paused (minimum capacity 0)')
    expect(monthlyCost(idle, measured, shape({ streamMode: 'on-demand' })).byService.Kinesis).toBeCloseTo(5 * prices.hoursPerMonth * prices.kinesis.onDemand.perStreamHour, 6)
    expect(monthlyCost(idle, measured, shape({ ingress: 'alb' })).byService.ingress).toBeCloseTo(prices.hoursPerMonth * prices.alb.perHour, 6)
  })

  it('keeps the search store out of the total and the per-million figure', () => {
    const m = monthlyCost({ eventsPerSecond: 100, eventsPerRequest: 10 }, measured, shape())
    expect(m.searchStore).toBeGreaterThan(0)
    expect(m.total).toBeCloseTo(Object.values(m.byService).reduce((a, b) => a + b, 0), 9)
    expect(m.perMillionEvents).toBeCloseTo(m.total / (100 * SECONDS / 1e6), 9)
    expect(monthlyCost({ eventsPerSecond: 100, eventsPerRequest: 10 }, measured, shape({ searchStore: false })).searchStore).toBe(0)
  })

  it('rounds on-demand records up to 1 KB and provisioned ones to 25 KB PUT units', () => {
    const m = monthlyCost({ eventsPerSecond: 10, eventsPerRequest: 10 }, measured, shape({ streamMode: 'on-demand' }))
    // raw: one 10,240 B record per request, i.e. exactly 10 KB; good: 2,000 B rounds to 2 KB
    expect(line(m, /^raw: .* GB in$/)).toBeCloseTo(((SECONDS * 10 * 1024) / 1024 ** 3) * prices.kinesis.onDemand.perGbIn, 6)
    expect(line(m, /^good: .* GB in$/)).toBeCloseTo(((10 * SECONDS * 2048) / 1024 ** 3) * prices.kinesis.onDemand.perGbIn, 6)
    expect(line(m, /stream hours/)).toBeCloseTo(5 * prices.hoursPerMonth * prices.kinesis.onDemand.perStreamHour, 6)
    const p = monthlyCost({ eventsPerSecond: 10, eventsPerRequest: 10 }, measured, shape())
    expect(line(p, /^good: PUT payload units$/)).toBeCloseTo(((10 * SECONDS) / 1e6) * prices.kinesis.provisioned.perMillionPutUnits, 6)
    expect(line(p, /shards?$/)).toBeCloseTo(7 * prices.hoursPerMonth * prices.kinesis.provisioned.perShardHour, 6)
  })

  it('stretches CPU time below one vCPU and adds the network wait', () => {
    const m = monthlyCost({ eventsPerSecond: 1, eventsPerRequest: 1 }, measured, shape())
    const ms = 1 * (prices.lambda.mbPerVcpu / 512) + 8
    expect(m.lines.find((l) => l.item.startsWith('collector: 512 MB'))!.item).toContain(`${ms.toFixed(1)} ms`)
  })
})

describe('shardsNeeded', () => {
  it('adds shards for bytes or records beyond the headroom, never fewer than declared', () => {
    expect(shardsNeeded(10, 10_000, 2, 0.8)).toBe(2)
    expect(shardsNeeded(1000, 2.7e6, 2, 0.8)).toBe(4)
    expect(shardsNeeded(2000, 1000, 1, 0.8)).toBe(3)
  })
})

describe('triggerInvocations', () => {
  it('is one per batching window and shard at low rates, one per batch at high rates, one per record at most', () => {
    expect(triggerInvocations(0, 100, 2, trigger, SECONDS)).toBe(0)
    expect(triggerInvocations(1000, 100, 2, trigger, SECONDS)).toBe(1000)
    expect(triggerInvocations(10 * SECONDS, 100, 2, trigger, SECONDS)).toBe(2 * SECONDS)
    expect(triggerInvocations(1000 * SECONDS, 100, 2, trigger, SECONDS)).toBe(10 * SECONDS)
    expect(triggerInvocations(10 * SECONDS, 100, 2, { ...trigger, parallelizationFactor: 3 }, SECONDS)).toBe(6 * SECONDS)
  })

  it('cuts batches at Lambda’s 6 MB payload', () => {
    const big = { ...trigger, batchSize: 10_000, maxBatchingWindowSeconds: 60 }
    // 1 MB records: 6 per invocation
    expect(triggerInvocations(600 * SECONDS, 1024 * 1024, 1, big, SECONDS)).toBe(100 * SECONDS)
  })
})
