/**
 * Running the stacks in production: deploy settings, alarms, the dashboard,
 * the HTTP API stage's throttling and access log, log retention, and
 * cdk-nag's AwsSolutions pack over the whole app.
 */
import { App } from 'aws-cdk-lib'
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions'
import { Bucket } from 'aws-cdk-lib/aws-s3'
import { PolicyStatement } from 'aws-cdk-lib/aws-iam'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { functions, streamTriggerFailureMetricsId, streamTriggerFailurePrefix, streamTriggers } from '../../../lib/infra/functions'
import { accessLogFormat, FloeAppStack, FloeDataStack, logicalId } from '../../../lib/infra/stacks'
import { defaultThresholds, readSettings, settingKeys, stackNames } from '../../../lib/infra/settings'
import { streams, tables } from '../../../lib/infra/resources'
import { kebabName } from '../../../lib/core/metrics/services'
import { BAD_ROW_RATE, COLLECTOR_5XX_RATE } from '../../../lib/infra/monitoring'
import { projectRoot } from '../../../lib/local/handlers'
import { nagViolations, synthTemplates } from '../../support/synth'

const { app, data } = synthTemplates()
const fnKeys = Object.keys(functions)
const consumers = [...new Set(streamTriggers.map((t) => t.function))]

/** The alarm named `floe-<stage>-<name>`. */
function alarm(t: Template, name: string, stage = 'prod'): any {
  const found = Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((a) => a.Properties.AlarmName === `floe-${stage}-${name}`)
  expect(found, `alarm floe-${stage}-${name}`).toHaveLength(1)
  return found[0].Properties
}
const logicalIdOf = (t: Template, type: string) => Object.keys(t.findResources(type))
const topicId = logicalIdOf(app, 'AWS::SNS::Topic')[0]!

const custom = {
  stage: 'staging',
  alarmEmail: 'ops@acme.com, oncall@acme.com',
  alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:pager',
  alarmIteratorAgeSeconds: '120',
  alarmFunctionErrors: '3',
  alarmFunctionThrottles: 4,
  alarmFailedBatches: '2',
  alarmBadRowPercent: '2.5',
  alarmCollector5xxPercent: '0.5',
  alarmDynamoDbThrottles: '6',
  alarmStreamWriteThrottles: '7',
  logRetentionDays: '90',
  accessLogRetentionDays: '365',
  throttleRateLimit: '250',
  throttleBurstLimit: '500',
}
const tuned = synthTemplates(custom)

