/**
 * `/micro/good` (and `/micro/bad`) over every stored event is written as it
 * is read, page by page, never built whole: its first events are out after one page was read;
 * the local gateway writes a streamed body chunk by chunk, the client having
 * the first bytes before the rest exists; and a Lambda behind API Gateway,
 * which cannot stream, answers whole up to its 6 MB and says 413 beyond.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpLambda } from '../../../lib/aws/lambda'
import { loadBatch } from '../../../lib/core/search/loader'
import { GOOD_PAGE_SIZE, micro, microText } from '../../../lib/core/search/micro'
import type { SearchDb } from '../../../lib/core/search/store'
import { ACCEPTS_STREAMED_BODY, collectedResponse, STREAMED_BODY } from '../../../lib/http/streamed-body'
import { writeResult } from '../../../lib/local/gateway'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, COLLECTED, enricher, tp2 } from '../../unit/enrich/helpers'

const EVENTS = 2 * GOOD_PAGE_SIZE + 50
let store: LocalSearchStore
let db: SearchDb
/** The statements that read good events, in order. */
const pageReads: string[] = []
const deps = { lookupSchema: async () => ({ ok: false as const, errors: {} }) }

beforeAll(async () => {
  store = await openLocalSearchStore()
  const o = await enricher().enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=stream', { timestamp: COLLECTED }), batch())
  const line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
  // two collector times, many events sharing each: pages must split inside one time without losing or repeating any
  const records = Array.from({ length: EVENTS }, (_, i) => {
    const cols = line.split('\t')
    cols[6] = `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`
    if (i >= 100) cols[3] = cols[3]!.replace(/:00\.000$/, ':01.000')
    return { id: String(i), text: cols.join('\t') }
  })
  await loadBatch(store.db, 'good', records, COLLECTED)
  const badRow = (i: number) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [{ n: i }] }, payload: { raw: { vendor: i % 2 ? 'com.acme' : 'com.snowplowanalytics.snowplow', version: 'tp2', parameters: [{ name: 'se_la', value: `b${i}` }] } } } })
  await loadBatch(store.db, 'bad', Array.from({ length: EVENTS }, (_, i) => ({ id: `b${i}`, text: badRow(i) })), COLLECTED)
  db = {
    ...store.db,
    sql: {
      query: (sql, params) => {
        if (/FROM \S+good_events g/.test(sql)) pageReads.push(sql)
        return store.db.sql.query(sql, params)
      },
      transaction: (fn) => store.db.sql.transaction(fn),
    },
  }
}, 120_000)
afterAll(async () => {
  await store?.close()
})

const ids = (events: { event: { event_id: string } }[]) => events.map((e) => e.event.event_id)

