import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib'
import { DomainName, HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2'
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager'
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations'
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers'
import { AttributeType, Billing, TableV2, type GlobalSecondaryIndexPropsV2 } from 'aws-cdk-lib/aws-dynamodb'
import { Stream, StreamEncryption, StreamMode } from 'aws-cdk-lib/aws-kinesis'
import { StartingPosition as CdkStartingPosition } from 'aws-cdk-lib/aws-lambda'
import { S3OnFailureDestination } from 'aws-cdk-lib/aws-lambda-event-sources'
import { IpAddresses, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2'
import { AuroraPostgresEngineVersion, ClusterInstance, Credentials, DatabaseCluster, DatabaseClusterEngine } from 'aws-cdk-lib/aws-rds'
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3'
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment'
import { resolve } from 'node:path'
import { enrichmentFiles } from './enrichments'
import { API_URL_OUTPUT } from './outputs'
import { addLocationOutputs } from './stack-outputs'
import { streamTriggerSource } from './stream-source'
import type { Construct } from 'constructs'
import { FloeFunction, type DataResources } from './function'
import { METRICS_TARGETS_ENV, type MetricsTargets } from '../core/metrics/cloudwatch'
import { buckets, databases, envVar, streams, tables, type BucketKey, type DatabaseDecl, type DatabaseKey, type KeyDecl, type StreamKey, type TableDecl, type TableKey } from './resources'
import { functions, httpAuthorizer, missingDatabases, streamTriggerFailureBucket, streamTriggers, triggerSettings, type FunctionDecl, type FunctionKey } from './functions'

const attr = (k: KeyDecl) => ({ name: k.name, type: k.type === 'S' ? AttributeType.STRING : k.type === 'N' ? AttributeType.NUMBER : AttributeType.BINARY })

/** Logical id from a declaration key: `eventSpecs` → `EventSpecs`. */
export const logicalId = (key: string) => key[0]!.toUpperCase() + key.slice(1)

/** Whether a declared database is part of this deployment (`-c searchStore=false` leaves the search store out). */
export function databaseEnabled(scope: Construct, decl: DatabaseDecl): boolean {
  const v: unknown = scope.node.tryGetContext(decl.contextFlag)
  return !(v === false || v === 'false')
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

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props)
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
        streamMode: StreamMode.PROVISIONED,
        shardCount: decl.shards,
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
      })
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
      }
    }
    this.data = { tables: tableResources, streams: streamResources, buckets: bucketResources, databases: databaseResources }
  }
}

/** The custom domain of the HTTP API from the context (`domainName` and `certificateArn`, both or neither). */
function customDomain(scope: Stack): DomainName | undefined {
  const name = scope.node.tryGetContext('domainName') as string | undefined
  const certificateArn = scope.node.tryGetContext('certificateArn') as string | undefined
  if (!name && !certificateArn) return undefined
  if (!name || !certificateArn) throw new Error('A custom domain needs both -c domainName=<domain> and -c certificateArn=<ACM certificate ARN for it>')
  return new DomainName(scope, 'ApiDomain', { domainName: name, certificate: Certificate.fromCertificateArn(scope, 'ApiCertificate', certificateArn) })
}

export interface FloeAppStackProps extends StackProps {
  readonly data: DataResources
  readonly projectRoot: string
}

/** The functions, the HTTP API in front of them and the stream triggers. */
export class FloeAppStack extends Stack {
  readonly api: HttpApi
  readonly functions: Readonly<Record<FunctionKey, FloeFunction>>

  constructor(scope: Construct, id: string, props: FloeAppStackProps) {
    super(scope, id, props)
    const fns = {} as Record<FunctionKey, FloeFunction>
    // A function whose database is not deployed is left out, with its routes and triggers.
    const deployed = Object.entries<FunctionDecl>(functions).filter(([, decl]) => missingDatabases(decl, (k) => props.data.databases[k] !== undefined).length === 0)
    for (const [key, decl] of deployed) {
      fns[key as FunctionKey] = new FloeFunction(this, `${logicalId(key)}`, { key, decl, data: props.data, projectRoot: props.projectRoot })
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
    const domain = customDomain(this)
    this.api = new HttpApi(this, 'HttpApi', {
      description: 'Floe HTTP API',
      defaultIntegration: defaultFn ? new HttpLambdaIntegration('DefaultIntegration', fns[defaultFn].fn) : undefined,
      ...(domain ? { defaultDomainMapping: { domainName: domain } } : {}),
    })
    if (domain) {
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
        new HttpRoute(this, `Route${route.method}${route.path.replace(/[^A-Za-z0-9]/g, '')}`, {
          httpApi: this.api,
          routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
          integration,
          ...(decl.auth === 'basic' ? { authorizer } : {}),
        })
      }
    }

    for (const t of streamTriggers) {
      if (!fns[t.function]) continue
      const s = triggerSettings(t)
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
    }
    // The enrichment configuration files, synced to their prefix on every deploy (the enrich function reads them at start).
    const enrichmentsDir = enrichmentFiles.sourceDir()
    if (enrichmentsDir) {
      const deployment = new BucketDeployment(this, 'EnrichmentFiles', {
        sources: [Source.asset(resolve(props.projectRoot, enrichmentsDir), { exclude: ['*', '!*.json'] })],
        destinationBucket: props.data.buckets[enrichmentFiles.bucket],
        destinationKeyPrefix: enrichmentFiles.prefix,
        prune: true,
        extract: true,
      })
      fns.enrich.node.addDependency(deployment)
    }
    new CfnOutput(this, API_URL_OUTPUT, { value: this.api.apiEndpoint, description: 'Base URL of the Floe HTTP API' })
    addLocationOutputs(this, props.data)
  }
}
