/**
 * `floe teardown --stack <name>` on a deployment made of real resources on the
 * emulators (DynamoDB Local, kinesalite, s3rver, the local SQS), listed by a
 * CloudFormation endpoint the test serves (its DeleteStack deletes what a stack
 * deletion deletes: here the queues). In this process with a terminal of the
 * test's own (the typed confirmation), and as the CLI process (`--yes`, the
 * refusal without a terminal, network and credential failures).
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation'
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs'
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb'
import { CreateStreamCommand, DescribeStreamSummaryCommand } from '@aws-sdk/client-kinesis'
import { RDSClient } from '@aws-sdk/client-rds'
import { CreateBucketCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { DeleteQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs'
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cloudFormationStacks, isNotFound, teardownPort } from '../../../lib/aws/teardown'
import { runTeardownCommand, type TeardownIo } from '../../../lib/cli/teardown'
import { queues } from '../../../lib/infra/resources'
import { projectRoot } from '../../../lib/local/handlers'
import { createDeclaredQueue, startSqs, type LocalSqs } from '../../../lib/local/sqs'
import { startCloudFormationServer, type CloudFormationServer, type FakeStack } from '../../support/cloudformation-server'
import { runFloe } from '../../support/process'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

const { ddb, kinesis, s3 } = testClients()
const endpoints = sharedEndpoints()
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' }
let sqsServer: LocalSqs
let sqs: SQSClient
let cfn: CloudFormationServer
const deployments = { inProcess: uniquePrefix('a'), cli: uniquePrefix('b'), killed: uniquePrefix('c'), failing: uniquePrefix('d') }

/** Makes a deployment's resources on the emulators and the stacks that list them. */
async function deployment(p: string): Promise<FakeStack[]> {
  await ddb.send(
    new CreateTableCommand({
      TableName: `${p}-events`,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      DeletionProtectionEnabled: true,
    }),
  )
  await kinesis.send(new CreateStreamCommand({ StreamName: `${p}-raw`, ShardCount: 2 }))
  while ((await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: `${p}-raw` }))).StreamDescriptionSummary?.StreamStatus !== 'ACTIVE');
  await s3.send(new CreateBucketCommand({ Bucket: `${p}-archive` }))
  for (const key of ['a/1.json', 'a/2.json', 'b/3.json']) await s3.send(new PutObjectCommand({ Bucket: `${p}-archive`, Key: key, Body: '{"x":1}' }))
  const q = await createDeclaredQueue(sqs, `${p}-recover`, queues.recoverRuns)
  return [
    {
      name: `FloeApp-${p}`,
      outputs: {},
      resources: [
        { logicalId: 'CollectorFunction', type: 'AWS::Lambda::Function', physicalId: `${p}-collector` },
        { logicalId: 'RecoverRunsQueue', type: 'AWS::SQS::Queue', physicalId: q.url, deletionPolicy: 'Delete' },
        { logicalId: 'RecoverRunsDeadLetterQueue', type: 'AWS::SQS::Queue', physicalId: q.deadLetterUrl, deletionPolicy: 'Delete' },
      ],
    },
    {
      name: `FloeData-${p}`,
      outputs: {},
      resources: [
        { logicalId: 'EventsTable', type: 'AWS::DynamoDB::GlobalTable', physicalId: `${p}-events`, deletionPolicy: 'Retain' },
        { logicalId: 'RawStream', type: 'AWS::Kinesis::Stream', physicalId: `${p}-raw`, deletionPolicy: 'Retain' },
        { logicalId: 'ArchiveBucket', type: 'AWS::S3::Bucket', physicalId: `${p}-archive`, deletionPolicy: 'Retain' },
      ],
    },
  ]
}

beforeAll(async () => {
  sqsServer = await startSqs()
  sqs = new SQSClient({ endpoint: sqsServer.endpoint, region: 'us-east-1', credentials })
  const stacks = [...(await deployment(deployments.inProcess)), ...(await deployment(deployments.cli)), ...(await deployment(deployments.killed)), ...(await deployment(deployments.failing))]
  // CloudFormation deletes the queues (DeletionPolicy Delete) with their stack
  cfn = await startCloudFormationServer(stacks, {
    onDelete: async (s) => {
      for (const r of s.resources ?? []) if (r.type === 'AWS::SQS::Queue') await sqs.send(new DeleteQueueCommand({ QueueUrl: r.physicalId }))
    },
  })
})

afterAll(async () => {
  sqs?.destroy()
  await sqsServer?.stop()
  await cfn?.close()
})

