/**
 * The outputs of the app stack that tell a client where a deployment is: the
 * physical name of every declared table, stream and bucket, and the base URL
 * of the HTTP API. The CDK app adds them (`./stack-outputs.ts`); the `floe`
 * commands with `--stack <name>` read them back from CloudFormation
 * (`lib/cli/target.ts`). Declared once here; no CDK import, so the CLI loads
 * it cheaply.
 */
import { buckets, streams, tables, type BucketKey, type ResourceNames, type StreamKey, type TableKey } from './resources'

const cap = (key: string) => key[0]!.toUpperCase() + key.slice(1)

/** The output key of a resource's physical name: `ApiKeysTableName`, `RawStreamName`, `ArchiveBucketName`. */
export function outputKey(kind: 'table' | 'stream' | 'bucket', key: string): string {
  return `${cap(key)}${cap(kind)}Name`
}

/** The output key of the HTTP API's base URL. */
export const API_URL_OUTPUT = 'ApiUrl'

/**
 * The output key of the recovery worker's function name (`floe recover --stack`
 * invokes it). Not required: a deployment without search store has no worker.
 */
export const RECOVER_FUNCTION_OUTPUT = 'RecoverFunctionName'

/** Every output key the app stack declares, with what it holds. */
export function declaredOutputs(): { readonly key: string; readonly description: string }[] {
  return [
    { key: API_URL_OUTPUT, description: 'Base URL of the Floe HTTP API' },
    ...Object.keys(tables).map((k) => ({ key: outputKey('table', k), description: `Physical name of the ${k} table` })),
    ...Object.keys(streams).map((k) => ({ key: outputKey('stream', k), description: `Physical name of the ${k} stream` })),
    ...Object.keys(buckets).map((k) => ({ key: outputKey('bucket', k), description: `Physical name of the ${k} bucket` })),
  ]
}

/** Where a deployment is, as its stack outputs say. */
export interface DeploymentLocation {
  readonly names: ResourceNames
  readonly apiUrl: string
}

/**
 * Reads a deployment's location from its stack outputs (key → value); the
 * list of missing output keys when some are absent (an older or a different stack).
 */
export function locationFromOutputs(outputs: Readonly<Record<string, string>>): { ok: true; value: DeploymentLocation } | { ok: false; missing: string[] } {
  const missing: string[] = []
  const apiUrl = outputs[API_URL_OUTPUT]
  if (!apiUrl) missing.push(API_URL_OUTPUT)
  const pick = <K extends string>(kind: 'table' | 'stream' | 'bucket', keys: Record<K, unknown>): Record<K, string> =>
    Object.fromEntries(
      Object.keys(keys).map((k) => {
        const v = outputs[outputKey(kind, k)]
        if (!v) missing.push(outputKey(kind, k))
        return [k, v ?? '']
      }),
    ) as Record<K, string>
  const names: ResourceNames = {
    tables: pick<TableKey>('table', tables),
    streams: pick<StreamKey>('stream', streams),
    buckets: pick<BucketKey>('bucket', buckets),
  }
  if (missing.length > 0) return { ok: false, missing }
  return { ok: true, value: { names, apiUrl: apiUrl! } }
}
