/**
 * The search store in the running stack: the Node tracker sends events, enrich
 * and the loaders put them in the store, and `/search-store` and `/micro/*`
 * answer from it as Elasticsearch 7 and Snowplow Micro do.
 */
import { PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { buildPageView, buildSelfDescribingEvent, buildStructEvent, newTracker } from '@snowplow/node-tracker'
import { beforeAll, describe, expect, it } from 'vitest'
import { testClients, useLocalStack, withAuth } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const WEB_PAGE = (id: string) => ({ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id } })
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const PAGE_ID = '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e4f11'

/** Every stream trigger has caught up: enrich first, then the loaders of what enrich wrote. */
const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}

async function send(appId: string, track: (t: ReturnType<typeof newTracker>) => number): Promise<void> {
  const url = new URL(stack.current.url)
  let ok = 0
  let failed = 0
  let expected = Infinity
  let done!: () => void
  const all = new Promise<void>((r) => (done = r))
  const t = newTracker(
    { namespace: `ns-${appId}`, appId, encodeBase64: false },
    {
      endpoint: url.hostname,
      port: Number(url.port),
      protocol: 'http',
      eventMethod: 'post',
      bufferSize: 1,
      onRequestSuccess: (b) => {
        ok += b.length
        if (ok >= expected) done()
      },
      onRequestFailure: () => void failed++,
    },
  )
  expected = track(t)
  if (ok < expected) await all
  expect(failed).toBe(0)
}

const get = async (path: string) => {
  const r = await fetch(`${stack.current.url}${path}`, { headers: withAuth() })
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.text()) as string }
}
const post = async (path: string, body: unknown, method = 'POST') => {
  const r = await fetch(`${stack.current.url}${path}`, { method, headers: withAuth({ 'content-type': 'application/json' }), body: typeof body === 'string' ? body : JSON.stringify(body) })
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() }
}
const json = (r: { body: string }) => JSON.parse(r.body)
const total = (r: { body: string }) => json(r).hits.total.value as number

beforeAll(async () => {
  await send('shop', (t) => {
    for (let i = 0; i < 3; i++) t.track(buildPageView({ pageUrl: `https://shop.example.com/p/${i}`, pageTitle: `Product ${i}` }), [WEB_PAGE(PAGE_ID)])
    t.track(buildStructEvent({ category: 'checkout', action: 'add-to-basket', label: 'sku-1', value: 2 }))
    t.track(buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { targetUrl: 'https://example.com/out', elementId: 'a1' } } }), [WEB_PAGE(PAGE_ID)])
    // invalid: link_click without its required targetUrl → a failed event and a bad row
    t.track(buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { elementId: 'no-target' } } }))
    return 6
  })
  await send('blog', (t) => {
    t.track(buildPageView({ pageUrl: 'https://blog.example.com/post', pageTitle: "O'Brien's \"quoted\" title" }))
    t.track(buildStructEvent({ category: 'video', action: 'play' }))
    return 2
  })
  await settle()
}, 120_000)

