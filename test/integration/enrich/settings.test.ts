/**
 * Enrich settings at run time, on the Kinesis emulator: `concurrency.sink`
 * bounds the writes in flight, `monitoring.sentry.dsn` reports errors to a
 * Sentry endpoint (a local HTTP server receiving its envelopes), and the input
 * settings a Lambda trigger has no use for are warned about at start.
 */
import { CreateStreamCommand, waitUntilStreamExists, type KinesisClient } from '@aws-sdk/client-kinesis'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createRuntime, processBatch } from '../../../lib/aws/enrich-kinesis'
import { runEnrich } from '../../../lib/cli/enrich'
import { KINESIS_INPUT_NOTICES, validateConfig } from '../../../lib/core/enrich/config'
import { defaultResolver } from '../../../lib/runtime/default-resolver'
import { tp2 } from '../../unit/enrich/helpers'
import { envVar } from '../../../lib/infra/resources'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'
import { readTexts } from '../../support/streams'

const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })

async function newStreams(kinesis: KinesisClient, ...names: string[]): Promise<void> {
  for (const s of names) {
    await kinesis.send(new CreateStreamCommand({ StreamName: s, ShardCount: 1 }))
    await waitUntilStreamExists({ client: kinesis, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { StreamName: s })
  }
}

function config(doc: Record<string, unknown>, outputs: { good: string; incomplete: string; bad: string }) {
  const c = validateConfig({
    license: { accept: true },
    ...doc,
    input: { streamName: 'raw', ...(doc.input as object) },
    output: {
      good: { streamName: outputs.good, ...((doc.output as { good?: object })?.good ?? {}) },
      incomplete: { streamName: outputs.incomplete },
      bad: { streamName: outputs.bad, backoffPolicy: { maxRetries: 0 } },
    },
  })
  if (!c.ok) throw new Error(c.errors.join('; '))
  return c.config
}

const pageViews = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), data: tp2(`e=pv&p=web&tv=js-3&aid=settings&page=p${i}`) }))

describe('concurrency.sink', () => {
  /** The most PutRecords calls in flight at once to `stream` while `run` runs. */
  async function maxInFlight(kinesis: KinesisClient, stream: string, run: () => Promise<unknown>): Promise<number> {
    let inFlight = 0
    let max = 0
    kinesis.middlewareStack.add(
      (next) => async (args) => {
        const mine = (args.input as { StreamName?: string }).StreamName === stream
        if (mine) max = Math.max(max, ++inFlight)
        try {
          return await next(args)
        } finally {
          if (mine) inFlight--
        }
      },
      { step: 'initialize', name: `inFlight-${stream}` },
    )
    await run()
    return max
  }

  it.each([
    [1, 1],
    [3, 3],
  ])('with %i, at most that many writes to an output stream are in flight', async (sink, expected) => {
    const { kinesis } = testClients()
    const p = uniquePrefix('sink')
    const names = { good: `${p}-good`, incomplete: `${p}-incomplete`, bad: `${p}-bad` }
    await newStreams(kinesis, names.good)
    // one record per call: nine calls for nine events
    const rt = createRuntime(config({ concurrency: { sink }, output: { good: { recordLimit: 1 } } }, names), { kinesis, resolver, log: () => {} })
    expect(rt.config.concurrency.sink).toBe(sink)
    const max = await maxInFlight(kinesis, names.good, async () => expect((await processBatch(rt, pageViews(9))).failed).toEqual([]))
    expect(max).toBe(expected)
    expect(await readTexts(kinesis, names.good)).toHaveLength(9)
  })
})

