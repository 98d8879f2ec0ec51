import { Duration } from 'aws-cdk-lib'
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb'
import type { IStream } from 'aws-cdk-lib/aws-kinesis'
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda'
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs'
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import type { IBucket } from 'aws-cdk-lib/aws-s3'
import { Construct } from 'constructs'
import { resolve } from 'node:path'
import { envVar, type Access, type BucketKey, type StreamKey, type TableKey } from './resources'
import { type FunctionDecl } from './functions'

export interface DataResources {
  readonly tables: Readonly<Record<TableKey, ITableV2>>
  readonly streams: Readonly<Record<StreamKey, IStream>>
  readonly buckets: Readonly<Record<BucketKey, IBucket>>
}

export interface FloeFunctionProps {
  readonly decl: FunctionDecl
  readonly data: DataResources
  readonly projectRoot: string
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
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH })
    this.fn = new NodejsFunction(this, 'Function', {
      description: decl.description,
      entry: resolve(props.projectRoot, decl.entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: decl.memoryMb ?? 256,
      timeout: Duration.seconds(decl.timeoutSeconds ?? 30),
      loggingFormat: LoggingFormat.JSON,
      logGroup,
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
        // The project's JSON Schemas ship with every function (validators, embedded registry).
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [`cp -R "${inputDir}/schemas" "${outputDir}/schemas"`],
        },
      },
    })
    for (const [key, access] of Object.entries(decl.tables ?? {}) as [TableKey, Access][]) {
      const table = data.tables[key]
      if (access === 'read') table.grantReadData(this.fn)
      else if (access === 'write') table.grantWriteData(this.fn)
      else table.grantReadWriteData(this.fn)
      this.fn.addEnvironment(envVar('table', key), table.tableName)
    }
    for (const [key, access] of Object.entries(decl.streams ?? {}) as [StreamKey, Access][]) {
      const stream = data.streams[key]
      if (access === 'read') stream.grantRead(this.fn)
      else if (access === 'write') stream.grantWrite(this.fn)
      else stream.grantReadWrite(this.fn)
      this.fn.addEnvironment(envVar('stream', key), stream.streamName)
    }
    for (const [key, access] of Object.entries(decl.buckets ?? {}) as [BucketKey, Access][]) {
      const bucket = data.buckets[key]
      if (access === 'read') bucket.grantRead(this.fn)
      else if (access === 'write') bucket.grantWrite(this.fn)
      else bucket.grantReadWrite(this.fn)
      this.fn.addEnvironment(envVar('bucket', key), bucket.bucketName)
    }
  }
}
