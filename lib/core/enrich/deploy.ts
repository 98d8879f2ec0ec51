/**
 * What the deployment derives from enrich's configuration file
 * (`FLOE_ENRICH_CONFIG`, else the embedded default), synchronously, for the
 * infrastructure declaration: the stream trigger's batch size, starting
 * position (with its timestamp) and retrieval mode (polling, or an enhanced
 * fan-out consumer), and the resolved document handed to the function.
 */
import { cloudWatchNamespace, licenceSource, LICENSE_MESSAGE, validateConfig } from './config'
import { CONFIG_ENV, CONFIG_JSON_ENV, readConfigDocumentSync } from './config-file'

export interface EnrichDeployment {
  /** Environment of the enrich function: the resolved configuration document. */
  readonly environment: Readonly<Record<string, string>>
  /** `input.retrievalMode.maxRecords` (Lambda takes at most 10,000). */
  readonly batchSize: number
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP'
  /** The CloudWatch namespace of enrich's own metrics (dimension `function`), or undefined when they are off. */
  readonly metricsNamespace?: string
  /** With `AT_TIMESTAMP`: `input.initialPosition.timestamp` in seconds since the epoch. */
  readonly startingPositionTimestamp?: number
  /** `input.retrievalMode.type = FanOut`: the trigger reads through an enhanced fan-out consumer of its own. */
  readonly enhancedFanOut: boolean
  /** Why enrich cannot run as configured (the licence is not accepted); undefined when it can. */
  readonly disabledReason?: string
  /** Who accepted the licence in the deployment: its configuration, the environment, or nobody yet. */
  readonly licenceSource: 'configuration' | 'environment' | 'none'
}

let cache: { key: string; value: EnrichDeployment } | undefined

/** Reads the configuration once per file; throws with a message naming the problem. */
export function enrichDeployment(env: NodeJS.ProcessEnv = process.env): EnrichDeployment {
  const path = env[CONFIG_ENV] || undefined
  const key = `${path ?? ''}\0${env.ACCEPT_LIMITED_USE_LICENSE ?? ''}`
  if (cache?.key === key) return cache.value
  const d = readConfigDocumentSync(path, env)
  if (!d.ok) throw new Error(`Enrich configuration: ${d.errors.join('; ')}`)
  // Without the licence the rest of the stack still deploys and starts; enrich's
  // trigger stays disabled (see `disabledReason`), so raw records wait in the stream.
  const v = validateConfig(d.doc, { env: { ...env, ACCEPT_LIMITED_USE_LICENSE: 'yes' } })
  const where = path ?? 'the embedded enrich configuration'
  if (!v.ok) throw new Error(`${where} is invalid:\n  ${v.errors.join('\n  ')}`)
  const c = v.config
  if (c.variant !== 'kinesis') throw new Error(`${where}: the deployment runs the shard-stream (Kinesis) variant; input.type FileSystem is for 'floe enrich --config'`)
  if (c.input.streamName !== 'raw') throw new Error(`${where}: input.streamName must be "raw" (the declared raw stream the enrich trigger reads), got "${c.input.streamName}"`)
  const at = c.input.initialPosition.type === 'AT_TIMESTAMP' ? Date.parse(c.input.initialPosition.timestamp!) : undefined
  if (at !== undefined && at > Date.now()) {
    throw new Error(`${where}: input.initialPosition.timestamp ${c.input.initialPosition.timestamp} is in the future; a stream trigger can start only at a time already past`)
  }
  const licensed = validateConfig(d.doc, { env })
  const value: EnrichDeployment = {
    disabledReason: !licensed.ok && licensed.errors.includes(LICENSE_MESSAGE) ? LICENSE_MESSAGE : undefined,
    licenceSource: licenceSource(d.doc, env) ?? 'none',
    environment: { [CONFIG_JSON_ENV]: JSON.stringify(d.doc) },
    batchSize: Math.min(c.input.retrievalMode.maxRecords, 10_000),
    startingPosition: c.input.initialPosition.type,
    metricsNamespace: cloudWatchNamespace(c),
    ...(at !== undefined ? { startingPositionTimestamp: at / 1000 } : {}),
    enhancedFanOut: c.input.retrievalMode.type === 'FanOut',
  }
  cache = { key, value }
  return value
}
