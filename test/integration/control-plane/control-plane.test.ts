/**
 * The control plane against a running local stack: every endpoint, answer and
 * error, and what each changes in the rest of the system (enrich, the
 * registry, the search store, the authorizer).
 */
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readGenerations } from '../../../lib/runtime/restarts'
import { basicAuth, TEST_CREDENTIALS, testClients, useLocalStack, withAuth } from '../../support/stack'

const SUPER = '2f6bd2b5-3c8a-4c0e-9d55-0d4b0b6a1c11'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER, FLOE_RESOLVER_CACHE_TTL: '600', FLOE_DNS_SERVERS: '127.0.0.1:1' } })

let auth = basicAuth()
const cp = async (method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) => {
  const r = await fetch(`${stack.current.url}/control-plane/${path}`, {
    method,
    headers: { authorization: auth, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    body: form ? new URLSearchParams(form).toString() : undefined,
  })
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') ?? '' }
}

const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}
const ue = (schema: string, data: unknown, aid = 'cp-test') =>
  `/i?e=ue&p=web&tv=test-1&aid=${aid}&ue_pr=${encodeURIComponent(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } }))}`
async function send(path: string): Promise<void> {
  expect((await fetch(`${stack.current.url}${path}`)).status).toBe(200)
  await settle()
}
const micro = async (path: string, body?: unknown) =>
  (await fetch(`${stack.current.url}/micro/${path}`, { method: body ? 'POST' : 'GET', headers: withAuth({ 'content-type': 'application/json' }), body: body ? JSON.stringify(body) : undefined })).json() as Promise<any>

const schemaOf = (vendor: string, name: string) => ({
  $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
  description: `${name} test schema`,
  self: { vendor, name, format: 'jsonschema', version: '1-0-0' },
  type: 'object',
  properties: { n: { type: 'integer' } },
  additionalProperties: false,
})

