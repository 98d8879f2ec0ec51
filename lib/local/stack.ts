import { PutObjectCommand } from '@aws-sdk/client-s3'
import { eventSpecDefaultOn } from '../core/enrich/enrichments/event-spec-default'
import { ROOT_REDIRECT_ENV } from '../core/collector/config'
import { schemaCacheSeconds } from '../core/tracking-design/schema-cache'
import { join } from 'node:path'
import { clients, LOCAL_ENDPOINTS_ENV, makeClients, type AwsClients, type LocalEndpoints } from '../aws/clients'
import { configsFromDir, EnrichmentSetupError, syncEnrichments } from '../aws/enrichments'
import { loadEnrichmentConfigs } from '../core/enrich/enrichments/registry'
import { defaultResolver } from '../runtime/default-resolver'
import { enrichmentFiles } from '../infra/enrichments'
import { envVar, localNames, resourceEnvironment, type DatabaseConnection, type ResourceNames } from '../infra/resources'
import { schemaForPrefix } from '../core/search/store'
import { retentionDays, searchTimeoutMs } from '../core/search/settings'
import { recoverWaitMs } from '../core/recover/outcome'
import { functions, serviceNames, missingDatabases, streamTriggerFailureBucket, streamTriggers, triggerId, localTriggerSettings, triggerSettings, type FunctionDecl, type StreamTriggerSettings } from '../infra/functions'
import { FileCheckpointStore, MemoryCheckpointStore, type CheckpointStore } from './checkpoints'
import { startEmulators, type Emulators } from './emulators'
import { startGateway, type Gateway } from './gateway'
import { invoke, invoked, onInvoked } from './handlers'
import { FunctionWorker, WORKER_FUNCTIONS } from './function-worker'
import { logMaxBytes, openLogs } from './logs'
import { trackedEmulators, trackStack } from './metrics'
import { markOff, markUp } from '../runtime/dependencies'
import { LICENCE_OFF_REASON } from '../core/health/report'
import { LICENSE_MESSAGE } from '../core/enrich/config'
import { onLicenceAccepted } from '../runtime/licence'
import { recordedLicence } from '../aws/licence'
import { provision } from './provision'
import { ensureSecretsKey } from './secrets-key'
import { sealStoredSecrets } from '../aws/secrets'
import { runtimeSeal, SECRETS_KEY_FILE_ENV } from '../runtime/secrets-at-rest'
import { LocalHttps, type LocalHttpsOptions } from './https/manager'
import { httpsFromEnvironment } from './https/settings'
import { setHttpsControl } from '../runtime/https'
import { StreamTrigger } from './stream-trigger'
import { igluDirsReport } from '../runtime/iglu-dirs'

export interface LocalStackOptions {
  /** Persistent data directory; everything in memory when omitted. */
  readonly dataDir?: string
  readonly host?: string
  /** Address of the emulators (default `host`): a gateway on a public address keeps them on loopback. */
  readonly emulatorHost?: string
  /** Gateway port; 0 picks a free one. */
  readonly port?: number
  /** Use running emulators instead of starting new ones. */
  readonly endpoints?: LocalEndpoints
  /** Prefix of physical resource names, so several stacks can share emulators. */
  readonly namePrefix?: string
  /** Run the declared stream triggers (default true). */
  readonly triggers?: boolean
  /** Idle poll interval of stream triggers (default 250 ms; Lambda polls about once a second: locally, events show up sooner). */
  readonly pollIntervalMs?: number
  /** Settings applied over every stream trigger's own, e.g. a zero batching window in tests. */
  readonly triggerOverrides?: Partial<StreamTriggerSettings>
  /** The longest batching window any stream trigger waits, in seconds (`FLOE_BATCHING_WINDOW_SECONDS`); shorter ones are kept. */
  readonly batchingWindowCapSeconds?: number
  /** First retry delay of stream triggers (default 200 ms). */
  readonly retryDelayMs?: number
  /** Enrichment configuration files to deploy (default `FLOE_ENRICHMENTS_DIR`); none when unset. */
  readonly enrichmentsDir?: string
  /** Extra environment for the functions (set in this process). */
  readonly environment?: Readonly<Record<string, string>>
  /**
   * Where the functions' logs and the stack's own lines (`floe.log`) are
   * written; default `logs/` of the data directory, none without one.
   */
  readonly logsDir?: string
  readonly log?: (line: string) => void
  /**
   * Starts `/micro/validate`'s worker thread with the stack (it builds enrich
   * in the background), so that its first request does not wait for it, as
   * a tracker would not (`floe start`); otherwise at its first request.
   */
  readonly warmValidate?: boolean
  /** Time limits of the HTTPS certificate work (tests make them short); the settings come from the environment. */
  readonly https?: Pick<LocalHttpsOptions, 'requestTimeoutMs' | 'issueTimeoutMs' | 'answerWithinMs' | 'renewCheckMs'>
}

