/**
 * Which Floe a command talks to: the running local stack (found through
 * `${FLOE_DATA_DIR:-.floe}/endpoints.json`), or a deployment named by
 * `--stack <name>` (with `--region`, `--profile`), found through its
 * CloudFormation stack outputs (`lib/infra/outputs.ts`) with the caller's own
 * AWS credentials: IAM decides what the caller may do.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { KinesisClient } from '@aws-sdk/client-kinesis'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { makeClients } from '../aws/clients'
import { locationFromOutputs } from '../infra/outputs'
import { localNames, type ResourceNames } from '../infra/resources'
import { networkFailure, UsageError } from './command'
import type { TargetOptions } from './target-options'
import { existsSync, readFileSync } from 'node:fs'
import { STORED_AS_IS, type SecretSeal } from '../core/secrets-at-rest'
import { SECRETS_KEY_FILE } from '../local/secrets-key'
import { readSecretsKey, sealWithKey } from '../runtime/secrets-at-rest'
import { join, resolve } from 'node:path'

export interface Target {
  /** For messages: `the local stack` or `stack FloeApp`. */
  readonly description: string
  readonly names: ResourceNames
  /** Base URL of the HTTP API. */
  readonly apiUrl?: string
  readonly ddb: DynamoDBClient
  readonly kinesis: KinesisClient
  /** A deployment's stack name, as CloudFormation spells it (absent: the local stack). */
  readonly stackName?: string
  /** The region and profile of a deployment's SDK clients, for the clients a command makes itself. */
  readonly clientConfig?: AwsClientConfig
  /** A deployment's stack outputs (key → value). */
  readonly outputs?: Readonly<Record<string, string>>
  /** How the target keeps secrets at rest: sealed with the data directory's key locally, as they are on AWS. */
  readonly seal: SecretSeal
}

export interface AwsClientConfig {
  readonly region?: string
  readonly profile?: string
}

export { takeTargetOptions, TARGET_USAGE, type TargetOptions } from './target-options'

export interface EndpointsFileLike {
  readonly http?: string
  readonly kinesis: string
  readonly dynamodb: string
  readonly s3: string
  readonly namePrefix?: string
}

function localDataDir(): string {
  return resolve(process.env.FLOE_DATA_DIR || '.floe')
}

/** `endpoints.json` of the running local stack, in `${FLOE_DATA_DIR:-.floe}`. */
export function readEndpointsFile(dir = localDataDir()): EndpointsFileLike {
  const file = join(dir, 'endpoints.json')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    throw new UsageError(`no local stack found (${file} does not exist); start one with 'npx floe start'`)
  }
  return JSON.parse(text) as EndpointsFileLike
}

/** The local stack's target, from `endpoints.json`. */
export function localTarget(): Target {
  const dir = localDataDir()
  const ep = readEndpointsFile(dir)
  const { ddb, kinesis } = makeClients({ dynamodb: ep.dynamodb, kinesis: ep.kinesis, s3: ep.s3 })
  // the stack seals its secrets with the data directory's key (a stack started without one stores them as they are)
  const keyFile = join(dir, SECRETS_KEY_FILE)
  const seal = existsSync(keyFile) ? sealWithKey(readSecretsKey(keyFile)) : STORED_AS_IS
  return { description: 'the local stack', names: localNames(ep.namePrefix ?? 'floe'), apiUrl: ep.http, ddb, kinesis, seal }
}