describe('deploy settings', () => {
  it('have documented defaults when nothing is set', () => {
    const r = readSettings({}, {})
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.settings).toMatchObject({ stage: 'prod', alarmEmails: [], alarmTopicArns: [], thresholds: defaultThresholds, logRetentionDays: 30, accessLogRetentionDays: 30, throttleRateLimit: 1000, throttleBurstLimit: 2000, searchStore: true })
    expect(r.settings.domain).toBeUndefined()
    expect(r.warnings.join('\n')).toMatch(/No alarm destination/)
  })

  it('read the strings of -c and the JSON values of cdk.json alike', () => {
    const r = readSettings(custom, {})
    expect(r.ok && r.settings).toMatchObject({
      stage: 'staging',
      alarmEmails: ['ops@acme.com', 'oncall@acme.com'],
      alarmTopicArns: ['arn:aws:sns:eu-west-1:123456789012:pager'],
      thresholds: { iteratorAgeSeconds: 120, functionErrors: 3, functionThrottles: 4, failedBatches: 2, badRowPercent: 2.5, collector5xxPercent: 0.5, dynamoDbThrottles: 6, streamWriteThrottles: 7 },
      logRetentionDays: 90,
      accessLogRetentionDays: 365,
      throttleRateLimit: 250,
      throttleBurstLimit: 500,
    })
    expect(r.ok && r.warnings).toEqual([])
    expect(readSettings({ logRetentionDays: 7 }, {})).toMatchObject({ ok: true, settings: { logRetentionDays: 7, accessLogRetentionDays: 7 } })
    expect(readSettings({ searchStore: 'false' }, {})).toMatchObject({ ok: true, settings: { searchStore: false } })
  })

  it('reject every invalid value at once, each error naming its key', () => {
    const r = readSettings({
      stage: 'Prod!',
      alarmEmail: 'ops@acme.com,not-an-address',
      alarmTopicArn: 'arn:aws:sqs:eu-west-1:123456789012:queue',
      alarmIteratorAgeSeconds: '5m',
      alarmBadRowPercent: '0',
      logRetentionDays: '31',
      throttleBurstLimit: '1.5',
      searchStore: 'no',
      domainName: 'collector.acme.com',
    }, {})
    expect(r.ok).toBe(false)
    const errors = r.ok ? [] : r.errors
    for (const key of ['stage', 'alarmEmail', 'alarmTopicArn', 'alarmIteratorAgeSeconds', 'alarmBadRowPercent', 'logRetentionDays', 'throttleBurstLimit', 'searchStore']) {
      expect(errors.some((e) => e.startsWith(`-c ${key}:`)), `${key} in ${errors.join('\n')}`).toBe(true)
    }
    expect(errors.join('\n')).toContain('not-an-address')
    expect(errors.join('\n')).toContain('30, 60')
    expect(errors.join('\n')).toContain('needs both -c domainName=<domain> and -c certificateArn')
    expect(readSettings({ domainName: 'collector.acme.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' }, {}).ok).toBe(true)
  })

  it('stop the CDK app before anything is built, naming the setting', () => {
    const cdk = new App({ context: { throttleRateLimit: 'fast' } })
    expect(() => new FloeDataStack(cdk, 'D')).toThrow(/-c throttleRateLimit: must be a number from 1 to 1000000, got "fast"/)
  })

  it('warn of an unknown key with the nearest known one, and leave the CDK\'s own keys alone', () => {
    const r = readSettings({ alarmEmial: 'ops@acme.com', '@aws-cdk/core:enableDiffNoFail': true, 'aws:cdk:bundling-stacks': [] }, {})
    expect(r.ok && r.warnings.filter((w) => !/No alarm destination/.test(w))).toEqual(['Unknown deploy setting -c alarmEmial (did you mean alarmEmail?); it is ignored'])
    const cdk = new App({ context: { 'aws:cdk:bundling-stacks': [], logRetentionDay: '7' } })
    const d = new FloeDataStack(cdk, 'D')
    const warnings = Annotations.fromStack(new FloeAppStack(cdk, 'A', { data: d.data, projectRoot })).findWarning('*', Match.stringLikeRegexp('did you mean logRetentionDays'))
    expect(warnings).toHaveLength(1)
  })

  it('name the stacks of a stage, and the enrichment files come from -c enrichmentsDir or FLOE_ENRICHMENTS_DIR', () => {
    expect(stackNames('prod')).toEqual({ data: 'FloeData', app: 'FloeApp' })
    expect(stackNames('staging')).toEqual({ data: 'FloeData-staging', app: 'FloeApp-staging' })
    expect(readSettings({}, { FLOE_ENRICHMENTS_DIR: 'enrichments' })).toMatchObject({ ok: true, settings: { enrichmentsDir: 'enrichments' } })
    expect(readSettings({ enrichmentsDir: 'conf/enrichments' }, { FLOE_ENRICHMENTS_DIR: 'enrichments' })).toMatchObject({ ok: true, settings: { enrichmentsDir: 'conf/enrichments' } })
    expect(Object.keys(settingKeys)).toEqual(expect.arrayContaining(['stage', 'alarmEmail', 'alarmTopicArn', 'logRetentionDays', 'throttleRateLimit', 'throttleBurstLimit', 'searchStore', 'domainName', 'certificateArn', 'enrichmentsDir']))
  })
})

