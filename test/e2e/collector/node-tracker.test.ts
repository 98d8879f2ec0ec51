import { buildPageView, buildSelfDescribingEvent, buildStructEvent, newTracker, type Tracker } from '@snowplow/node-tracker'
import { describe, expect, it } from 'vitest'
import { envVar } from '../../../lib/infra/resources'
import { testClients, useLocalStack } from '../../support/stack'
import { eventsOf, readPayloads } from '../../support/streams'

const stack = useLocalStack({ triggers: false })

interface Delivery {
  readonly tracker: Tracker
  /** Resolves once `n` events in all were acknowledged with 2xx. */
  delivered(n: number): Promise<void>
  /** Resolves at the first failed request. */
  readonly firstFailure: Promise<void>
  failures: { status?: number; willRetry: boolean; events: number }[]
}

function tracker(appId: string, emitter: { eventMethod: 'get' | 'post'; bufferSize?: number; serverAnonymization?: boolean }, encodeBase64: boolean): Delivery {
  const url = new URL(stack.current.url)
  let count = 0
  const waiters: { n: number; resolve: () => void }[] = []
  const failures: Delivery['failures'] = []
  let failed!: () => void
  const firstFailure = new Promise<void>((resolve) => (failed = resolve))
  const t = newTracker(
    { namespace: `ns-${appId}`, appId, encodeBase64 },
    {
      endpoint: url.hostname,
      port: Number(url.port),
      protocol: 'http',
      bufferSize: 1,
      ...emitter,
      onRequestSuccess: (batch) => {
        count += batch.length
        for (const w of waiters.filter((w) => count >= w.n)) w.resolve()
      },
      onRequestFailure: (f) => {
        failures.push({ status: f.status, willRetry: f.willRetry, events: f.events.length })
        failed()
      },
    },
  )
  return {
    tracker: t,
    failures,
    firstFailure,
    delivered: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
  }
}

const CONTEXT = { schema: 'iglu:com.acme/ctx/jsonschema/1-0-0', data: { y: 2 } }
const SDE = { schema: 'iglu:com.acme/foo/jsonschema/1-0-0', data: { x: 1 } }

function trackMix(t: Tracker, n: number, from = 0): string[] {
  const eids: string[] = []
  for (let i = from; i < from + n; i++) {
    const builder =
      i % 3 === 0
        ? buildPageView({ pageUrl: `http://example.com/${i}`, pageTitle: `Page ${i}` })
        : i % 3 === 1
          ? buildStructEvent({ category: 'cat', action: `act-${i}` })
          : buildSelfDescribingEvent({ event: SDE })
    const payload = t.track(builder, [CONTEXT])
    eids.push(String(payload!.eid))
  }
  return eids
}

async function eventsFor(appId: string) {
  const payloads = await readPayloads(testClients().kinesis, stack.current.names.streams.raw)
  return { payloads, events: eventsOf(payloads).filter((e) => e.aid === appId) }
}

function decodeJsonParam(e: Record<string, string>, plain: string, b64: string): unknown {
  if (e[plain] !== undefined) return JSON.parse(e[plain]!)
  return JSON.parse(Buffer.from(e[b64]!, 'base64url').toString('utf8'))
}

describe('@snowplow/node-tracker against the local collector', () => {
  const cases = [
    { name: 'POST, base64 off', method: 'post', base64: false, bufferSize: 1 },
    { name: 'POST, base64 on', method: 'post', base64: true, bufferSize: 1 },
    { name: 'POST batches of 5', method: 'post', base64: true, bufferSize: 5 },
    { name: 'GET, base64 off', method: 'get', base64: false, bufferSize: 1 },
    { name: 'GET, base64 on', method: 'get', base64: true, bufferSize: 1 },
  ] as const

  for (const c of cases) {
    it(`${c.name}: every event lands on the raw stream exactly once`, async () => {
      const appId = `node-${c.method}-${c.base64 ? 'b64' : 'plain'}-${c.bufferSize}`
      const d = tracker(appId, { eventMethod: c.method, bufferSize: c.bufferSize }, c.base64)
      const eids: string[] = []
      if (c.bufferSize === 1) {
        // One request per event: wait for each before tracking the next.
        for (let i = 0; i < 12; i++) {
          eids.push(...trackMix(d.tracker, 1, i))
          await d.delivered(i + 1)
        }
      } else {
        eids.push(...trackMix(d.tracker, 12))
        await d.tracker.flush()
        await d.delivered(eids.length)
      }
      expect(d.failures).toEqual([])

      const { payloads, events } = await eventsFor(appId)
      expect(events.map((e) => e.eid).sort()).toEqual([...eids].sort())
      const mine = payloads.filter((p) => eventsOf([p]).some((e) => e.aid === appId))
      if (c.method === 'post') {
        expect(mine.every((p) => p.path === '/com.snowplowanalytics.snowplow/tp2' && p.contentType === 'application/json; charset=utf-8')).toBe(true)
        const sizes = mine.map((p) => JSON.parse(p.body!).data.length)
        if (c.bufferSize === 1) expect(sizes).toEqual(Array(12).fill(1))
        else expect(Math.max(...sizes)).toBeGreaterThan(1)
      } else {
        expect(mine.every((p) => p.path === '/i' && p.body === undefined)).toBe(true)
        expect(mine.length).toBe(12)
      }
      for (const p of mine) {
        expect(p.userAgent).toBe('node')
        expect(p.networkUserId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      }
      for (const e of events) {
        expect(e.tv).toBe('node-4.8.0')
        expect(c.base64 ? e.cx : e.co).toBeDefined()
        expect(decodeJsonParam(e, 'co', 'cx')).toMatchObject({ data: [CONTEXT] })
        if (e.e === 'ue') {
          expect(c.base64 ? e.ue_px : e.ue_pr).toBeDefined()
          expect(decodeJsonParam(e, 'ue_pr', 'ue_px')).toMatchObject({ data: SDE })
        }
      }
    })
  }

  it('server anonymisation: SP-Anonymous gives the zero nuid and no IP', async () => {
    const appId = 'node-anon'
    const d = tracker(appId, { eventMethod: 'post', serverAnonymization: true }, false)
    trackMix(d.tracker, 2)
    await d.delivered(2)
    const { payloads } = await eventsFor(appId)
    const mine = payloads.filter((p) => p.body?.includes(appId))
    expect(eventsOf(mine)).toHaveLength(2)
    for (const p of mine) {
      expect(p.networkUserId).toBe('00000000-0000-0000-0000-000000000000')
      expect(p.ipAddress).toBe('unknown')
      expect(p.headers?.some((h) => h.startsWith('Sp-Anonymous:'))).toBe(true)
    }
  })

  it('stream unavailable → 503; the tracker keeps the event and delivers it once the stream is back', async () => {
    const appId = 'node-fault'
    const d = tracker(appId, { eventMethod: 'post' }, true)
    const key = envVar('stream', 'raw')
    const original = process.env[key]!
    process.env[key] = `${original}-unavailable`
    let eids: string[]
    try {
      eids = trackMix(d.tracker, 1)
      await d.firstFailure
      // The failed flush finishes in the same turn (in-memory event store); let it end before retrying.
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.env[key] = original
    }
    expect(d.failures[0]).toEqual({ status: 503, willRetry: true, events: 1 })
    expect((await eventsFor(appId)).events).toEqual([])

    await d.tracker.flush()
    await d.delivered(1)
    const { events } = await eventsFor(appId)
    expect(events.map((e) => e.eid)).toEqual(eids)
  })
})
