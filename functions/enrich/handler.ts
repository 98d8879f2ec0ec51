import type { Context, KinesisStreamBatchResponse, KinesisStreamEvent } from 'aws-lambda'
import { clients } from '../../lib/aws/clients'
import { createRuntime, emitEmf, loadEnrichments, processBatch, type EnrichKinesisRuntime } from '../../lib/aws/enrich-kinesis'
import type { EnrichmentSetup } from '../../lib/aws/enrichments'
import { loadFunctionConfig } from '../../lib/core/enrich/function-config'
import { LICENSE_MESSAGE } from '../../lib/core/enrich/config'
import { recordedLicence } from '../../lib/aws/licence'
import { tableName } from '../../lib/runtime/resources'
import { lambdaMappingControl, pauseEnrich, type MappingControl } from '../../lib/aws/enrich-pause'
import { envVar } from '../../lib/infra/resources'
import { checkRestarts, onRestart, restartable } from '../../lib/runtime/restarts'
import { checkRegistryChanges } from '../../lib/runtime/registry-changes'
import { checkSpecChanges } from '../../lib/runtime/spec-changes'
import { EnrichSetupError, isSetupError } from '../../lib/runtime/setup-error'

let setup: EnrichmentSetup | undefined

/**
 * Enrich's set-up: its configuration, then the enrichments (files, assets,
 * steps). Any failure here is not about the records of the batch: it is
 * thrown as `EnrichSetupError`, which the stream trigger treats as a pause.
 */
async function init(): Promise<EnrichKinesisRuntime> {
  let c = loadFunctionConfig()
  // The licence may have been accepted on the control plane (a third source, besides the configuration and the environment).
  if (!c.ok && c.errors.includes(LICENSE_MESSAGE) && (await recordedLicence(clients().ddb, tableName('settings')))) {
    c = loadFunctionConfig(process.env, { licenceRecorded: true })
  }
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

export interface EnrichPorts {
  /**
   * The Lambda API's event source mappings: on a set-up failure enrich
   * disables its own mapping (on AWS; locally the stream trigger pauses by
   * itself and there is none).
   */
  readonly mappings?: MappingControl
}

/**
 * On a set-up failure, where enrich has a mapping: record why (the settings
 * table's `health`/`enrich-setup` item, read by /health) and disable the
 * mapping, so that the records wait in the stream instead of spending their
 * retries; the control plane enables it again. The invocation still fails.
 */
async function pause(ports: EnrichPorts, err: unknown, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const functionName = env.AWS_LAMBDA_FUNCTION_NAME
  const streamName = env[envVar('stream', 'raw')]
  const table = env[envVar('table', 'settings')]
  if (!ports.mappings || !functionName || !streamName || !table) return
  try {
    await pauseEnrich({ ddb: clients().ddb, table, mappings: ports.mappings, trigger: { functionName, streamName } }, (err as Error).message)
    console.error(JSON.stringify({ level: 'ERROR', message: `enrich is paused (its event source mapping is disabled): ${(err as Error).message}` }))
  } catch (e) {
    console.error(JSON.stringify({ level: 'ERROR', message: `enrich could not pause itself: ${(e as Error).message}` }))
  }
}

/**
 * Enrich on the raw stream: decode, enrich and write every record's outputs;
 * records whose outputs could not all be written are reported as batch item
 * failures (retried from the first of them).
 */
export function createEnrichHandler(ports: EnrichPorts): (event: KinesisStreamEvent, context?: Context) => Promise<KinesisStreamBatchResponse> {
  return async (event, context) => {
    void checkRestarts(() => clients().ddb)
    let rt: EnrichKinesisRuntime
    try {
      rt = await runtime.get()
    } catch (err) {
      if (isSetupError(err)) await pause(ports, err)
      throw err
    }
    // A schema written to the registry before this batch is seen by it (locally at once, on AWS within REGISTRY_CHECK_MS).
    await checkRegistryChanges(() => clients().ddb)
    // So is a specification published before it (lib/runtime/spec-changes.ts).
    await checkSpecChanges(() => clients().ddb)
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
}

// On Lambda, the mapping is controlled through the Lambda API; the local stack has none.
export const handler = createEnrichHandler({ mappings: process.env.AWS_LAMBDA_FUNCTION_NAME ? lambdaMappingControl() : undefined })
