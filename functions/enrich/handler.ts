import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda'
import { clients } from '../../lib/aws/clients'
import { createRuntime, emitEmf, loadEnrichments, processBatch, type EnrichKinesisRuntime } from '../../lib/aws/enrich-kinesis'
import type { EnrichmentSetup } from '../../lib/aws/enrichments'
import { loadFunctionConfig } from '../../lib/core/enrich/function-config'
import { checkRestarts, onRestart, restartable } from '../../lib/runtime/restarts'
import { EnrichSetupError } from '../../lib/runtime/setup-error'

let setup: EnrichmentSetup | undefined

/**
 * Enrich's set-up: its configuration, then the enrichments (files, assets,
 * steps). Any failure here is not about the records of the batch: it is
 * thrown as `EnrichSetupError`, which the stream trigger treats as a pause.
 */
async function init(): Promise<EnrichKinesisRuntime> {
  const c = loadFunctionConfig()
  if (!c.ok) throw new EnrichSetupError(`Enrich cannot start: ${c.errors.join('; ')}`)
  let rt: EnrichKinesisRuntime
  try {
    rt = createRuntime(c.config)
  } catch (err) {
    throw new EnrichSetupError(`Enrich cannot start: ${(err as Error).message}`, { cause: err })
  }
  try {
    setup = await loadEnrichments(rt)
  } catch (err) {
    rt.errors.capture(err, { phase: 'start' })
    await rt.errors.flush()
    throw new EnrichSetupError((err as Error).message, { cause: err })
  }
  return rt
}

// Built at the first batch, and again after a restart of enrich or the registry (configuration, enrichments, resolver cache).
// A failed set-up is not kept: the next batch reads the configuration again (it may have been fixed).
const runtime = restartable(['enrich', 'registry'], () =>
  init().catch((err) => {
    runtime.drop()
    throw err
  }),
)
onRestart((services) => {
  if (!services.has('enrich') && !services.has('registry')) return
  setup?.stop()
  setup = undefined
})

/**
 * Enrich on the raw stream: decode, enrich and write every record's outputs;
 * records whose outputs could not all be written are reported as batch item
 * failures (retried from the first of them).
 */
export const handler = async (event: KinesisStreamEvent, context?: Context): Promise<KinesisStreamBatchResponse> => {
  void checkRestarts(() => clients().ddb)
  const rt = await runtime.get()
  try {
    const records = event.Records.map((r) => ({ id: r.kinesis.sequenceNumber, data: Buffer.from(r.kinesis.data, 'base64') }))
    const result = await processBatch(rt, records)
    if (process.env.AWS_LAMBDA_FUNCTION_NAME) emitEmf(rt, context?.functionName ?? process.env.AWS_LAMBDA_FUNCTION_NAME)
    return { batchItemFailures: result.failed.map((itemIdentifier) => ({ itemIdentifier })) }
  } catch (err) {
    rt.errors.capture(err)
    throw err
  } finally {
    // the process may be frozen once the invocation returns: send reported errors now
    await rt.errors.flush()
  }
}
