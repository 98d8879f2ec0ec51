import { Duration, Stack } from 'aws-cdk-lib'
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb'
import type { IStream } from 'aws-cdk-lib/aws-kinesis'
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam'
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import type { IBucket } from 'aws-cdk-lib/aws-s3'
import type { IQueue } from 'aws-cdk-lib/aws-sqs'
import type { DatabaseCluster } from 'aws-cdk-lib/aws-rds'
import { Construct } from 'constructs'
import { dirname, resolve } from 'node:path'
import { databases, envVar, type Access, type BucketKey, type DatabaseConnection, type DatabaseKey, type QueueKey, type ResourceKind, type StreamKey, type TableKey } from './resources'
import { type FunctionDecl } from './functions'
import { functionLogGroupName } from './log-groups'
import { acknowledge, acknowledgeGrantWildcards } from './nag'

export interface DataResources {
  readonly tables: Readonly<Record<TableKey, ITableV2>>
  readonly streams: Readonly<Record<StreamKey, IStream>>
  readonly buckets: Readonly<Record<BucketKey, IBucket>>
  /** The databases of this deployment (absent when left out). */
  readonly databases: Readonly<Partial<Record<DatabaseKey, DatabaseCluster>>>
  /** The queues (made by the app stack: they hold work in progress, not data). */
  readonly queues?: Readonly<Record<QueueKey, IQueue>>
}

export interface FloeFunctionProps {
  /** The function's key in the declaration (default: the construct id); it names the log group. */
  readonly key?: string
  readonly decl: FunctionDecl
  readonly data: DataResources
  readonly projectRoot: string
  /** Days the function's log group keeps its logs (one of CloudWatch Logs' retention periods; default 30). */
  readonly logRetentionDays?: number
  /** Memory in MB, over the declaration's (a deploy setting). */
  readonly memoryMb?: number
}

/**
 * A declared function: Node.js 22 on arm64, bundled by esbuild as ESM, with
 * JSON logs in its own log group. Each grant in the declaration gives the IAM
 * permission and the environment variable with the resource's name together.
 */
export class FloeFunction extends Construct {
  readonly fn: NodejsFunction

