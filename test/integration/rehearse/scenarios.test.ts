import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { synthesize } from '../../../lib/cli/rehearse'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'
import type { FunctionInventory, Trigger } from '../../../lib/core/rehearse/inventory'
import type { QueuePlan } from '../../../lib/core/rehearse/resource-plan'
import { CreateQueueCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs'
import { startSqs, type LocalSqs } from '../../../lib/local/sqs'
import { QueueTrigger } from '../../../lib/local/queue-trigger'
import { resourcePlan } from '../../../lib/core/rehearse/resource-plan'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import { runAssembly, type RunningAssembly } from '../../../lib/local/rehearse/run'
import { runScenarios, targetOfRun, type ScenarioTarget } from '../../../lib/local/rehearse/scenarios'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

/**
 * Real clients through the synthesized assembly running on the emulators
 * (no IAM proxy; the search store stood in by the Data API over PGlite; SQS
 * by fauxqs with the local queue trigger; CloudWatch is not, so /metrics
 * can only say so and is skipped with the reason). One synthesis, with
 * the licence accepted so enrich's mapping is enabled as a deploy with
 * ACCEPT_LIMITED_USE_LICENSE=yes enables it.
 */
describe('rehearsal scenarios', { timeout: 600_000 }, () => {
  const endpoints = sharedEndpoints()
  const credentials = () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
  let dir: string
  let run: RunningAssembly
  let target: ScenarioTarget
  let stacks: AssemblyStack[]
  let sqs: LocalSqs | undefined
  const logged: string[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-scenarios-'))
    const licence = process.env.ACCEPT_LIMITED_USE_LICENSE
    process.env.ACCEPT_LIMITED_USE_LICENSE = 'yes'
    try {
      await synthesize(dir, () => {})
    } finally {
      if (licence === undefined) delete process.env.ACCEPT_LIMITED_USE_LICENSE
      else process.env.ACCEPT_LIMITED_USE_LICENSE = licence
    }
    const prefix = uniquePrefix('S')
    stacks = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    const own = { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 }
    // SQS: fauxqs in this process, the template's queues created on it, their triggers run by the local queue trigger
    sqs = await startSqs()
    const sqsClient = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials: credentials() })
    const urlOf = (arn: string) => `${sqs!.endpoint}/000000000000/${arn.slice(arn.lastIndexOf(':') + 1)}`
    const redrives: [string, string][] = []
    const queuePorts = {
      createQueue: async (q: QueuePlan) => {
        await sqsClient.send(new CreateQueueCommand({ QueueName: q.name, Attributes: { ...(q.fifo ? { FifoQueue: 'true', ContentBasedDeduplication: String(q.contentBasedDeduplication) } : {}), VisibilityTimeout: String(q.visibilityTimeoutSeconds) } }))
        if (q.redrive) redrives.push([urlOf(q.arn), JSON.stringify(q.redrive)])
      },
      startQueueTrigger: async (t: Trigger, _fn: FunctionInventory, invoke: (event: unknown) => Promise<unknown>) => {
        for (const [url, policy] of redrives.splice(0)) await sqsClient.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { RedrivePolicy: policy } }))
        const trigger = new QueueTrigger({ id: t.logicalId, sqs: sqsClient, queueUrl: urlOf(t.source), queueArn: t.source, batchSize: t.batchSize ?? 10, reportBatchItemFailures: t.reportBatchItemFailures, invoke, waitTimeSeconds: 1, log: (l) => logged.push(l) })
        trigger.start()
        return trigger
      },
    }
    const withSqs = { ...own, sqs: sqs.endpoint }
    // a queue's URL (its Ref) is where the SDK sends its messages, whatever AWS_ENDPOINT_URL_SQS says: the local SQS's
    const physical: Record<string, Record<string, { ref: string }>> = {}
    for (const q of resourcePlan(stacks, assemblyResolver(stacks)).queues) (physical[q.stack] ??= {})[q.logicalId] = { ref: urlOf(q.arn) }
    const resolver = { physical }
    run = await runAssembly({ dir, stacks, resolver, clients: testClients(), endpoints: withSqs, credentials, pollIntervalMs: 100, searchStore: {}, ...queuePorts, log: (l) => logged.push(l) })
    const made = targetOfRun({ run, stacks, resolver, clients: testClients(), endpoints: withSqs })
    expect(made.problems).toEqual([])
    target = made.target
    // what the run lacks, read from its endpoints and mappings: enrich runs (the licence was accepted at synthesis), the search store is stood in
    expect(target.unavailable).toEqual({
      cloudwatch: 'no CloudWatch endpoint',
    })
    expect(target.stackOutputs[`${prefix}FloeApp`]!.ApiUrl).toBe(run.url)
  }, 900_000)
  afterAll(async () => {
    await run?.stop()
    await sqs?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  // Every scenario passing, with every function invoked and IAM enforced, is the whole rehearsal's test (run.test.ts).

  it('a scenario fails, naming what, when the collector cannot be reached; the others still run', async () => {
    // a port nothing listens on
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const outcomes = await runScenarios({ ...target, apiUrl: `http://127.0.0.1:${port}` }, { only: ['trackers', 'metrics'], waitMs: 2000, pollMs: 100 })
    expect(outcomes.map((o) => [o.name, o.ok])).toEqual([['trackers', false], ['metrics', false]])
    expect(outcomes[0]!.detail).toMatch(new RegExp(`^waited 2 s for the collector at http://127\\.0\\.0\\.1:${port} to answer the node trackers|collector refused the node tracker`))
    expect(outcomes[1]!.detail).toBe(`GET http://127.0.0.1:${port}/metrics: ECONNREFUSED`)
  })

  it('a scenario fails, naming what, when the collector\'s function is broken as deployed (its handler not in its bundle)', async () => {
    // the same assembly with the collector's Handler edited, run again (no mappings: the collector alone is reached)
    const edited = stacks.map((s) => structuredClone(s))
    const app = edited.find((s) => Object.keys(s.template.Resources ?? {}).some((id) => id.startsWith('CollectorFunction')))!
    const id = Object.keys(app.template.Resources!).find((k) => k.startsWith('CollectorFunction') && app.template.Resources![k]!.Type === 'AWS::Lambda::Function')!
    app.template.Resources![id]!.Properties!.Handler = 'index.noSuchHandler'
    const own = { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 }
    const broken = await runAssembly({ dir, stacks: edited, clients: testClients(), endpoints: own, credentials, mappings: false })
    try {
      const [o] = await runScenarios({ ...target, apiUrl: broken.url }, { only: ['trackers'], waitMs: 20_000, pollMs: 100 })
      expect(o).toMatchObject({ name: 'trackers', ok: false })
      expect(o!.detail).toMatch(/^the collector refused the node tracker: GET 1 event\(s\): 500; POST 3 event\(s\): 500$/)
      expect(broken.report().find((c) => c.logicalId === id)).toMatchObject({ errors: 2 })
    } finally {
      await broken.stop()
    }
  })

  it('a function never invoked fails the functions outcome, by name', async () => {
    const all = [...target.functions!.all, { ...target.functions!.all[0]!, logicalId: 'NeverCalledFunction', triggers: [], routes: [] }]
    // every function of the assembly invoked once, but the one added
    const invocations = () => all.map((f) => ({ logicalId: f.logicalId, invocations: f.logicalId === 'NeverCalledFunction' ? 0 : 1, errors: 0 }))
    const [o] = await runScenarios({ ...target, functions: { all, invocations } }, { only: ['functions'] })
    expect(o).toMatchObject({ name: 'functions', ok: false, detail: 'never invoked: NeverCalledFunction' })
  })
})