/** What is left of a deployment's resources, looked up with the services' own Describe calls. */
async function left(p: string): Promise<string[]> {
  const out: string[] = []
  const probe = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call()
      out.push(what)
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
  }
  await probe('table', () => ddb.send(new DescribeTableCommand({ TableName: `${p}-events` })))
  await probe('stream', () => kinesis.send(new DescribeStreamSummaryCommand({ StreamName: `${p}-raw` })))
  await probe('bucket', () => s3.send(new HeadBucketCommand({ Bucket: `${p}-archive` })))
  return out
}

function terminal(answer: string): TeardownIo & { output: string[]; questions: string[] } {
  const output: string[] = []
  const questions: string[] = []
  return {
    output,
    questions,
    out: (t) => void output.push(t),
    err: (t) => void output.push(t),
    isTTY: true,
    ask: async (q) => {
      questions.push(q)
      return answer
    },
  }
}

function inProcessPort() {
  return teardownPort({
    stacks: cloudFormationStacks(new CloudFormationClient({ endpoint: cfn.url, region: 'us-east-1', credentials }), { pollMs: 50 }),
    ddb,
    kinesis,
    s3,
    sqs,
    // no emulator for these: the listed stacks hold no log group or database
    logs: new CloudWatchLogsClient({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials }),
    rds: new RDSClient({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials }),
    pollMs: 200,
  })
}

describe('floe teardown --stack, confirmed on a terminal', () => {
  const p = deployments.inProcess

  it('lists every resource with its monthly cost and deletes nothing when the typed name is not the stack name', async () => {
    const io = terminal('FloeApp')
    const code = await runTeardownCommand(['--stack', `FloeApp-${p}`, '--region', 'us-east-1'], inProcessPort(), io)
    expect(code).toBe(1)
    expect(io.questions).toEqual(['Delete all of this? Type the stack name to confirm: '])
    const text = io.output.join('')
    expect(text).toContain(`This deletes the stacks FloeApp-${p} (CREATE_COMPLETE) and FloeData-${p} (CREATE_COMPLETE), with:`)
    expect(text).toContain(`FloeData-${p}  AWS::DynamoDB::GlobalTable  ${p}-events  (kept by the stack deletion: deleted after it; deletion protection on: turned off)  $0.00/month`)
    expect(text).toContain(`FloeData-${p}  AWS::Kinesis::Stream  ${p}-raw  (kept by the stack deletion: deleted after it; 2 shards)  $21.90/month`)
    expect(text).toContain(`FloeData-${p}  AWS::S3::Bucket  ${p}-archive  (kept by the stack deletion: deleted after it; 3 objects and versions)  <$0.01/month`)
    expect(text).toMatch(/AWS::SQS::Queue {2}\S+recover\.fifo {2}\$0\.00\/month/)
    expect(text).toContain('and 1 more resource that goes with their stack')
    expect(text).toContain('While kept, these cost about $21.90 a month')
    expect(text).toContain("is not FloeApp-")
    expect(await left(p)).toEqual(['table', 'stream', 'bucket'])
  })

  it('deletes the stacks and everything they kept when the stack name is typed, and reads each one back as gone', async () => {
    const io = terminal(`FloeApp-${p}`)
    const code = await runTeardownCommand(['--stack', `FloeApp-${p}`], inProcessPort(), io)
    const text = io.output.join('')
    expect(text).toContain('Read back: 7 of 7 gone')
    expect(code).toBe(0)
    const progress = text.split('\n').filter((l) => l.endsWith('…'))
    expect(progress).toEqual([
      `delete stack FloeApp-${p}…`,
      `delete stack FloeData-${p}…`,
      `turn off deletion protection of AWS::DynamoDB::GlobalTable ${p}-events…`,
      `delete AWS::DynamoDB::GlobalTable ${p}-events…`,
      `delete AWS::Kinesis::Stream ${p}-raw…`,
      `empty AWS::S3::Bucket ${p}-archive (objects and versions)…`,
      `delete AWS::S3::Bucket ${p}-archive…`,
    ])
    expect(text).toContain('done: 3 objects and versions deleted')
    expect(text).toContain(`  gone: stack FloeData-${p}\n`)
    expect(text).toContain(`  gone: AWS::Kinesis::Stream ${p}-raw\n`)
    expect(await left(p)).toEqual([])
    // the queues went with their stack
    await expect(sqs.send(new GetQueueAttributesCommand({ QueueUrl: (cfnStacksQueue(p)), AttributeNames: ['QueueArn'] }))).rejects.toSatisfy(isNotFound)
  })
})