  constructor(scope: Construct, id: string, props: FloeFunctionProps) {
    super(scope, id)
    const { decl, data } = props
    const logGroup = new LogGroup(this, 'Logs', { logGroupName: functionLogGroupName(Stack.of(this).stackName, props.key ?? id), retention: (props.logRetentionDays ?? RetentionDays.ONE_MONTH) as RetentionDays })
    // Its own role: writing to its own log group is its only permission besides its grants (no AWS managed policy).
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `Floe function ${props.key ?? id}` })
    logGroup.grantWrite(role)
    this.fn = new NodejsFunction(this, 'Function', {
      description: decl.description,
      entry: resolve(props.projectRoot, decl.entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memoryMb ?? decl.memoryMb ?? 256,
      timeout: Duration.seconds(decl.timeoutSeconds ?? 30),
      loggingFormat: LoggingFormat.JSON,
      logGroup,
      role,
      depsLockFilePath: resolve(props.projectRoot, 'package-lock.json'),
      projectRoot: props.projectRoot,
      environment: { NODE_OPTIONS: '--enable-source-maps', FLOE_SCHEMAS_DIR: '/var/task/schemas', ...decl.environment },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        externalModules: ['@aws-sdk/*'],
        banner: "import { createRequire } from 'module';const require = createRequire(import.meta.url);",
        forceDockerBundling: false,
        // The project's JSON Schemas ship with every function (validators, embedded registry);
        // the Iglu Central snapshot only with the functions that resolve schemas.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `cp -R "${inputDir}/schemas" "${outputDir}/schemas"`,
            ...(decl.resolvesSchemas ? [] : [`rm -rf "${outputDir}/schemas/iglu-central"`]),
            // The pages, built with esbuild from lib/ui (see lib/ui/build.ts).
            ...(decl.ui ? [`node "${inputDir}/node_modules/tsx/dist/cli.mjs" "${inputDir}/lib/ui/build.ts" "${outputDir}/ui"`] : []),
            ...(decl.packageFiles ?? []).flatMap((f) => [
              `mkdir -p "${outputDir}/package-files/${dirname(f)}"`,
              `cp "${inputDir}/node_modules/${f}" "${outputDir}/package-files/${f}"`,
            ]),
          ],
        },
      },
    })
    const grant = <R>(kind: ResourceKind, granted: Partial<Record<string, Access>> | undefined, resources: Readonly<Record<string, R>>, how: Record<Access, (r: R) => unknown>, name: (r: R) => string) => {
      for (const [key, access] of Object.entries(granted ?? {}) as [string, Access][]) {
        const resource = resources[key]
        if (resource === undefined) throw new Error(`${id} is granted the ${kind} '${key}', which this stack does not make`)
        how[access](resource)
        this.fn.addEnvironment(envVar(kind, key), name(resource))
      }
    }
    // A function the control plane can restart reads the restart generations from the settings table;
    // one that resolves schemas reads the registry's change counter there (lib/runtime/registry-changes.ts).
    const tablesGranted = (decl.services?.length || decl.resolvesSchemas) && !decl.tables?.settings ? { ...decl.tables, settings: 'read' as const } : decl.tables
    grant('table', tablesGranted, data.tables, { read: (t) => t.grantReadData(this.fn), write: (t) => t.grantWriteData(this.fn), readWrite: (t) => t.grantReadWriteData(this.fn) }, (t) => t.tableName)
    grant('stream', decl.streams, data.streams, { read: (s) => s.grantRead(this.fn), write: (s) => s.grantWrite(this.fn), readWrite: (s) => s.grantReadWrite(this.fn) }, (s) => s.streamName)
    grant('bucket', decl.buckets, data.buckets, { read: (b) => b.grantRead(this.fn), write: (b) => b.grantWrite(this.fn), readWrite: (b) => b.grantReadWrite(this.fn) }, (b) => b.bucketName)
    grant('queue', decl.queues, data.queues ?? {}, { read: (q) => q.grantConsumeMessages(this.fn), write: (q) => q.grantSendMessages(this.fn), readWrite: (q) => (q.grantConsumeMessages(this.fn), q.grantSendMessages(this.fn)) }, (q) => q.queueUrl)
    // Databases through the RDS Data API: its permission (and reading the credentials secret), and the connection descriptor as JSON.
    const optional = (Object.keys(decl.optionalDatabases ?? {}) as DatabaseKey[]).filter((k) => data.databases[k] !== undefined)
    for (const key of [...(Object.keys(decl.databases ?? {}) as DatabaseKey[]), ...optional]) {
      const cluster = data.databases[key]
      if (!cluster) throw new Error(`${id} uses the database '${key}', which this deployment leaves out`)
      cluster.grantDataApiAccess(this.fn)
      const connection: DatabaseConnection = { kind: 'rds-data', resourceArn: cluster.clusterArn, secretArn: cluster.secret!.secretArn, database: databases[key].databaseName }
      this.fn.addEnvironment(envVar('database', key), Stack.of(this).toJsonString(connection))
    }
    // Reads CloudWatch metrics (their names come from the stack: see `readsMetrics`). GetMetricData has no resource-level permissions.
    if (decl.readsMetrics) {
      this.fn.addToRolePolicy(new PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }))
      acknowledge(role, 'AwsSolutions-IAM5[Resource::*]', 'cloudwatch:GetMetricData (the only action of this statement) has no resource-level permissions')
    }
    acknowledge(this.fn, 'AwsSolutions-L1', 'Node.js 22 is the runtime Floe is built (esbuild target node22) and tested for')
    acknowledgeGrantWildcards(this)
  }
}

export { functionLogGroupName } from './log-groups'
