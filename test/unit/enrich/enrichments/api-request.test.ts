/**
 * `api_request_enrichment_config` against an HTTP server started here: inputs,
 * URI template, GET/POST, basic auth, outputs, the cache, errors, timeouts
 * and slow answers, and the bounded connections of the HTTP client. Cases
 * of Snowplow's ApiRequestEnrichmentSpec, HttpApiSpec, InputSpec and OutputSpec.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { apiRequestSettings, buildUrl, formEncode } from '../../../../lib/core/enrich/enrichments/api-request'
import { jsonText, LookupCache, type LookupServices } from '../../../../lib/core/enrich/enrichments/lookups'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { nodeHttpClient } from '../../../../lib/runtime/lookup-services'
import { badRows, batch, derivedOf, enrichmentConfig, goodColumns, resolver, tp2 } from '../helpers'

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void

/** A local API: each request recorded, answered by the current handler. */
let server: Server
let base = ''
let handler: Handler
const seen: { method: string; url: string; auth?: string; contentType?: string; body: string }[] = []
const sockets = new Set<Socket>()

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, contentType: req.headers['content-type'], body })
      handler(req, body, res)
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await new Promise((r) => server.close(r))
})
afterEach(() => {
  seen.length = 0
})

const json = (status: number, body: unknown): Handler => (_req, _b, res) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

const GEO = 'iglu:com.snowplowanalytics.snowplow/geolocation_context/jsonschema/1-1-0'
const ENR = 'com.snowplowanalytics.snowplow.enrichments'

function config(overrides: Record<string, unknown> = {}, http: Record<string, unknown> = {}) {
  return enrichmentConfig(ENR, 'api_request_enrichment_config', '1-0-2', {
    inputs: [
      { key: 'user', pojo: { field: 'user_id' } },
      { key: 'client', pojo: { field: 'app_id' } },
    ],
    api: { http: { method: 'GET', uri: `${base}/users/{{client}}/{{ user }}?format=json`, timeout: 2000, authentication: {}, ...http } },
    outputs: [{ schema: GEO, json: { jsonPath: '$.record' } }],
    cache: { size: 100, ttl: 60 },
    ...overrides,
  })
}

let clock = 1_000_000
const client = nodeHttpClient({ maxSocketsPerHost: 4 })
afterAll(() => client.close())
const services: LookupServices = { http: client, now: () => clock }

async function build(doc: object, svc: LookupServices | undefined = services) {
  const r = await loadEnrichmentConfigs([{ source: 'api.json', text: JSON.stringify(doc) }], resolver)
  if (!r.ok) throw new Error(r.errors.join('\n'))
  return buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false, services: svc })
}

async function enricherOf(doc: object): Promise<Enricher> {
  const b = await build(doc)
  if (!b.ok) throw new Error(b.errors.join('\n'))
  return new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: b.enrichments })
}

const RECORD = { latitude: 43.1, longitude: 32.1 }
const event = (q = 'uid=some-fancy-user-id') => tp2(`e=pv&p=web&tv=js-3&aid=some-fancy-app-id&${q}`)