export interface LocalStack {
  readonly url: string
  readonly endpoints: LocalEndpoints
  readonly names: ResourceNames
  readonly triggers: ReadonlyMap<string, StreamTrigger>
  /** Stream triggers not started because their function cannot run, with the reason. */
  readonly disabledTriggers: ReadonlyMap<string, string>
  /** The functions run in a worker thread of their own (enrich), by function name. */
  readonly functionWorkers: ReadonlyMap<string, FunctionWorker>
  /** HTTPS of the stack: the domain submitted on the control plane and its certificate. */
  readonly https: LocalHttps
  /** Waits until every stream trigger has consumed everything written so far. */
  drain(): Promise<void>
  stop(): Promise<void>
}

/**
 * Puts the enrichment configuration files of `dir` (or none) under the assets
 * bucket's `enrichments/` prefix, as a deployment does, after checking them:
 * a file that cannot be used stops the start with its name and the reason.
 */
async function deployEnrichments(aws: AwsClients, names: ResourceNames, dir: string | undefined, log: (l: string) => void): Promise<void> {
  const files = dir === undefined ? [] : await configsFromDir(dir)
  if (files.length > 0) {
    const checked = await loadEnrichmentConfigs(files, defaultResolver())
    if (!checked.ok) throw new EnrichmentSetupError(`invalid enrichment configuration in ${dir}:\n  ${checked.errors.join('\n  ')}`)
  }
  const keys = await syncEnrichments(aws.s3, names.buckets[enrichmentFiles.bucket], files, enrichmentFiles.prefix)
  if (keys.length > 0) log(`enrichments: ${keys.length} configuration file${keys.length === 1 ? '' : 's'} from ${dir}`)
}

async function endDeadRecoveryRunsAtStart(log: (line: string) => void): Promise<void> {
  const { database } = await import('../aws/database')
  const { endDeadRecoveryRuns } = await import('../aws/recover-runs')
  try {
    for (const e of await endDeadRecoveryRuns(await database('search'))) {
      log(`recovery run ${e.runId} was interrupted: ${e.reason}; ${e.released} bad row(s) it had not replayed are selectable again`)
    }
  } catch (err) {
    // the next recovery run, or the run's status, does it instead
    log(`could not look for interrupted recovery runs: ${(err as Error).message}`)
  }
}

