/**
 * `/micro/validate/<collector path>` in the running stack: the requests the
 * Node tracker sends for the home page's example events (good and bad), sent
 * to `/micro/validate` and to the collector, and a page view the stack's
 * enrichments (the common production set) have work on; the validation
 * answers what the pipeline then stores (`/micro/good`, `/micro/bad`), and
 * stores nothing itself. Then its limits and errors.
 */
import { describe, expect, it } from 'vitest'
import { captureRequests, homeExamples, type TrackerRequest } from '../../support/tracker-requests'
import { ENRICHABLE, productionEnrichments } from '../../support/enrichments'
import { useLocalStack, withAuth } from '../../support/stack'

// the common production set of enrichments: the answer is what this stack's enrich makes of the event
const stack = useLocalStack({ enrichmentsDir: productionEnrichments().dir, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

/** A page view from Changchun, from a Google search, with campaign parameters, as the tracker's GET sends it. */
const enrichable: TrackerRequest = { method: 'GET', pathAndQuery: `/i?${ENRICHABLE.query}&eid=5b2f3c1e-7d4a-4c6b-9e1f-0a2b3c4d5e6f`, headers: ENRICHABLE.headers }

/** Every stream trigger has caught up: enrich first, then the loaders of what enrich wrote. */
const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}

const send = (prefix: string, r: TrackerRequest, headers: Record<string, string> = {}) =>
  fetch(`${stack.current.url}${prefix}${r.pathAndQuery}`, { method: r.method, headers: { ...r.headers, ...headers }, body: r.body })

const validate = async (r: TrackerRequest) => {
  const res = await send('/micro/validate', r, withAuth())
  expect(res.status, await res.clone().text()).toBe(200)
  return ((await res.json()) as { results: ({ valid: true; event: Record<string, unknown> } | { valid: false; badRow: any })[] }).results
}

const micro = async (path: string) => {
  const r = await fetch(`${stack.current.url}${path}`, { headers: withAuth() })
  expect(r.status).toBe(200)
  return r.json() as Promise<any>
}

/** Fields that depend on when and how the request was received, not on the event. */
const RECEIVED = ['collector_tstamp', 'etl_tstamp', 'derived_tstamp', 'network_userid']
const withoutReceived = (e: Record<string, unknown>) => Object.fromEntries(Object.entries(e).filter(([k]) => !RECEIVED.includes(k)))

describe('/micro/validate', () => {
  it('answers for each example event what the pipeline stores, and stores nothing', async () => {
    const requests = [...(await captureRequests(homeExamples)), ...(await captureRequests((t) => homeExamples(t), { eventMethod: 'get' })), enrichable]
    expect(requests.length).toBe(15)
    expect(requests.filter((r) => r.method === 'GET').every((r) => r.pathAndQuery.startsWith('/i?'))).toBe(true)

    await settle()
    const before = await micro('/micro/all')
    const answers = []
    for (const r of requests) answers.push(await validate(r))
    // nothing reached a stream or the store
    await settle()
    expect(await micro('/micro/all')).toEqual(before)

    // enrich ran in a worker thread of its own, off the gateway's event loop
    expect(stack.current.functionWorkers.get('microValidate')?.threadsStarted).toBe(1)
    const results = answers.flat()
    expect(results.map((x) => x.valid)).toEqual([...Array.from({ length: 2 }, () => [true, true, true, true, true, true, false]).flat(), true])
    // the stack's enrichments ran
    const enriched = results.at(-1) as { event: Record<string, unknown> }
    expect([enriched.event.user_ipaddress, enriched.event.geo_city, enriched.event.mkt_source, enriched.event.refr_source, enriched.event.network_userid]).toEqual(['175.16.199.x', 'Changchun', 'news', 'Google', 'c0ffee00-0000-4000-8000-000000000001'])
    expect(enriched.event.event_fingerprint).toMatch(/^[0-9a-f]{32}$/)

    for (const r of requests) expect((await send('', r)).status).toBe(200)
    await settle()
    const good = (await micro('/micro/good')) as { event: Record<string, unknown> }[]
    const bad = (await micro('/micro/bad')) as { errors: string[] }[]
    expect(good).toHaveLength(13)
    expect(bad).toHaveLength(2)
    const stored = new Map(good.map((g) => [g.event.event_id as string, g.event]))
    for (const x of results) {
      if (x.valid) {
        const s = stored.get(x.event.event_id as string)
        expect(s, `stored ${x.event.event_id as string}`).toBeDefined()
        expect(withoutReceived(x.event)).toEqual(withoutReceived(s!))
        continue
      }
      const eid = x.badRow.data.payload.enriched.event_id as string
      const row = bad.map((b) => JSON.parse(b.errors[1]!)).find((b) => b.data.payload.enriched.event_id === eid)
      expect(row, `stored bad row of ${eid}`).toBeDefined()
      expect(x.badRow.schema).toBe(row.schema)
      expect(x.badRow.schema).toMatch(/schema_violations/)
      // the same failure, but for when the registry was asked
      const timeless = (v: unknown) => JSON.parse(JSON.stringify(v, (k, val) => (k === 'lastAttempt' ? undefined : val)))
      expect(timeless(x.badRow.data.failure.messages)).toEqual(timeless(row.data.failure.messages))
      expect(JSON.stringify(x.badRow.data.failure.messages)).toContain('com.example.floe/does_not_exist')
    }
  }, 240_000)

  it('answers the collector paths with their limits, and refuses what the other /micro routes refuse', async () => {
    const [pv] = await captureRequests((t) => homeExamples(t))
    const at = (path: string, init: RequestInit = {}) => fetch(`${stack.current.url}${path}`, { ...init, headers: withAuth(init.headers as Record<string, string>) })
    // paths the collector records no event on, or does not have
    for (const [method, path] of [['GET', '/micro/validate'], ['POST', '/micro/validate/'], ['GET', '/micro/validate/health'], ['GET', '/micro/validate/robots.txt'], ['POST', '/micro/validate/i'], ['GET', '/micro/validate/a/b/c'], ['GET', '/micro/validate/r/tp2?u=https%3A%2F%2Fexample.com']] as const) {
      const r = await at(path, { method })
      expect(r.status, `${method} ${path}`).toBe(404)
      expect(((await r.json()) as { message: string }).message).toMatch(/micro\/validate/)
    }
    // over the collector's limit of a request body (2 MiB): 413, as the collector answers it
    const big = await at('/micro/validate/com.snowplowanalytics.snowplow/tp2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(2 * 1024 * 1024 + 1) })
    expect(big.status).toBe(413)
    // a body that is no payload: enrich's bad row, answered
    const junk = await at('/micro/validate/com.snowplowanalytics.snowplow/tp2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"not":"a payload"}' })
    expect(junk.status).toBe(200)
    expect(((await junk.json()) as { results: unknown }).results).toMatchObject([{ valid: false, badRow: { schema: expect.stringMatching(/adapter_failures|tracker_protocol_violations/) } }])
    // the stack's credentials, as every /micro route
    const anonymous = await send('/micro/validate', pv!)
    expect(anonymous.status).toBe(401)
    const wrong = await send('/micro/validate', pv!, { authorization: `Basic ${Buffer.from('floe:wrong').toString('base64')}` })
    expect(wrong.status).toBe(401)
    // a browser page of another site cannot make the stack enrich for it
    const crossSite = await send('/micro/validate', pv!, withAuth({ origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' }))
    expect(crossSite.status).toBe(403)
    const crossSiteGet = await at('/micro/validate/i?e=pv&p=web&tv=js-4', { headers: { 'sec-fetch-site': 'cross-site' } })
    expect(crossSiteGet.status).toBe(403)
    // a GET pixel request, as a tracker sends it
    const pixel = await at('/micro/validate/i?e=pv&p=web&tv=js-4.10.1&url=http%3A%2F%2Fexample.com%2F&aid=px')
    expect(pixel.status).toBe(200)
    expect(((await pixel.json()) as { results: unknown }).results).toMatchObject([{ valid: true, event: { app_id: 'px', event: 'page_view', page_url: 'http://example.com/' } }])
  }, 120_000)
})