describe('api_request_enrichment_config', () => {
  it('calls the API with the inputs in the URI (URL-encoded) and adds the output as a context', async () => {
    handler = json(200, { record: RECORD, other: 1 })
    const e = await enricherOf(config({}, { authentication: { httpBasic: { username: 'xxx', password: 'yyy' } } }))
    const c = goodColumns(await e.enrichRecord(event('uid=J%C3%B6rg%20%26%20co'), batch()))
    expect(derivedOf(c)).toEqual([{ schema: GEO, data: RECORD }])
    expect(seen).toEqual([{ method: 'GET', url: '/users/some-fancy-app-id/J%C3%B6rg+%26+co?format=json', auth: `Basic ${Buffer.from('xxx:yyy').toString('base64')}`, contentType: undefined, body: '' }])
  })

  it('POSTs the inputs as a JSON object of strings, and reads inputs from contexts with a JSON path', async () => {
    handler = json(200, { record: RECORD })
    const doc = config({
      inputs: [
        { key: 'user', pojo: { field: 'user_id' } },
        { key: 'page', json: { field: 'contexts', schemaCriterion: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-*-*', jsonPath: '$.id' } },
        { key: 'tz', pojo: { field: 'os_timezone' } },
      ],
    }, { method: 'POST', uri: `${base}/lookup` })
    const cx = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: 'a5b3c2d1-0000-4000-8000-000000000001' } }] })).toString('base64url')
    const c = goodColumns(await (await enricherOf(doc)).enrichRecord(event(`uid=u1&tz=Europe%2FLondon&cx=${cx}`), batch()))
    expect(derivedOf(c)).toEqual([{ schema: GEO, data: RECORD }])
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/lookup', contentType: 'application/json' })
    expect(JSON.parse(seen[0]!.body)).toEqual({ user: 'u1', page: 'a5b3c2d1-0000-4000-8000-000000000001', tz: 'Europe/London' })
  })

  it('makes no request and adds nothing when an input finds nothing', async () => {
    handler = json(200, { record: RECORD })
    const e = await enricherOf(config())
    expect(derivedOf(goodColumns(await e.enrichRecord(event('tz=UTC'), batch())))).toEqual([])
    const ctx = await enricherOf(config({ inputs: [{ key: 'user', json: { field: 'contexts', schemaCriterion: 'iglu:com.acme/missing/jsonschema/1-*-*', jsonPath: '$.id' } }, { key: 'client', pojo: { field: 'app_id' } }] }))
    expect(derivedOf(goodColumns(await ctx.enrichRecord(event(), batch())))).toEqual([])
    expect(seen).toEqual([])
  })

  it('keeps answers in the cache for cache.ttl seconds, at most cache.size of them', async () => {
    handler = json(200, { record: RECORD })
    const e = await enricherOf(config({ cache: { size: 2, ttl: 10 } }))
    const ask = async (uid: string) => derivedOf(goodColumns(await e.enrichRecord(event(`uid=${uid}`), batch())))
    await ask('a')
    await ask('a')
    expect(seen).toHaveLength(1)
    clock += 9_999
    expect(await ask('a')).toEqual([{ schema: GEO, data: RECORD }])
    expect(seen).toHaveLength(1)
    clock += 1
    await ask('a')
    expect(seen).toHaveLength(2)
    await ask('b')
    await ask('c') // 'a' is the least recently used of three: out
    await ask('a')
    expect(seen.map((s) => s.url.split('/')[3])).toEqual(['a?format=json', 'a?format=json', 'b?format=json', 'c?format=json', 'a?format=json'])
  })

  it('uses but does not keep answers giving more than 64 KB of contexts', async () => {
    handler = json(200, { record: { ...RECORD, note: 'x'.repeat(70 * 1024) } })
    const b = await build(config({ outputs: [{ schema: 'iglu:com.acme/big/jsonschema/1-0-0', json: { jsonPath: '$.record' } }] }))
    if (!b.ok) throw new Error(b.errors.join())
    const { EnrichedEvent } = await import('../../../../lib/core/enrich/event')
    const ev = new EnrichedEvent()
    ev.set('user_id', 'big')
    ev.set('app_id', 'a')
    for (let i = 0; i < 2; i++) expect((await b.enrichments[0]!.run(ev, { raw: null as never, pageQuery: null })).contexts).toHaveLength(1)
    expect(seen).toHaveLength(2)
  })

  it('sends one request for concurrent events with the same inputs', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    handler = (req, b, res) => void gate.then(() => json(200, { record: RECORD })(req, b, res))
    const e = await enricherOf(config({ cache: { size: 10, ttl: 60 } }))
    const all = Promise.all(Array.from({ length: 5 }, () => e.enrichRecord(event('uid=same'), batch())))
    await new Promise<void>((r) => setImmediate(r))
    release()
    for (const o of await all) expect(derivedOf(goodColumns(o))).toEqual([{ schema: GEO, data: RECORD }])
    expect(seen).toHaveLength(1)
  })

  it('reports an error answer as an enrichment failure, or nothing with ignoreOnError', async () => {
    handler = json(500, 'database is down')
    const e = await enricherOf(config())
    const rows = badRows(await e.enrichRecord(event('uid=err'), batch()))
    expect(rows).toHaveLength(1)
    expect(rows[0].schema).toMatch(/enrichment_failures/)
    expect(rows[0].data.failure.messages).toEqual([
      { enrichment: { schemaKey: `iglu:${ENR}/api_request_enrichment_config/jsonschema/1-0-2`, identifier: 'api-request' }, message: { error: `API request GET ${base}/users/some-fancy-app-id/err answered HTTP 500: database is down` } },
    ])
    const quiet = await enricherOf(config({ ignoreOnError: true }))
    expect(derivedOf(goodColumns(await quiet.enrichRecord(event('uid=err'), batch())))).toEqual([])
  })

  it('keeps a failed call for a tenth of cache.ttl', async () => {
    handler = json(503, 'busy')
    const e = await enricherOf(config({ cache: { size: 10, ttl: 100 } }))
    await e.enrichRecord(event('uid=f'), batch())
    await e.enrichRecord(event('uid=f'), batch())
    expect(seen).toHaveLength(1)
    clock += 10_000
    handler = json(200, { record: RECORD })
    expect(derivedOf(goodColumns(await e.enrichRecord(event('uid=f'), batch())))).toEqual([{ schema: GEO, data: RECORD }])
    expect(seen).toHaveLength(2)
  })

  it('fails an event whose answer does not come within the timeout, and waits for a slow one within it', async () => {
    let answer!: () => void
    handler = (req, b, res) => {
      answer = () => json(200, { record: RECORD })(req, b, res)
    }
    const e = await enricherOf(config({}, { timeout: 150 }))
    const t0 = Date.now()
    const rows = badRows(await e.enrichRecord(event('uid=slow1'), batch()))
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
    expect(rows[0].data.failure.messages[0].message.error).toBe(`API request GET ${base}/users/some-fancy-app-id/slow1 failed: no answer within 150 ms`)
    answer()
    // slow, but within the timeout
    handler = (req, b, res) => setTimeout(() => json(200, { record: RECORD })(req, b, res), 50)
    const slow = await enricherOf(config({}, { timeout: 2000 }))
    expect(derivedOf(goodColumns(await slow.enrichRecord(event('uid=slow2'), batch())))).toEqual([{ schema: GEO, data: RECORD }])
  })

  it('reports a refused connection', async () => {
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const e = await enricherOf(config({}, { uri: `http://127.0.0.1:${port}/x/{{user}}/{{client}}` }))
    const rows = badRows(await e.enrichRecord(event(), batch()))
    expect(rows[0].data.failure.messages[0].message.error).toMatch(new RegExp(`^API request GET http://127.0.0.1:${port}/x/some-fancy-user-id/some-fancy-app-id failed: ECONNREFUSED`))
  })

  it('reports an answer that is not JSON, and a path that finds nothing', async () => {
    handler = json(200, '<html>oops</html>')
    const rows = badRows(await (await enricherOf(config())).enrichRecord(event('uid=html'), batch()))
    expect(rows[0].data.failure.messages[0].message.error).toMatch(/answered with something that is not JSON \(.*\): <html>oops<\/html>$/)
    handler = json(200, { other: 1 })
    const rows2 = badRows(await (await enricherOf(config())).enrichRecord(event('uid=nothing'), batch()))
    expect(rows2[0].data.failure.messages[0].message.error).toMatch(/no values were found by JSON path \$\.record in \{"other":1\}$/)
  })

  it('gives every output its context, a value for one match and an array for several (OutputSpec)', async () => {
    handler = json(200, { value: 32, objects: [{ wrongValue: 11 }, { deepNesting: [1, 2, 3, 42] }, { wrongValue: 10 }], record: RECORD })
    const doc = config({
      outputs: [
        { schema: GEO, json: { jsonPath: '$.record' } },
        { schema: 'iglu:com.acme/complex/jsonschema/1-0-0', json: { jsonPath: '$.objects[1].deepNesting[3]' } },
        { schema: 'iglu:com.acme/many/jsonschema/1-0-0', json: { jsonPath: '$.objects[*].wrongValue' } },
      ],
    })
    const b = await build(doc)
    if (!b.ok) throw new Error(b.errors.join())
    const { EnrichedEvent } = await import('../../../../lib/core/enrich/event')
    const ev = new EnrichedEvent()
    ev.set('user_id', 'u')
    ev.set('app_id', 'a')
    const r = await b.enrichments[0]!.run(ev, { raw: null as never, pageQuery: null })
    expect(r.contexts).toEqual([
      { schema: GEO, data: JSON.stringify(RECORD) },
      { schema: 'iglu:com.acme/complex/jsonschema/1-0-0', data: '42' },
      { schema: 'iglu:com.acme/many/jsonschema/1-0-0', data: '[11,10]' },
    ])
  })

  it('refuses configurations it cannot use, naming the parameter', async () => {
    const errs = async (doc: object, svc?: LookupServices) => {
      const b = await build(doc, svc)
      return b.ok ? [] : b.errors
    }
    expect(await errs(config({}, { uri: `${base}/{{nobody}}` }))).toEqual(['api.json: api.http.uri uses {{nobody}}, which no input provides (inputs: user, client)'])
    expect(await errs(config({}, { uri: 'ftp://example.com/{{user}}' }))).toEqual(['api.json: api.http.uri "ftp://example.com/{{user}}" is not an http:// or https:// URL'])
    expect(await errs(config({ inputs: [{ key: 'user', pojo: { field: 'no_such_field' } }, { key: 'client', pojo: { field: 'app_id' } }] }))).toEqual([
      'api.json: inputs[0] (user): pojo field "no_such_field" is not an atomic field of the enriched event (contexts, unstruct_event and derived_contexts are read with a json input)',
    ])
    expect((await errs(config({ outputs: [{ schema: GEO, json: { jsonPath: '$[?(@.a ==' } }] })))[0]).toMatch(/^api\.json: outputs\[0\]\.json\.jsonPath: "\$\[\?\(@\.a ==" is not a JSON path/)
    expect(await errs(config(), { now: () => 0 })).toEqual(['api.json: the API request enrichment needs an HTTP client, which this runtime does not provide'])
  })
})

