import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { KinesisClient } from '@aws-sdk/client-kinesis'
import { S3Client } from '@aws-sdk/client-s3'
import { NodeHttpHandler } from '@smithy/node-http-handler'

/** Endpoints of the local emulators, as written to `endpoints.json`. */
export interface LocalEndpoints {
  readonly dynamodb: string
  readonly kinesis: string
  readonly s3: string
  /** The search store's PostgreSQL URL (PGlite served on the wire); absent when the stack runs without one. */
  readonly postgres?: string
}

export interface AwsClients {
  readonly ddb: DynamoDBClient
  readonly kinesis: KinesisClient
  readonly s3: S3Client
}

/** Credentials every local emulator accepts (s3rver knows only this key pair). */
const localCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', accountId: '000000000000' }

/**
 * Options of every client. `cacheMiddleware`: each command class's middleware chain is
 * built on its first call and reused (the SDK otherwise clones and sorts the client's
 * middleware list on every call: about a tenth of a tracking-design request's CPU time
 * with three DynamoDB calls). No Floe code changes a client's middleware after its first call.
 */
const COMMON = { cacheMiddleware: true } as const

/**
 * Builds SDK clients. With endpoints, they talk to the local emulators with the
 * options those need (HTTP/1.1 for kinesalite, path-style S3 without streaming
 * checksums for s3rver); without, they use the normal AWS configuration chain.
 */
export function makeClients(endpoints?: LocalEndpoints): AwsClients {
  if (!endpoints) return { ddb: new DynamoDBClient(COMMON), kinesis: new KinesisClient(COMMON), s3: new S3Client(COMMON) }
  const base = { ...COMMON, region: process.env.AWS_REGION ?? 'us-east-1', credentials: localCredentials, maxAttempts: 3 }
  return {
    ddb: new DynamoDBClient({ ...base, endpoint: endpoints.dynamodb }),
    kinesis: new KinesisClient({
      ...base,
      endpoint: endpoints.kinesis,
      requestHandler: new NodeHttpHandler({ connectionTimeout: 2000 }),
    }),
    s3: new S3Client({
      ...base,
      endpoint: endpoints.s3,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  }
}

/** The environment variable that points functions at the local emulators (JSON of LocalEndpoints). */
export const LOCAL_ENDPOINTS_ENV = 'FLOE_LOCAL_ENDPOINTS'

let shared: AwsClients | undefined
let sharedKey: string | undefined

/**
 * The clients a function uses: local emulators when `FLOE_LOCAL_ENDPOINTS` is set
 * (the local runtime and tests set it), AWS otherwise. Created once per endpoint set.
 */
export function clients(): AwsClients {
  const key = process.env[LOCAL_ENDPOINTS_ENV] ?? ''
  if (!shared || sharedKey !== key) {
    shared = makeClients(key ? (JSON.parse(key) as LocalEndpoints) : undefined)
    sharedKey = key
  }
  return shared
}
