/**
 * `floe teardown --stack <name>`: deletes a deployment (its app and data
 * stacks) and everything the stack deletion keeps, in the order of
 * `lib/core/teardown/teardown-plan.ts`, after listing it with what it costs
 * per month while kept and a confirmation by the stack's name.
 */
import { createInterface } from 'node:readline/promises'
import { deploymentStacks, describeResource, dollars, handled, plannedResources, resourceKey, teardownSteps, totalWhileKept, type KeepPrices, type ResourceFacts, type StackDescription } from '../core/teardown/teardown-plan'
import { runTeardown, type TeardownPort } from '../core/teardown/teardown-run'
import { prices } from '../infra/prices'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { takeTargetOptions, type TargetOptions } from './target-options'

const USAGE = 'teardown --stack <name> [--region <region>] [--profile <profile>] [--yes] [--final-snapshot <id>]'

export interface TeardownArgs {
  readonly target: TargetOptions & { stack: string }
  readonly yes: boolean
  readonly finalSnapshot?: string
}

const SNAPSHOT_ID = /^[A-Za-z](?!.*--)[A-Za-z0-9-]{0,254}(?<!-)$/

export function parseTeardownArgs(args: readonly string[]): TeardownArgs {
  const { target, rest } = takeTargetOptions(args, USAGE)
  let yes = false
  let finalSnapshot: string | undefined
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!
    if (a === '--yes' || a === '-y') yes = true
    else if (a === '--final-snapshot' || a.startsWith('--final-snapshot=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : rest[++i]
      if (!v || v.startsWith('--')) throw usageError(USAGE, '--final-snapshot needs a snapshot identifier')
      if (!SNAPSHOT_ID.test(v)) throw new UsageError(`--final-snapshot: '${v}' is not a DB snapshot identifier (a letter, then letters, digits and single hyphens, not ending in a hyphen)`)
      finalSnapshot = v
    } else throw usageError(USAGE, `unknown option '${a}'`)
  }
  if (target.stack === undefined) throw usageError(USAGE, '--stack <name> is required: the deployment to delete')
  return { target: { ...target, stack: target.stack }, yes, ...(finalSnapshot ? { finalSnapshot } : {}) }
}

export interface TeardownIo {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** Standard input is a terminal (a person can confirm). */
  readonly isTTY: boolean
  /** Asks a question on the terminal and resolves to the answer. */
  readonly ask: (question: string) => Promise<string>
}

const KEEP_PRICES: KeepPrices = prices

const NETWORK_CODES = ['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'] as const

/** An AWS or network failure as one line a user can act on; undefined for anything else. */
export function teardownFailure(err: unknown, stack: string): string | undefined {
  const e = err as { name?: string; message?: string; code?: string }
  const name = e?.name ?? ''
  const message = e?.message ?? String(err)
  const code = NETWORK_CODES.find((c) => e?.code === c || message.includes(c))
  if (code) return `cannot reach AWS (${code}): ${message} (check the network, --region and any proxy)`
  if (name === 'TimeoutError') return `cannot reach AWS (timed out): ${message}`
  if (name === 'CredentialsProviderError' || /Could not load credentials/.test(message)) return `no AWS credentials for stack '${stack}': ${message} (configure credentials, or pass --profile)`
  if (/Region is missing|Region not accepted/i.test(message)) return `no AWS region for stack '${stack}': pass --region or set AWS_REGION`
  if (name === 'AccessDenied' || name === 'AccessDeniedException' || /not authorized to perform/.test(message)) return `access denied (stack '${stack}'): ${message}`
  if (name === 'UnrecognizedClientException' || name === 'InvalidClientTokenId' || name === 'ExpiredToken' || name === 'ExpiredTokenException' || name === 'SignatureDoesNotMatch') {
    return `the AWS credentials were refused (${name}): ${message}`
  }
  return undefined
}

