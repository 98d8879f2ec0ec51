/**
 * The rehearsal's run: a cloud assembly's data resources created on private
 * emulators, its functions run from their bundles with IAM enforced, real
 * requests sent through its HTTP API, and the report's run section.
 *
 * What it starts, each on 127.0.0.1 and a free port, under a temporary
 * directory it removes at the end (also on an error or an abort):
 * DynamoDB Local, kinesalite and s3rver (lib/local/emulators.ts) and an SQS
 * server (fauxqs, lib/local/sqs.ts); an IAM proxy in front of each
 * (lib/local/iam-proxy.ts), in front of CloudWatch's stand-in
 * (./cloudwatch.ts: the function host's own counts), and in front of a
 * stand-in that answers every Lambda call "not emulated" (so that those
 * calls are still authorized and reported). Each function runs with a key pair and session
 * token of its own, mapped to its role's policies from the templates
 * (./identities.ts); its Kinesis mappings poll through the proxy with that
 * identity too (Lambda reads a stream with the function's role), and so do
 * its SQS mappings. Queue URLs resolve to the SQS proxy (SQS clients send a
 * queue's requests to its URL).
 *
 * Seams for parts built elsewhere:
 * - `searchStore`: starts a Data API stand-in for the search store (by
 *   default `dataApiSearchStore`: PGlite behind the local RDS Data API); its
 *   endpoint is put behind a proxy and given to the functions as
 *   `rds-data`. With `null`, the functions that write to the store have
 *   their mappings skipped, and the report lists it under `skipped`.
 * - `scenarios`: the client scenarios, given a `ScenarioTarget`. The
 *   built-in scenario (./builtin-scenario.ts) always runs first.
 *
 * After the scenarios, `floe teardown`'s plan and run (./teardown.ts) delete
 * the rehearsal's resources as they would a deployment's, read back.
 *
 * The `ScenarioTarget` decision: scenarios get the HTTP API's URL (what
 * clients use), the stack outputs resolved, the resource plan (names as
 * the functions see them), the functions' inventory, and direct clients of
 * the emulators, unproxied and with the emulators' own key pair, for
 * setting up and reading back: a scenario acts as a client, never as a
 * function, so no call it makes is counted as a function's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KinesisClient } from '@aws-sdk/client-kinesis'
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { makeClients } from '../../aws/clients'
import type { NamedPolicy } from '../../core/rehearse/iam'
import { dataApiTargets } from '../../core/rehearse/data-api-targets'
import { functionInventory, type FunctionInventory } from '../../core/rehearse/inventory'
import { LOCAL_ACCOUNT } from '../../core/rehearse/physical'
import { assemblyResolver, type ResolverOptions } from '../../core/rehearse/resolve'
import type { QueuePlan } from '../../core/rehearse/resource-plan'
import { summarizeCalls, type RunSection, type ScenarioOutcome, type Skipped } from '../../core/rehearse/run-report'
import type { AssemblyStack } from '../../core/rehearse/template'
import { startEmulators, type Emulators } from '../emulators'
import { startIamProxy, type IamProxy, type IamProxyOptions, type ProxyCall } from '../iam-proxy'
import { QueueTrigger } from '../queue-trigger'
import { startSqs, type LocalSqs } from '../sqs'
import { archiveStep, builtInScenario } from './builtin-scenario'
import { authorizeByPolicies, functionIdentities } from './identities'
import { runAssembly, type RunningAssembly } from './run'
import { startSearchStoreStandIn } from './search-store'
import type { ScenarioTarget } from './scenario-target'
import { stackOutputs } from '../../core/rehearse/outputs'
import { lambdaMetricsFrom, startCloudWatchStandIn } from './cloudwatch'
import type { FunctionCount } from './functions'
import { rehearseTeardown, type TeardownRehearsal } from './teardown'

export type { ScenarioTarget } from './scenario-target'

const REGION = 'us-east-1'
/** The emulators' own key pair (s3rver checks signatures with it). */
const EMULATOR_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

