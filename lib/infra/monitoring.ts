/**
 * What tells an operator that the deployed pipeline is unwell: CloudWatch
 * alarms sent to one SNS topic, and a dashboard of its health at a glance.
 * Every threshold is a deploy setting (`./settings.ts`); every alarm looks at
 * 5-minute periods and treats missing data as not breaching.
 */
import { Duration, Stack } from 'aws-cdk-lib'
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2'
import { Alarm, AlarmStatusWidget, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TextWidget, TreatMissingData, type IAlarmAction, type IMetric } from 'aws-cdk-lib/aws-cloudwatch'
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions'
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { Topic } from 'aws-cdk-lib/aws-sns'
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions'
import { Construct } from 'constructs'
import type { DataResources, FloeFunction } from './function'
import { streamTriggerFailureBucket, streamTriggerFailureMetricsId, streamTriggers, type FunctionKey } from './functions'
import { tables, type StreamKey, type TableKey } from './resources'
import type { DeploySettings } from './settings'

/** The HTTP API stage every route is served on. */
export const API_STAGE = '$default'
/** The route key of the collector (the HTTP API's default route). */
export const COLLECTOR_ROUTE = '$default'

const PERIOD = Duration.minutes(5)

/** Bad rows as a percentage of good events and bad rows (0 when there are none; a counter without a data point counts 0). */
export const BAD_ROW_RATE = 'IF((FILL(good, 0) + FILL(bad, 0)) > 0, 100 * FILL(bad, 0) / (FILL(good, 0) + FILL(bad, 0)), 0)'
/** The collector route's 5xx answers as a percentage of its requests (0 without requests). */
export const COLLECTOR_5XX_RATE = 'IF(FILL(requests, 0) > 0, 100 * FILL(errors, 0) / requests, 0)'

export interface FloeMonitoringProps {
  readonly settings: DeploySettings
  readonly functions: Readonly<Partial<Record<FunctionKey, FloeFunction>>>
  readonly data: DataResources
  readonly api: HttpApi
  /** The CloudWatch namespace of enrich's own metrics, or undefined when it emits none. */
  readonly enrichNamespace?: string
}

/** The alarms by what they watch, e.g. `iteratorAge:enrich`, `errors:collector`, `badRowRate`. */
export type AlarmsByName = Readonly<Record<string, Alarm>>

export class FloeMonitoring extends Construct {
  readonly topic: Topic
  readonly alarms: AlarmsByName
  readonly dashboard: Dashboard