describe('URI template and input values', () => {
  it('fills placeholders with spaces around the key, URL-encoded like Java (HttpApiSpec)', () => {
    const v = new Map([['user', 'admin'], ['time', 'November 2015']])
    expect(buildUrl('http://thishostdoesntexist31337:8123/{{  user }}/foo/{{ time}}/{{user}}', v)).toBe('http://thishostdoesntexist31337:8123/admin/foo/November+2015/admin')
    expect(buildUrl('http://api.acme.com/{{user}}/{{ time}}/', new Map([['user', 'admin']]))).toBeUndefined()
    expect(formEncode("a b*c.d-e_f~g!h'i(j)k/é\uD800")).toBe('a+b*c.d-e_f%7Eg%21h%27i%28j%29k%2F%C3%A9%3F')
  })
  it('writes JSON values as Snowplow does: strings as they are, arrays joined, objects compact (InputSpec)', () => {
    expect([jsonText('COMPLETED'), jsonText(43.1), jsonText(null), jsonText(true), jsonText([1, true, 'foo', [2, 3]]), jsonText({ a: 1 }), jsonText([])]).toEqual(['COMPLETED', '43.1', 'null', 'true', '1,true,foo,2,3', '{"a":1}', ''])
  })
  it('reads basic authentication with a missing password as an empty one', () => {
    const s = apiRequestSettings({ inputs: [], api: { http: { method: 'GET', uri: 'http://x/', timeout: 5, authentication: { httpBasic: { username: 'xxx', password: null } } } }, outputs: [{ schema: GEO, json: { jsonPath: '$' } }], cache: { size: 1, ttl: 1 } })
    expect(s.authorization).toBe(`Basic ${Buffer.from('xxx:').toString('base64')}`)
  })
})