describe('/search-store', () => {
  it('answers who it is, and counts good and bad documents in both path forms', async () => {
    const root = await get('/search-store')
    expect(root.status).toBe(200)
    expect(json(root)).toMatchObject({ name: expect.any(String), version: { number: expect.any(String) }, tagline: expect.any(String) })
    // the failed event is not in the good index (its bad row is in bad)
    expect(json(await get('/search-store/good/_count'))).toEqual({ count: 7, _shards: expect.objectContaining({ total: 1, failed: 0 }) })
    expect(json(await get('/search-store/good/good/_count')).count).toBe(7)
    expect(json(await get('/search-store/bad/bad/_count')).count).toBeGreaterThanOrEqual(1)
    expect(json(await post('/search-store/good/_count', { query: { term: { app_id: 'blog' } } })).count).toBe(2)
  })

  it('searches with the query-string syntax', async () => {
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('app_id:shop AND event:page_view')}`))).toBe(3)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('page_url:*blog*')}`))).toBe(1)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('se_category:(video OR checkout)')}`))).toBe(2)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('_exists_:contexts_com_snowplowanalytics_snowplow_web_page_1.id AND NOT event:unstruct')}`))).toBe(3)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent(`contexts_com_snowplowanalytics_snowplow_web_page_1.id:"${PAGE_ID}"`)}`))).toBe(4)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('se_value:[1 TO 5]')}`))).toBe(1)
    expect(total(await get(`/search-store/good/_search?q=${encodeURIComponent('page_title:"O\'Brien\'s \\"quoted\\" title"')}`))).toBe(1)
    const failed = await get(`/search-store/good/_search?q=${encodeURIComponent('_exists_:contexts_com_snowplowanalytics_snowplow_failure_1')}`)
    expect(total(failed)).toBe(0)
  })

  it('searches with the query DSL, pages, sorts, filters _source, and aggregates', async () => {
    const r = await post('/search-store/good/_search', {
      query: { bool: { must: [{ match: { app_id: 'shop' } }], filter: [{ range: { collector_tstamp: { gte: 'now-1h' } } }], must_not: [{ term: { event: 'struct' } }] } },
      sort: [{ collector_tstamp: 'desc' }],
      from: 0,
      size: 2,
      _source: ['event_id', 'app_id', 'event'],
      aggs: {
        apps: { terms: { field: 'app_id' } },
        per_minute: { date_histogram: { field: 'collector_tstamp', fixed_interval: '1m' } },
        users: { cardinality: { field: 'network_userid' } },
        first: { min: { field: 'collector_tstamp' } },
        last: { max: { field: 'collector_tstamp' } },
        n: { value_count: { field: 'event_id' } },
      },
    })
    expect(r.status, r.body).toBe(200)
    const b = json(r)
    expect(b.hits.total).toEqual({ value: 4, relation: 'eq' })
    expect(b.hits.hits).toHaveLength(2)
    for (const h of b.hits.hits) {
      expect(h._index).toBe('good')
      expect(Object.keys(h._source).sort()).toEqual(['app_id', 'event', 'event_id'])
      expect(h._id).toBe(h._source.event_id)
    }
    expect(b.aggregations.apps.buckets).toEqual([{ key: 'shop', doc_count: 4 }])
    expect(b.aggregations.per_minute.buckets.reduce((n: number, x: { doc_count: number }) => n + x.doc_count, 0)).toBe(4)
    expect(b.aggregations.n.value).toBe(4)
    expect(b.aggregations.first.value).toBeLessThanOrEqual(b.aggregations.last.value)
    expect(b.aggregations.users.value).toBeGreaterThanOrEqual(1)
  })

  it('refuses what it does not support with a 400 in Elasticsearch’s error shape, and an unknown index with a 404', async () => {
    for (const [what, r] of [
      ['regex', await get(`/search-store/good/_search?q=${encodeURIComponent('app_id:/sh.p/')}`)],
      ['fuzzy', await get(`/search-store/good/_search?q=${encodeURIComponent('app_id:shop~2')}`)],
      ['fuzzy', await post('/search-store/good/_search', { query: { fuzzy: { app_id: 'shop' } } })],
      ['window', await post('/search-store/good/_search', { from: 9_999, size: 10 })],
      ['JSON', await post('/search-store/good/_search', '{"query": ')],
    ] as const) {
      expect(r.status, `${what}: ${r.body}`).toBe(400)
      const e = json(r)
      expect(e).toMatchObject({ status: 400, error: { type: expect.any(String), reason: expect.any(String), root_cause: [expect.objectContaining({ type: expect.any(String) })] } })
    }
    const missing = await get('/search-store/nope/_search')
    expect(missing.status).toBe(404)
    expect(json(missing).error.type).toBe('index_not_found_exception')
  })

  it('takes hostile strings as values: never an SQL error', async () => {
    for (const q of ["app_id:\"x'); DROP TABLE good_events; --\"", "app_id:x'y", 'app_id:$1', 'app_id:%_\\\\', 'a\u0000b', '"unterminated', '((((', 'x:[1 TO', '*:*']) {
      const r = await get(`/search-store/good/_search?q=${encodeURIComponent(q)}`)
      expect([200, 400], `${q}: ${r.body}`).toContain(r.status)
    }
    const r = await post('/search-store/good/_search', { query: { term: { "x'\"; DROP TABLE good_events; --": "'; SELECT 1; --" } } })
    expect(r.status).toBe(200)
    expect(total(r)).toBe(0)
    expect(json(await get('/search-store/good/_count')).count).toBe(7)
  })

  it('does not duplicate a redelivered record', async () => {
    const good = await readTexts(testClients().kinesis, stack.current.names.streams.good)
    await testClients().kinesis.send(new PutRecordsCommand({ StreamName: stack.current.names.streams.good, Records: good.slice(0, 3).map((l) => ({ Data: Buffer.from(l), PartitionKey: 'again' })) }))
    await testClients().kinesis.send(new PutRecordsCommand({ StreamName: stack.current.names.streams.good, Records: [{ Data: Buffer.from('not an enriched event'), PartitionKey: 'x' }] }))
    await settle()
    expect(json(await get('/search-store/good/_count')).count).toBe(7)
  })
})

