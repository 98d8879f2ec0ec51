/**
 * A local SQS: the fauxqs server (MIT; SQS's AWS JSON 1.0 protocol, which the
 * SDK's SQS client speaks), in this process and bound to the loopback
 * interface only, with the declared queues created as the app stack declares
 * them: each with its dead-letter queue, visibility timeout, redrive after
 * `maxReceiveCount` receives, FIFO where declared.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs'
import { buildApp } from 'fauxqs'
import type { AddressInfo } from 'node:net'
import type { QueueDecl } from '../infra/resources'

export interface LocalSqs {
  /** `http://127.0.0.1:<port>`: the endpoint for the SDK's SQS client. */
  readonly endpoint: string
  stop(): Promise<void>
}

/** Starts an in-memory SQS on `host` (default 127.0.0.1) and a free port. */
export async function startSqs(host = '127.0.0.1'): Promise<LocalSqs> {
  const app = buildApp({ logger: false })
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