describe('LookupCache', () => {
  it('keeps nothing with a size or time to live of 0', async () => {
    for (const [size, ttl] of [[0, 1000], [10, 0]] as const) {
      const c = new LookupCache<number>(size, () => 0)
      let calls = 0
      await c.through('k', async () => ({ value: ++calls, ttlMs: ttl }))
      await c.through('k', async () => ({ value: ++calls, ttlMs: ttl }))
      expect(calls).toBe(2)
    }
  })
})

describe('LookupCache budget', () => {
  it('keeps at most maxChars characters of answers, least recently used out first', async () => {
    const c = new LookupCache<string>(100, () => 0, (v) => v.length, 30)
    for (const k of ['a', 'b', 'c']) await c.through(k, async () => ({ value: 'x'.repeat(9), ttlMs: 1000 }))
    expect(c.length).toBe(3) // 3 × (1 + 9) = 30
    c.get('a')
    await c.through('d', async () => ({ value: 'y'.repeat(9), ttlMs: 1000 }))
    expect([c.get('a'), c.get('b'), c.get('c'), c.get('d')]).toEqual(['x'.repeat(9), undefined, 'x'.repeat(9), 'y'.repeat(9)])
    await c.through('e', async () => ({ value: 'z'.repeat(40), ttlMs: 1000 }))
    expect(c.get('e')).toBeUndefined()
    expect(c.length).toBe(3)
  })
})

