/**
 * `floe recover --stack <name>`: the request goes to the deployment's
 * recovery worker, invoked directly with the caller's AWS credentials (IAM's
 * `lambda:InvokeFunction` on that function is the authorisation), named by
 * the stack output `RecoverFunctionName`. It answers as the API does; a run
 * larger than one request is queued, and the command follows its record
 * until it is done.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda'
import type { RecoverAnswer } from '../core/recover/api'
import { recoverWaitMs } from '../core/recover/outcome'
import { RECOVER_FUNCTION_OUTPUT } from '../infra/outputs'
import { UsageError } from './command'
import { onTarget, type Target } from './target'

/** Seconds between two looks at a queued run. */
export const POLL_SECONDS = 5

async function invoke(client: LambdaClient, functionName: string, payload: unknown): Promise<RecoverAnswer> {
  const res = await client.send(new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(payload)) }))
  const text = res.Payload ? Buffer.from(res.Payload).toString('utf8') : ''
  if (res.FunctionError) throw new Error(`the recovery worker failed (${res.FunctionError}): ${text.slice(0, 2000)}`)
  const answer = JSON.parse(text) as RecoverAnswer
  if (typeof answer?.status !== 'number' || typeof answer.body !== 'object') throw new Error(`the recovery worker answered something else: ${text.slice(0, 500)}`)
  return answer
}

/**
 * Runs a recovery request on a deployment: the final answer (the report, or
 * a queued run's record once done or failed). `progress` gets each look at a queued run.
 */
export async function recoverOnStack(
  target: Target,
  body: unknown,
  o: { progress?: (record: Record<string, unknown>) => void; sleep?: (ms: number) => Promise<void>; now?: () => number; waitMs?: number } = {},
): Promise<RecoverAnswer> {
  const functionName = target.outputs?.[RECOVER_FUNCTION_OUTPUT]
  if (!functionName) throw new UsageError(`${target.description} has no output ${RECOVER_FUNCTION_OUTPUT}: deploy this version with the search store (recovery keeps its claims there)`)
  const client = new LambdaClient({ ...target.clientConfig })
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  try {
    return await onTarget(target, async () => {
      const first = await invoke(client, functionName, { recover: body })
      if (first.status !== 202) return first
      const runId = first.body.runId as string
      o.progress?.(first.body)
      const clock = o.now ?? Date.now
      /** A done run's events are followed in the store (its status reads them) until none is pending, or the wait ends. */
      const settled = async (done: RecoverAnswer): Promise<RecoverAnswer> => {
        const until = clock() + (o.waitMs ?? recoverWaitMs())
        let last = done
        while (((last.body.outcome as { stillPending?: number } | undefined)?.stillPending ?? 0) > 0 && clock() + POLL_SECONDS * 1000 <= until) {
          await sleep(POLL_SECONDS * 1000)
          const again = await invoke(client, functionName, { recoverStatus: runId })
          if (again.status !== 200) return last
          o.progress?.(again.body)
          last = again
        }
        return last
      }
      for (;;) {
        await sleep(POLL_SECONDS * 1000)
        const now = await invoke(client, functionName, { recoverStatus: runId })
        if (now.status !== 200) return now
        o.progress?.(now.body)
        if (now.body.state === 'failed' || now.body.state === 'interrupted') return now
        if (now.body.state === 'done') return settled(now)
      }
    })
  } finally {
    client.destroy()
  }
}
