/**
 * A cloud assembly running on the local emulators: its data resources
 * created from the templates, its functions hosted from their bundles, its
 * HTTP API served from the template's routes and authorizer, its Kinesis
 * event source mappings polling. What the rehearsal's clients talk to; the
 * function counts are its report's `functions`.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import { dataApiTargets } from '../../core/rehearse/data-api-targets'
import { apiRoutes } from '../../core/rehearse/http-api'
import { functionInventory, type FunctionInventory } from '../../core/rehearse/inventory'
import { resourcePlan, type QueuePlan, type ResourcePlan } from '../../core/rehearse/resource-plan'
import { assemblyResolver, type ResolverOptions } from '../../core/rehearse/resolve'
import { schedules as scheduleList, type Schedule } from '../../core/rehearse/schedules'
import type { AssemblyStack } from '../../core/rehearse/template'
import { FunctionHost, type FunctionCount, type FunctionCredentials } from './functions'
import { startHttp2Bridge } from './h2-bridge'
import { startRehearsalApi } from './http-api'
import { createResources, type CreateOutcome } from './resources'
import { startSearchStoreStandIn, type SearchStoreStandIn } from './search-store'
import { startMappings, type MappingRunOptions, type RunningMappings } from './triggers'

export interface RunOptions {
  readonly dir: string
  readonly stacks: readonly AssemblyStack[]
  readonly resolver?: ResolverOptions
  /** Clients of the emulators (HTTP/1.1 for kinesalite), to create the resources and poll the streams. */
  readonly clients: { readonly ddb: DynamoDBClient; readonly kinesis: KinesisClient; readonly s3: S3Client }
  /** The endpoints the functions call, by the SDK's service identifier; `kinesis` is bridged from HTTP/2 unless `bridgeKinesis` is false. */
  readonly endpoints: Readonly<Record<string, string>>
  readonly bridgeKinesis?: boolean
  /**
   * Stand in for the search store when `endpoints` names no `rds-data`: a
   * private PGlite behind a local RDS Data API (./search-store.ts) answering
   * for the cluster, secret and database the functions are given; its
   * endpoint becomes the functions' `rds-data` one. (`dir`: PGlite's data,
   * default a temporary directory.)
   */
  readonly searchStore?: { readonly dir?: string; readonly idleTransactionMs?: number }
  readonly credentials: (fn: FunctionInventory) => FunctionCredentials
  readonly createQueue?: (q: QueuePlan) => Promise<void>
  /** Runs an SQS mapping (see startMappings); without it SQS mappings are skipped. */
  readonly startQueueTrigger?: MappingRunOptions['startQueueTrigger']
  /** The Kinesis client each function's mappings poll with (its role's identity); `clients.kinesis` otherwise. */
  readonly kinesisFor?: MappingRunOptions['kinesisFor']
  /** The clock the schedules' events carry. */
  readonly now?: () => Date
  /** Start the event source mappings (default true). */
  readonly mappings?: boolean
  readonly pollIntervalMs?: number
  readonly log?: (line: string) => void
}

export interface RunningAssembly {
  readonly plan: ResourcePlan
  readonly created: CreateOutcome
  readonly functions: readonly FunctionInventory[]
  readonly host: FunctionHost
  /** The HTTP API's URL. */
  readonly url: string
  readonly mappings?: RunningMappings
  /** The schedules that invoke functions (EventBridge rules, Scheduler schedules). */
  readonly schedules: readonly Schedule[]
  /** Invokes each enabled schedule's function once with its event; the disabled ones are skipped, and said so. */
  runSchedules(): Promise<{ readonly ran: readonly { readonly logicalId: string; readonly function: string; readonly ok: boolean; readonly error?: string }[]; readonly skipped: readonly { readonly logicalId: string; readonly function: string; readonly reason: string }[] }>
  /** The search store stood in (see `RunOptions.searchStore`). */
  readonly searchStore?: SearchStoreStandIn
  /** `{logicalId, invocations, errors}` of every function. */
  report(): FunctionCount[]
  stop(): Promise<void>
}