describe('nodeHttpClient', () => {
  it('keeps at most maxSocketsPerHost connections open to a host, reusing them', async () => {
    let open = 0
    let most = 0
    const waiting: (() => void)[] = []
    handler = (req, b, res) => {
      open++
      most = Math.max(most, open)
      waiting.push(() => {
        open--
        json(200, { ok: true })(req, b, res)
      })
      if (waiting.length === 4 || seen.length >= 12) while (waiting.length) waiting.shift()!()
    }
    const before = sockets.size
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => client.request({ method: 'GET', url: `${base}/n/${i}`, headers: {}, timeoutMs: 5000 })))
    expect(answers.every((a) => a.ok && a.status === 200)).toBe(true)
    expect(most).toBeLessThanOrEqual(4)
    expect(sockets.size - before).toBeLessThanOrEqual(4)
  })
  it('asks again on a new connection when a kept one turns out closed, once', async () => {
    // a server that drops every connection on its second request, without answering
    const served = new WeakMap<object, number>()
    let dropped = 0
    const flaky = createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1
      served.set(req.socket, n)
      if (n > 1) {
        dropped++
        req.socket.destroy()
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"n":1}')
    })
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`
    const c = nodeHttpClient({ maxSocketsPerHost: 1 })
    for (let i = 0; i < 3; i++) expect(await c.request({ method: 'GET', url, headers: {}, timeoutMs: 5000 })).toEqual({ ok: true, status: 200, body: '{"n":1}' })
    expect(dropped).toBe(2)
    c.close()
    flaky.closeAllConnections()
    await new Promise((r) => flaky.close(r))
  })
  it('refuses an answer larger than maxAnswerBytes', async () => {
    const small = nodeHttpClient({ maxAnswerBytes: 1000 })
    handler = json(200, 'x'.repeat(5000))
    expect(await small.request({ method: 'GET', url: `${base}/big`, headers: {}, timeoutMs: 5000 })).toEqual({ ok: false, error: 'the answer is larger than 1000 bytes' })
    small.close()
  })
})
