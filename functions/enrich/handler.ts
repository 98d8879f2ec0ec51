import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda'
import { createRuntime, emitEmf, loadEnrichments, processBatch, type EnrichKinesisRuntime } from '../../lib/aws/enrich-kinesis'
import { loadFunctionConfig } from '../../lib/core/enrich/function-config'

let runtime: Promise<EnrichKinesisRuntime> | undefined

async function init(): Promise<EnrichKinesisRuntime> {
  const c = loadFunctionConfig()
  if (!c.ok) throw new Error(`Enrich cannot start: ${c.errors.join('; ')}`)
  const rt = createRuntime(c.config)
  await loadEnrichments(rt)
  return rt
}

/**
 * Enrich on the raw stream: decode, enrich and write every record's outputs;
 * records whose outputs could not all be written are reported as batch item
 * failures (retried from the first of them).
 */
export const handler = async (event: KinesisStreamEvent, context?: Context): Promise<KinesisStreamBatchResponse> => {
  runtime ??= init().catch((err) => {
    runtime = undefined
    throw err
  })
  const rt = await runtime
  const records = event.Records.map((r) => ({ id: r.kinesis.sequenceNumber, data: Buffer.from(r.kinesis.data, 'base64') }))
  const result = await processBatch(rt, records)
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) emitEmf(rt, context?.functionName ?? process.env.AWS_LAMBDA_FUNCTION_NAME)
  return { batchItemFailures: result.failed.map((itemIdentifier) => ({ itemIdentifier })) }
}
