import { Annotations, ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Token, type StackProps } from 'aws-cdk-lib'
import { CfnStage, DomainName, HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2'
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager'
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations'
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers'
import { AttributeType, Billing, TableV2, type GlobalSecondaryIndexPropsV2 } from 'aws-cdk-lib/aws-dynamodb'
import { Stream, StreamEncryption, StreamMode } from 'aws-cdk-lib/aws-kinesis'
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam'
import { FunctionUrlAuthType, StartingPosition as CdkStartingPosition } from 'aws-cdk-lib/aws-lambda'
import { S3OnFailureDestination, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources'
import { Queue } from 'aws-cdk-lib/aws-sqs'
import { IpAddresses, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2'
import { ApplicationLoadBalancer, ListenerAction, ListenerCertificate, SslPolicy } from 'aws-cdk-lib/aws-elasticloadbalancingv2'
import { LambdaTarget } from 'aws-cdk-lib/aws-elasticloadbalancingv2-targets'
import { AuroraPostgresEngineVersion, ClusterInstance, Credentials, DatabaseCluster, DatabaseClusterEngine } from 'aws-cdk-lib/aws-rds'
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3'
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { resolve } from 'node:path'
import { enrichmentFiles } from './enrichments'
import { API_URL_OUTPUT, RECOVER_FUNCTION_OUTPUT } from './outputs'
import { addLocationOutputs } from './stack-outputs'
import { streamTriggerSource } from './stream-source'
import type { Construct } from 'constructs'
import { FloeFunction, functionLogGroupName, type DataResources } from './function'
import { API_ACCESS_LOG } from './log-groups'
import { API_STAGE, COLLECTOR_ROUTE, FloeMonitoring } from './monitoring'
import { settingsOrThrow, type DeploySettings } from './settings'
import { enrichDeployment, outputPlacementErrors } from '../core/enrich/deploy'
import { LICENSE_MESSAGE } from '../core/enrich/config'
import { ENRICH_OFF_ENV, ENRICH_TRIGGER_ENV, type EnrichTrigger } from '../core/health/report'
import { acknowledge, acknowledgeGrantWildcards } from './nag'
import { METRICS_TARGETS_ENV, type MetricsTargets } from '../core/metrics/cloudwatch'
import { API_DOMAIN_ENV } from '../core/https/aws'
import { buckets, databases, envVar, queues, streams, tables, type BucketKey, type QueueDecl, type QueueKey, type DatabaseDecl, type DatabaseKey, type KeyDecl, type StreamKey, type TableDecl, type TableKey } from './resources'
import { functions, httpAuthorizer, missingDatabases, queueTriggers, streamTriggerFailureBucket, streamTriggerFailureMetricsId, streamTriggerFailurePrefix, streamTriggers, triggerSettings, type FunctionDecl, type FunctionKey } from './functions'

const attr = (k: KeyDecl) => ({ name: k.name, type: k.type === 'S' ? AttributeType.STRING : k.type === 'N' ? AttributeType.NUMBER : AttributeType.BINARY })

/** Logical id from a declaration key: `eventSpecs` → `EventSpecs`. */
export const logicalId = (key: string) => key[0]!.toUpperCase() + key.slice(1)

/** Whether a declared database is part of this deployment (`-c searchStore=false` leaves the search store out). */
export function databaseEnabled(scope: Construct, decl: DatabaseDecl): boolean {
  const v: unknown = scope.node.tryGetContext(decl.contextFlag)
  return !(v === false || v === 'false')
}

/** The deploy settings from the CDK context of `scope` (see `./settings.ts`); throws naming every invalid one. */
export function deploySettings(scope: Construct): DeploySettings {
  return settingsOrThrow(scope.node.getAllContext() as Record<string, unknown>).settings
}

export interface FloeDataStackProps extends StackProps {
  /** Default: read from the CDK context. */
  readonly settings?: DeploySettings
}

/**
 * The stateful resources: tables, streams, buckets and databases, kept on
 * stack deletion. A database is an Aurora PostgreSQL Serverless v2 cluster
 * at minimum capacity 0 (it pauses when idle) with the RDS Data API on, so
 * functions reach it over HTTPS without a VPC; its own VPC has isolated
 * subnets only (no NAT gateway, nothing billed while idle).
 */
export class FloeDataStack extends Stack {
  readonly data: DataResources

  constructor(scope: Construct, id: string, props?: FloeDataStackProps) {
    super(scope, id, props)
    const settings = props?.settings ?? deploySettings(this) // every setting is checked before anything is built
    const tableResources = {} as Record<TableKey, TableV2>
    for (const [key, decl] of Object.entries<TableDecl>(tables)) {
      tableResources[key as TableKey] = new TableV2(this, `${logicalId(key)}Table`, {
        partitionKey: attr(decl.partitionKey),
        sortKey: decl.sortKey && attr(decl.sortKey),
        billing: Billing.onDemand(),
        globalSecondaryIndexes: Object.entries(decl.indexes ?? {}).map(
          ([indexName, ix]): GlobalSecondaryIndexPropsV2 => ({ indexName, partitionKey: attr(ix.partitionKey), sortKey: ix.sortKey && attr(ix.sortKey) }),
        ),
        timeToLiveAttribute: decl.ttlAttribute,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: true,
        removalPolicy: RemovalPolicy.RETAIN,
      })
    }
    const streamResources = {} as Record<StreamKey, Stream>
    for (const [key, decl] of Object.entries(streams)) {
      streamResources[key as StreamKey] = new Stream(this, `${logicalId(key)}Stream`, {
        ...(settings.streamMode === 'on-demand' ? { streamMode: StreamMode.ON_DEMAND } : { streamMode: StreamMode.PROVISIONED, shardCount: decl.shards }),
        retentionPeriod: Duration.hours(decl.retentionHours),
        encryption: StreamEncryption.MANAGED,
        removalPolicy: RemovalPolicy.RETAIN,
      })
    }
    const bucketResources = {} as Record<BucketKey, Bucket>
    for (const [key, decl] of Object.entries(buckets)) {
      bucketResources[key as BucketKey] = new Bucket(this, `${logicalId(key)}Bucket`, {
        encryption: BucketEncryption.S3_MANAGED,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        removalPolicy: RemovalPolicy.RETAIN,
        lifecycleRules: Object.entries((decl as { expirations?: Record<string, number> }).expirations ?? {}).map(([prefix, days]) => ({
          prefix,
          expiration: Duration.days(days),
        })),
        // S3 request metrics of the stream triggers' on-failure prefix (the failed-batches alarm).
        metrics: key === streamTriggerFailureBucket ? [{ id: streamTriggerFailureMetricsId, prefix: streamTriggerFailurePrefix }] : undefined,
      })
      acknowledge(bucketResources[key as BucketKey], 'AwsSolutions-S1', 'Only the stack\'s functions and deployments reach it, under IAM; CloudTrail data events are the audit trail when one is needed')
    }
    const databaseResources: Partial<Record<DatabaseKey, DatabaseCluster>> = {}
    const enabled = Object.entries<DatabaseDecl>(databases).filter(([, decl]) => databaseEnabled(this, decl))
    if (enabled.length > 0) {
      const vpc = new Vpc(this, 'DatabaseVpc', {
        ipAddresses: IpAddresses.cidr('10.42.0.0/16'),
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'isolated', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      })
      acknowledge(vpc, 'AwsSolutions-VPC7', 'Isolated subnets holding only the Aurora cluster, reached through the RDS Data API: no client traffic crosses this VPC')
      for (const [key, decl] of enabled) {
        databaseResources[key as DatabaseKey] = new DatabaseCluster(this, `${logicalId(key)}Database`, {
          engine: DatabaseClusterEngine.auroraPostgres({ version: AuroraPostgresEngineVersion.VER_17_9 }),
          writer: ClusterInstance.serverlessV2('Writer'),
          serverlessV2MinCapacity: decl.minCapacity,
          serverlessV2MaxCapacity: decl.maxCapacity,
          serverlessV2AutoPauseDuration: Duration.seconds(decl.pauseAfterSeconds),
          credentials: Credentials.fromGeneratedSecret('floe'),
          defaultDatabaseName: decl.databaseName,
          enableDataApi: true,
          vpc,
          vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
          storageEncrypted: true,
          deletionProtection: true,
          removalPolicy: RemovalPolicy.RETAIN,
        })
        const cluster = databaseResources[key as DatabaseKey]!
        acknowledge(cluster, 'AwsSolutions-RDS6', 'Reached only through the RDS Data API, which signs in with the Secrets Manager secret; callers are authorized by IAM on the Data API')
        acknowledge(cluster, 'AwsSolutions-SMG4', 'Its credentials secret: rotation needs a rotation function inside the isolated VPC with a Secrets Manager endpoint; only the granted functions can read the secret')
      }
    }
    this.data = { tables: tableResources, streams: streamResources, buckets: bucketResources, databases: databaseResources }
  }
}

/**
 * `-c ingress=alb`: an internet-facing Application Load Balancer in two public
 * subnets of its own VPC (no NAT gateway), HTTPS on the custom domain's
 * certificate (HTTP redirected), every request to the collector function with
 * multi-value headers on (each cookie its own `Set-Cookie`), access logs to a
 * bucket of its own that keeps them for the functions' log retention.
 */
function collectorLoadBalancer(scope: Stack, fn: import('aws-cdk-lib/aws-lambda').IFunction, domain: NonNullable<DeploySettings['domain']>, retentionDays: number): ApplicationLoadBalancer {
  // Elastic Load Balancing writes access logs as a regional account: the bucket policy names it.
  if (Token.isUnresolved(scope.region)) throw new Error('-c ingress=alb needs the stacks\' region: deploy with a region configured (AWS_REGION or the profile\'s region)')
  const vpc = new Vpc(scope, 'CollectorVpc', {
    ipAddresses: IpAddresses.cidr('10.43.0.0/16'),
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
  })
  acknowledge(vpc, 'AwsSolutions-VPC7', "Public subnets holding only the collector's load balancer, whose access log records every request")
  const logs = new Bucket(scope, 'CollectorAccessLogs', {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [{ expiration: Duration.days(retentionDays) }],
  })
  acknowledge(logs, 'AwsSolutions-S1', "The load balancer's access logs themselves; only Elastic Load Balancing writes here")
  const alb = new ApplicationLoadBalancer(scope, 'CollectorLoadBalancer', { vpc, internetFacing: true, dropInvalidHeaderFields: true, vpcSubnets: { subnetType: SubnetType.PUBLIC } })
  alb.logAccessLogs(logs, 'collector')
  acknowledge(alb, 'AwsSolutions-EC23', 'The collector answers trackers on the public internet, as any Snowplow collector does; only HTTPS (and a redirect from HTTP) listens')
  const https = alb.addListener('Https', { port: 443, certificates: [ListenerCertificate.fromArn(domain.certificateArn)], sslPolicy: SslPolicy.RECOMMENDED_TLS, open: true })
  const targets = https.addTargets('Collector', { targets: [new LambdaTarget(fn)] })
  targets.setAttribute('lambda.multi_value_headers.enabled', 'true')
  alb.addListener('Http', { port: 80, open: true, defaultAction: ListenerAction.redirect({ protocol: 'HTTPS', port: '443', permanent: true }) })
  new CfnOutput(scope, 'CollectorLoadBalancerDns', { value: alb.loadBalancerDnsName, description: `Point ${domain.name} here (CNAME or alias record): the collector for trackers` })
  return alb
}

/** The custom domain of the HTTP API from the settings (`domainName` and `certificateArn`, both or neither). */
function customDomain(scope: Stack, settings: DeploySettings): DomainName | undefined {
  if (!settings.domain) return undefined
  return new DomainName(scope, 'ApiDomain', { domainName: settings.domain.name, certificate: Certificate.fromCertificateArn(scope, 'ApiCertificate', settings.domain.certificateArn) })
}

/**
 * The HTTP API's access log: one JSON object per request (API Gateway's
 * `$context` variables; every value a string, `-` when it does not apply).
 */
export const accessLogFormat = {
  requestId: '$context.requestId',
  time: '$context.requestTime',
  timeEpochMs: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  protocol: '$context.protocol',
  domainName: '$context.domainName',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatencyMs: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  authorizerError: '$context.authorizer.error',
  error: '$context.error.message',
} as const

/** The declared reason a function's routes have no authorizer; a function with routes must have `auth` or one. */
function openRoutesReason(key: string, decl: FunctionDecl): string {
  if (!decl.openRoutes) throw new Error(`The function ${key} has routes without an authorizer: declare auth: 'basic' or why they are open (openRoutes)`)
  return decl.openRoutes
}

export interface FloeAppStackProps extends StackProps {
  readonly data: DataResources
  readonly projectRoot: string
  /** Default: read from the CDK context. */
  readonly settings?: DeploySettings
}

/**
 * The declared queues, each with its dead-letter queue (encrypted with SQS's
 * own keys, TLS only). They hold work in progress, so they live and go with
 * the app stack.
 */
function declaredQueues(scope: Construct): Record<QueueKey, Queue> {
  const made = {} as Record<QueueKey, Queue>
  for (const [key, decl] of Object.entries<QueueDecl>(queues)) {
    const fifo = decl.fifo === true
    const deadLetters = new Queue(scope, `${logicalId(key)}DeadLetterQueue`, {
      fifo: fifo || undefined,
      retentionPeriod: Duration.days(decl.deadLetterRetentionDays),
      enforceSSL: true,
    })
    acknowledge(deadLetters, 'AwsSolutions-SQS3', `The dead-letter queue of the ${key} queue`)
    made[key as QueueKey] = new Queue(scope, `${logicalId(key)}Queue`, {
      fifo: fifo || undefined,
      visibilityTimeout: Duration.seconds(decl.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: decl.maxReceiveCount },
      enforceSSL: true,
    })
  }
  return made
}

/** The functions, the HTTP API in front of them and the stream triggers. */
export class FloeAppStack extends Stack {
  readonly api: HttpApi
  /** The collector's load balancer, with `-c ingress=alb`. */
  readonly collectorLoadBalancer?: ApplicationLoadBalancer
  readonly functions: Readonly<Record<FunctionKey, FloeFunction>>
  readonly monitoring: FloeMonitoring
  readonly accessLogs: LogGroup

  constructor(scope: Construct, id: string, props: FloeAppStackProps) {
    super(scope, id, props)
    const read = props.settings ? { settings: props.settings, warnings: [] } : settingsOrThrow(this.node.getAllContext() as Record<string, unknown>)
    const settings = read.settings
    for (const w of read.warnings) Annotations.of(this).addWarningV2('floe:settings', w)
    const fns = {} as Record<FunctionKey, FloeFunction>
    const data: DataResources = { ...props.data, queues: declaredQueues(this) }
    // A function whose database is not deployed is left out, with its routes and triggers.
    const deployed = Object.entries<FunctionDecl>(functions).filter(([, decl]) => missingDatabases(decl, (k) => props.data.databases[k] !== undefined).length === 0)
    for (const [key, decl] of deployed) {
      fns[key as FunctionKey] = new FloeFunction(this, `${logicalId(key)}`, {
        key, decl, data, projectRoot: props.projectRoot, logRetentionDays: settings.logRetentionDays,
        ...(key === 'enrich' ? { memoryMb: settings.enrich.memoryMb } : {}),
      })
    }
    this.functions = fns
    // The metrics function: the physical names of the other functions and of the streams (no function refers to it).
    for (const [key] of deployed.filter(([, d]) => d.readsMetrics)) {
      const targets: MetricsTargets = {
        self: key,
        functions: Object.fromEntries(deployed.filter(([k]) => k !== key).map(([k]) => [k, fns[k as FunctionKey].fn.functionName])),
        streams: Object.fromEntries(Object.entries(props.data.streams).map(([k, s]) => [k, s.streamName])),
      }
      fns[key as FunctionKey].fn.addEnvironment(METRICS_TARGETS_ENV, this.toJsonString(targets))
    }

    const defaultFn = (Object.entries<FunctionDecl>(functions).find(([, d]) => d.routes?.includes('$default')) ?? [])[0] as FunctionKey | undefined
    // A custom domain: `-c domainName=collector.acme.com -c certificateArn=arn:aws:acm:…` (an ACM certificate in the stack's region).
    // With the load balancer as ingress, the custom domain is the load balancer's.
    const domain = settings.ingress === 'alb' ? undefined : customDomain(this, settings)
    this.api = new HttpApi(this, 'HttpApi', {
      description: 'Floe HTTP API',
      defaultIntegration: defaultFn ? new HttpLambdaIntegration('DefaultIntegration', fns[defaultFn].fn) : undefined,
      ...(domain ? { defaultDomainMapping: { domainName: domain } } : {}),
    })
    // The stage: throttling, a JSON access log in its own log group, and route-level metrics for the collector's route.
    this.accessLogs = new LogGroup(this, 'ApiAccessLogs', { logGroupName: functionLogGroupName(this.stackName, API_ACCESS_LOG), retention: settings.accessLogRetentionDays as RetentionDays })
    const throttle = { throttlingBurstLimit: settings.throttleBurstLimit, throttlingRateLimit: settings.throttleRateLimit }
    const stage = this.api.defaultStage!.node.defaultChild as CfnStage
    stage.defaultRouteSettings = throttle
    stage.accessLogSettings = { destinationArn: this.accessLogs.logGroupArn, format: JSON.stringify(accessLogFormat) }
    const defaultRoute = this.api.node.tryFindChild('DefaultRoute')
    if (defaultRoute) {
      acknowledge(defaultRoute, 'AwsSolutions-APIG4', openRoutesReason(defaultFn!, functions[defaultFn!]))
      // (RouteSettings is plain JSON to the CDK: CloudFormation's property names as they are.)
      stage.routeSettings = { [COLLECTOR_ROUTE]: { DetailedMetricsEnabled: true, ThrottlingBurstLimit: settings.throttleBurstLimit, ThrottlingRateLimit: settings.throttleRateLimit } }
      this.api.defaultStage!.node.addDependency(defaultRoute)
    }
    if (stage.stageName !== API_STAGE) throw new Error(`The HTTP API's default stage is ${stage.stageName}, expected ${API_STAGE}`)
    // Another ingress in front of the same `$default` function (the HTTP API's `$default` route keeps reaching it too).
    if (settings.ingress === 'function-url') {
      if (!defaultFn) throw new Error('-c ingress=function-url: no function has the $default route')
      const url = fns[defaultFn].fn.addFunctionUrl({ authType: FunctionUrlAuthType.NONE })
      new CfnOutput(this, 'CollectorUrl', { value: url.url, description: 'Collector endpoint for trackers (Lambda function URL)' })
    }
    if (settings.ingress === 'alb') {
      if (!defaultFn) throw new Error('-c ingress=alb: no function has the $default route')
      if (!settings.domain) throw new Error('-c ingress=alb needs -c domainName and -c certificateArn')
      this.collectorLoadBalancer = collectorLoadBalancer(this, fns[defaultFn].fn, settings.domain, settings.logRetentionDays)
    }
    if (domain) {
      // The control plane's domain form answers with the domain deployed.
      fns.controlPlane?.fn.addEnvironment(API_DOMAIN_ENV, settings.domain!.name)
      new CfnOutput(this, 'ApiDomainTarget', { value: domain.regionalDomainName, description: `Point ${domain.name} here (CNAME or alias record)` })
    }
    // Basic authentication: the declared authorizer in front of every route of a function with `auth: 'basic'`.
    const authorizer = new HttpLambdaAuthorizer('BasicAuth', fns[httpAuthorizer.function].fn, {
      authorizerName: 'floe-basic-auth',
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: [],
      resultsCacheTtl: Duration.seconds(httpAuthorizer.cacheSeconds),
    })
    for (const [key, decl] of deployed) {
      const integration = new HttpLambdaIntegration(`${logicalId(key)}Integration`, fns[key as FunctionKey].fn)
      for (const route of decl.routes ?? []) {
        if (route === '$default') continue
        const r = new HttpRoute(this, `Route${route.method}${route.path.replace(/[^A-Za-z0-9]/g, '')}`, {
          httpApi: this.api,
          routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
          integration,
          ...(decl.auth === 'basic' ? { authorizer } : {}),
        })
        if (decl.auth !== 'basic') acknowledge(r, 'AwsSolutions-APIG4', openRoutesReason(key, decl))
      }
    }

    for (const t of streamTriggers) {
      if (!fns[t.function]) continue
      // Enrich's trigger: the deploy settings over the declaration (batch size: the configuration's unless set).
      const s = t.function === 'enrich'
        ? { ...triggerSettings(t), ...(settings.enrich.batchSize !== undefined ? { batchSize: settings.enrich.batchSize } : {}), maxBatchingWindowSeconds: settings.enrich.batchingWindowSeconds, parallelizationFactor: settings.enrich.parallelizationFactor }
        : triggerSettings(t)
      const fn = fns[t.function].fn
      const disabledReason = (functions[t.function] as FunctionDecl).disabledReason
      // A function that cannot run gets a disabled mapping: records wait in the stream.
      if (disabledReason) Annotations.of(fn).addWarningV2('floe:triggerDisabled', `The ${t.function} trigger on ${t.stream} is created disabled: ${disabledReason}`)
      fn.addEventSource(
        streamTriggerSource(this, t, props.data.streams[t.stream], {
          startingPosition: CdkStartingPosition[s.startingPosition],
          batchSize: s.batchSize,
          maxBatchingWindow: Duration.seconds(s.maxBatchingWindowSeconds),
          reportBatchItemFailures: s.reportBatchItemFailures,
          bisectBatchOnError: s.bisectBatchOnError,
          retryAttempts: s.retryAttempts,
          maxRecordAge: Duration.seconds(s.maxRecordAgeSeconds),
          parallelizationFactor: s.parallelizationFactor,
          onFailure: new S3OnFailureDestination(props.data.buckets[streamTriggerFailureBucket]),
          enabled: !disabledReason,
        }),
      )
      fn.addEnvironment(envVar('stream', t.stream), props.data.streams[t.stream].streamName)
      // /health says so on AWS too (the local stack marks it down when it leaves the trigger out).
      if (t.function === 'enrich' && disabledReason === LICENSE_MESSAGE && fns.health) fns.health.fn.addEnvironment(ENRICH_OFF_ENV, 'licence')
    }
    // Queue triggers: one mapping per declared trigger; a message whose processing keeps failing goes to the queue's dead-letter queue.
    for (const t of queueTriggers) {
      if (!fns[t.function]) continue
      fns[t.function].fn.addEventSource(new SqsEventSource(data.queues![t.queue], { batchSize: t.batchSize, reportBatchItemFailures: true }))
    }
    this.grantTriggerControl(fns, props.data)
    // The enrichment configuration files, synced to their prefix on every deploy (the enrich function reads them at start).
    const enrichmentsDir = settings.enrichmentsDir
    if (enrichmentsDir) {
      const deployment = new BucketDeployment(this, 'EnrichmentFiles', {
        logGroup: new LogGroup(this, 'EnrichmentFilesLogs', { logGroupName: functionLogGroupName(this.stackName, 'enrichmentFiles'), retention: settings.logRetentionDays as RetentionDays }),
        sources: [Source.asset(resolve(props.projectRoot, enrichmentsDir), { exclude: ['*', '!*.json'] })],
        destinationBucket: props.data.buckets[enrichmentFiles.bucket],
        destinationKeyPrefix: enrichmentFiles.prefix,
        prune: true,
        extract: true,
      })
      fns.enrich.node.addDependency(deployment)
      // CDK's own copying function (one per stack), run on deploy only.
      const copier = this.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'))
      if (copier) {
        acknowledge(copier, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', "CDK's bucket deployment function: its role is defined by CDK")
        acknowledge(copier, 'AwsSolutions-L1', "CDK's bucket deployment function: CDK chooses its runtime")
        acknowledgeGrantWildcards(copier)
      }
    }
    // Enrich's outputs are this deployment's streams: a region or endpoint elsewhere is refused here.
    if (fns.enrich) {
      const errors = outputPlacementErrors(enrichDeployment().outputPlacement, { local: false, region: Token.isUnresolved(this.region) ? undefined : this.region })
      if (errors.length > 0) throw new Error(`Enrich configuration:\n  ${errors.join('\n  ')}`)
    }
    // Alarms to one SNS topic, and the dashboard.
    this.monitoring = new FloeMonitoring(this, 'Monitoring', { settings, functions: fns, data: props.data, api: this.api, enrichNamespace: fns.enrich ? enrichDeployment().metricsNamespace : undefined })
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn, description: 'SNS topic the alarms are sent to (subscribe more destinations to it)' })
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName, description: 'CloudWatch dashboard of the pipeline' })
    if (fns.recoverWorker) new CfnOutput(this, RECOVER_FUNCTION_OUTPUT, { value: fns.recoverWorker.fn.functionName, description: 'The recovery worker (floe recover --stack invokes it)' })
    new CfnOutput(this, API_URL_OUTPUT, { value: this.api.apiEndpoint, description: 'Base URL of the Floe HTTP API' })
    addLocationOutputs(this, props.data)
  }

  /**
   * `controlsTriggersOf`: listing mappings has no resource-level permissions;
   * updating is allowed on this account's mappings of the named functions only
   * (condition `lambda:FunctionArn`). A policy of its own, not the role's
   * default one: the function's own ARN in the policy its function depends on
   * would be a circular dependency. A function other than the target gets the
   * target's mapping as `FLOE_ENRICH_TRIGGER` (JSON: function and stream names).
   */
  private grantTriggerControl(fns: Record<FunctionKey, FloeFunction>, data: DataResources): void {
    for (const [key, f] of Object.entries(fns) as [FunctionKey, FloeFunction][]) {
      for (const targetKey of (functions[key] as FunctionDecl).controlsTriggersOf ?? []) {
        if (!(targetKey in functions)) throw new Error(`${key}: controlsTriggersOf names ${targetKey}, which is not a declared function`)
        const target = fns[targetKey as FunctionKey]
        if (!target) continue
        const mappings = this.formatArn({ service: 'lambda', resource: 'event-source-mapping', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME })
        const policy = new Policy(this, `${logicalId(key)}TriggerControl${logicalId(targetKey)}`, {
          roles: [f.fn.role!],
          statements: [
            new PolicyStatement({ actions: ['lambda:ListEventSourceMappings'], resources: ['*'] }),
            new PolicyStatement({ actions: ['lambda:UpdateEventSourceMapping'], resources: [mappings], conditions: { StringEquals: { 'lambda:FunctionArn': target.fn.functionArn } } }),
          ],
        })
        acknowledge(policy, 'AwsSolutions-IAM5[Resource::*]', 'lambda:ListEventSourceMappings has no resource-level permissions (it lists, it changes nothing)')
        const shown = (v: string, token: string) => (Token.isUnresolved(v) ? `<${token}>` : v)
        acknowledge(policy, `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:${shown(this.region, 'AWS::Region')}:${shown(this.account, 'AWS::AccountId')}:event-source-mapping:*]`, `Mapping ids are not known before the mappings exist; the condition lambda:FunctionArn limits the update to mappings of ${targetKey}`)
        if (targetKey !== key) {
          const trigger = streamTriggers.find((t) => t.function === targetKey)
          if (trigger) {
            const value: EnrichTrigger = { functionName: target.fn.functionName, streamName: data.streams[trigger.stream].streamName }
            f.fn.addEnvironment(ENRICH_TRIGGER_ENV, this.toJsonString(value))
          }
        }
      }
    }
  }
}