describe('alarms', () => {
  const sendsToTopic = (a: any) => {
    expect(a.AlarmActions).toEqual([{ Ref: topicId }])
    expect(a.OKActions).toEqual([{ Ref: topicId }])
    expect(a.TreatMissingData).toBe('notBreaching')
    expect(a.EvaluationPeriods).toBe(1)
  }

  it('watch the iterator age of enrich and of each loader', () => {
    expect(consumers.sort()).toEqual(['archive', 'enrich', 'searchLoader'])
    for (const key of consumers) {
      const a = alarm(app, `iteratorAge-${key}`)
      expect(a).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'IteratorAge', Statistic: 'Maximum', Period: 300, Threshold: 300_000, ComparisonOperator: 'GreaterThanThreshold' })
      expect(JSON.stringify(a.Dimensions)).toContain(`${logicalId(key)}Function`)
      sendsToTopic(a)
    }
    expect(alarm(tuned.app, 'iteratorAge-enrich', 'staging').Threshold).toBe(120_000)
  })

  it('watch every function for errors and throttles', () => {
    for (const key of fnKeys) {
      const errors = alarm(app, `errors-${key}`)
      expect(errors).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Statistic: 'Sum', Period: 300, Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' })
      sendsToTopic(errors)
      expect(alarm(app, `throttles-${key}`)).toMatchObject({ MetricName: 'Throttles', Statistic: 'Sum', Threshold: 1 })
    }
    expect(alarm(tuned.app, 'errors-collector', 'staging').Threshold).toBe(3)
    expect(alarm(tuned.app, 'throttles-collector', 'staging').Threshold).toBe(4)
  })

  it('count the objects written to the on-failure destination, from request metrics of its prefix', () => {
    data.hasResourceProperties('AWS::S3::Bucket', { MetricsConfigurations: [{ Id: streamTriggerFailureMetricsId, Prefix: streamTriggerFailurePrefix }] })
    const a = alarm(app, 'failedBatches')
    expect(a).toMatchObject({ Namespace: 'AWS/S3', MetricName: 'PutRequests', Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' })
    expect(a.Dimensions).toContainEqual({ Name: 'FilterId', Value: streamTriggerFailureMetricsId })
    expect(JSON.stringify(a.Dimensions)).toContain('ArchiveBucket')
    sendsToTopic(a)
    expect(alarm(tuned.app, 'failedBatches', 'staging').Threshold).toBe(2)
  })

  it("compare enrich's bad rows with its good events, from enrich's own metrics", () => {
    const a = alarm(app, 'badRowRate')
    expect(a).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold' })
    const expr = a.Metrics.find((m: any) => m.Expression)
    expect(expr.Expression).toBe(BAD_ROW_RATE)
    for (const name of ['good', 'bad']) {
      const m = a.Metrics.find((x: any) => x.Id === name).MetricStat
      expect(m).toMatchObject({ Metric: { Namespace: 'floe.enrich', MetricName: name }, Stat: 'Sum', Period: 300 })
      expect(m.Metric.Dimensions[0].Name).toBe('function')
      expect(JSON.stringify(m.Metric.Dimensions[0].Value)).toContain('EnrichFunction')
    }
    sendsToTopic(a)
    expect(alarm(tuned.app, 'badRowRate', 'staging').Threshold).toBe(2.5)
  })

  it('follow the namespace enrich is configured to emit under, and are left out when it emits none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-ops-'))
    const hocon = (monitoring: string) => `{ "input": { "streamName": "raw" }, "output": { "good": { "streamName": "good" }, "incomplete": { "streamName": "incomplete" }, "bad": { "streamName": "bad" }, "pii": { "streamName": "pii" } }, "monitoring": ${monitoring} }`
    try {
      writeFileSync(join(dir, 'prefix.hocon'), hocon('{ "metrics": { "stdout": { "period": "10 seconds", "prefix": "acme.enrich" } } }'))
      writeFileSync(join(dir, 'off.hocon'), hocon('{ "metrics": { "cloudwatch": false } }'))
      vi.stubEnv('FLOE_ENRICH_CONFIG', join(dir, 'prefix.hocon'))
      const prefixed = synthTemplates({ stage: 'prefixed' })
      expect(alarm(prefixed.app, 'badRowRate', 'prefixed').Metrics.find((x: any) => x.Id === 'good').MetricStat.Metric.Namespace).toBe('acme.enrich')
      vi.stubEnv('FLOE_ENRICH_CONFIG', join(dir, 'off.hocon'))
      const off = synthTemplates({ stage: 'off' })
      const names = Object.values(off.app.findResources('AWS::CloudWatch::Alarm')).map((x) => x.Properties.AlarmName)
      expect(names).not.toContain('floe-off-badRowRate')
      expect(names).toContain('floe-off-collector5xxRate')
    } finally {
      vi.unstubAllEnvs()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("watch the collector's 5xx rate on its own route", () => {
    const a = alarm(app, 'collector5xxRate')
    expect(a).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold' })
    expect(a.Metrics.find((m: any) => m.Expression).Expression).toBe(COLLECTOR_5XX_RATE)
    for (const [id, metric] of [['requests', 'Count'], ['errors', '5xx']]) {
      const m = a.Metrics.find((x: any) => x.Id === id).MetricStat
      expect(m).toMatchObject({ Metric: { Namespace: 'AWS/ApiGateway', MetricName: metric }, Stat: 'Sum', Period: 300 })
      expect(m.Metric.Dimensions).toEqual(expect.arrayContaining([{ Name: 'Stage', Value: '$default' }, { Name: 'Route', Value: '$default' }]))
    }
    sendsToTopic(a)
    expect(alarm(tuned.app, 'collector5xxRate', 'staging').Threshold).toBe(0.5)
  })

  it('watch every table (and its indexes) for throttling, and every stream for write throttling', () => {
    for (const key of Object.keys(tables)) {
      const a = alarm(app, `dynamoDbThrottles-${key}`)
      const metrics = a.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric)
      const indexes = Object.keys((tables as Record<string, { indexes?: object }>)[key]!.indexes ?? {}).length
      expect(metrics).toHaveLength(2 + 2 * indexes)
      expect(new Set(metrics.map((m: any) => m.MetricName))).toEqual(new Set(['ReadThrottleEvents', 'WriteThrottleEvents']))
      expect(a.Threshold).toBe(1)
      sendsToTopic(a)
    }
    for (const key of Object.keys(streams)) {
      const a = alarm(app, `streamWriteThrottles-${key}`)
      expect(a).toMatchObject({ Namespace: 'AWS/Kinesis', MetricName: 'WriteProvisionedThroughputExceeded', Statistic: 'Sum', Threshold: 1 })
      sendsToTopic(a)
    }
    expect(alarm(tuned.app, 'dynamoDbThrottles-settings', 'staging').Threshold).toBe(6)
    expect(alarm(tuned.app, 'streamWriteThrottles-raw', 'staging').Threshold).toBe(7)
  })

  it('are all of the above and nothing else', () => {
    const expected = consumers.length + 2 * fnKeys.length + 1 + 1 + 1 + Object.keys(tables).length + Object.keys(streams).length
    app.resourceCountIs('AWS::CloudWatch::Alarm', expected)
  })

  it('go to a topic the e-mail addresses are subscribed to, and to the existing topics named', () => {
    app.resourceCountIs('AWS::SNS::Subscription', 0)
    tuned.app.resourceCountIs('AWS::SNS::Subscription', 2)
    tuned.app.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@acme.com' })
    const a = alarm(tuned.app, 'errors-enrich', 'staging')
    expect(a.AlarmActions).toEqual([{ Ref: logicalIdOf(tuned.app, 'AWS::SNS::Topic')[0] }, 'arn:aws:sns:eu-west-1:123456789012:pager'])
    // CloudWatch may publish to it; nothing may use it without TLS.
    const policy = JSON.stringify(Object.values(app.findResources('AWS::SNS::TopicPolicy'))[0].Properties.PolicyDocument)
    expect(policy).toContain('cloudwatch.amazonaws.com')
    expect(policy).toContain('aws:SecureTransport')
  })
})