/** An AWS SDK error as one line a user can act on, for the stack named `stack`. */
function describeFailure(err: unknown, stack: string): UsageError | undefined {
  const e = err as { name?: string; message?: string; Code?: string }
  const name = e?.name ?? ''
  const message = e?.message ?? String(err)
  if (/does not exist/.test(message) && (name === 'ValidationError' || e?.Code === 'ValidationError')) {
    return new UsageError(`no stack '${stack}' found: ${message} (check --stack, --region and --profile)`)
  }
  if (name === 'CredentialsProviderError' || /Could not load credentials/.test(message)) {
    return new UsageError(`no AWS credentials for stack '${stack}': ${message} (configure credentials, or pass --profile)`)
  }
  const network = networkFailure(err)
  if (network !== undefined) return new UsageError(`stack '${stack}': ${network}`)
  if (/Region is missing|Region not accepted/i.test(message)) return new UsageError(`no AWS region for stack '${stack}': pass --region or set AWS_REGION`)
  if (name === 'AccessDenied' || name === 'AccessDeniedException' || /not authorized to perform/.test(message)) {
    return new UsageError(`access denied (stack '${stack}'): ${message}`)
  }
  if (name === 'UnrecognizedClientException' || name === 'InvalidClientTokenId' || name === 'ExpiredToken' || name === 'ExpiredTokenException') {
    return new UsageError(`the AWS credentials were refused (${name}): ${message}`)
  }
  return undefined
}

/** The deployment named by `--stack`, from its CloudFormation outputs. */
export async function stackTarget(o: TargetOptions & { stack: string }): Promise<Target> {
  // a stack id names its region
  const region = o.region ?? /^arn:aws[a-z-]*:cloudformation:([a-z0-9-]+):/.exec(o.stack)?.[1]
  const config: AwsClientConfig = { ...(region ? { region } : {}), ...(o.profile ? { profile: o.profile } : {}) }
  const cfn = new CloudFormationClient(config)
  let outputs: Record<string, string>
  let status: string | undefined
  let stackName = o.stack
  try {
    const res = await cfn.send(new DescribeStacksCommand({ StackName: o.stack }))
    const s = res.Stacks?.[0]
    if (!s) throw new UsageError(`no stack '${o.stack}' found (check --stack, --region and --profile)`)
    status = s.StackStatus
    stackName = s.StackName ?? o.stack
    outputs = Object.fromEntries((s.Outputs ?? []).filter((x) => x.OutputKey && x.OutputValue !== undefined).map((x) => [x.OutputKey!, x.OutputValue!]))
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw describeFailure(err, o.stack) ?? err
  } finally {
    cfn.destroy()
  }
  const loc = locationFromOutputs(outputs)
  if (!loc.ok) {
    const shown = loc.missing.length > 4 ? `${loc.missing.slice(0, 4).join(', ')} and ${loc.missing.length - 4} more` : loc.missing.join(', ')
    throw new UsageError(
      `stack '${stackName}'${status ? ` (${status})` : ''} has no output${loc.missing.length > 1 ? 's' : ''} ${shown}: name the app stack of a Floe deployment (FloeApp unless renamed), deployed by this version`,
    )
  }
  return {
    description: `stack ${stackName}`,
    stackName,
    clientConfig: config,
    outputs,
    names: loc.value.names,
    apiUrl: loc.value.apiUrl,
    seal: STORED_AS_IS,
    ddb: new DynamoDBClient(config),
    // HTTP/1.1: every call the commands make works on it (the SDK's default for Kinesis is HTTP/2)
    kinesis: new KinesisClient({ ...config, requestHandler: new NodeHttpHandler({ connectionTimeout: 5000 }) }),
  }
}

/** The target the options name: a deployment with `--stack`, else the local stack. */
export async function resolveTarget(o: TargetOptions): Promise<Target> {
  if (o.stack !== undefined) return stackTarget({ ...o, stack: o.stack })
  return localTarget()
}

/** Turns the AWS errors of a call on a deployment into messages a user can act on. */
export async function onTarget<T>(target: Target, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (err instanceof UsageError) throw err
    const e = err as { name?: string; message?: string }
    if (e?.name === 'ResourceNotFoundException') throw new UsageError(`${target.description}: ${e.message} (is the deployment complete?)`)
    throw describeFailure(err, target.description.replace(/^stack /, '')) ?? err
  }
}
