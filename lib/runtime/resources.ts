import { envVar, streams, type BucketKey, type ResourceKind, type StreamKey, type TableKey, type QueueKey } from '../infra/resources'

function physical(kind: ResourceKind, key: string): string {
  const name = envVar(kind, key)
  const value = process.env[name]
  if (!value) {
    throw new Error(`Environment variable ${name} is required: this function was not granted the ${kind} '${key}'`)
  }
  return value
}

/** Physical name of a declared table, from the environment the deployment sets. */
export const tableName = (key: TableKey) => physical('table', key)
/** Physical name of a declared stream. */
export const streamName = (key: StreamKey) => physical('stream', key)
/** Physical name of a declared bucket. */
export const bucketName = (key: BucketKey) => physical('bucket', key)

/** The declared key of a stream (`good`, …), found by its physical name; undefined for unknown streams. */
export function streamKeyOf(physicalName: string): StreamKey | undefined {
  for (const key of Object.keys(streams)) {
    if (process.env[envVar('stream', key)] === physicalName) return key as StreamKey
  }
  return undefined
}

/** The declared format of a stream, found by its physical name; undefined for unknown streams. */
export function streamFormat(physicalName: string): 'thrift' | 'tsv' | 'json' | undefined {
  for (const [key, decl] of Object.entries(streams)) {
    if (process.env[envVar('stream', key)] === physicalName) return decl.format
  }
  return undefined
}

/** The URL of a declared queue granted to this function; undefined where there is none (the local runtime has no queues). */
export const queueUrl = (key: QueueKey): string | undefined => process.env[envVar('queue', key)] || undefined