describe('the dashboard', () => {
  it("shows the pipeline's health: events in, enrich's outputs and latency, iterator ages, durations, errors, API latency and 4xx/5xx", () => {
    const dashboards = Object.values(app.findResources('AWS::CloudWatch::Dashboard'))
    expect(dashboards).toHaveLength(1)
    expect(dashboards[0].Properties.DashboardName).toBe('Floe-prod')
    // The body is a JSON document joined with references: references as X.
    const body = (dashboards[0].Properties.DashboardBody['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'X')).join('')
    expect(() => JSON.parse(body)).not.toThrow()
    for (const title of ['Events in', 'Enrich: good / incomplete / bad / pii', 'Enrich latency', 'Iterator age', 'Function duration', 'Function errors and throttles', 'API latency', 'API 4xx / 5xx', 'Alarms']) {
      expect(body, title).toContain(title)
    }
    for (const metric of ['IncomingRecords', 'IteratorAge', 'Duration', 'Errors', 'Throttles', 'Latency', '4xx', '5xx', 'WriteProvisionedThroughputExceeded', 'PutRequests']) expect(body, metric).toContain(metric)
    for (const counter of ['good', 'incomplete', 'bad', 'pii', 'latency']) expect(body).toContain(`["floe.enrich","${counter}","function","X"`)
    expect(Object.values(tuned.app.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardName).toBe('Floe-staging')
  })
})

describe('the edge', () => {
  const stage = (t: Template) => {
    const stages = Object.values(t.findResources('AWS::ApiGatewayV2::Stage'))
    expect(stages).toHaveLength(1)
    return stages[0].Properties
  }

  it('throttles the HTTP API stage, by default and as set', () => {
    expect(stage(app)).toMatchObject({ StageName: '$default', AutoDeploy: true, DefaultRouteSettings: { ThrottlingBurstLimit: 2000, ThrottlingRateLimit: 1000 } })
    expect(stage(tuned.app).DefaultRouteSettings).toEqual({ ThrottlingBurstLimit: 500, ThrottlingRateLimit: 250 })
    // The collector's route also reports its own metrics (its 5xx alarm), with the same limits.
    expect(stage(app).RouteSettings).toEqual({ $default: { DetailedMetricsEnabled: true, ThrottlingBurstLimit: 2000, ThrottlingRateLimit: 1000 } })
    const [stageId] = logicalIdOf(app, 'AWS::ApiGatewayV2::Stage')
    expect(app.findResources('AWS::ApiGatewayV2::Stage')[stageId!].DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^HttpApiDefaultRoute/)]))
  })

  it('writes a JSON access log to its own log group, kept as set', () => {
    const groups = app.findResources('AWS::Logs::LogGroup', { Properties: { LogGroupName: '/floe/FloeApp/api-access' } })
    expect(Object.values(groups)).toHaveLength(1)
    const [groupId, group] = Object.entries(groups)[0]!
    expect(group.Properties.RetentionInDays).toBe(30)
    const s = stage(app)
    expect(s.AccessLogSettings.DestinationArn).toEqual({ 'Fn::GetAtt': [groupId, 'Arn'] })
    const format = JSON.parse(s.AccessLogSettings.Format)
    expect(format).toEqual(accessLogFormat)
    expect(format.requestId).toBe('$context.requestId')
    for (const k of ['status', 'routeKey', 'ip', 'responseLatencyMs', 'integrationError']) expect(format).toHaveProperty(k)
    tuned.app.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: '/floe/FloeApp/api-access', RetentionInDays: 365 })
  })

  it("keeps every function's logs as long as set (30 days by default)", () => {
    for (const key of fnKeys) {
      app.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: `/floe/FloeApp/${kebabName(key)}`, RetentionInDays: 30 })
    }
    const tunedGroups = Object.values(tuned.app.findResources('AWS::Logs::LogGroup')).filter((g) => g.Properties.LogGroupName !== '/floe/FloeApp/api-access')
    expect(tunedGroups).toHaveLength(fnKeys.length)
    for (const g of tunedGroups) expect(g.Properties.RetentionInDays).toBe(90)
  })

  it('gives each function a role of its own with no AWS managed policy, writing only to its own log group', () => {
    const roles = Object.values(app.findResources('AWS::IAM::Role')).filter((r) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'))
    expect(roles).toHaveLength(fnKeys.length)
    for (const r of roles) expect(r.Properties.ManagedPolicyArns).toBeUndefined()
    const statements = Object.values(app.findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement)
    const logWrites = statements.filter((s: any) => JSON.stringify(s.Action).includes('logs:PutLogEvents'))
    expect(logWrites).toHaveLength(fnKeys.length)
    for (const s of logWrites) expect(JSON.stringify(s.Resource)).toMatch(/Logs[0-9A-F]{8}", ?"Arn"/)
  })

  it('declares why every route without an authorizer is open', () => {
    for (const [key, f] of Object.entries(functions) as [string, { routes?: unknown[]; auth?: string; openRoutes?: string }][]) {
      if (f.routes?.length && f.auth !== 'basic') expect(f.openRoutes, key).toMatch(/\w/)
    }
  })
})