describe('/micro/good', () => {
  it('writes its first events after reading one page, and all of them, newest first, once each', async () => {
    pageReads.length = 0
    const r = await micro(db, { method: 'GET', path: '/micro/good', body: '' }, deps)
    expect(r).toMatchObject({ status: 200, body: '' })
    expect(r.stream).toBeDefined()
    const it = r.stream![Symbol.asyncIterator]()
    expect((await it.next()).value).toBe('[')
    const first = (await it.next()).value as string
    expect(first.length).toBeGreaterThan(0)
    expect(pageReads).toHaveLength(1) // the rest is not read yet
    let text = `[${first}`
    for (let n = await it.next(); !n.done; n = await it.next()) text += n.value
    expect(pageReads).toHaveLength(3)
    const all = JSON.parse(text) as { event: { event_id: string; collector_tstamp: string } }[]
    expect(all).toHaveLength(EVENTS)
    expect(new Set(ids(all)).size).toBe(EVENTS)
    // newest first: the later collector time, then the last loaded first
    const expected = [...Array.from({ length: EVENTS - 100 }, (_, i) => EVENTS - 1 - i), ...Array.from({ length: 100 }, (_, i) => 99 - i)].map((i) => `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    expect(ids(all)).toEqual(expected)
  })

  it('keeps limit and filters across pages, and refuses a bad request before writing anything', async () => {
    const limited = JSON.parse(await microText(await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ limit: GOOD_PAGE_SIZE + 7 }) }, deps)))
    const all = JSON.parse(await microText(await micro(db, { method: 'GET', path: '/micro/good', body: '' }, deps)))
    expect(ids(limited)).toEqual(ids(all).slice(0, GOOD_PAGE_SIZE + 7))
    expect(JSON.parse(await microText(await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ event_type: 'struct' }) }, deps)))).toEqual([])
    expect(JSON.parse(await microText(await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ limit: 0 }) }, deps)))).toEqual([])
    const refused = await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ limit: -1 }) }, deps)
    expect(refused).toMatchObject({ status: 400 })
    expect(refused.stream).toBeUndefined()
  })
})

describe('/micro/bad', () => {
  it('is written page by page too: every bad row once, the last loaded first, filters and limit across pages', async () => {
    const labels = async (body: unknown) => (JSON.parse(await microText(await micro(db, { method: 'POST', path: '/micro/bad', body: JSON.stringify(body) }, deps))) as { rawEvent: { parameters: { se_la: string } } }[]).map((b) => b.rawEvent.parameters.se_la)
    const r = await micro(db, { method: 'GET', path: '/micro/bad', body: '' }, deps)
    expect(r.stream).toBeDefined()
    expect(await labels({})).toEqual(Array.from({ length: EVENTS }, (_, i) => `b${EVENTS - 1 - i}`))
    const acme = Array.from({ length: EVENTS }, (_, i) => EVENTS - 1 - i).filter((i) => i % 2).map((i) => `b${i}`)
    expect(await labels({ vendor: 'com.acme' })).toEqual(acme)
    expect(await labels({ vendor: 'com.acme', limit: GOOD_PAGE_SIZE + 3 })).toEqual(acme.slice(0, GOOD_PAGE_SIZE + 3))
  })
})

describe('a streamed body', () => {
  it('reaches the client through the local gateway before the rest of it exists', async () => {
    let release!: () => void
    const rest = new Promise<void>((r) => (release = r))
    async function* body() {
      yield '["first"'
      await rest // the rest of the answer is not built until the client has the first bytes
      yield ',"second"]'
    }
    const server = createServer((_req, res) => void writeResult(res, { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '', [STREAMED_BODY]: body() }))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      expect(r.headers.get('content-length')).toBeNull()
      const reader = r.body!.getReader()
      const firstBytes = new TextDecoder().decode((await reader.read()).value)
      expect(firstBytes).toBe('["first"')
      release()
      let text = firstBytes
      for (let n = await reader.read(); !n.done; n = await reader.read()) text += new TextDecoder().decode(n.value)
      expect(JSON.parse(text)).toEqual(['first', 'second'])
    } finally {
      server.close()
    }
  })

  it('is handed on by the Lambda wrapper to a caller that writes it, and collected for API Gateway: whole up to its limit, 413 beyond', async () => {
    const chunks = () => ({
      async *[Symbol.asyncIterator]() {
        yield '["a"'
        yield ',"b"]'
      },
    })
    const handler = httpLambda(async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '', stream: chunks() }))
    const event = { version: '2.0', routeKey: 'GET /x', rawPath: '/x', rawQueryString: '', headers: {}, requestContext: { http: { method: 'GET', path: '/x', sourceIp: '127.0.0.1' }, timeEpoch: 0 }, isBase64Encoded: false }
    const whole = (await handler(structuredClone(event) as never, {} as never)) as { statusCode: number; body: string }
    expect(whole).toMatchObject({ statusCode: 200, body: '["a","b"]' })
    const streamed = (await handler(Object.assign(structuredClone(event), { [ACCEPTS_STREAMED_BODY]: true }) as never, {} as never)) as Record<symbol, unknown> & { body: string }
    expect(streamed.body).toBe('')
    expect(streamed[STREAMED_BODY]).toBeDefined()
    const tooLarge = await collectedResponse({ statusCode: 200, body: '', stream: chunks() }, 6)
    expect(tooLarge).toMatchObject({ statusCode: 413, body: expect.stringMatching(/larger than .* ask for less \(e\.g\. a "limit"/) })
  })
})
