/**
 * The one price table of the cost model (`lib/infra/cost-model.ts`,
 * `npm run bench -- cost`): AWS list prices, on-demand, no free tier, no
 * savings plans, in US dollars. Update `asOf` with the figures.
 *
 * Sources (public pricing pages):
 * - Lambda: https://aws.amazon.com/lambda/pricing/ (Arm, first 7.5 billion GB-s; function URLs carry no charge of their own)
 * - API Gateway HTTP APIs: https://aws.amazon.com/api-gateway/pricing/ (first 300 million requests; metered in 512 KB increments)
 * - Application Load Balancer: https://aws.amazon.com/elasticloadbalancing/pricing/ (an LCU: 25 new connections/s,
 *   3,000 active connections/min, 0.4 GB/h processed for Lambda targets, 1,000 rule evaluations/s; the highest dimension is billed)
 * - Kinesis Data Streams: https://aws.amazon.com/kinesis/data-streams/pricing/ (on-demand: records rounded up to 1 KB;
 *   provisioned: a PUT payload unit is 25 KB)
 * - S3 Standard: https://aws.amazon.com/s3/pricing/
 * - DynamoDB on-demand: https://aws.amazon.com/dynamodb/pricing/on-demand/
 * - Aurora Serverless v2 (PostgreSQL, standard): https://aws.amazon.com/rds/aurora/pricing/
 * - CloudWatch Logs: https://aws.amazon.com/cloudwatch/pricing/ (stored, "archived" log data)
 */
export const prices = {
  asOf: '2026-11-25',
  region: 'us-east-1',
  currency: 'USD',
  lambda: {
    /** Arm (Graviton), what Floe's functions run on. */
    perGbSecond: 0.0000133334,
    perMillionRequests: 0.2,
    /** Memory at which a function has one full vCPU; below it CPU time stretches in proportion. */
    mbPerVcpu: 1769,
  },
  apiGateway: {
    /** HTTP API, first 300 million requests a month. */
    perMillionRequests: 1.0,
    /** Each request is metered in increments of this many bytes. */
    meteringBytes: 512 * 1024,
  },
  alb: {
    perHour: 0.0225,
    perLcuHour: 0.008,
    lcu: { newConnectionsPerSecond: 25, activeConnectionsPerMinute: 3000, lambdaGbPerHour: 0.4, ruleEvaluationsPerSecond: 1000 },
  },
  functionUrl: {
    /** Function URLs add nothing to the function's own requests and duration. */
    perMillionRequests: 0,
  },
  kinesis: {
    onDemand: { perStreamHour: 0.04, perGbIn: 0.08, perGbOut: 0.04, recordRoundingBytes: 1024 },
    provisioned: {
      perShardHour: 0.015,
      perMillionPutUnits: 0.014,
      putUnitBytes: 25 * 1024,
      /** One shard takes 1 MB/s and 1,000 records/s. */
      shardBytesPerSecond: 1024 * 1024,
      shardRecordsPerSecond: 1000,
    },
  },
  s3: { perGbMonth: 0.023, perThousandPuts: 0.005, perThousandGets: 0.0004 },
  dynamodb: { perMillionWriteUnits: 0.625, perMillionReadUnits: 0.125, perGbMonth: 0.25 },
  aurora: { perAcuHour: 0.12, perGbMonth: 0.1, perMillionIo: 0.2 },
  /** What `floe teardown` shows a kept log group costing. */
  logs: { perGbMonthStored: 0.03 },
  /** Hours in the model's month (365 × 24 / 12). */
  hoursPerMonth: 730,
} as const

export type Prices = typeof prices
