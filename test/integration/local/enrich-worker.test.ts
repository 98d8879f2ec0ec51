/**
 * Enrich runs in a worker thread of the local stack: a JavaScript enrichment
 * whose `process()` never finishes (installed as a configuration file, which
 * the control plane's upload trial would refuse) costs enrich its 100 ms per
 * event, and the gateway still answers `/health` and the collector while a
 * batch is in flight. A worker ended in the middle of a batch fails that
 * invocation: the trigger does the batch again and no event is lost. A
 * restart on the control plane reaches the worker before its next batch, and
 * what enrich writes goes to enrich.log; so does a schema pushed to the
 * registry, even right after enrich last read the registry's change counter.
 */
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import type { KinesisStreamEvent } from 'aws-lambda'
import { describe, expect, it } from 'vitest'
import { testClients, useLocalStack, withAuth } from '../../support/stack'
import { readTexts } from '../../support/streams'

const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-worker-'))
const endless = 'function process(event) { while (true) {} }'
writeFileSync(
  join(dir, 'endless.json'),
  JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'javascript_script_config', enabled: true, parameters: { script: Buffer.from(endless).toString('base64') } } }),
)
const SUPER = '5b2e9c1d-7a3f-4e6b-9c0d-1a2b3c4d5e6f'
const stack = useLocalStack({ enrichmentsDir: dir, logsDir: join(dir, 'logs'), environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER } })

/** One tracker POST of `n` page views (one raw record: one batch of `n` events for enrich); answers their event ids. */
async function sendPayload(n: number, appId: string): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID())
  const data = ids.map((eid) => ({ e: 'pv', p: 'web', tv: 'js-4.0.0', aid: appId, eid, url: 'https://example.com/', dtm: String(Date.now()) }))
  const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
  })
  expect(res.status).toBe(200)
  return ids
}

/** The ids among `ids` that are in no bad row (each of these events fails the script: a bad row each). */
async function missingFromBad(ids: readonly string[]): Promise<string[]> {
  const bad = (await readTexts(testClients().kinesis, stack.current.names.streams.bad)).join('\n')
  return ids.filter((id) => !bad.includes(id))
}

describe('enrich in a worker thread', () => {
  it('answers /health and the collector while enrich is in a batch of an endless script', async () => {
    // enrich set up (configuration read, script started) by a first batch
    await sendPayload(1, 'warm-up')
    await stack.current.drain()

    const trigger = stack.current.triggers.get('enrich-raw')!
    const options = trigger.options as { invoke: (e: KinesisStreamEvent) => Promise<unknown> }
    const inner = options.invoke
    // the first invocation from now on: the batch of the payload below (the probes' events may go to other shards)
    let entered!: () => void
    const inFlight = new Promise<void>((resolve) => (entered = resolve))
    let first: Promise<unknown> | undefined
    let finished = false
    options.invoke = (e) => {
      const p = inner(e)
      if (first === undefined) {
        first = p
        void p.finally(() => (finished = true)).catch(() => {})
        entered()
      }
      return p
    }
    try {
      // 100 events at 100 ms each: ten seconds of enrich's time
      const ids = await sendPayload(100, 'endless')
      await inFlight
      const statuses: number[] = []
      for (let i = 0; i < 10; i++) {
        statuses.push((await fetch(`${stack.current.url}/health`)).status)
        statuses.push((await fetch(`${stack.current.url}/i?e=pv&p=web&tv=js-4.0.0&aid=probe`)).status)
      }
      // every answer came while the batch was still being enriched
      expect(finished).toBe(false)
      expect(statuses).toEqual(Array(20).fill(200))
      await stack.current.drain()
      expect(await missingFromBad(ids)).toEqual([])
    } finally {
      options.invoke = inner
    }
  }, 180_000)

  it('does a batch again when its worker thread is ended in the middle of it: nothing is lost', async () => {
    await stack.current.drain()
    const worker = stack.current.functionWorkers.get('enrich')!
    const threads = worker.threadsStarted
    const ended: unknown[] = []
    const trigger = stack.current.triggers.get('enrich-raw')!
    const options = trigger.options as { invoke: (e: KinesisStreamEvent) => Promise<unknown> }
    const inner = options.invoke
    options.invoke = (e) => inner(e).catch((err: unknown) => {
      ended.push(err)
      throw err
    })
    try {
      const started = once(worker, 'started')
      const ids = await sendPayload(30, 'killed')
      await started
      await worker.terminate()
      await stack.current.drain()
      // the invocation in flight failed with the thread, a new thread did the batch again
      expect(ended.map((e) => (e as Error).name)).toEqual(['WorkerEndedError'])
      expect(worker.threadsStarted).toBe(threads + 1)
      expect(await missingFromBad(ids)).toEqual([])
    } finally {
      options.invoke = inner
    }
  }, 120_000)

  it('takes a restart from the control plane before its next batch, and writes its output to enrich.log', async () => {
    await stack.current.drain()
    // disabling the script restarts enrich: the very next batch runs without it
    const r = await fetch(`${stack.current.url}/control-plane/enrichments/endless.json/disable`, { method: 'POST', headers: withAuth() })
    expect(r.status).toBe(200)
    const ids = await sendPayload(3, 'after-restart')
    await stack.current.drain()
    const good = (await readTexts(testClients().kinesis, stack.current.names.streams.good)).join('\n')
    expect(ids.filter((id) => !good.includes(id))).toEqual([])
    expect(await missingFromBad(ids)).toEqual(ids)
    const log = readFileSync(join(dir, 'logs', 'enrich.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { service: string; msg?: string })
    expect(log.filter((e) => e.service === 'enrich' && /javascript_script_config/.test(e.msg ?? ''))).not.toEqual([])
  })

  it('sees a schema pushed to the registry from its very next batch, however recently it read the change counter', async () => {
    await stack.current.drain()
    const worker = stack.current.functionWorkers.get('enrich')!
    const schema = 'iglu:com.acme.worker/pushed/jsonschema/1-0-0'
    const ue = async (aid: string) => {
      const eid = randomUUID()
      const pr = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data: { n: 1 } } })
      expect((await fetch(`${stack.current.url}/i?e=ue&p=web&tv=js-4.0.0&aid=${aid}&eid=${eid}&ue_pr=${encodeURIComponent(pr)}`)).status).toBe(200)
      return eid
    }
    // not found: enrich's resolver keeps that (the default cache, 600 s)
    const before = await ue('before-push')
    await stack.current.drain()
    expect(await missingFromBad([before])).toEqual([])
    // a batch reads the counter as it starts; the push comes right after it
    const ended = once(worker, 'ended')
    await sendPayload(1, 'just-before-push')
    await ended
    const self = { vendor: 'com.acme.worker', name: 'pushed', format: 'jsonschema', version: '1-0-0' }
    const put = await fetch(`${stack.current.url}/registry-server/api/schemas/com.acme.worker/pushed/jsonschema/1-0-0`, {
      method: 'PUT',
      headers: { apikey: SUPER, 'content-type': 'application/json' },
      body: JSON.stringify({ $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#', self, type: 'object', properties: { n: { type: 'integer' } } }),
    })
    expect(put.status, await put.text()).toBe(201)
    const after = await ue('after-push')
    await stack.current.drain()
    const good = (await readTexts(testClients().kinesis, stack.current.names.streams.good)).join('\n')
    expect(good.includes(after)).toBe(true)
  })
})