  constructor(scope: Construct, id: string, props: FloeMonitoringProps) {
    super(scope, id)
    const { settings, data, api } = props
    const t = settings.thresholds
    const stack = Stack.of(this)
    const prefix = `floe-${settings.stage}`
    const fns = Object.entries(props.functions).filter((e): e is [FunctionKey, FloeFunction] => e[1] !== undefined)

    this.topic = new Topic(this, 'AlarmTopic', { displayName: `Floe ${settings.stage} alarms`, enforceSSL: true })
    // CloudWatch alarms of this account publish to it (the topic's own policy replaces SNS's default one).
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: { ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` } },
      }),
    )
    for (const email of settings.alarmEmails) this.topic.addSubscription(new EmailSubscription(email))
    const actions: IAlarmAction[] = [new SnsAction(this.topic), ...settings.alarmTopicArns.map((arn, i) => new SnsAction(Topic.fromTopicArn(this, `ExtraAlarmTopic${i}`, arn)))]

    const alarms: Record<string, Alarm> = {}
    const alarm = (name: string, cid: string, metric: IMetric, threshold: number, description: string, comparison = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD) => {
      const a = new Alarm(this, cid, {
        alarmName: `${prefix}-${name.replace(/:/g, '-')}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: comparison,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      })
      for (const action of actions) {
        a.addAlarmAction(action)
        a.addOkAction(action)
      }
      alarms[name] = a
      return a
    }
    const cid = (s: string) => s.replace(/(^|[^A-Za-z0-9])([a-z])/g, (_, _p, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '')

    // Stream consumers (enrich and the loaders): how far behind the newest record they are.
    const consumers = [...new Set(streamTriggers.map((s) => s.function))].filter((k) => props.functions[k])
    for (const key of consumers) {
      const fn = props.functions[key]!.fn
      alarm(`iteratorAge:${key}`, `${cid(key)}IteratorAgeAlarm`, fn.metric('IteratorAge', { statistic: 'Maximum', period: PERIOD }), t.iteratorAgeSeconds * 1000,
        `${key} is more than ${t.iteratorAgeSeconds} s behind its stream (IteratorAge, maximum over 5 minutes): a shard is stuck or the function cannot keep up`, ComparisonOperator.GREATER_THAN_THRESHOLD)
    }
    for (const [key, f] of fns) {
      alarm(`errors:${key}`, `${cid(key)}ErrorsAlarm`, f.fn.metricErrors({ period: PERIOD, statistic: 'Sum' }), t.functionErrors, `${key} failed ${t.functionErrors} or more invocations in 5 minutes (Errors): see its log group`)
      alarm(`throttles:${key}`, `${cid(key)}ThrottlesAlarm`, f.fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }), t.functionThrottles, `${key} was throttled ${t.functionThrottles} or more times in 5 minutes (Throttles): the account's concurrency is exhausted`)
    }
    // Batches the stream triggers gave up on: S3 request metrics of the on-failure prefix.
    const failureBucket = data.buckets[streamTriggerFailureBucket]
    const failedBatches = new Metric({ namespace: 'AWS/S3', metricName: 'PutRequests', dimensionsMap: { BucketName: failureBucket.bucketName, FilterId: streamTriggerFailureMetricsId }, statistic: 'Sum', period: PERIOD })
    alarm('failedBatches', 'FailedBatchesAlarm', failedBatches, t.failedBatches, `${t.failedBatches} or more batches written to the on-failure destination in 5 minutes: records were given up on (they are in the ${streamTriggerFailureBucket} bucket under aws/lambda/)`)

    // Enrich's own counters (embedded metric format, dimension `function`).
    const enrich = props.functions.enrich
    const enrichMetric = (name: string, statistic = 'Sum', period = PERIOD, label?: string) =>
      props.enrichNamespace && enrich ? new Metric({ namespace: props.enrichNamespace, metricName: name, dimensionsMap: { function: enrich.fn.functionName }, statistic, period, label }) : undefined
    if (props.enrichNamespace && enrich) {
      const badRate = new MathExpression({
        expression: BAD_ROW_RATE,
        usingMetrics: { good: enrichMetric('good')!, bad: enrichMetric('bad')! },
        period: PERIOD,
        label: 'bad rows (% of good events and bad rows)',
      })
      alarm('badRowRate', 'BadRowRateAlarm', badRate, t.badRowPercent, `More than ${t.badRowPercent}% of enrich's output in 5 minutes is bad rows (its bad / (good + bad) counters): a tracker sends invalid events or a schema is missing`, ComparisonOperator.GREATER_THAN_THRESHOLD)
    }

    // The collector: the HTTP API's default route (route-level metrics are enabled for it).
    const apiMetric = (name: string, statistic: string, period = PERIOD, route?: string, label?: string) =>
      new Metric({ namespace: 'AWS/ApiGateway', metricName: name, dimensionsMap: { ApiId: api.apiId, Stage: API_STAGE, ...(route ? { Route: route } : {}) }, statistic, period, label: label ?? name })
    const collector5xx = new MathExpression({
      expression: COLLECTOR_5XX_RATE,
      usingMetrics: { requests: apiMetric('Count', 'Sum', PERIOD, COLLECTOR_ROUTE), errors: apiMetric('5xx', 'Sum', PERIOD, COLLECTOR_ROUTE) },
      period: PERIOD,
      label: 'collector 5xx (% of requests)',
    })
    alarm('collector5xxRate', 'Collector5xxRateAlarm', collector5xx, t.collector5xxPercent, `More than ${t.collector5xxPercent}% of the collector's requests answered 5xx in 5 minutes: trackers are retrying or losing events`, ComparisonOperator.GREATER_THAN_THRESHOLD)

    // DynamoDB: read and write throttle events of each table and its indexes.
    for (const [key, table] of Object.entries(data.tables) as [TableKey, DataResources['tables'][TableKey]][]) {
      const usingMetrics: Record<string, IMetric> = {}
      const add = (id: string, metricName: string, index?: string) => {
        usingMetrics[id] = new Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap: { TableName: table.tableName, ...(index ? { GlobalSecondaryIndexName: index } : {}) }, statistic: 'Sum', period: PERIOD })
      }
      add('r', 'ReadThrottleEvents')
      add('w', 'WriteThrottleEvents')
      Object.keys((tables[key] as { indexes?: object }).indexes ?? {}).forEach((index, i) => {
        add(`r${i}`, 'ReadThrottleEvents', index)
        add(`w${i}`, 'WriteThrottleEvents', index)
      })
      const throttles = new MathExpression({ expression: Object.keys(usingMetrics).map((m) => `FILL(${m}, 0)`).join(' + '), usingMetrics, period: PERIOD, label: `${key} throttle events` })
      alarm(`dynamoDbThrottles:${key}`, `${cid(key)}TableThrottlesAlarm`, throttles, t.dynamoDbThrottles, `The ${key} table (or one of its indexes) throttled ${t.dynamoDbThrottles} or more requests in 5 minutes`)
    }
    // Kinesis: records rejected because a stream's shards were full.
    const streamWriteThrottles = (key: StreamKey, period = PERIOD) =>
      new Metric({ namespace: 'AWS/Kinesis', metricName: 'WriteProvisionedThroughputExceeded', dimensionsMap: { StreamName: data.streams[key].streamName }, statistic: 'Sum', period })
    for (const key of Object.keys(data.streams) as StreamKey[]) {
      alarm(`streamWriteThrottles:${key}`, `${cid(key)}StreamWriteThrottlesAlarm`, streamWriteThrottles(key), t.streamWriteThrottles, `${t.streamWriteThrottles} or more records written to the ${key} stream were throttled in 5 minutes: it needs more shards`)
    }
    this.alarms = alarms

    // The dashboard: per-minute figures.
    const minute = Duration.minutes(1)
    const fnMetrics = (f: (fn: FloeFunction, key: string) => IMetric) => fns.map(([k, fn]) => f(fn, k))
    const w = (title: string, left: IMetric[], right: IMetric[] = [], width = 8) => new GraphWidget({ title, left, right, width, height: 6 })
    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `Floe-${settings.stage}`, defaultInterval: Duration.hours(3) })
    this.dashboard.addWidgets(
      new TextWidget({ markdown: `# Floe ${settings.stage}\nPer minute unless stated. The alarms (\`${prefix}-…\`) go to the SNS topic of the stack output AlarmTopicArn; their thresholds are deploy settings (docs/deploying.md).`, width: 24, height: 2 }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(alarms), width: 24, height: 4 }),
    )
    const enrichOut = ['good', 'incomplete', 'bad', 'pii'].map((n) => enrichMetric(n, 'Sum', minute, n)).filter((m): m is Metric => m !== undefined)
    this.dashboard.addWidgets(
      w('Events in', [apiMetric('Count', 'Sum', minute, COLLECTOR_ROUTE, 'collector requests'), new Metric({ namespace: 'AWS/Kinesis', metricName: 'IncomingRecords', dimensionsMap: { StreamName: data.streams.raw.streamName }, statistic: 'Sum', period: minute, label: 'raw stream records' })]),
      enrichOut.length > 0 ? w('Enrich: good / incomplete / bad / pii', enrichOut) : new TextWidget({ markdown: "Enrich's own metrics are off (`monitoring.metrics.cloudwatch = false`).", width: 8, height: 6 }),
      enrichOut.length > 0 ? w('Enrich latency (ms, collector to written)', [enrichMetric('latency', 'Maximum', minute, 'maximum')!, enrichMetric('latency', 'Average', minute, 'average')!]) : new TextWidget({ markdown: ' ', width: 8, height: 6 }),
    )
    this.dashboard.addWidgets(
      w('Iterator age (ms, maximum)', consumers.map((k) => props.functions[k]!.fn.metric('IteratorAge', { statistic: 'Maximum', period: minute, label: k }))),
      w('Function duration (ms, p95)', fnMetrics((f, k) => f.fn.metricDuration({ statistic: 'p95', period: minute, label: k }))),
      w('Function errors and throttles', fnMetrics((f, k) => f.fn.metricErrors({ statistic: 'Sum', period: minute, label: `${k} errors` })), fnMetrics((f, k) => f.fn.metricThrottles({ statistic: 'Sum', period: minute, label: `${k} throttles` }))),
    )
    this.dashboard.addWidgets(
      w('API latency (ms)', [apiMetric('Latency', 'p50', minute, undefined, 'p50'), apiMetric('Latency', 'p95', minute, undefined, 'p95'), apiMetric('Latency', 'p99', minute, undefined, 'p99')]),
      w('API 4xx / 5xx', [apiMetric('4xx', 'Sum', minute), apiMetric('5xx', 'Sum', minute)], [apiMetric('Count', 'Sum', minute, undefined, 'requests')]),
      w('Throttling and failed batches', (Object.keys(data.streams) as StreamKey[]).map((k) => streamWriteThrottles(k, minute).with({ label: `${k} stream write throttles` })), [failedBatches.with({ period: minute, label: 'failed batches' })]),
    )
  }
}
