import type { SQSBatchResponse, SQSEvent } from 'aws-lambda'
import { queueRecovery, recoveryStatus, SHARE_DELIVERIES, workerPorts } from '../../lib/aws/recover-queue'
import { runRecovery } from '../../lib/aws/recover-service'
import { answerRecover, answerStatus, type RecoverAnswer } from '../../lib/core/recover/api'
import { giveUpShare, parseShareMessage, processShare } from '../../lib/core/recover/worker'

const ports = workerPorts()
const api = { run: runRecovery, queue: queueRecovery, status: recoveryStatus }

/**
 * Direct invocations (`floe recover --stack`: the caller's permission to
 * invoke this function is the authorisation): `{"recover": <request>}` answers
 * as `POST /control-plane/recover`, `{"recoverStatus": "<run id>"}` as its GET.
 */
export type DirectInvocation = { readonly recover: unknown } | { readonly recoverStatus: unknown }

/** One share of a recovery run per message (batch size 1); a failed share is retried by SQS, then kept in the dead-letter queue and its run recorded as failed. */
async function shares(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures: SQSBatchResponse['batchItemFailures'] = []
  for (const record of event.Records) {
    try {
      const { message, steps } = parseShareMessage(record.body)
      const outcome = await processShare(ports, message, steps)
      console.log(JSON.stringify({ message: 'recovery share', runId: message.runId, share: message.share, outcome: outcome.kind, ...('report' in outcome ? { replayed: outcome.report.replayed, selected: outcome.report.selected } : {}) }))
    } catch (err) {
      const deliveries = Number(record.attributes.ApproximateReceiveCount)
      console.error(JSON.stringify({ message: 'recovery share failed', messageId: record.messageId, deliveries, error: (err as Error).message }))
      failures.push({ itemIdentifier: record.messageId })
      await giveUpShare(ports, record.body, (err as Error).message, deliveries, SHARE_DELIVERIES).catch((e: unknown) => {
        console.error(JSON.stringify({ message: 'recording the failed run failed', messageId: record.messageId, error: (e as Error).message }))
      })
    }
  }
  return { batchItemFailures: failures }
}

export async function handler(event: SQSEvent | DirectInvocation): Promise<SQSBatchResponse | RecoverAnswer> {
  if ('Records' in event) return shares(event)
  if ('recover' in event) return answerRecover(api, event.recover)
  if ('recoverStatus' in event) return answerStatus(api, event.recoverStatus)
  return { status: 400, body: { message: 'expected SQS records, {"recover": <request>} or {"recoverStatus": "<run id>"}' } }
}