/** A Data API stand-in for the search store (the `searchStore` seam). */
export type SearchStorePort = (ctx: { readonly dir: string; readonly functions: readonly FunctionInventory[]; readonly log: (line: string) => void }) => Promise<{ readonly endpoint: string; close(): Promise<void> } | undefined>

/**
 * The search store the rehearsal stands in by default: a private PGlite
 * behind the local RDS Data API (./search-store.ts), answering for the one
 * cluster, secret and database the functions are given; none when no
 * function is given one.
 */
export const dataApiSearchStore: SearchStorePort = async ({ dir, functions, log }) => {
  const targets = dataApiTargets(functions)
  if (targets.length === 0) return undefined
  if (targets.length > 1) throw new Error(`the functions are given ${targets.length} Data API clusters; the stand-in answers for one: ${targets.map((t) => t.clusterArn).join(', ')}`)
  const t = targets[0]!
  const store = await startSearchStoreStandIn({ clusterArn: t.clusterArn, secretArn: t.secretArn, database: t.database, dir, log })
  return { endpoint: store.dataApiUrl, close: () => store.close() }
}

export interface RehearsalRunOptions {
  /** The cloud assembly's directory (the bundles are read from it). */
  readonly dir: string
  readonly stacks: readonly AssemblyStack[]
  /** The search store's stand-in, put behind an IAM proxy (default `dataApiSearchStore`; null: none, its loader's mappings are skipped). */
  readonly searchStore?: SearchStorePort | null
  readonly scenarios?: (target: ScenarioTarget) => Promise<readonly ScenarioOutcome[]>
  /** Bound of each wait on the data (default 90 s; a mapping's batching window can be 60 s). */
  readonly waitMs?: number
  readonly pollIntervalMs?: number
  /** Stops the run (SIGINT): everything started is stopped and removed. */
  readonly signal?: AbortSignal
  readonly log?: (line: string) => void
}

/** A stand-in for services the rehearsal does not emulate: every call is answered 501, after the proxy in front authorized it. */
async function notEmulated(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const body = JSON.stringify({ __type: 'NotEmulated', message: `${req.method} ${req.url} is not emulated by the rehearsal` })
      res.writeHead(501, { 'content-type': 'application/json', 'x-amzn-errortype': 'NotEmulated', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/** The lines of a function's log that say what went wrong (those naming an error or a failure; else the last ones), at most five. */
export function telling(lines: readonly string[]): string[] {
  const errors = lines.filter((l) => /error|fail|denied|exception|not authorized|timed out/i.test(l))
  return (errors.length > 0 ? errors : lines).slice(-5)
}

/** Whether `p` settled within `ms` (false too when `interrupted` settles first). */
function bounded(p: Promise<unknown>, ms: number, interrupted: Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([p.then(() => true), interrupted.then(() => false), new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms) })]).finally(() => clearTimeout(timer))
}

/** The queue's attributes as CreateQueue takes them, from the plan. */
export function queueAttributes(q: QueuePlan): Record<string, string> {
  return {
    ...(q.fifo ? { FifoQueue: 'true', ...(q.contentBasedDeduplication ? { ContentBasedDeduplication: 'true' } : {}) } : {}),
    VisibilityTimeout: String(q.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(q.messageRetentionSeconds),
    DelaySeconds: String(q.delaySeconds),
    ReceiveMessageWaitTimeSeconds: String(q.receiveWaitSeconds),
    ...(q.redrive ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: q.redrive.deadLetterTargetArn, maxReceiveCount: q.redrive.maxReceiveCount }) } : {}),
  }
}