// A static registry on "object storage": schemas under /schemas/<vendor>/<name>/<format>/<version>.
let staticRegistry: Server
let staticUrl = ''
beforeAll(async () => {
  staticRegistry = createServer((req, res) => {
    if (req.url === '/schemas/com.external/thing/jsonschema/1-0-0') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(schemaOf('com.external', 'thing')))
      return
    }
    res.writeHead(404)
    res.end()
  })
  await new Promise<void>((r) => staticRegistry.listen(0, '127.0.0.1', r))
  staticUrl = `http://127.0.0.1:${(staticRegistry.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => staticRegistry.close(() => r())))

describe('GET /control-plane/version and unknown paths', () => {
  it('answers the version as text, and lists the endpoints on a 404', async () => {
    const v = await cp('GET', 'version')
    expect(v).toMatchObject({ status: 200, text: '0.1.0' })
    expect(v.type).toMatch(/^text\/plain/)
    const nope = await cp('GET', 'nope')
    expect(nope.status).toBe(404)
    expect(nope.text).toMatch(/\/control-plane\/restart-service/)
  })
})

describe('GET /control-plane/license', () => {
  it('names the environment variable when ACCEPT_LIMITED_USE_LICENSE accepted the licence', async () => {
    const l = await cp('GET', 'license')
    expect(l.status).toBe(200)
    expect(JSON.parse(l.text)).toMatchObject({ accepted: true, by: 'environment', variable: 'ACCEPT_LIMITED_USE_LICENSE' })
  })
})

describe('restarts', () => {
  it('restart-service: Mini\'s errors, aliases, and a new generation in the settings table', async () => {
    expect(await cp('GET', 'restart-service')).toMatchObject({ status: 404, text: 'Only PUT is supported\n' })
    expect(await cp('PUT', 'restart-service', {})).toMatchObject({ status: 400, text: 'Missing key service_name\n' })
    const unknown = await cp('PUT', 'restart-service', { service_name: 'nginx' })
    expect(unknown.status).toBe(400)
    expect(unknown.text).toMatch(/^Recognized service names: collector, enrich, esLoaderGood, esLoaderBad, registry, dashboard, searchstore \(and iglu, kibana, elasticsearch as aliases\)/)
    const table = stack.current.names.tables.settings
    const before = await readGenerations(testClients().ddb, table)
    expect(await cp('PUT', 'restart-service', { service_name: 'iglu' })).toMatchObject({ status: 200, text: 'OK' })
    const after = await readGenerations(testClients().ddb, table)
    expect(after.registry).toBe((before.registry ?? 0) + 1)
    expect(await cp('PUT', 'restart-services')).toMatchObject({ status: 200, text: 'OK' })
    const all = await readGenerations(testClients().ddb, table)
    expect(Object.keys(all).sort()).toEqual(['collector', 'dashboard', 'enrich', 'esLoaderBad', 'esLoaderGood', 'registry', 'searchstore'])
    expect(await cp('POST', 'restart-services')).toMatchObject({ status: 404 })
  })

  it('a schema uploaded after enrich missed it is used by the next event, and after a restart of the registry', async () => {
    const schema = 'iglu:com.acme/widget/jsonschema/1-0-0'
    await send(ue(schema, { n: 1 }, 'cache-1'))
    expect((await micro('bad')).some((b: any) => JSON.stringify(b).includes('com.acme/widget'))).toBe(true)
    const put = await fetch(`${stack.current.url}/registry-server/api/schemas`, {
      method: 'POST',
      headers: { apikey: SUPER, 'content-type': 'application/json' },
      body: JSON.stringify({ json: schemaOf('com.acme', 'widget'), isPublic: true }),
    })
    expect(put.status).toBe(201)
    // the push drops the miss enrich remembered: no restart, no wait for the cache's TTL
    await send(ue(schema, { n: 2 }, 'cache-2'))
    expect((await micro('good', { schema })).map((e: any) => e.event.app_id)).toEqual(['cache-2'])
    expect(await cp('PUT', 'restart-service', { service_name: 'registry' })).toMatchObject({ status: 200, text: 'OK' })
    await send(ue(schema, { n: 3 }, 'cache-3'))
    const good = await micro('good', { schema })
    expect(good.map((e: any) => e.event.app_id).sort()).toEqual(['cache-2', 'cache-3'])
  })
})

describe('POST /control-plane/reset-service', () => {
  it('empties both indices of the search store; only the search store can be reset', async () => {
    await send('/i?e=pv&p=web&tv=test-1&aid=reset-me')
    expect((await micro('all')).good).toBeGreaterThan(0)
    expect(await cp('GET', 'reset-service')).toMatchObject({ status: 400 })
    expect(await cp('POST', 'reset-service', {})).toMatchObject({ status: 400, text: 'Missing key service_name\n' })
    const wrong = await cp('POST', 'reset-service', { service_name: 'collector' })
    expect(wrong).toMatchObject({ status: 400, text: "collector can't be reset. Only searchstore (or elasticsearch) can be reset.\n" })
    expect(await cp('POST', 'reset-service', { service_name: 'elasticsearch' })).toMatchObject({ status: 200, text: 'The search store is reset: both indices (good and bad) are empty.' })
    expect(await micro('all')).toEqual({ total: 0, good: 0, bad: 0 })
    await send('/i?e=pv&p=web&tv=test-1&aid=after-reset')
    expect((await micro('all')).good).toBe(1)
  })
})

describe('POST /control-plane/external-iglu', () => {
  it('checks the form: missing parameters, priority, URL, API key, reachability', async () => {
    const ok = { vendor_prefix: 'com.external', uri: staticUrl, name: 'Static on S3', priority: '5' }
    expect(await cp('POST', 'external-iglu', { ...ok, uri: '' })).toMatchObject({ status: 400, text: 'missing parameter uri\n' })
    expect(await cp('POST', 'external-iglu', { ...ok, priority: 'high' })).toMatchObject({ status: 400, text: expect.stringMatching(/^Priority must be an integer/) })
    expect(await cp('POST', 'external-iglu', { ...ok, apikey: 'not-a-uuid' })).toMatchObject({ status: 400, text: 'Given apikey is not a valid UUID.\n' })
    expect(await cp('POST', 'external-iglu', { ...ok, uri: 'ftp://example.com' })).toMatchObject({ status: 400, text: expect.stringMatching(/^uri must be an http or https URL/) })
    expect(await cp('POST', 'external-iglu', { ...ok, name: 'Iglu Central' })).toMatchObject({ status: 400, text: expect.stringMatching(/taken by a built-in repository/) })
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    expect(await cp('POST', 'external-iglu', { ...ok, uri: `http://127.0.0.1:${port}` })).toMatchObject({ status: 400, text: expect.stringMatching(/^Given URL is not reachable: ECONNREFUSED/) })
    expect((await cp('GET', 'external-iglu')).text).toBe('[]')
  })

  it('a static registry with no API key becomes a repository of enrich and of /micro/iglu', async () => {
    const schema = 'iglu:com.external/thing/jsonschema/1-0-0'
    expect(await cp('POST', 'external-iglu', { vendor_prefix: 'com.external', uri: `${staticUrl}/`, name: 'Static on S3', priority: '5' })).toMatchObject({ status: 200, text: 'added successfully' })
    const list = JSON.parse((await cp('GET', 'external-iglu')).text)
    expect(list).toEqual([{ name: 'Static on S3', uri: staticUrl, priority: 5, vendorPrefixes: ['com.external'], enabled: true, hasApiKey: false, addedAt: expect.any(String) }])
    await send(ue(schema, { n: 7 }, 'external'))
    const good = await micro('good', { schema })
    expect(good.map((e: any) => e.event.app_id)).toEqual(['external'])
    const lookup = await fetch(`${stack.current.url}/micro/iglu/com.external/thing/jsonschema/1-0-0`, { headers: withAuth() })
    expect(lookup.status).toBe(200)
  })
})

