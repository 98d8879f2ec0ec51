import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { synthesize } from '../../../lib/cli/rehearse'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import { functionInventory, type FunctionInventory } from '../../../lib/core/rehearse/inventory'
import { resourcePlan } from '../../../lib/core/rehearse/resource-plan'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'
import { FunctionHost } from '../../../lib/local/rehearse/functions'
import { apiRoutes } from '../../../lib/core/rehearse/http-api'
import { startRehearsalApi } from '../../../lib/local/rehearse/http-api'
import { mappingSettings, startMappings, streamNameOf } from '../../../lib/local/rehearse/triggers'
import { runAssembly } from '../../../lib/local/rehearse/run'
import { startHttp2Bridge } from '../../../lib/local/rehearse/h2-bridge'
import { eventsOf, readPayloads } from '../../support/streams'
import { PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { createResources } from '../../../lib/local/rehearse/resources'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'

/** An API Gateway HTTP API event, payload format 2.0. */
function httpEvent(method: string, path: string, routeKey: string): unknown {
  const now = Date.now()
  return {
    version: '2.0', routeKey, rawPath: path, rawQueryString: '', headers: { host: 'api.example.com', 'user-agent': 'rehearsal' },
    requestContext: { accountId: '000000000000', apiId: 'api', domainName: 'api.example.com', domainPrefix: 'api', http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'rehearsal' }, requestId: 'r1', routeKey, stage: '$default', time: new Date(now).toISOString(), timeEpoch: now },
    isBase64Encoded: false,
  }
}

/**
 * Functions of the synthesized assembly run from their bundles, with the
 * templates' environment resolved to resources created from the templates.
 * (One synthesis, with bundling, for the file.)
 */
