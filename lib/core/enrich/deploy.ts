/**
 * What the deployment derives from enrich's configuration file
 * (`FLOE_ENRICH_CONFIG`, else the embedded default), synchronously, for the
 * infrastructure declaration: the stream trigger's batch size, starting
 * position (with its timestamp) and retrieval mode (polling, or an enhanced
 * fan-out consumer), and the resolved document handed to the function.
 */
import { cloudWatchNamespace, licenceSource, LICENSE_MESSAGE, validateConfig, type EnrichConfig, type SettingNotice } from './config'
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
  /** Settings given that have no effect here (warned about at start). */
  readonly notices: readonly SettingNotice[]
  /** `output.<name>.region` and `.customEndpoint` as given: where the outputs would be written instead of this deployment's streams. */
  readonly outputPlacement: readonly OutputPlacement[]
}

export interface OutputPlacement {
  readonly key: string
  readonly value: string
}

/** The outputs' `region` and `customEndpoint` settings present in the document. */
export function outputPlacement(doc: unknown, c: EnrichConfig): OutputPlacement[] {
  if (c.variant !== 'kinesis') return []
  const out: OutputPlacement[] = []
  const output = (doc as { output?: Record<string, Record<string, unknown> | undefined> }).output ?? {}
  for (const [name, o] of Object.entries(output)) {
    for (const k of ['region', 'customEndpoint'] as const) if (o && typeof o[k] === 'string') out.push({ key: `output.${name}.${k}`, value: o[k] as string })
  }
  return out
}

/**
 * Refuses outputs placed where this deployment cannot write: on the local
 * stack any region or endpoint (enrich would write to real AWS, without
 * credentials, while the local streams get nothing); on AWS a region other
 * than the deployment's, or any custom endpoint (the function is granted
 * this deployment's streams only).
 */
export function outputPlacementErrors(placement: readonly OutputPlacement[], target: { readonly local: true } | { readonly local: false; readonly region?: string }): string[] {
  return placement.flatMap(({ key, value }) => {
    const shown = `${key} = ${JSON.stringify(value)}`
    if (target.local) return [`${shown}: the local stack writes to its own streams; remove region and customEndpoint from the outputs of the enrich configuration, or deploy to AWS`]
    if (key.endsWith('.customEndpoint')) return [`${shown}: enrich writes to this deployment's streams through the region's Kinesis endpoint, the only one it is granted; remove customEndpoint from the outputs of the enrich configuration`]
    if (target.region === undefined) return [`${shown}: the deployment's region is not known at synthesis; configure a region (AWS_REGION or the profile's), or remove region from the outputs of the enrich configuration`]
    if (value !== target.region) return [`${shown}: enrich writes to this deployment's streams, in ${target.region}; a stream in another region is neither declared nor granted; remove region from the outputs of the enrich configuration or set it to ${target.region}`]
    return []
  })
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
    notices: c.notices,
    outputPlacement: outputPlacement(d.doc, c),
  }
  cache = { key, value }
  return value
}
