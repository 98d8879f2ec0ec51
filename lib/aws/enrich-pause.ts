/**
 * Enrich's pause on AWS. An event source mapping cannot be told that a
 * failure is not about the records (it would spend the batch's retries and
 * send it to the on-failure destination), so on a set-up failure enrich
 * disables its own mapping and records why in the settings table; records
 * wait in the stream (for the stream's retention). The control plane enables
 * it again once the configuration is changed or enrich is restarted.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ENRICH_TRIGGER_ENV, mappingsToDisable, mappingsToEnable, type EnrichTrigger, type MappingState } from '../core/health/report'

/** The settings item holding enrich's recorded set-up failure. */
export const ENRICH_PAUSE_KEY = { pk: { S: 'health' }, sk: { S: 'enrich-setup' } }


/** The Lambda API's event source mappings, as far as the pause needs them (a fake in tests: Lambda is not emulated). */
export interface MappingControl {
  list(functionName: string): Promise<MappingState[]>
  setEnabled(uuid: string, enabled: boolean): Promise<void>
}

export interface EnrichPause {
  readonly reason: string
  readonly since: string
}

/** The Lambda API through the SDK (loaded on first use: only the functions that control mappings pay for it). */
export function lambdaMappingControl(): MappingControl {
  let client: Promise<{ c: import('@aws-sdk/client-lambda').LambdaClient; m: typeof import('@aws-sdk/client-lambda') }> | undefined
  const sdk = () => (client ??= import('@aws-sdk/client-lambda').then((m) => ({ c: new m.LambdaClient({}), m })))
  return {
    async list(functionName) {
      const { c, m } = await sdk()
      const out: MappingState[] = []
      let marker: string | undefined
      do {
        const res = await c.send(new m.ListEventSourceMappingsCommand({ FunctionName: functionName, Marker: marker }))
        for (const e of res.EventSourceMappings ?? []) out.push({ uuid: e.UUID ?? '', eventSourceArn: e.EventSourceArn ?? '', state: e.State ?? '' })
        marker = res.NextMarker
      } while (marker)
      return out
    },
    async setEnabled(uuid, enabled) {
      const { c, m } = await sdk()
      await c.send(new m.UpdateEventSourceMappingCommand({ UUID: uuid, Enabled: enabled }))
    },
  }
}

/** Records why enrich is paused, then disables its mappings on `trigger.streamName`. */
export async function pauseEnrich(deps: { ddb: DynamoDBClient; table: string; mappings: MappingControl; trigger: EnrichTrigger; now?: Date }, reason: string): Promise<void> {
  await deps.ddb.send(new PutItemCommand({
    TableName: deps.table,
    Item: { ...ENRICH_PAUSE_KEY, reason: { S: reason.slice(0, 2000) }, since: { S: (deps.now ?? new Date()).toISOString() } },
  }))
  const uuids = mappingsToDisable(await deps.mappings.list(deps.trigger.functionName), deps.trigger.streamName)
  for (const uuid of uuids) await deps.mappings.setEnabled(uuid, false)
}

/**
 * Enables enrich's mappings again if a set-up failure paused them (a mapping
 * disabled for another reason, e.g. the licence, is left alone), and clears
 * the record. Answers whether a pause was lifted.
 */
export async function resumeEnrich(deps: { ddb: DynamoDBClient; table: string; mappings?: MappingControl; trigger?: EnrichTrigger }): Promise<boolean> {
  if (!(await readEnrichPause(deps.ddb, deps.table))) return false
  if (deps.mappings && deps.trigger) {
    const uuids = mappingsToEnable(await deps.mappings.list(deps.trigger.functionName), deps.trigger.streamName)
    for (const uuid of uuids) await deps.mappings.setEnabled(uuid, true)
  }
  await deps.ddb.send(new DeleteItemCommand({ TableName: deps.table, Key: ENRICH_PAUSE_KEY }))
  return true
}

export async function readEnrichPause(ddb: DynamoDBClient, table: string): Promise<EnrichPause | undefined> {
  const res = await ddb.send(new GetItemCommand({ TableName: table, Key: ENRICH_PAUSE_KEY, ConsistentRead: true }))
  const reason = res.Item?.reason?.S
  return reason === undefined ? undefined : { reason, since: res.Item?.since?.S ?? '' }
}

/** Enrich's mapping named in the control plane's environment; undefined where there is none (the local stack). */
export function enrichTriggerFromEnvironment(env: NodeJS.ProcessEnv): EnrichTrigger | undefined {
  const raw = env[ENRICH_TRIGGER_ENV]
  if (!raw) return undefined
  const t = JSON.parse(raw) as Partial<EnrichTrigger>
  return typeof t.functionName === 'string' && typeof t.streamName === 'string' ? { functionName: t.functionName, streamName: t.streamName } : undefined
}