describe('POST /control-plane/enrichments', () => {
  const upload = async (filename: string, content: string, field = 'enrichmentjson') => {
    const form = new FormData()
    form.append(field, new Blob([content], { type: 'application/json' }), filename)
    const r = await fetch(`${stack.current.url}/control-plane/enrichments`, { method: 'POST', headers: { authorization: auth }, body: form })
    return { status: r.status, text: await r.text() }
  }
  const ANON_IP = JSON.stringify({
    schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1',
    data: { name: 'anon_ip', vendor: 'com.snowplowanalytics.snowplow', enabled: true, parameters: { anonOctets: 2 } },
  })

  it('refuses what is not an enrichment configuration, with the reason', async () => {
    expect(await cp('POST', 'enrichments', { enrichmentjson: ANON_IP })).toMatchObject({ status: 415 })
    expect(await upload('anon_ip.json', '{"schema": ')).toMatchObject({ status: 400, text: expect.stringMatching(/^JSON is not valid: /) })
    expect(await upload('anon_ip.json', ANON_IP, 'other')).toMatchObject({ status: 400, text: 'missing file enrichmentjson\n' })
    expect(await upload('../../etc/x.txt', ANON_IP)).toMatchObject({ status: 400, text: expect.stringMatching(/file name must end in \.json/) })
    const invalid = await upload('anon_ip.json', ANON_IP.replace('"anonOctets":2', '"anonOctets":"two"'))
    expect(invalid.status).toBe(400)
    expect(invalid.text).toMatch(/^The enrichment configuration is not valid:\nanon_ip\.json: invalid against iglu:com\.snowplowanalytics\.snowplow\/anon_ip\/jsonschema\/1-0-1/)
    expect(await upload('big.json', `{"x":"${'a'.repeat(1024 * 1024)}"}`)).toMatchObject({ status: 413 })
  })

  it('stores a valid one in the assets bucket, and enrich runs it from the next event', async () => {
    expect(await upload('anon_ip.json', ANON_IP)).toMatchObject({ status: 200, text: 'uploaded successfully' })
    await testClients().s3.send(new HeadObjectCommand({ Bucket: stack.current.names.buckets.assets, Key: 'enrichments/anon_ip.json' }))
    await send('/i?e=pv&p=web&tv=test-1&aid=anon&ip=203.0.113.77')
    const [ev] = await micro('good', { event_type: 'page_view' }).then((g: any[]) => g.filter((e) => e.event.app_id === 'anon'))
    expect(ev.event.user_ipaddress).toBe('203.0.x.x')
  })
})