describe('/micro', () => {
  it('counts, lists and filters good and bad events as Micro does', async () => {
    expect(json(await get('/micro/all'))).toEqual({ total: expect.any(Number), good: 7, bad: expect.any(Number) })
    const good = json(await get('/micro/good'))
    expect(good).toHaveLength(7)
    const clicks = json(await post('/micro/good', { schema: LINK_CLICK }))
    expect(clicks).toHaveLength(1)
    expect(clicks[0]).toMatchObject({ eventType: 'unstruct', schema: LINK_CLICK, contexts: [WEB_PAGE(PAGE_ID).schema] })
    expect(clicks[0].event).toMatchObject({ app_id: 'shop', event: 'unstruct' })
    expect(json(await post('/micro/good', { event_type: 'page_view', limit: 2 }))).toHaveLength(2)
    expect(json(await post('/micro/good', { contexts: [WEB_PAGE(PAGE_ID).schema] }))).toHaveLength(4)
    const bad = json(await get('/micro/bad'))
    expect(bad.length).toBeGreaterThanOrEqual(1)
    expect(bad[0].errors[0]).toBe('Error while validating the event.')
  })

  it('serves the explorer routes: events, columns, column stats and timeline', async () => {
    const ev = json(await post('/micro/events', { filters: [{ column: 'app_id', values: ['BLOG'] }], page: 1, pageSize: 1 }))
    expect(ev).toMatchObject({ totalItems: 2, totalPages: 2 })
    expect(ev.events[0].app_id).toBe('blog')
    const cols = json(await get('/micro/columns'))
    expect(cols).toContain('app_id')
    expect(cols).toEqual([...cols].sort())
    const stats = json(await post('/micro/columnStats', { columns: ['app_id'] }))
    expect(stats.app_id.values.sort()).toEqual(['blog', 'shop'])
    const now = Date.now()
    const tl = json(await post('/micro/timeline', { buckets: [{ start: new Date(now - 3_600_000).toISOString(), end: new Date(now + 60_000).toISOString() }] }))
    expect(tl.points[0]).toMatchObject({ validEvents: 7, failedEvents: 1 })
  })

  it('serves schemas from this deployment’s resolver, and lists its routes on a 404', async () => {
    const s = await get('/micro/iglu/com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1')
    expect(s.status).toBe(200)
    expect(json(s).self).toMatchObject({ vendor: 'com.snowplowanalytics.snowplow', name: 'link_click', version: '1-0-1' })
    expect((await get('/micro/iglu/com.acme/nope/jsonschema/1-0-0')).status).toBe(404)
    const other = await get('/micro/nope')
    expect(other.status).toBe(404)
    expect(other.body).toMatch(/\/micro\/all/)
  })

  it('resets: both indices empty', async () => {
    const r = await get('/micro/reset')
    expect(r.status).toBe(200)
    expect(json(r)).toBe('Reset completed')
    expect(json(await get('/micro/all'))).toEqual({ total: 0, good: 0, bad: 0 })
    expect(json(await get('/search-store/bad/_count')).count).toBe(0)
  })

  it('gives events sent in one request newest first: the last one sent first', async () => {
    const data = Array.from({ length: 20 }, (_, i) => ({ e: 'pv', p: 'web', tv: 'raw-1', aid: 'one-post', url: `https://shop.example.com/${i}`, page: `p${i}` }))
    const r = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
    })
    expect(r.status).toBe(200)
    await settle()
    const last = json(await post('/micro/good', { limit: 1 }))
    expect(last[0].event.page_title).toBe('p19')
    const all = json(await get('/micro/good'))
    expect(all.map((g: { event: { page_title: string } }) => g.event.page_title)).toEqual(data.map((d) => d.page).reverse())
  })
})