describe('cdk-nag (AwsSolutions)', () => {
  afterAll(() => vi.unstubAllEnvs())

  it('reports nothing unacknowledged, with the default settings', () => {
    expect(nagViolations()).toBe('')
  })

  it('reports nothing unacknowledged with every option on (custom domain, enrichment files, alarm destinations), nor without the search store', () => {
    vi.stubEnv('FLOE_ENRICHMENTS_DIR', 'enrichments')
    expect(nagViolations({ ...custom, domainName: 'collector.acme.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' })).toBe('')
    vi.unstubAllEnvs()
    expect(nagViolations({ searchStore: false })).toBe('')
  })

  it('reports what nobody acknowledged', () => {
    const report = nagViolations({}, { extra: (d) => new Bucket(d, 'Unreviewed') })
    expect(report).toContain('AwsSolutions-S1')
    expect(report).toContain('FloeData/Unreviewed')
  })

  it("acknowledges only the wildcards of CDK's grants: another one in a function's policy is reported", () => {
    const report = nagViolations({}, {
      extra: (_d, a) => {
        a.functions.collector.fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:*'], resources: ['*'] }))
        a.functions.enrich.fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::elsewhere/*/private/*'] }))
      },
    })
    expect(report).toContain('AwsSolutions-IAM5[Action::s3:*]')
    expect(report).toContain('AwsSolutions-IAM5[Resource::*]')
    expect(report).toContain('FloeApp/Collector/Role/DefaultPolicy')
    expect(report).toContain('AwsSolutions-IAM5[Resource::arn:aws:s3:::elsewhere/*/private/*]')
    // the grants themselves stay acknowledged
    expect(report).not.toContain('s3:GetObject*')
  })
})