/**
 * Brings the whole stack up in this process: emulators, resources from the
 * declaration, the HTTP gateway and the stream triggers. Functions run
 * in-process with the same handlers the CDK app deploys; enrich
 * (`WORKER_FUNCTIONS`) runs them in a worker thread, off the gateway's event loop.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  retentionDays({ ...process.env, ...opts.environment }) // a bad setting stops the start with its rule
  searchTimeoutMs({ ...process.env, ...opts.environment })
  recoverWaitMs({ ...process.env, ...opts.environment })
  schemaCacheSeconds({ ...process.env, ...opts.environment })
  eventSpecDefaultOn({ ...process.env, ...opts.environment })
  const tls = httpsFromEnvironment({ ...process.env, ...opts.environment })
  const logsDir = opts.logsDir ?? (opts.dataDir === undefined ? undefined : join(opts.dataDir, 'logs'))
  const logFiles = logsDir === undefined ? undefined : openLogs(logsDir, logMaxBytes({ ...process.env, ...opts.environment }))
  // The stack's own lines: to the caller (the terminal) and to floe.log.
  const log = (line: string) => {
    opts.log?.(line)
    logFiles?.stackLine(line)
  }
  let emulators: Emulators | undefined
  const endpoints = opts.endpoints ?? (emulators = await startEmulators({ dataDir: opts.dataDir, host: opts.emulatorHost ?? opts.host, log }).catch((err) => {
    logFiles?.close()
    throw err
  })).endpoints
  const stopEmulators = async () => emulators?.stop()
  let gateway: Gateway | undefined
  let https: LocalHttps | undefined
  const triggers = new Map<string, StreamTrigger>()
  /**
   * A function of this process returned: the triggers reading the streams it
   * writes read now (the collector's events reach enrich, and enrich's output
   * the loaders, without waiting for a poll). Writers in other processes are
   * seen at the next poll.
   */
  const stopWaking = onInvoked((fn) => {
    const writes = (functions[fn] as FunctionDecl).streams ?? {}
    for (const t of streamTriggers) if (writes[t.stream] === 'write' || writes[t.stream] === 'readWrite') triggers.get(triggerId(t))?.wake()
  })
  const disabledTriggers = new Map<string, string>()
  const workers = new Map<string, FunctionWorker>()
  const workerOf = (fn: keyof typeof functions) => {
    let w = workers.get(fn)
    if (!w) workers.set(fn, (w = new FunctionWorker(fn, { log })))
    return w
  }
  /** Stops the triggers (each finishes its invocation in flight), then the workers they invoked. */
  const stopTriggers = async () => {
    await Promise.all([...triggers.values()].map((t) => t.stop()))
    await Promise.all([...workers.values()].map((w) => w.stop()))
  }
  /** What this stack marked down on `/health` for as long as it runs. */
  const offComponents: string[] = []
  const clearHealth = () => {
    for (const c of offComponents.splice(0)) markUp(c)
    onLicenceAccepted(undefined)
  }
  try {
    const names = localNames(opts.namePrefix)
    trackStack({ functions: Object.keys(functions), serviceOrder: serviceNames, streams: names.streams, emulators: trackedEmulators(emulators, endpoints.postgres !== undefined) })
    // Functions read resource names and endpoints from the environment, as on Lambda.
    // GET / leads to the home page, as on Snowplow Mini (FLOE_COLLECTOR_CONFIG's rootResponse still wins).
    process.env[ROOT_REDIRECT_ENV] ??= '/home'
    // Secrets at rest are sealed with the data directory's key (its path to the functions, never the key).
    if (opts.dataDir !== undefined) process.env[SECRETS_KEY_FILE_ENV] = ensureSecretsKey(opts.dataDir, log)
    else delete process.env[SECRETS_KEY_FILE_ENV]
    Object.assign(process.env, resourceEnvironment(names), opts.environment, {
      [LOCAL_ENDPOINTS_ENV]: JSON.stringify(endpoints),
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    })
    // The search store: this stack's schema on the local PostgreSQL.
    if (endpoints.postgres) {
      const search: DatabaseConnection = { kind: 'postgres', url: endpoints.postgres, schema: schemaForPrefix(opts.namePrefix ?? 'floe') }
      process.env[envVar('database', 'search')] = JSON.stringify(search)
    } else delete process.env[envVar('database', 'search')]
    for (const decl of Object.values(functions) as { environment?: Record<string, string> }[]) Object.assign(process.env, decl.environment)
    const aws = makeClients(endpoints)
    await provision(aws, names, log)
    for (const line of await sealStoredSecrets(aws.ddb, names, runtimeSeal())) log(line)
    await deployEnrichments(aws, names, opts.enrichmentsDir ?? enrichmentFiles.sourceDir(), log)
    // schema files of FLOE_IGLU_DIRS that cannot be used: said at the start (and again when one changes, in the log of the function that reads it)
    const iglu = igluDirsReport()
    for (const p of iglu.problems) log(`FLOE_IGLU_DIRS: ${p.path} is not used: ${p.reason}`)
    for (const d of iglu.truncated) log(`FLOE_IGLU_DIRS: ${d} has more files than are followed for changes`)
    // A recovery run the last stack (or a `floe recover`) left running when its process died: ended, its pending rows released.
    if (endpoints.postgres) await endDeadRecoveryRunsAtStart(log)

    if (opts.triggers !== false) {
      const checkpoints: CheckpointStore = opts.dataDir
        ? new FileCheckpointStore(join(opts.dataDir, 'checkpoints.json'))
        : new MemoryCheckpointStore()
      const startTrigger = async (t: (typeof streamTriggers)[number]) => {
        const id = triggerId(t)
        const trigger = new StreamTrigger({
          id,
          kinesis: aws.kinesis,
          streamName: names.streams[t.stream],
          functionName: t.function,
          settings: capWindow({ ...localTriggerSettings(t), ...opts.triggerOverrides }, opts.batchingWindowCapSeconds),
          checkpoints,
          invoke: WORKER_FUNCTIONS.has(t.function)
            ? async (event) => {
                const out = await workerOf(t.function).invoke(event)
                invoked(t.function)
                return out
              }
            : (event) => invoke(t.function, event),
          writeFailure: async (doc) => {
            await clients().s3.send(new PutObjectCommand({ Bucket: names.buckets[streamTriggerFailureBucket], Key: doc.key, Body: doc.body, ContentType: 'application/json' }))
          },
          pollIntervalMs: opts.pollIntervalMs ?? 250,
          retryDelayMs: opts.retryDelayMs,
          log,
        })
        if (WORKER_FUNCTIONS.has(t.function)) workerOf(t.function).start()
        await trigger.start()
        triggers.set(id, trigger)
        if (triggerSettings(t).enhancedFanOut) log(`stream trigger ${id} polls the stream: its enhanced fan-out consumer exists on AWS only`)
      }
      const licenceRecorded = await recordedLicence(aws.ddb, names.tables.settings)
      for (const t of streamTriggers) {
        const id = triggerId(t)
        const decl = functions[t.function] as FunctionDecl
        const missing = missingDatabases(decl, () => endpoints.postgres !== undefined)
        // The licence accepted on the control plane (in an earlier run) counts as accepted.
        const licenceOff = decl.disabledReason === LICENSE_MESSAGE && !licenceRecorded
        const reason = (decl.disabledReason === LICENSE_MESSAGE ? (licenceOff ? decl.disabledReason : undefined) : decl.disabledReason) ?? (missing.length ? `no ${missing.join(', ')} database in this stack` : undefined)
        if (reason) {
          // Not started: its records wait in the stream, and are processed from
          // the checkpoint once the function can run.
          disabledTriggers.set(id, reason)
          log(`stream trigger ${id} is not started: ${reason}`)
          // Off for lack of the licence: events are taken and wait; /health lists it as deliberate (200).
          if (licenceOff) {
            markOff(id, LICENCE_OFF_REASON)
            offComponents.push(id)
            // Accepted on the control plane: the trigger starts now, from the checkpoint.
            onLicenceAccepted(async () => {
              if (!disabledTriggers.has(id) || triggers.has(id)) return
              await startTrigger(t)
              disabledTriggers.delete(id)
              markUp(id)
              offComponents.splice(offComponents.indexOf(id), 1)
            })
          }
          continue
        }
        await startTrigger(t)
      }
    }
    https = new LocalHttps({ ...opts.https, ...tls, dir: opts.dataDir === undefined ? undefined : join(opts.dataDir, 'https'), host: opts.host ?? '127.0.0.1', log })
    // /micro/validate's worker loads and builds enrich in the background, so that its first request is answered as fast as the next
    if (opts.warmValidate) workerOf('microValidate').start()
    gateway = await startGateway({ host: opts.host, port: opts.port, log, tls: https, invoke: (fn, event) => (WORKER_FUNCTIONS.has(fn) ? workerOf(fn).invoke(event) : invoke(fn, event)) })
    await https.start(gateway.handle)
    setHttpsControl(https)
    const g = gateway
    const h = https
    return {
      url: g.url,
      endpoints,
      names,
      triggers,
      disabledTriggers,
      functionWorkers: workers,
      https: h,
      drain: async () => {
        await Promise.all([...triggers.values()].map((t) => t.drain()))
      },
      async stop() {
        setHttpsControl(undefined)
        stopWaking()
        await h.stop()
        await g.close()
        await stopTriggers()
        clearHealth()
        await stopEmulators()
        logFiles?.close()
      },
    }
  } catch (err) {
    setHttpsControl(undefined)
    stopWaking()
    await https?.stop()
    await gateway?.close()
    await stopTriggers()
    clearHealth()
    await stopEmulators()
    logFiles?.close()
    throw err
  }
}

/** `settings` with a batching window of at most `cap` seconds. */
function capWindow(settings: StreamTriggerSettings, cap: number | undefined): StreamTriggerSettings {
  return cap === undefined || settings.maxBatchingWindowSeconds <= cap ? settings : { ...settings, maxBatchingWindowSeconds: cap }
}