/** Lists, confirms, deletes and reads back; resolves to the exit code (0: everything gone, 1: not confirmed or something left, 2: usage). */
export async function teardown(a: TeardownArgs, port: TeardownPort, io: TeardownIo): Promise<number> {
  const named = a.target.stack
  const stacks: StackDescription[] = []
  for (const name of deploymentStacks(named)) {
    const s = await port.describeStack(name)
    if (s) stacks.push(s)
    else if (name === named) throw new UsageError(`no stack '${named}' found (check --stack, --region and --profile)`)
  }
  const facts = new Map<string, ResourceFacts>()
  const listed = plannedResources(stacks).filter(handled)
  await Promise.all(listed.map(async (r) => facts.set(resourceKey(r.stack, r.logicalId), await port.facts(r))))
  const resources = plannedResources(stacks, facts)
  const steps = teardownSteps(stacks, facts)

  if (steps.length === 0) {
    io.out(`Nothing left to delete: ${stacks.map((s) => `${s.name} (${s.status})`).join(' and ')}, and every resource ${stacks.length > 1 ? 'they' : 'it'} kept is gone.\n`)
    return 0
  }
  const others = resources.filter((r) => !handled(r) && r.facts?.exists !== false)
  const lines = [`This deletes the stack${stacks.length > 1 ? 's' : ''} ${stacks.map((s) => `${s.name} (${s.status})`).join(' and ')}, with:`]
  for (const r of resources.filter(handled)) lines.push(`  ${describeResource(r, KEEP_PRICES)}`)
  if (others.length > 0) lines.push(`  and ${others.length} more resource${others.length === 1 ? ' that goes' : 's that go'} with ${stacks.length > 1 ? 'their stack' : 'the stack'} (functions, roles, policies, alarms, the API…)`)
  const total = totalWhileKept(resources, KEEP_PRICES)
  lines.push(`While kept, these cost about ${dollars(total.dollars)} a month (${prices.region} list prices of ${prices.asOf}${total.unknown ? `; ${total.unknown} without a standing charge in the price table` : ''}).`)
  const cluster = resources.some((r) => r.kind === 'dbCluster' && r.facts?.exists !== false)
  lines.push(`Data deleted here cannot be recovered${cluster ? ` (the Aurora cluster: ${a.finalSnapshot ? `a final snapshot ${a.finalSnapshot} is taken` : 'no final snapshot unless --final-snapshot <id>'}; its manual snapshots are kept and bill until deleted)` : ''}.`)
  io.out(`${lines.join('\n')}\n`)

  if (!a.yes) {
    if (!io.isTTY) {
      io.err('floe teardown: not deleting anything without a confirmation: run it in a terminal to type the stack name, or pass --yes\n')
      return 2
    }
    const answer = (await io.ask(`Delete all of this? Type the stack name to confirm: `)).trim()
    if (answer !== named) {
      io.out(`'${answer}' is not ${named}: nothing deleted.\n`)
      return 1
    }
  }

  const outcome = await runTeardown(port, stacks, resources, steps, (l) => io.out(`${l}\n`))
  const gone = outcome.readBack.filter((r) => r.gone).length
  const summary = [`Read back: ${gone} of ${outcome.readBack.length} gone (stacks and the resources above).`]
  for (const r of outcome.readBack) summary.push(`  ${r.gone ? 'gone' : 'STILL THERE'}: ${r.what}`)
  const failed = outcome.steps.find((s) => !s.ok)
  if (failed) summary.push(`Stopped at: ${failed.step}: ${failed.detail}. Run the command again to take up what is left.`)
  ;(outcome.ok ? io.out : io.err)(`${summary.join('\n')}\n`)
  return outcome.ok ? 0 : 1
}

/** The port on AWS, with the caller's credentials for the named region and profile. */
async function awsPort(a: TeardownArgs) {
  const { teardownPort, cloudFormationStacks, CloudFormationClient, CloudWatchLogsClient, RDSClient } = await import('../aws/teardown')
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb')
  const { KinesisClient } = await import('@aws-sdk/client-kinesis')
  const { S3Client } = await import('@aws-sdk/client-s3')
  const { SQSClient } = await import('@aws-sdk/client-sqs')
  const { NodeHttpHandler } = await import('@smithy/node-http-handler')
  const region = a.target.region ?? /^arn:aws[a-z-]*:cloudformation:([a-z0-9-]+):/.exec(a.target.stack)?.[1]
  const config = { ...(region ? { region } : {}), ...(a.target.profile ? { profile: a.target.profile } : {}), maxAttempts: 3 }
  return teardownPort({
    stacks: cloudFormationStacks(new CloudFormationClient(config)),
    ddb: new DynamoDBClient(config),
    // HTTP/1.1: every call here works on it (the SDK's default for Kinesis is HTTP/2)
    kinesis: new KinesisClient({ ...config, requestHandler: new NodeHttpHandler({ connectionTimeout: 5000 }) }),
    s3: new S3Client(config),
    sqs: new SQSClient(config),
    logs: new CloudWatchLogsClient(config),
    rds: new RDSClient(config),
    ...(a.finalSnapshot ? { finalSnapshot: a.finalSnapshot } : {}),
  })
}

function terminalIo(): TeardownIo {
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    isTTY: process.stdin.isTTY === true,
    ask: async (q) => {
      const rl = createInterface({ input: process.stdin, output: process.stdout })
      try {
        return await rl.question(q)
      } finally {
        rl.close()
      }
    },
  }
}

/** Runs the command with a port and terminal of the caller's choosing (tests); AWS and the process's terminal by default. */
export async function runTeardownCommand(args: readonly string[], port?: TeardownPort, io: TeardownIo = terminalIo()): Promise<number> {
  const a = parseTeardownArgs(args)
  try {
    return await teardown(a, port ?? (await awsPort(a)), io)
  } catch (err) {
    if (err instanceof UsageError) throw err
    const line = teardownFailure(err, a.target.stack)
    if (line !== undefined) throw new UsageError(line)
    // anything else: one line too, and not a usage error
    const e = err as { name?: string; message?: string }
    io.err(`floe teardown: ${e?.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e?.message ?? String(err)}\n`)
    return 1
  }
}

export const teardownCommand: Command = {
  name: 'teardown',
  usage: USAGE,
  summary: 'Delete a deployment: its app and data stacks and everything they keep (tables, streams, buckets, the Aurora cluster, log groups, queues), listed first with what it costs per month while kept, after you type the stack name (--yes: without asking).',
  details: [
    'Order: the app stack; the Aurora cluster (deletion protection off, its instance first; a final snapshot with --final-snapshot <id>) before the data stack, whose VPC it uses;',
    '  the tables\' deletion protection off; then the data stack; then what the stacks kept (DeletionPolicy Retain): tables, streams, buckets (emptied of every object and version), the DB subnet group, log groups.',
    'Each resource is looked up again at the end; exit 0 when all are gone, 1 when something is left or the confirmation did not match, 2 on a usage error, missing credentials or no network.',
    'Without a terminal on standard input it deletes nothing unless --yes is given.',
  ].join('\n'),
  run: (args) => runTeardownCommand(args),
}
