/**
 * The Elasticsearch clients people point at a search store, against the
 * local stack's `/search-store` (basic authentication, events sent to the
 * collector and loaded by the pipeline): `@elastic/elasticsearch` 7.x (which
 * refuses a server that does not present itself as Elasticsearch), the
 * legacy `elasticsearch` client and `@opensearch-project/opensearch` 1.x.
 * Each one's info/ping, count, searches, sorting, paging, `_source`,
 * aggregations, the bad index and a 400 surfacing as its error type.
 */
import { createRequire } from 'node:module'
import { Client as Es7, errors as es7Errors } from '@elastic/elasticsearch'
import { beforeAll, describe, expect, it } from 'vitest'
import { TEST_CREDENTIALS, useLocalStack } from '../support/stack'

// The legacy client ships no type declarations; OpenSearch's cannot be resolved through its package exports.
const require = createRequire(import.meta.url)
const legacy = require('elasticsearch') as { Client: new (o: object) => any; errors: { BadRequest: new () => Error } }
const { Client: OpenSearch, errors: osErrors } = require('@opensearch-project/opensearch') as { Client: new (o: object) => any; errors: { ResponseError: new () => Error } }

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

/** 5 page views (3 shop, 2 blog), 1 struct event, and a link click without its targetUrl: a failed event (kept out of good) and a bad row. */
beforeAll(async () => {
  const sends: string[] = []
  for (let i = 0; i < 3; i++) sends.push(`e=pv&aid=shop&url=${encodeURIComponent(`https://shop.example.com/p/${i}`)}&page=Product%20${i}`)
  for (let i = 0; i < 2; i++) sends.push(`e=pv&aid=blog&url=${encodeURIComponent(`https://blog.example.com/post/${i}`)}`)
  sends.push('e=se&aid=shop&se_ca=checkout&se_ac=add-to-basket&se_va=2')
  sends.push(`e=ue&aid=bad-zzz1&ue_px=${b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { elementId: 'no-target' } } })}`)
  for (const q of sends) {
    const r = await fetch(`${stack.current.url}/i?p=web&tv=js-3&${q}`)
    expect(r.status).toBe(200)
    await r.arrayBuffer()
  }
  // enrich, then the loaders of what enrich wrote
  await stack.current.drain()
  await stack.current.drain()
}, 120_000)

const node = () => `${stack.current.url}/search-store`

/** The calls every client makes, each in its own style: `body` unwraps the answer. */
interface Api {
  info(): Promise<any>
  ping(): Promise<unknown>
  count(index: string, query?: object): Promise<number>
  search(params: Record<string, unknown>): Promise<any>
  badRequest(): Promise<unknown>
  errorType: abstract new (...a: any[]) => Error
}

const es7 = (): Api => {
  const c = new Es7({ node: node(), auth: { ...TEST_CREDENTIALS } })
  return {
    info: async () => (await c.info()).body,
    ping: async () => (await c.ping()).body,
    count: async (index, query) => (await c.count({ index, body: query ? { query } : undefined })).body.count,
    search: async (p) => (await c.search(p)).body,
    badRequest: () => c.search({ index: 'good', body: { query: { no_such_query: {} } } }),
    errorType: es7Errors.ResponseError,
  }
}
const opensearch = (): Api => {
  const c = new OpenSearch({ node: node(), auth: { ...TEST_CREDENTIALS } })
  return {
    info: async () => (await c.info()).body,
    ping: async () => (await c.ping()).body,
    count: async (index, query) => (await c.count({ index, body: query ? { query } : undefined })).body.count,
    search: async (p) => (await c.search(p)).body,
    badRequest: () => c.search({ index: 'good', body: { query: { no_such_query: {} } } }),
    errorType: osErrors.ResponseError,
  }
}
const legacyClient = (): Api => {
  const u = new URL(node())
  const c = new legacy.Client({ host: { protocol: 'http', host: u.hostname, port: Number(u.port), path: '/search-store', auth: `${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}` }, log: [] })
  return {
    info: () => c.info(),
    ping: () => c.ping(),
    count: async (index, query) => (await c.count({ index, body: query ? { query } : undefined })).count,
    search: (p) => c.search(p),
    badRequest: () => c.search({ index: 'good', body: { query: { no_such_query: {} } } }),
    errorType: legacy.errors.BadRequest,
  }
}

const total = (r: any) => (typeof r.hits.total === 'number' ? r.hits.total : r.hits.total.value) as number

describe.each([
  ['@elastic/elasticsearch 7.x', es7],
  ['legacy elasticsearch', legacyClient],
  ['@opensearch-project/opensearch 1.x', opensearch],
])('%s', (_name, make) => {
  let api: Api
  beforeAll(() => {
    api = make()
  })

  it('connects: info presents Elasticsearch 7.17, ping answers', async () => {
    const info = await api.info()
    expect(info).toMatchObject({ version: { number: expect.stringMatching(/^7\.17\./), build_flavor: 'default' }, tagline: 'You Know, for Search' })
    expect(await api.ping()).toBeTruthy()
  })

  it('counts, with and without a query', async () => {
    expect(await api.count('good')).toBe(6) // the failed event is not a good one
    expect(await api.count('good', { term: { app_id: 'shop' } })).toBe(4)
    expect(await api.count('bad')).toBe(1)
  })

  it('searches with q, query_string, term, range and bool', async () => {
    expect(total(await api.search({ index: 'good', q: 'app_id:shop AND event:page_view' }))).toBe(3)
    expect(total(await api.search({ index: 'good', body: { query: { query_string: { query: 'page_url:*blog*' } } } }))).toBe(2)
    expect(total(await api.search({ index: 'good', body: { query: { term: { se_category: 'checkout' } } } }))).toBe(1)
    expect(total(await api.search({ index: 'good', body: { query: { range: { collector_tstamp: { gte: 'now-1h', lte: 'now+1h' } } } } }))).toBe(6)
    const bool = { bool: { must: [{ term: { event: 'page_view' } }], must_not: [{ term: { app_id: 'blog' } }], filter: [{ range: { collector_tstamp: { gte: 'now-1d' } } }] } }
    expect(total(await api.search({ index: 'good', body: { query: bool } }))).toBe(3)
  })

  it('sorts, pages and filters _source', async () => {
    const body = { query: { term: { event: 'page_view' } }, sort: [{ page_url: 'asc' }], _source: ['page_url', 'app_id'] }
    const all = await api.search({ index: 'good', body })
    const urls = all.hits.hits.map((h: any) => h._source.page_url)
    expect(urls).toEqual([...urls].sort())
    expect(urls.length).toBe(5)
    expect(Object.keys(all.hits.hits[0]._source).sort()).toEqual(['app_id', 'page_url'])
    const page = await api.search({ index: 'good', from: 1, size: 2, body })
    expect(page.hits.hits.map((h: any) => h._source.page_url)).toEqual(urls.slice(1, 3))
    expect(total(page)).toBe(5)
  })

  it('aggregates: terms and date_histogram', async () => {
    const r = await api.search({
      index: 'good',
      body: { size: 0, aggs: { apps: { terms: { field: 'app_id' } }, over_time: { date_histogram: { field: 'collector_tstamp', fixed_interval: '1d' } } } },
    })
    expect(r.aggregations.apps.buckets).toEqual(expect.arrayContaining([{ key: 'shop', doc_count: 4 }, { key: 'blog', doc_count: 2 }]))
    const days = r.aggregations.over_time.buckets as { doc_count: number }[]
    expect(days.reduce((n, b) => n + b.doc_count, 0)).toBe(6)
  })

  it('searches the bad index, a bare word finding the words of a bad row', async () => {
    expect(total(await api.search({ index: 'bad', q: 'bad-zzz1' }))).toBe(1)
    expect(total(await api.search({ index: 'bad', q: '*bad-zzz1*' }))).toBe(1)
    expect(total(await api.search({ index: 'bad', q: 'no-target' }))).toBe(1)
    expect(total(await api.search({ index: 'bad', q: 'shop' }))).toBe(0)
  })

  it('surfaces a 400 as its error type', async () => {
    const err = await api.badRequest().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(api.errorType)
    const e = err as { statusCode?: number; status?: number; meta?: { statusCode: number } }
    expect(e.statusCode ?? e.status ?? e.meta?.statusCode).toBe(400)
  })
})

describe('/search-store answers', () => {
  it('carry X-Elastic-Product on success and on errors', async () => {
    const auth = { authorization: `Basic ${Buffer.from(`${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}`).toString('base64')}` }
    for (const [path, status] of [['/search-store', 200], ['/search-store/good/_count', 200], ['/search-store/nope/_search', 404], ['/search-store/good/_search?q=(', 400]] as const) {
      const r = await fetch(`${stack.current.url}${path}`, { headers: auth })
      await r.arrayBuffer()
      expect(r.status, path).toBe(status)
      expect(r.headers.get('x-elastic-product'), path).toBe('Elasticsearch')
    }
  })
})