export async function runAssembly(o: RunOptions): Promise<RunningAssembly> {
  const log = o.log ?? (() => {})
  const resolver = assemblyResolver(o.stacks, o.resolver)
  const plan = resourcePlan(o.stacks, resolver)
  const created = await createResources(plan, o.clients, { ...(o.createQueue ? { createQueue: o.createQueue } : {}), log })
  const functions = functionInventory(o.stacks, resolver)
  const bridge = o.bridgeKinesis !== false && o.endpoints.kinesis ? await startHttp2Bridge(o.endpoints.kinesis) : undefined
  const stops: (() => Promise<void>)[] = []
  if (bridge) stops.push(() => bridge.close())
  try {
    const searchStore = await standInSearchStore(o, functions, log)
    if (searchStore) stops.push(() => searchStore.close())
    const endpoints: Record<string, string> = { ...o.endpoints, ...(bridge ? { kinesis: bridge.url } : {}), ...(searchStore ? { 'rds-data': searchStore.dataApiUrl } : {}) }
    const host = new FunctionHost(functions, { assemblyDir: o.dir, credentials: o.credentials, endpoints, log: (fn, line) => log(`${fn}: ${line}`) })
    stops.unshift(() => host.stop())
    const api = await startRehearsalApi({ routes: apiRoutes(o.stacks, resolver, functions), host, log })
    stops.unshift(() => api.close())
    const mappings = o.mappings === false ? undefined : await startMappings({ functions, host, kinesis: o.clients.kinesis, s3: o.clients.s3, searchStore: endpoints['rds-data'] !== undefined, ...(o.kinesisFor ? { kinesisFor: o.kinesisFor } : {}), ...(o.startQueueTrigger ? { startQueueTrigger: o.startQueueTrigger } : {}), ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}), log })
    if (mappings) stops.unshift(() => mappings.stop())
    const timed = scheduleList(o.stacks, resolver, functions, (o.now ?? (() => new Date()))())
    return {
      plan, created, functions, host, url: api.url,
      ...(mappings ? { mappings } : {}),
      schedules: timed,
      runSchedules: async () => {
        const ran: { logicalId: string; function: string; ok: boolean; error?: string }[] = []
        const skipped = timed.filter((t) => !t.enabled).map((t) => ({ logicalId: t.logicalId, function: t.function, reason: 'disabled in the template' }))
        for (const t of timed.filter((x) => x.enabled)) {
          const r = await host.invoke(t.function, t.event)
          ran.push({ logicalId: t.logicalId, function: t.function, ok: r.ok, ...(r.ok ? {} : { error: `${r.error.errorType}: ${r.error.errorMessage}` }) })
        }
        return { ran, skipped }
      },
      ...(searchStore ? { searchStore } : {}),
      report: () => host.report(),
      stop: async () => { for (const s of stops) await s() },
    }
  } catch (err) {
    for (const s of stops) await s().catch(() => {})
    throw err
  }
}

/** The search store's stand-in, when asked for and no `rds-data` endpoint is given: for the one cluster the functions are given. */
async function standInSearchStore(o: RunOptions, functions: readonly FunctionInventory[], log: (line: string) => void): Promise<SearchStoreStandIn | undefined> {
  if (!o.searchStore || o.endpoints['rds-data'] !== undefined) return undefined
  const targets = dataApiTargets(functions)
  if (targets.length === 0) return undefined
  if (targets.length > 1) throw new Error(`the functions are given ${targets.length} Data API clusters; the stand-in answers for one: ${targets.map((t) => t.clusterArn).join(', ')}`)
  const t = targets[0]!
  const store = await startSearchStoreStandIn({ clusterArn: t.clusterArn, secretArn: t.secretArn, database: t.database, ...o.searchStore, log })
  log(`search store: a local Data API over PGlite stands in for ${t.clusterArn} at ${store.dataApiUrl}`)
  return store
}
