/**
 * A local SQS: the fauxqs server (MIT; SQS's AWS JSON 1.0 protocol, which the
 * SDK's SQS client speaks), in this process and bound to the loopback
 * interface only, with the declared queues created as the app stack declares
 * them: each with its dead-letter queue, visibility timeout, redrive after
 * `maxReceiveCount` receives, FIFO where declared.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs'
import { buildApp } from 'fauxqs'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { QueueDecl } from '../infra/resources'

export interface LocalSqs {
  /** `http://127.0.0.1:<port>`: the endpoint for the SDK's SQS client. */
  readonly endpoint: string
  stop(): Promise<void>
}

/** The directory of the installed fauxqs package (its `exports` name only the main module). */
function fauxqsDir(): string {
  const require = createRequire(import.meta.url)
  const dir = (require.resolve.paths('fauxqs') ?? []).map((d) => join(d, 'fauxqs')).find((d) => existsSync(join(d, 'package.json')))
  if (!dir) throw new Error('the fauxqs package is not installed: run npm ci')
  return dir
}

/**
 * The server's stores, with queue URLs on the address the server answers
 * (`http://127.0.0.1:<port>/000000000000/<name>`) rather than fauxqs's
 * default `sqs.<region>.localhost` host: the SDK sends a queue's requests to
 * its URL's host, as on AWS.
 */
async function stores(): Promise<NonNullable<Parameters<typeof buildApp>[0]>['stores']> {
  const dist = join(fauxqsDir(), 'dist')
  const load = (file: string) => import(pathToFileURL(join(dist, file)).href)
  const [{ SqsStore }, { SnsStore }, { S3Store }] = await Promise.all([load('sqs/sqsStore.js'), load('sns/snsStore.js'), load('s3/s3Store.js')])
  const sqsStore = new SqsStore()
  sqsStore.host = ''
  return { sqsStore, snsStore: new SnsStore(), s3Store: new S3Store() }
}

/** Starts an in-memory SQS on `host` (default 127.0.0.1) and a free port. */
export async function startSqs(host = '127.0.0.1'): Promise<LocalSqs> {
  const app = buildApp({ logger: false, stores: await stores() })
  await app.listen({ port: 0, host })
  const { port } = app.server.address() as AddressInfo
  return {
    endpoint: `http://${host}:${port}`,
    stop: async () => {
      await app.close()
    },
  }
}

export interface MadeQueue {
  readonly url: string
  readonly arn: string
  readonly deadLetterUrl: string
  readonly deadLetterArn: string
}

/** The queue's name; a FIFO queue's name ends in `.fifo` as SQS requires. */
export function queueName(base: string, fifo: boolean): string {
  return fifo ? `${base}.fifo` : base
}

async function arnOf(sqs: SQSClient, url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))
  const arn = Attributes?.QueueArn
  if (!arn) throw new Error(`the queue ${url} has no ARN`)
  return arn
}

/**
 * Creates a declared queue and its dead-letter queue (idempotent: SQS answers
 * CreateQueue of an existing queue with the same attributes by its URL).
 */
export async function createDeclaredQueue(sqs: SQSClient, name: string, decl: QueueDecl): Promise<MadeQueue> {
  const fifo = decl.fifo === true
  const fifoAttrs: Record<string, string> = fifo ? { FifoQueue: 'true' } : {}
  const dead = await sqs.send(
    new CreateQueueCommand({
      QueueName: queueName(`${name}-dead-letters`, fifo),
      Attributes: { ...fifoAttrs, MessageRetentionPeriod: String(decl.deadLetterRetentionDays * 86_400) },
    }),
  )
  const deadLetterUrl = dead.QueueUrl!
  const deadLetterArn = await arnOf(sqs, deadLetterUrl)
  const made = await sqs.send(
    new CreateQueueCommand({
      QueueName: queueName(name, fifo),
      Attributes: {
        ...fifoAttrs,
        VisibilityTimeout: String(decl.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterArn, maxReceiveCount: decl.maxReceiveCount }),
      },
    }),
  )
  const url = made.QueueUrl!
  return { url, arn: await arnOf(sqs, url), deadLetterUrl, deadLetterArn }
}
