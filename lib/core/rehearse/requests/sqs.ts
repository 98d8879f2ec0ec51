/**
 * SQS, JSON 1.0 (`x-amz-target: AmazonSQS.<Op>`, what SDK v3 sends) and the
 * older query protocol (form-encoded `Action=<Op>`). A queue is named by its
 * URL, whose last path segment is its name (and the segment before it, when
 * twelve digits, its account): `arn:…:sqs:R:A:name`.
 */
import { check, classified, formBody, isFormEncoded, jsonBody, str, target, unclassified, type Classification, type ServiceRequest } from './common'

const SERVICE = 'sqs'

/** Operation → action, for operations on one queue. The batch forms are authorized as their single forms. */
const QUEUE_ACTIONS: Readonly<Record<string, string>> = {
  SendMessage: 'sqs:SendMessage',
  SendMessageBatch: 'sqs:SendMessage',
  ReceiveMessage: 'sqs:ReceiveMessage',
  DeleteMessage: 'sqs:DeleteMessage',
  DeleteMessageBatch: 'sqs:DeleteMessage',
  ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
  ChangeMessageVisibilityBatch: 'sqs:ChangeMessageVisibility',
  GetQueueAttributes: 'sqs:GetQueueAttributes',
  SetQueueAttributes: 'sqs:SetQueueAttributes',
  PurgeQueue: 'sqs:PurgeQueue',
  DeleteQueue: 'sqs:DeleteQueue',
  ListDeadLetterSourceQueues: 'sqs:ListDeadLetterSourceQueues',
  ListQueueTags: 'sqs:ListQueueTags',
  TagQueue: 'sqs:TagQueue',
  UntagQueue: 'sqs:UntagQueue',
}

/** The operations classified here. */
export const SQS_OPERATIONS: readonly string[] = [...Object.keys(QUEUE_ACTIONS), 'ListQueues', 'GetQueueUrl', 'CreateQueue']

/** The queue ARN of a queue URL (`https://sqs.R.amazonaws.com/A/name`, or a local server's `http://host:port/A/name`). */
export function queueArnOfUrl(r: ServiceRequest, url: string): string | undefined {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    return undefined
  }
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent)
  const name = parts.at(-1)
  if (!name) return undefined
  const owner = parts.length >= 2 && /^\d{12}$/.test(parts.at(-2)!) ? parts.at(-2)! : r.account
  return `arn:${r.partition}:sqs:${r.region}:${owner}:${name}`
}

export function classifySqs(r: ServiceRequest): Classification {
  let op: string | undefined
  let get: (k: string) => string | undefined
  if (isFormEncoded(r)) {
    const form = formBody(r)
    op = form.get('Action') ?? undefined
    get = (k) => form.get(k) ?? undefined
  } else {
    const t = target(r)
    if (!t || t.prefix !== 'AmazonSQS') return unclassified(SERVICE, 'no AmazonSQS x-amz-target header')
    op = t.operation
    const body = jsonBody(r)
    get = (k) => str(body[k])
  }
  if (!op) return unclassified(SERVICE, 'no operation')
  if (op === 'ListQueues') return classified(SERVICE, op, [check(r, 'sqs:ListQueues', '*')])
  if (op === 'GetQueueUrl' || op === 'CreateQueue') {
    const name = get('QueueName')
    if (!name) return unclassified(SERVICE, `${op} without QueueName`, op)
    const owner = get('QueueOwnerAWSAccountId') ?? r.account
    return classified(SERVICE, op, [check(r, `sqs:${op}`, `arn:${r.partition}:sqs:${r.region}:${owner}:${name}`)])
  }
  const action = QUEUE_ACTIONS[op]
  if (!action) return unclassified(SERVICE, `SQS operation ${op} is not classified`, op)
  const url = get('QueueUrl')
  const arn = url ? queueArnOfUrl(r, url) : undefined
  if (!arn) return unclassified(SERVICE, `${op} without a QueueUrl`, op)
  return classified(SERVICE, op, [check(r, action, arn)])
}