describe('monitoring.sentry.dsn', () => {
  interface Envelope {
    readonly url: string
    readonly header: Record<string, any>
    readonly items: { header: Record<string, any>; body: any }[]
  }
  const received: Envelope[] = []
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let raw = Buffer.concat(chunks)
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw)
      const lines = raw.toString('utf8').split('\n').filter(Boolean)
      const items: Envelope['items'] = []
      for (let i = 1; i + 1 < lines.length; i += 2) items.push({ header: JSON.parse(lines[i]!), body: JSON.parse(lines[i + 1]!) })
      received.push({ url: req.url ?? '', header: JSON.parse(lines[0]!), items })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  let dsn: string
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    dsn = `http://0123456789abcdef@127.0.0.1:${(server.address() as AddressInfo).port}/42`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  it('reports a failed stream write to Sentry, with the configured tags, when the invocation flushes', async () => {
    const { kinesis } = testClients()
    const p = uniquePrefix('sentry')
    const names = { good: `${p}-good`, incomplete: `${p}-incomplete`, bad: `${p}-bad` }
    // the good stream does not exist: its write fails
    const rt = createRuntime(config({ monitoring: { sentry: { dsn, tags: { team: 'data', shard: 3 } } } }, names), { kinesis, resolver, log: () => {}, env: { AWS_LAMBDA_FUNCTION_NAME: 'floe-enrich' } })
    const result = await processBatch(rt, pageViews(2))
    expect(result.failed).toEqual(['1', '2'])
    expect(received).toHaveLength(0)
    expect(await rt.errors.flush(5000)).toBe(true)
    expect(received).toHaveLength(1)
    const [env] = received
    expect(env!.url).toMatch(/^\/api\/42\/envelope\/\?.*sentry_key=0123456789abcdef/)
    const event = env!.items.find((i) => i.header.type === 'event')!.body
    expect(event.exception.values[0]).toMatchObject({ type: 'KinesisWriteError', value: expect.stringContaining(`Could not write 2 of 2 record(s) to Kinesis stream '${names.good}'`) })
    expect(event.tags).toEqual({ team: 'data', shard: '3', stream: names.good, records: '2' })
    expect(event).toMatchObject({ release: 'floe-enrich-0.1.0', server_name: 'floe-enrich' })
  })

  it('floe enrich (file-based) reports the error that stops a run, and warns that concurrency.sink has no effect there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-sentry-'))
    try {
      mkdirSync(join(dir, 'in'))
      writeFileSync(join(dir, 'in', 'p1'), tp2('e=pv&p=web&tv=js-3&aid=file'))
      writeFileSync(join(dir, 'good'), 'already here')
      const cfg = join(dir, 'enrich.hocon')
      writeFileSync(cfg, `license.accept = true
concurrency.sink = 2
monitoring.sentry { dsn = "${dsn}", tags { run = nightly } }
input { type = FileSystem, dir = "${join(dir, 'in')}" }
output { good { type = FileSystem, file = "${join(dir, 'good')}" }, bad { type = FileSystem, file = "${join(dir, 'bad')}" } }`)
      const before = received.length
      const lines: string[] = []
      await expect(runEnrich(['--config', cfg], { out: (l) => lines.push(l), env: { FLOE_IGLU_CENTRAL_URL: '' } })).rejects.toThrow(/output file .*good already exists/)
      expect(lines[0]).toBe('warning: concurrency.sink has no effect here: the file outputs are written by one writer each, in order; there are no concurrent writes to bound')
      expect(received).toHaveLength(before + 1)
      const event = received.at(-1)!.items.find((i) => i.header.type === 'event')!.body
      expect(event.exception.values[0].value).toMatch(/output file .*good already exists/)
      expect(event.tags).toEqual({ run: 'nightly' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('the enrich function reports enrichments that fail to load at start, before the invocation fails', async () => {
    const doc = { license: { accept: true }, monitoring: { sentry: { dsn } }, input: { streamName: 'raw' }, output: { good: { streamName: 'good' }, incomplete: { streamName: 'incomplete' }, bad: { streamName: 'bad' } } }
    vi.stubEnv('FLOE_ENRICH_CONFIG_JSON', JSON.stringify(doc))
    vi.stubEnv('FLOE_LOCAL_ENDPOINTS', JSON.stringify(sharedEndpoints()))
    vi.stubEnv(envVar('bucket', 'assets'), uniquePrefix('missing-bucket'))
    vi.stubEnv('FLOE_IGLU_CENTRAL_URL', '')
    try {
      const before = received.length
      const { handler } = await import('../../../functions/enrich/handler')
      await expect(handler({ Records: [] })).rejects.toThrow(/bucket/i)
      expect(received).toHaveLength(before + 1)
      const event = received.at(-1)!.items.find((i) => i.header.type === 'event')!.body
      expect(event.tags).toEqual({ phase: 'start' })
      expect(event.exception.values[0].value).toMatch(/bucket/i)
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it('sends nothing when no error happened, and nothing without a DSN', async () => {
    const { kinesis } = testClients()
    const p = uniquePrefix('nosentry')
    const names = { good: `${p}-good`, incomplete: `${p}-incomplete`, bad: `${p}-bad` }
    await newStreams(kinesis, names.good)
    const before = received.length
    const rt = createRuntime(config({ monitoring: { sentry: { dsn } } }, names), { kinesis, resolver, log: () => {} })
    expect((await processBatch(rt, pageViews(1))).failed).toEqual([])
    expect(await rt.errors.flush(1000)).toBe(true)
    const plain = createRuntime(config({}, { ...names, good: `${p}-missing` }), { kinesis, resolver, log: () => {} })
    expect((await processBatch(plain, pageViews(1))).failed).toEqual(['1'])
    expect(await plain.errors.flush(1000)).toBe(true)
    expect(received.length).toBe(before)
  })
})

describe('input settings a Lambda trigger has no use for', () => {
  const samples: Record<string, unknown> = {
    'input.appName': 'acme-enrich',
    'input.region': 'eu-central-1',
    'input.bufferSize': 10,
    'input.customEndpoint': 'https://kinesis.eu-central-1.amazonaws.com',
    'input.leaseTableCustomEndpoint': 'https://dynamodb.eu-central-1.amazonaws.com',
    'input.metricsCustomEndpoint': 'https://monitoring.eu-central-1.amazonaws.com',
  }
  const names = { good: 'g', incomplete: 'i', bad: 'b' }

  it('covers every such key', () => {
    expect(Object.keys(samples).sort()).toEqual(Object.keys(KINESIS_INPUT_NOTICES).sort())
  })

  it.each(Object.keys(samples))('%s is accepted, with a warning at start naming it and why it has no effect', (key) => {
    const lines: string[] = []
    const field = key.slice('input.'.length)
    createRuntime(config({ input: { [field]: samples[key] } }, names), { kinesis: testClients().kinesis, resolver, log: (l) => lines.push(l) })
    const warnings = lines.map((l) => JSON.parse(l) as { level: string; key: string; message: string }).filter((l) => l.level === 'WARN')
    expect(warnings).toEqual([{ level: 'WARN', key, message: `${key} has no effect here: ${KINESIS_INPUT_NOTICES[key]}` }])
  })

  it("keys of Snowplow enrich's own configurations that Floe has no use for: one warning in the enrich log, naming them all", () => {
    const lines: string[] = []
    createRuntime(config({ input: { checkpointBackoff: { minBackoff: '100 millis' }, leaseDuration: '10 seconds' }, output: { good: { byteLimit: 5242880 } }, cpuParallelismFraction: 1 }, names), {
      kinesis: testClients().kinesis,
      resolver,
      log: (l) => lines.push(l),
    })
    const warnings = lines.map((l) => JSON.parse(l) as { level: string; key: string; message: string }).filter((l) => l.level === 'WARN')
    expect(warnings).toEqual([
      {
        level: 'WARN',
        key: 'cpuParallelismFraction, input.checkpointBackoff, input.leaseDuration, output.good.byteLimit',
        message: "ignored (settings of Snowplow enrich's own consumer, producer, probes and telemetry, which Floe's enrich has no counterpart for): cpuParallelismFraction, input.checkpointBackoff, input.leaseDuration, output.good.byteLimit",
      },
    ])
  })

  it('no warning when none of them is set', () => {
    const lines: string[] = []
    createRuntime(config({}, names), { kinesis: testClients().kinesis, resolver, log: (l) => lines.push(l) })
    expect(lines.filter((l) => l.includes('"WARN"'))).toEqual([])
  })
})