describe('enrichments: the whole set is checked, listed, shown, disabled and removed', () => {
  const upload = async (filename: string, content: string) => {
    const form = new FormData()
    form.append('enrichmentjson', new Blob([content], { type: 'application/json' }), filename)
    const r = await fetch(`${stack.current.url}/control-plane/enrichments`, { method: 'POST', headers: { authorization: auth }, body: form })
    return { status: r.status, text: await r.text() }
  }
  const SP = 'com.snowplowanalytics.snowplow'
  const doc = (name: string, parameters: object, vendor = SP, version = '1-0-1') => JSON.stringify({ schema: `iglu:${vendor}/${name}/jsonschema/${version}`, data: { name, vendor, enabled: true, parameters } })
  const script = (js: string) => doc('javascript_script_config', { script: Buffer.from(js).toString('base64') })
  const stored = async () => {
    const page = await testClients().s3.send(new ListObjectsV2Command({ Bucket: stack.current.names.buckets.assets, Prefix: 'enrichments/' }))
    return (page.Contents ?? []).map((o) => o.Key!.slice('enrichments/'.length)).sort()
  }
  const storedText = async (file: string) =>
    (await testClients().s3.send(new GetObjectCommand({ Bucket: stack.current.names.buckets.assets, Key: `enrichments/${file}` }))).Body!.transformToString('utf8')
  const list = async () => JSON.parse((await cp('GET', 'enrichments')).text) as { file: string; name: string; enabled: boolean; modifiedAt: string }[]

  it('refuses an upload enrich could not start with, giving every reason, and stores nothing', async () => {
    const before = await stored()
    expect(before).toContain('anon_ip.json')
    const second = await upload('anon_ip_2.json', doc('anon_ip', { anonOctets: 3 }))
    expect(second).toEqual({ status: 400, text: 'The enrichment configuration is not valid:\nanon_ip_2.json: the anon_ip enrichment is configured twice (also in anon_ip.json)\n' })
    const syntax = await upload('script.json', script('function process(event) { return [ }'))
    expect(syntax.status).toBe(400)
    expect(syntax.text).toMatch(/^The enrichment configuration is not valid:\nscript\.json: Error compiling JavaScript function: \[SyntaxError/)
    const loop = await upload('script.json', script('for (;;) {}\nfunction process() { return [] }'))
    expect(loop).toMatchObject({ status: 400, text: expect.stringContaining('script.json: Error compiling JavaScript function: [InternalError: interrupted') })
    // process() is tried on sample events: one that never finishes is refused
    const endless = await upload('script.json', script('function process(event) { while (true) {} }'))
    expect(endless).toEqual({ status: 400, text: 'The enrichment configuration is not valid:\nscript.json: process() did not finish within its limit of 100 ms on a sample page view; enrich would spend that limit on every such event and fail it (does process() loop forever?)\n' })
    const throws = await upload('script.json', script('function process(event) { throw new Error("not ready") }'))
    expect(throws).toMatchObject({ status: 400, text: expect.stringContaining('script.json: process() fails on every sample event, so it would fail every event') })
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const asset = await upload('referer_parser.json', doc('referer_parser', { internalDomains: [], uri: `http://127.0.0.1:${port}/assets`, database: 'referers-latest.json' }, SP, '2-0-1'))
    expect(asset).toMatchObject({ status: 400, text: expect.stringContaining(`referer_parser.json: asset database at http://127.0.0.1:${port}/assets/referers-latest.json cannot be read: ECONNREFUSED`) })
    expect(await stored()).toEqual(before)
    // the same file name replaces the stored file, as in Mini: no duplicate then
    expect(await upload('anon_ip.json', doc('anon_ip', { anonOctets: 2 }))).toEqual({ status: 200, text: 'uploaded successfully' })
  })

  it('lists, shows, disables, enables and removes the stored files; enrich follows', async () => {
    expect(await upload('script.json', script('function process(event) { return [] }'))).toEqual({ status: 200, text: 'uploaded successfully' })
    expect(await list()).toEqual([
      { file: 'anon_ip.json', name: 'anon_ip', schema: `iglu:${SP}/anon_ip/jsonschema/1-0-1`, enabled: true, modifiedAt: expect.any(String), bytes: expect.any(Number) },
      { file: 'script.json', name: 'javascript_script_config', schema: `iglu:${SP}/javascript_script_config/jsonschema/1-0-1`, enabled: true, modifiedAt: expect.any(String), bytes: expect.any(Number) },
    ])
    const shown = await cp('GET', 'enrichments/anon_ip.json')
    expect(shown.type).toMatch(/^application\/json/)
    expect(JSON.parse(shown.text)).toEqual(JSON.parse(doc('anon_ip', { anonOctets: 2 })))
    expect(await cp('GET', 'enrichments/nothing.json')).toMatchObject({ status: 404 })
    expect(await cp('GET', 'enrichments/anon_ip.json/disable')).toMatchObject({ status: 405 })

    expect(await cp('POST', 'enrichments/anon_ip.json/disable')).toEqual({ status: 200, text: 'disabled successfully', type: expect.any(String) })
    expect((await list()).find((e) => e.file === 'anon_ip.json')?.enabled).toBe(false)
    expect(JSON.parse(await storedText('anon_ip.json')).data.enabled).toBe(false)
    await send('/i?e=pv&p=web&tv=test-1&aid=anon-off&ip=203.0.113.77')
    const [off] = await micro('good', { event_type: 'page_view' }).then((g: any[]) => g.filter((e) => e.event.app_id === 'anon-off'))
    expect(off.event.user_ipaddress).toBe('203.0.113.77')

    // a second anon_ip may be uploaded while the first is disabled; the first can then not be enabled
    expect(await upload('anon_ip_2.json', doc('anon_ip', { anonOctets: 3 }))).toEqual({ status: 200, text: 'uploaded successfully' })
    expect(await cp('POST', 'enrichments/anon_ip.json/enable')).toMatchObject({ status: 400, text: expect.stringContaining('the anon_ip enrichment is configured twice') })
    expect(JSON.parse(await storedText('anon_ip.json')).data.enabled).toBe(false)

    expect(await cp('DELETE', 'enrichments/anon_ip_2.json')).toMatchObject({ status: 200, text: 'removed successfully' })
    expect(await stored()).toEqual(['anon_ip.json', 'script.json'])
    expect(await cp('POST', 'enrichments/anon_ip.json/enable')).toMatchObject({ status: 200, text: 'enabled successfully' })
    await send('/i?e=pv&p=web&tv=test-1&aid=anon-on&ip=203.0.113.77')
    const [on] = await micro('good', { event_type: 'page_view' }).then((g: any[]) => g.filter((e) => e.event.app_id === 'anon-on'))
    expect(on.event.user_ipaddress).toBe('203.0.x.x')
    expect(await cp('DELETE', 'enrichments/script.json')).toMatchObject({ status: 200, text: 'removed successfully' })
    expect(await cp('DELETE', 'enrichments/script.json')).toMatchObject({ status: 404 })
    expect((await list()).map((e) => e.file)).toEqual(['anon_ip.json'])
  })

  it('external registries: shown, disabled (left out by the resolvers), enabled and removed', async () => {
    const name = encodeURIComponent('Static on S3')
    expect(JSON.parse((await cp('GET', `external-iglu/${name}`)).text)).toMatchObject({ name: 'Static on S3', uri: staticUrl, enabled: true, hasApiKey: false })
    expect(await cp('GET', 'external-iglu/nobody')).toMatchObject({ status: 404 })
    expect(await cp('POST', `external-iglu/${name}/disable`)).toMatchObject({ status: 200, text: 'disabled successfully' })
    expect(JSON.parse((await cp('GET', 'external-iglu')).text)).toEqual([expect.objectContaining({ name: 'Static on S3', enabled: false })])
    const lookup = () => fetch(`${stack.current.url}/micro/iglu/com.external/thing/jsonschema/1-0-0`, { headers: withAuth() }).then((r) => r.status)
    expect(await lookup()).toBe(404)
    expect(await cp('POST', `external-iglu/${name}/enable`)).toMatchObject({ status: 200, text: 'enabled successfully' })
    expect(await lookup()).toBe(200)
    expect(await cp('DELETE', `external-iglu/${name}`)).toMatchObject({ status: 200, text: 'removed successfully' })
    expect((await cp('GET', 'external-iglu')).text).toBe('[]')
  })
})

describe('telemetry and domain name', () => {
  it('GET and PUT /control-plane/telemetry as Mini', async () => {
    expect(JSON.parse((await cp('GET', 'telemetry')).text)).toEqual({ 'collector.telemetry.disable': false })
    expect(await cp('PUT', 'telemetry', {})).toMatchObject({ status: 400, text: 'no key named disable\n' })
    expect(await cp('PUT', 'telemetry', { disable: 'yes' })).toMatchObject({ status: 400, text: 'set disable key to either true or false\n' })
    expect(await cp('PUT', 'telemetry', { disable: 'true' })).toMatchObject({ status: 200, text: '' })
    expect(JSON.parse((await cp('GET', 'telemetry')).text)).toEqual({ 'collector.telemetry.disable': true })
    expect(await cp('DELETE', 'telemetry')).toMatchObject({ status: 405 })
  })

  it('POST /control-plane/domain-name checks the name and that it resolves here; nothing is changed when it does not', async () => {
    expect(await cp('POST', 'domain-name', {})).toMatchObject({ status: 400, text: 'missing parameter domain_name\n' })
    expect(await cp('POST', 'domain-name', { domain_name: 'not a domain' })).toMatchObject({ status: 400 })
    expect(await cp('POST', 'domain-name', { domain_name: '203.0.113.7' })).toMatchObject({ status: 400, text: expect.stringContaining('top-level domain') })
    expect(await cp('POST', 'domain-name', { domain_name: `${'a'.repeat(64)}.com` })).toMatchObject({ status: 400, text: expect.stringContaining('is not a domain name') })
    // (the DNS server of this stack does not answer: FLOE_DNS_SERVERS is a closed port)
    const r = await cp('POST', 'domain-name', { domain_name: 'Collector.Acme.com.' })
    expect(r).toMatchObject({ status: 502, text: 'collector.acme.com could not be resolved through the DNS servers 127.0.0.1:1 (FLOE_DNS_SERVERS): ECONNREFUSED. Nothing was changed.\n' })
    expect(JSON.parse((await cp('GET', 'domain-name')).text)).toMatchObject({ httpsPort: 443, serving: false })
    expect(await cp('PUT', 'domain-name', { domain_name: 'collector.acme.com' })).toMatchObject({ status: 405 })
  })

  it('a form that is not urlencoded, or too large, is refused', async () => {
    expect(await cp('PUT', 'telemetry', undefined, { 'content-type': 'application/json' })).toMatchObject({ status: 400, text: 'no key named disable\n' }) // no body, no form
    const r = await fetch(`${stack.current.url}/control-plane/telemetry`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/json' }, body: '{"disable":"true"}' })
    expect(r.status).toBe(415)
    const big = await fetch(`${stack.current.url}/control-plane/telemetry`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: `disable=true&x=${'a'.repeat(70_000)}` })
    expect(big.status).toBe(413)
  })
})

describe('super API key and credentials', () => {
  it('POST /control-plane/local-iglu-apikey replaces the registry super key', async () => {
    expect(await cp('POST', 'local-iglu-apikey', { local_iglu_apikey: 'nope' })).toMatchObject({ status: 400, text: expect.stringMatching(/^Given apikey is not valid UUID/) })
    expect(await cp('POST', 'local-iglu-apikey', { local_iglu_apikey: '2f6bd2b5-3c8a-1c0e-9d55-0d4b0b6a1c11' })).toMatchObject({ status: 400 }) // a v1 UUID
    const fresh = crypto.randomUUID()
    expect(await cp('POST', 'local-iglu-apikey', { local_iglu_apikey: fresh })).toMatchObject({ status: 200, text: 'added successfully' })
    const keygen = (key: string) =>
      fetch(`${stack.current.url}/registry-server/api/auth/keygen`, { method: 'POST', headers: { apikey: key, 'content-type': 'application/json' }, body: JSON.stringify({ vendorPrefix: 'com.acme' }) })
    expect((await keygen(fresh)).status).toBe(200)
    expect((await keygen(crypto.randomUUID())).status).toBe(403)
  })

  it('POST /control-plane/credentials: the rules, the current password, then the new credentials are demanded at once', async () => {
    const current_password = TEST_CREDENTIALS.password
    expect(await cp('POST', 'credentials', { current_password, new_password: 'LongEnough2024' })).toMatchObject({ status: 400, text: 'missing parameter new_username\n' })
    expect(await cp('POST', 'credentials', { current_password, new_username: 'ops' })).toMatchObject({ status: 400, text: 'missing parameter new_password\n' })
    expect(await cp('POST', 'credentials', { current_password, new_username: 'ops', new_password: 'short1' })).toMatchObject({ status: 400, text: expect.stringMatching(/^weak password: it has 6 characters; the password must be 12 to 128 letters and digits/) })
    expect(await cp('POST', 'credentials', { current_password, new_username: 'ops', new_password: 'has spaces 12345' })).toMatchObject({ status: 400 })
    // the current password: missing (400) or wrong (403), and nothing changed
    expect(await cp('POST', 'credentials', { new_username: 'ops', new_password: 'NewPassword2024' })).toMatchObject({ status: 400, text: 'missing parameter current_password: the current password is required to change the credentials\n' })
    expect(await cp('POST', 'credentials', { current_password: 'WrongPassword2024', new_username: 'ops', new_password: 'NewPassword2024' })).toMatchObject({ status: 403, text: 'the current password is wrong: nothing was changed\n' })
    expect(await cp('POST', 'credentials', { current_password: 'x'.repeat(5000), new_username: 'ops', new_password: 'NewPassword2024' })).toMatchObject({ status: 403 })
    expect((await fetch(`${stack.current.url}/micro/all`, { headers: { authorization: basicAuth() } })).status).toBe(200)
    expect((await fetch(`${stack.current.url}/micro/all`, { headers: { authorization: basicAuth('ops', 'NewPassword2024') } })).status).toBe(401)
    expect(await cp('POST', 'credentials', { current_password, new_username: 'ops', new_password: 'NewPassword2024' })).toMatchObject({ status: 200, text: 'changed successfully' })
    const old = await fetch(`${stack.current.url}/micro/all`, { headers: { authorization: basicAuth() } })
    expect(old.status).toBe(401)
    expect(old.headers.get('www-authenticate')).toMatch(/^Basic realm="Floe"/)
    auth = basicAuth('ops', 'NewPassword2024')
    expect((await fetch(`${stack.current.url}/micro/all`, { headers: { authorization: auth } })).status).toBe(200)
  })
})