/** Runs the assembly and its scenarios; the report's run section. Never throws for what it finds: a run that cannot complete says so in `failure`. */
export async function runRehearsal(o: RehearsalRunOptions): Promise<RunSection> {
  const log = o.log ?? (() => {})
  const waitMs = o.waitMs ?? 90_000
  const stops: (() => Promise<unknown>)[] = []
  const tmp = mkdtempSync(join(tmpdir(), 'floe-rehearsal-'))
  stops.push(async () => rmSync(tmp, { recursive: true, force: true }))
  let stopping: Promise<void> | undefined
  const stopAll = () => (stopping ??= (async () => { for (const s of stops.splice(0).reverse()) await s().catch((e) => log(`stopping: ${(e as Error).message}`)) })())
  // An interruption ends the waits at once; each step checks it; everything started is stopped at the end, in reverse order (the directory last).
  let onAbort = () => {}
  const interrupted = new Promise<void>((r) => { onAbort = r })
  if (o.signal?.aborted) onAbort()
  o.signal?.addEventListener('abort', onAbort, { once: true })

  const calls: ProxyCall[] = []
  const skipped: Skipped[] = []
  const scenarios: ScenarioOutcome[] = []
  const lastLines = new Map<string, string[]>()
  const functions0 = functionInventory(o.stacks, assemblyResolver(o.stacks))
  let run: RunningAssembly | undefined
  let failure: string | undefined
  let teardown: TeardownRehearsal | undefined
  try {
    const aborted = () => { if (o.signal?.aborted) throw new Error('interrupted') }
    const emulators: Emulators = await startEmulators({ dataDir: join(tmp, 'data'), postgres: false, log })
    stops.push(() => emulators.stop())
    const sqs: LocalSqs = await startSqs()
    stops.push(() => sqs.stop())
    const standIn = await notEmulated()
    stops.push(() => new Promise<void>((r) => { standIn.server.closeAllConnections(); standIn.server.close(() => r()) }))
    // CloudWatch answers the function host's own counts, once the functions run
    let counts: () => readonly FunctionCount[] = () => []
    const cloudwatch = await startCloudWatchStandIn({ metrics: lambdaMetricsFrom(() => counts(), functions0), log })
    stops.push(() => cloudwatch.close())
    aborted()
    const store = o.searchStore === null ? undefined : await (o.searchStore ?? dataApiSearchStore)({ dir: join(tmp, 'search'), functions: functions0, log })
    if (store) stops.push(() => store.close())

    // The identities and the proxies: every call a function makes goes through one.
    const resolver0 = assemblyResolver(o.stacks)
    const ids = functionIdentities(o.stacks, resolver0, functions0)
    for (const p of ids.problems) skipped.push({ what: `IAM of ${p.function}`, reason: p.problem })
    const tableKeys = new Map<string, string>()
    const mappingFunctions = new Map<string, string>()
    for (const fn of functions0) for (const t of fn.triggers) {
      const uuid = resolver0.physical(fn.stack, t.logicalId)?.ref
      if (uuid !== undefined) mappingFunctions.set(uuid, fn.arn)
    }
    const proxy = async (target: string, extra: Partial<IamProxyOptions<readonly NamedPolicy[]>> = {}): Promise<IamProxy> => {
      const p = await startIamProxy({ target, identities: ids.byKey, authorize: authorizeByPolicies, account: LOCAL_ACCOUNT, region: REGION, onCall: (c) => calls.push(c), ...extra })
      stops.push(() => p.close())
      return p
    }
    const proxies = {
      dynamodb: await proxy(emulators.endpoints.dynamodb, { partitionKeyOf: (arn) => tableKeys.get(arn) }),
      kinesis: await proxy(emulators.endpoints.kinesis),
      s3: await proxy(emulators.endpoints.s3, { upstreamCredentials: EMULATOR_CREDENTIALS }),
      sqs: await proxy(sqs.endpoint),
      lambda: await proxy(standIn.url, { eventSourceMappingFunction: (uuid) => mappingFunctions.get(uuid) }),
      cloudwatch: await proxy(cloudwatch.url),
      ...(store ? { 'rds-data': await proxy(store.endpoint) } : {}),
    }
    aborted()

    // Queue URLs name the SQS proxy, as a queue's URL names SQS's endpoint.
    const physical: Record<string, Record<string, { ref: string; attributes: Record<string, string> }>> = {}
    const queueUrls: Record<string, string> = {}
    for (const s of o.stacks) for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::SQS::Queue') continue
      const p = resolver0.physical(s.name, id)
      const name = p?.attributes.QueueName
      if (!p || name === undefined) continue
      const url = `${proxies.sqs.url}/${LOCAL_ACCOUNT}/${name}`
      ;(physical[s.name] ??= {})[id] = { ref: url, attributes: { QueueUrl: url } }
      if (p.attributes.Arn) queueUrls[p.attributes.Arn] = url
    }
    const resolverOptions: ResolverOptions = { physical }

    const direct = makeClients(emulators.endpoints)
    const directSqs = new SQSClient({ region: REGION, endpoint: sqs.endpoint, credentials: EMULATOR_CREDENTIALS, useQueueUrlAsEndpoint: false })
    // The SQS server names a queue's URL after the Host it was created through: the proxy's, so that the functions' calls go through it.
    const proxyHost = new URL(proxies.sqs.url).host
    directSqs.middlewareStack.add((next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> }
      if (request.headers) request.headers.host = proxyHost
      return next(args)
    }, { step: 'build', name: 'rehearsalQueueHost' })
    const signed = (fn: FunctionInventory) => ({ region: REGION, credentials: ids.credentials.get(fn.logicalId)!, maxAttempts: 3 })
    const pollers = new Map<string, KinesisClient>()
    const kinesisFor = (fn: FunctionInventory) => {
      let k = pollers.get(fn.logicalId)
      if (!k) pollers.set(fn.logicalId, (k = new KinesisClient({ ...signed(fn), endpoint: proxies.kinesis.url, requestHandler: new NodeHttpHandler({ connectionTimeout: 2000 }) })))
      return k
    }
    stops.push(async () => { for (const k of pollers.values()) k.destroy(); direct.ddb.destroy(); direct.kinesis.destroy(); direct.s3.destroy(); directSqs.destroy() })

    const createQueue = async (q: QueuePlan) => {
      const made = await directSqs.send(new CreateQueueCommand({ QueueName: q.name, Attributes: queueAttributes(q) }))
      const { Attributes = {} } = await directSqs.send(new GetQueueAttributesCommand({ QueueUrl: made.QueueUrl!, AttributeNames: ['All'] }))
      if (Attributes.QueueArn !== q.arn) throw new Error(`created with ARN ${Attributes.QueueArn}, the template's is ${q.arn}`)
      if (q.redrive && JSON.parse(Attributes.RedrivePolicy ?? '{}').deadLetterTargetArn !== q.redrive.deadLetterTargetArn) throw new Error(`its redrive policy reads ${Attributes.RedrivePolicy ?? 'nothing'}`)
    }
    const startQueueTrigger = async (t: FunctionInventory['triggers'][number], fn: FunctionInventory, invoke: (event: unknown) => Promise<unknown>) => {
      const queueUrl = queueUrls[t.source]
      if (!queueUrl) throw new Error(`${t.logicalId}: no queue ${t.source} in the assembly`)
      const client = new SQSClient({ ...signed(fn), endpoint: proxies.sqs.url })
      const trigger = new QueueTrigger({ id: t.logicalId, sqs: client, queueUrl, queueArn: t.source, batchSize: t.batchSize ?? 10, reportBatchItemFailures: t.reportBatchItemFailures, invoke, waitTimeSeconds: 1, log })
      trigger.start()
      return { stop: async () => { await trigger.stop(); client.destroy() }, drain: () => trigger.drain() }
    }

    run = await runAssembly({
      dir: o.dir,
      stacks: o.stacks,
      resolver: resolverOptions,
      clients: direct,
      endpoints: Object.fromEntries(Object.entries(proxies).map(([k, p]) => [k, p.url])),
      bridgeKinesis: false,
      credentials: (fn) => ids.credentials.get(fn.logicalId)!,
      createQueue,
      startQueueTrigger,
      kinesisFor,
      ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
      log: (line) => {
        const i = line.indexOf(': ')
        const fn = i > 0 ? line.slice(0, i) : ''
        const kept = lastLines.get(fn) ?? []
        kept.push(line.slice(i + 2).slice(0, 500))
        if (kept.length > 40) kept.shift()
        lastLines.set(fn, kept)
        log(line)
      },
    })
    const running = run
    stops.push(() => running.stop())
    counts = () => running.report()
    for (const t of running.plan.tables) tableKeys.set(`arn:aws:dynamodb:${REGION}:${LOCAL_ACCOUNT}:table/${t.name}`, t.keySchema.find((k) => k.KeyType === 'HASH')!.AttributeName)
    for (const m of running.mappings?.skipped ?? []) skipped.push({ what: `event source mapping ${m.logicalId} (${m.function})`, reason: m.reason })
    if (!store && dataApiTargets(functions0).length > 0) skipped.push({ what: 'the search store', reason: 'no Data API stands in for it: its loader\'s mappings do not run and the functions that query it are not proven' })
    aborted()

    let stuck = false
    const outputs = stackOutputs(o.stacks, { apiUrl: running.url, resolver: resolverOptions })
    for (const p of outputs.problems) skipped.push({ what: `output ${p.output} of ${p.stack}`, reason: p.problem })
    const target: ScenarioTarget = {
      url: running.url,
      assemblyDir: o.dir,
      stacks: o.stacks,
      outputs: outputs.outputs,
      resources: running.plan,
      counts: () => running.report(),
      queueUrls,
      functions: running.functions,
      mappingsStarted: running.mappings?.started ?? [],
      endpoints: { ...emulators.endpoints, sqs: sqs.endpoint, cloudwatch: cloudwatch.url, ...(store ? { dataApi: store.endpoint } : {}) },
      clients: { ...direct, sqs: directSqs },
      drain: async () => {
        // Once the mappings did not drain in time, they are stuck (a function failing, retried): later waits do not wait again.
        if (!running.mappings || stuck) return !stuck
        for (let i = 0; i < 3; i++) if (!(await bounded(running.mappings.drain(), waitMs, interrupted))) return !(stuck = true)
        return true
      },
      waitMs,
      log,
    }
    // with the client scenarios, the built-in archive check runs after them: they wait out the archive's batching window themselves
    scenarios.push(...(await builtInScenario(target, { archiveLater: o.scenarios !== undefined })))
    aborted()
    if (running.schedules.length > 0) {
      const s = await running.runSchedules()
      for (const r of s.ran) scenarios.push({ name: `schedule ${r.logicalId} invokes ${r.function}`, ok: r.ok, ...(r.error ? { problem: r.error } : {}) })
      for (const r of s.skipped) skipped.push({ what: `schedule ${r.logicalId} (${r.function})`, reason: r.reason })
    }
    if (o.scenarios) {
      scenarios.push(...(await o.scenarios(target)))
      scenarios.push(...(await archiveStep(target)))
    }
    else skipped.push({ what: 'the client scenarios', reason: 'only the built-in tracker scenario ran' })
    await target.drain()
    aborted()
    // The teardown, once nothing reads the streams any more.
    await running.mappings?.stop()
    teardown = await rehearseTeardown({ stacks: o.stacks, plan: running.plan, queueUrls, clients: { ...direct, sqs: directSqs }, log })
  } catch (err) {
    failure = o.signal?.aborted ? 'interrupted' : (err as Error).message || String(err)
  } finally {
    o.signal?.removeEventListener('abort', onAbort)
  }
  // Counts are read before the functions stop; the call log is complete once every sandbox and proxy stopped.
  const counts = run?.report() ?? functions0.map((f) => ({ logicalId: f.logicalId, invocations: 0, errors: 0 }))
  await stopAll()
  const summary = summarizeCalls(calls)
  return {
    functions: counts.map((c) => ({ ...c, ...(c.errors > 0 && lastLines.get(c.logicalId)?.length ? { log: telling(lastLines.get(c.logicalId)!) } : {}) })),
    calls: summary,
    denied: summary.filter((c) => !c.allowed),
    notInvoked: counts.filter((c) => c.invocations === 0).map((c) => c.logicalId),
    scenarios,
    skipped,
    created: run?.created.created.length ?? 0,
    notCreated: (run?.created.failed ?? []).map((f) => ({ stack: f.stack, resource: f.logicalId, problem: f.problem })),
    ...(teardown ? { teardown } : {}),
    ...(failure !== undefined ? { failure } : {}),
  }
}