describe('floe teardown --stack, a step that fails', () => {
  it('stops there, names what is left (exit 1), and a second run finishes', async () => {
    const p = deployments.failing
    const real = inProcessPort()
    const refusing = { ...real, delete: async (r: Parameters<typeof real.delete>[0]) => (r.kind === 'stream' ? Promise.reject(new Error('LimitExceededException: too many deletions at once')) : real.delete(r)) }
    const io = terminal('')
    expect(await runTeardownCommand(['--stack', `FloeApp-${p}`, '--yes'], refusing, io)).toBe(1)
    const text = io.output.join('')
    expect(text).toContain(`  STILL THERE: AWS::Kinesis::Stream ${p}-raw\n`)
    expect(text).toContain(`  STILL THERE: AWS::S3::Bucket ${p}-archive\n`)
    expect(text).toContain(`Stopped at: delete AWS::Kinesis::Stream ${p}-raw: LimitExceededException: too many deletions at once. Run the command again to take up what is left.`)
    expect(await left(p)).toEqual(['stream', 'bucket'])
    const again = terminal('')
    expect(await runTeardownCommand(['--stack', `FloeApp-${p}`, '--yes'], inProcessPort(), again)).toBe(0)
    expect(await left(p)).toEqual([])
  })
})

/** The recovery queue's URL as the local SQS names it. */
function cfnStacksQueue(p: string): string {
  return `${sqsServer.endpoint}/000000000000/${p}-recover.fifo`
}

describe('floe teardown --stack, the CLI process', () => {
  const p = deployments.cli
  const env = () => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // s3rver's own keys (the other emulators take any)
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/nonexistent/config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
    AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.url,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_KINESIS: endpoints.kinesis,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_SQS: sqsServer.endpoint,
  })

  it('refuses without a terminal and without --yes: exit 2, nothing deleted', async () => {
    const r = await runFloe(['teardown', '--stack', `FloeData-${p}`], env(), { replaceEnvironment: true })
    expect(r.stderr).toBe('floe teardown: not deleting anything without a confirmation: run it in a terminal to type the stack name, or pass --yes\n')
    expect(r.code).toBe(2)
    expect(r.stdout).toContain(`AWS::Kinesis::Stream  ${p}-raw`)
    expect(await left(p)).toEqual(['table', 'stream', 'bucket'])
  })

  it('--yes deletes without asking, named by the data stack too', async () => {
    const r = await runFloe(['teardown', '--stack', `FloeData-${p}`, '--yes'], env(), { replaceEnvironment: true })
    expect(r.stderr).toBe('')
    expect(r.stdout).toContain('Read back: 7 of 7 gone')
    expect(r.code).toBe(0)
    expect(await left(p)).toEqual([])
  })

  it('killed (kill -9) after the stacks are deleted: run again, it finds what they kept through the deleted stacks and deletes it', async () => {
    const k = deployments.killed
    const child = spawn(process.execPath, ['bin/floe.mjs', 'teardown', '--stack', `FloeApp-${k}`, '--yes'], { cwd: projectRoot, env: env(), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      // both stacks deleted, nothing they kept yet
      if (stdout.includes('turn off deletion protection')) child.kill('SIGKILL')
    })
    expect(await exited).toBe('SIGKILL')
    expect(stdout).toContain(`delete stack FloeData-${k}…\n  done`)
    expect(await left(k)).toEqual(['table', 'stream', 'bucket'])
    const again = await runFloe(['teardown', '--stack', `FloeApp-${k}`, '--yes'], env(), { replaceEnvironment: true })
    expect(again.stdout).toContain(`This deletes the stacks FloeApp-${k} (DELETE_COMPLETE) and FloeData-${k} (DELETE_COMPLETE), with:`)
    expect(again.stdout).not.toContain('delete stack')
    expect(again.stdout).toContain('Read back: 5 of 5 gone')
    expect(again.code).toBe(0)
    expect(await left(k)).toEqual([])
    const third = await runFloe(['teardown', '--stack', `FloeApp-${k}`], env(), { replaceEnvironment: true })
    expect(third.stdout).toBe(`Nothing left to delete: FloeApp-${k} (DELETE_COMPLETE) and FloeData-${k} (DELETE_COMPLETE), and every resource they kept is gone.\n`)
    expect(third.code).toBe(0)
  })

  it('without a network: one line, exit 2', async () => {
    const r = await runFloe(['teardown', '--stack', 'FloeApp', '--yes'], { ...env(), AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://cloudformation.floe-teardown.invalid' }, { replaceEnvironment: true })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^floe teardown: cannot reach AWS \(ENOTFOUND\): .*\n$/)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('without credentials: one line, exit 2', async () => {
    const { AWS_ACCESS_KEY_ID: _a, AWS_SECRET_ACCESS_KEY: _s, ...noKeys } = env()
    const r = await runFloe(['teardown', '--stack', 'FloeApp', '--yes'], noKeys, { replaceEnvironment: true })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^floe teardown: no AWS credentials for stack 'FloeApp': .*\n$/)
  })

  it('without --stack: the usage, exit 2', async () => {
    const r = await runFloe(['teardown', '--yes'], env(), { replaceEnvironment: true })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--stack <name> is required')
    expect(r.stderr).toContain('Usage: floe teardown --stack <name>')
  })
})