// Each test starts sandboxes (a Node process per function of the assembly): bounds for a busy machine.
describe('rehearsal function host', { timeout: 180_000 }, () => {
  const endpoints = sharedEndpoints()
  // The emulators' own key pair (s3rver knows only it); an IAM-enforcing proxy would give each function its role's.
  const credentials = () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
  let dir: string
  let prefix: string
  let inventory: FunctionInventory[]
  let host: FunctionHost

  const load = (): { stacks: AssemblyStack[]; inventory: FunctionInventory[] } => {
    const stacks = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    return { stacks, inventory: functionInventory(stacks, assemblyResolver(stacks)) }
  }
  const id = (inv: readonly FunctionInventory[], prefixOfId: string) => inv.find((f) => f.logicalId.startsWith(prefixOfId))!.logicalId

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-functions-'))
    await synthesize(dir, () => {})
    prefix = uniquePrefix('F')
    const loaded = load()
    inventory = loaded.inventory
    const outcome = await createResources(resourcePlan(loaded.stacks, assemblyResolver(loaded.stacks)), testClients())
    expect(outcome.failed.filter((f) => f.kind !== 'queue')).toEqual([])
    host = new FunctionHost(inventory, { assemblyDir: dir, credentials, endpoints: { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 } })
  }, 600_000)
  afterAll(async () => {
    await host?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('runs the health function from its bundle: GET /health answers 200', async () => {
    const health = id(inventory, 'HealthFunction')
    const r = await host.invoke(health, httpEvent('GET', '/health', 'GET /health'))
    expect(r.ok, JSON.stringify(r)).toBe(true)
    expect(r.ok && (r.result as { statusCode: number }).statusCode, JSON.stringify(r)).toBe(200)
  })

  it('runs the registry against the tables the templates declare: its schema list answers 200', async () => {
    const registry = id(inventory, 'RegistryFunction')
    const r = await host.invoke(registry, httpEvent('GET', '/registry-server/api/schemas', 'ANY /registry-server/{proxy+}'))
    expect(r.ok, JSON.stringify(r)).toBe(true)
    const result = (r as { result: { statusCode: number; body: string } }).result
    expect(result.statusCode, result.body).toBe(200)
    expect(JSON.parse(result.body)).toEqual([])
    expect(host.report()).toEqual(expect.arrayContaining([{ logicalId: registry, invocations: 1, errors: 0 }]))
  })

  it('serves the HTTP API as the template declares it: routes to their functions, the authorizer in front of the routes that have it', async () => {
    const stacks = load().stacks
    const routes = apiRoutes(stacks, assemblyResolver(stacks), inventory)
    const api = await startRehearsalApi({ routes, host })
    try {
      const before = new Map(host.report().map((c) => [c.logicalId, c.invocations]))
      const health = await fetch(`${api.url}/health`)
      expect(health.status).toBe(200)
      const schemas = await fetch(`${api.url}/registry-server/api/schemas`)
      expect(schemas.status).toBe(200)
      expect(await schemas.json()).toEqual([])
      // a page behind the basic-auth authorizer: the authorizer runs first, then the page asks for credentials
      const home = await fetch(`${api.url}/home`)
      expect(home.status).toBe(401)
      expect(home.headers.get('www-authenticate')).toMatch(/^Basic /)
      const after = new Map(host.report().map((c) => [c.logicalId, c.invocations]))
      const ran = (prefixOfId: string) => (after.get(id(inventory, prefixOfId)) ?? 0) - (before.get(id(inventory, prefixOfId)) ?? 0)
      expect([ran('HealthFunction'), ran('RegistryFunction'), ran('AuthorizerFunction'), ran('UiFunction')]).toEqual([1, 1, 1, 1])
    } finally {
      await api.close()
    }
  })

  it('the collector writes to its Kinesis stream with the SDK\'s own HTTP/2 client, bridged to kinesalite', async () => {
    const { stacks, inventory: current } = load()
    const bridge = await startHttp2Bridge(endpoints.kinesis)
    const own = new FunctionHost(current, { assemblyDir: dir, credentials, endpoints: { dynamodb: endpoints.dynamodb, kinesis: bridge.url, s3: endpoints.s3 } })
    const api = await startRehearsalApi({ routes: apiRoutes(stacks, assemblyResolver(stacks), current), host: own })
    try {
      const res = await fetch(`${api.url}/i?e=pv&url=http%3A%2F%2Fshop.example%2F&aid=rehearsal&p=web&tv=js-3.0.0`)
      expect(res.status).toBe(200)
      const collector = current.find((f) => f.logicalId.startsWith('CollectorFunction'))!
      const raw = streamNameOf(collector.environment.FLOE_STREAM_RAW!.startsWith('arn:') ? collector.environment.FLOE_STREAM_RAW! : `x:stream/${collector.environment.FLOE_STREAM_RAW}`)!
      const events = eventsOf(await readPayloads(testClients().kinesis, raw))
      expect(events.map((e) => e.aid)).toEqual(['rehearsal'])
      expect(own.report().find((c) => c.logicalId === collector.logicalId)).toEqual({ logicalId: collector.logicalId, invocations: 1, errors: 0 })
    } finally {
      await api.close()
      await own.stop()
      await bridge.close()
    }
  })

  it('a function whose template lacks a variable its code needs reports its error, counted', async () => {
    // The copied assembly's template edited: the registry loses its schemas table.
    const file = join(dir, 'FloeApp.template.json')
    const template = JSON.parse(readFileSync(file, 'utf8'))
    const registry = id(inventory, 'RegistryFunction')
    delete template.Resources[registry].Properties.Environment.Variables.FLOE_TABLE_SCHEMAS
    writeFileSync(file, JSON.stringify(template))
    const edited = load().inventory
    const logged: string[] = []
    const broken = new FunctionHost(edited, { assemblyDir: dir, credentials, endpoints: { dynamodb: endpoints.dynamodb, s3: endpoints.s3 }, log: (fn, line) => logged.push(`${fn}: ${line}`) })
    try {
      const r = await broken.invoke(registry, httpEvent('GET', '/registry-server/api/schemas', 'ANY /registry-server/{proxy+}'))
      // As on AWS: the caller gets a bare 500, the function's log says why.
      expect(r).toMatchObject({ ok: true, result: { statusCode: 500 } })
      expect(logged.filter((l) => l.startsWith(registry)).join('\n')).toMatch(/FLOE_TABLE_SCHEMAS/)
      expect(broken.report().find((c) => c.logicalId === registry)).toEqual({ logicalId: registry, invocations: 1, errors: 1 })
    } finally {
      await broken.stop()
    }
  })

  it('a function that throws reports errorType and errorMessage; one that runs past its timeout is stopped as Lambda stops it', async () => {
    // Two functions added to the copied assembly, with bundles of their own.
    mkdirSync(join(dir, 'asset.rehearsal-test'), { recursive: true })
    writeFileSync(join(dir, 'asset.rehearsal-test', 'index.mjs'), [
      'export const fails = async () => { class TableMissing extends Error { name = "TableMissing" }; throw new TableMissing("no table " + process.env.AWS_LAMBDA_FUNCTION_NAME) }',
      'export const slow = async (_e, context) => { await new Promise((r) => setTimeout(r, 60_000)); return context.getRemainingTimeInMillis() }',
      'export const env = async (_e, context) => ({ region: process.env.AWS_REGION, memory: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, key: process.env.AWS_ACCESS_KEY_ID, endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, name: context.functionName, remaining: context.getRemainingTimeInMillis() > 0, home: process.env.HOME ?? null })',
    ].join('\n'))
    const base = inventory.find((f) => f.logicalId.startsWith('HealthFunction'))!
    const fake = (logicalId: string, handler: string, timeoutSeconds: number): FunctionInventory => ({ ...base, logicalId, name: logicalId, handler, timeoutSeconds, assetPath: 'asset.rehearsal-test' })
    const own = new FunctionHost([fake('Fails', 'index.fails', 3), fake('Slow', 'index.slow', 1), fake('Env', 'index.env', 3)], { assemblyDir: dir, credentials: () => ({ accessKeyId: 'AKIDENV', secretAccessKey: 'secret' }), endpoints: { dynamodb: endpoints.dynamodb } })
    try {
      expect(await own.invoke('Fails', {})).toMatchObject({ ok: false, error: { errorType: 'TableMissing', errorMessage: 'no table Fails' } })
      const slow = await own.invoke('Slow', {})
      expect(slow).toMatchObject({ ok: false, error: { errorType: 'Sandbox.Timedout', errorMessage: expect.stringMatching(/Task timed out after 1\.00 seconds$/) } })
      expect(slow.ms).toBeLessThan(30_000)
      const env = await own.invoke('Env', {})
      expect(env).toMatchObject({ ok: true, result: { region: 'us-east-1', memory: String(base.memoryMb), key: 'AKIDENV', endpoint: endpoints.dynamodb, name: 'Env', remaining: true, home: null } })
      expect(own.report()).toEqual([{ logicalId: 'Fails', invocations: 1, errors: 1 }, { logicalId: 'Slow', invocations: 1, errors: 1 }, { logicalId: 'Env', invocations: 1, errors: 0 }])
    } finally {
      await own.stop()
    }
  })

  it('concurrent invocations: one sandbox runs them one after another; with a concurrency of 2, each in a sandbox of its own', async () => {
    mkdirSync(join(dir, 'asset.rehearsal-pid'), { recursive: true })
    writeFileSync(join(dir, 'asset.rehearsal-pid', 'index.mjs'), 'export const handler = async () => { await new Promise((r) => setTimeout(r, 200)); return process.pid }\n')
    const base = inventory.find((f) => f.logicalId.startsWith('HealthFunction'))!
    const pid: FunctionInventory = { ...base, logicalId: 'Pid', name: 'Pid', handler: 'index.handler', assetPath: 'asset.rehearsal-pid' }
    for (const [concurrency, sandboxes] of [[1, 1], [2, 2]] as const) {
      const own = new FunctionHost([pid], { assemblyDir: dir, credentials, endpoints: {}, concurrency })
      try {
        const answers = await Promise.all([own.invoke('Pid', {}), own.invoke('Pid', {})])
        expect(answers.every((a) => a.ok)).toBe(true)
        expect(new Set(answers.map((a) => (a as { result: number }).result)).size).toBe(sandboxes)
        expect(own.report()).toEqual([{ logicalId: 'Pid', invocations: 2, errors: 0 }])
      } finally {
        await own.stop()
      }
    }
  })

  it('runs the Kinesis event source mappings as the template declares them: the archive function archives what reaches its stream', async () => {
    const file = join(dir, 'FloeApp.template.json')
    const template = JSON.parse(readFileSync(file, 'utf8'))
    const archive = id(inventory, 'ArchiveFunction')
    const declared = inventory.find((f) => f.logicalId === archive)!.triggers
    expect(declared.length).toBeGreaterThan(0)
    // the settings come from the template (its 60 s batching window cut to 1 s in the copy, so the test does not wait a minute)
    expect(mappingSettings(declared[0]!)).toMatchObject({ batchSize: 10000, maxBatchingWindowSeconds: 60, bisectBatchOnError: true, reportBatchItemFailures: true, retryAttempts: 5, maxRecordAgeSeconds: 3600, startingPosition: 'TRIM_HORIZON' })
    for (const t of declared) template.Resources[t.logicalId].Properties.MaximumBatchingWindowInSeconds = 1
    writeFileSync(file, JSON.stringify(template))
    const { stacks, inventory: edited } = load()
    const fn = edited.find((f) => f.logicalId === archive)!
    const bad = fn.triggers.find((t) => /BadStream/.test(t.logicalId))!
    const clients = testClients()
    const stream = streamNameOf(bad.source)!
    await clients.kinesis.send(new PutRecordsCommand({ StreamName: stream, Records: [1, 2, 3].map((i) => ({ PartitionKey: `k${i}`, Data: Buffer.from(JSON.stringify({ schema: 'iglu:x/y/jsonschema/1-0-0', data: { i } })) })) }))
    const own = new FunctionHost(edited, { assemblyDir: dir, credentials, endpoints: { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 } })
    const mappings = await startMappings({ functions: [{ ...fn, triggers: [bad] }], host: own, kinesis: clients.kinesis, s3: clients.s3, pollIntervalMs: 100 })
    try {
      expect(mappings.started).toEqual([{ logicalId: bad.logicalId, function: archive, stream }])
      await mappings.drain()
      const bucket = resourcePlan(stacks, assemblyResolver(stacks)).buckets.find((b) => /ArchiveBucket/.test(b.logicalId))!.name
      const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket }))
      expect((listed.Contents ?? []).length).toBeGreaterThan(0)
      expect(own.report()).toEqual(expect.arrayContaining([expect.objectContaining({ logicalId: archive, errors: 0 })]))
      expect(own.report().find((c) => c.logicalId === archive)!.invocations).toBeGreaterThan(0)
    } finally {
      await mappings.stop()
      await own.stop()
    }
  })

  it('runs the whole assembly: a tracker request through the HTTP API reaches the raw stream and the archive through its mapping', async () => {
    // (after the test above: the copy's archive mappings wait 1 s, not 60)
    const { stacks } = load()
    const run = await runAssembly({ dir, stacks, clients: testClients(), endpoints: { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 }, credentials, pollIntervalMs: 100 })
    try {
      expect(run.created.failed.map((f) => f.kind)).toEqual(run.plan.queues.map(() => 'queue'))
      const archive = id(run.functions, 'ArchiveFunction')
      expect(run.mappings!.started.filter((m) => m.function === archive).length).toBeGreaterThan(0)
      // enrich's mappings are disabled without the licence: skipped, and said so
      expect(run.mappings!.skipped.filter((m) => m.function.startsWith('EnrichFunction')).map((m) => m.reason)).toContain('disabled in the template')
      // the search store is not stood in: its loader's mappings are skipped, and said so
      expect(run.mappings!.skipped.filter((m) => m.function.startsWith('SearchLoaderFunction')).map((m) => m.reason)).toContain('writes to the search store, which is not stood in')
      expect((await fetch(`${run.url}/i?e=pv&aid=whole&p=web&tv=js-3.0.0`)).status).toBe(200)
      await run.mappings!.drain()
      const counts = run.report()
      expect(counts.find((c) => c.logicalId.startsWith('CollectorFunction'))).toMatchObject({ invocations: 1, errors: 0 })
      expect(counts.find((c) => c.logicalId === archive)!.invocations).toBeGreaterThan(0)
      expect(counts.filter((c) => c.errors > 0)).toEqual([])
    } finally {
      await run.stop()
    }
  })

  it('a batch its function fails on, past the mapping\'s retries, goes to the mapping\'s S3 on-failure destination', async () => {
    mkdirSync(join(dir, 'asset.rehearsal-fails'), { recursive: true })
    writeFileSync(join(dir, 'asset.rehearsal-fails', 'index.mjs'), 'export const handler = async () => { throw new Error("cannot take these records") }\n')
    const { stacks, inventory: current } = load()
    const plan = resourcePlan(stacks, assemblyResolver(stacks))
    // a destination bucket of its own: nothing else writes there
    const bucket = { name: uniquePrefix('failures') }
    await testClients().s3.send(new CreateBucketCommand({ Bucket: bucket.name }))
    const stream = plan.streams.find((x) => /PiiStream/.test(x.logicalId))!
    const base = current.find((f) => f.logicalId.startsWith('HealthFunction'))!
    const failing: FunctionInventory = {
      ...base, logicalId: 'Refuses', name: 'Refuses', handler: 'index.handler', assetPath: 'asset.rehearsal-fails', routes: [],
      triggers: [{ logicalId: 'RefusesMapping', source: `arn:aws:kinesis:us-east-1:000000000000:stream/${stream.name}`, kind: 'kinesis', enabled: true, batchSize: 10, maxBatchingWindowSeconds: 0, startingPosition: 'TRIM_HORIZON', bisectOnError: false, reportBatchItemFailures: false, maxRetryAttempts: 0, onFailure: `arn:aws:s3:::${bucket.name}` }],
    }
    const clients = testClients()
    await clients.kinesis.send(new PutRecordsCommand({ StreamName: stream.name, Records: [{ PartitionKey: 'k', Data: Buffer.from('{"x":1}') }] }))
    const own = new FunctionHost([failing], { assemblyDir: dir, credentials, endpoints: {} })
    const mappings = await startMappings({ functions: [failing], host: own, kinesis: clients.kinesis, s3: clients.s3, pollIntervalMs: 100 })
    try {
      await mappings.drain()
      const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket.name }))
      expect((listed.Contents ?? []).map((o) => o.Key)).toEqual([expect.stringMatching(/^aws\/lambda\//)])
      expect(own.report()).toEqual([{ logicalId: 'Refuses', invocations: 1, errors: 1 }])
    } finally {
      await mappings.stop()
      await own.stop()
    }
  })
})
