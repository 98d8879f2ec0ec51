/**
 * A browser sends the basic credentials by itself, so a page elsewhere could
 * change the deployment with a form post or an image. Through the local
 * gateway: every state-changing endpoint behind basic authentication refuses
 * a request a browser sent from another origin (403, nothing changed), and
 * takes it from the deployment's own origin or without those headers (curl).
 * The collector takes cross-origin requests, as trackers send them.
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3'
import { beforeAll, describe, expect, it } from 'vitest'
import { readGenerations } from '../../../lib/runtime/restarts'
import { basicAuth, TEST_CREDENTIALS, testClients, useLocalStack } from '../../support/stack'

const SUPER = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b'
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_SUPER_API_KEY: SUPER } })

const FOREIGN: Record<string, Record<string, string>> = {
  'a foreign Origin': { origin: 'https://evil.example' },
  'Sec-Fetch-Site: cross-site': { 'sec-fetch-site': 'cross-site' },
  'Sec-Fetch-Site: same-site': { 'sec-fetch-site': 'same-site' },
  'Origin: null': { origin: 'null' },
  'another port of the same host': { origin: 'http://127.0.0.1:1' },
}
const sameOrigin = () => ({ origin: stack.current.url, 'sec-fetch-site': 'same-origin' })

let auth = basicAuth()
type Body = Record<string, string> | FormData | undefined
async function call(method: string, path: string, body: Body, headers: Record<string, string> = {}) {
  const form = body !== undefined && !(body instanceof FormData)
  const r = await fetch(`${stack.current.url}${path}`, {
    method,
    headers: { authorization: auth, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    body: body instanceof FormData ? body : form ? new URLSearchParams(body).toString() : undefined,
  })
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') ?? '' }
}

const count = async (index: 'good' | 'bad') => JSON.parse((await call('GET', `/search-store/${index}/_count`, undefined)).text).count as number
const keygen = async (key: string) =>
  (await fetch(`${stack.current.url}/registry-server/api/auth/keygen`, { method: 'POST', headers: { apikey: key, 'content-type': 'application/json' }, body: JSON.stringify({ vendorPrefix: 'com.acme' }) })).status
const enrichmentStored = async () =>
  testClients()
    .s3.send(new HeadObjectCommand({ Bucket: stack.current.names.buckets.assets, Key: 'enrichments/anon_ip.json' }))
    .then(() => true, () => false)
const enrichment = () => {
  const f = new FormData()
  const config = { schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { name: 'anon_ip', vendor: 'com.snowplowanalytics.snowplow', enabled: true, parameters: { anonOctets: 2 } } }
  f.append('enrichmentjson', new Blob([JSON.stringify(config)], { type: 'application/json' }), 'anon_ip.json')
  return f
}
const NEW_KEY = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d'
const registry = () => ({ name: 'Mirror', uri: `${stack.current.url}/registry-server/api`, vendor_prefix: 'com.mirror', priority: '3' })

/** Every state-changing endpoint behind basic authentication, as a browser's form (or an image) would call it. */
const ENDPOINTS: [string, string, () => Body][] = [
  ['POST', '/control-plane/credentials', () => ({ current_password: TEST_CREDENTIALS.password, new_username: 'evil', new_password: 'EvilPassword2024' })],
  ['POST', '/control-plane/local-iglu-apikey', () => ({ local_iglu_apikey: NEW_KEY })],
  ['POST', '/control-plane/external-iglu', () => registry()],
  ['PUT', '/control-plane/external-iglu', () => registry()],
  ['POST', '/control-plane/enrichments', enrichment],
  ['PUT', '/control-plane/telemetry', () => ({ disable: 'true' })],
  ['PUT', '/control-plane/restart-services', () => undefined],
  ['PUT', '/control-plane/restart-service', () => ({ service_name: 'enrich' })],
  ['POST', '/control-plane/reset-service', () => ({ service_name: 'searchstore' })],
  ['POST', '/control-plane/domain-name', () => ({ domain_name: 'evil.example' })],
  ['GET', '/micro/reset', () => undefined],
  ['POST', '/micro/reset', () => undefined],
  ['DELETE', '/search-store/good', () => undefined],
  ['DELETE', '/search-store/bad', () => undefined],
]

beforeAll(async () => {
  // a tracker on another site: the collector takes its cross-origin requests (CORS), and the store gets one good event
  const res = await fetch(`${stack.current.url}/i?e=pv&p=web&tv=test-1&aid=cross-site`, { headers: { origin: 'https://shop.example', 'sec-fetch-site': 'cross-site', referer: 'https://shop.example/' } })
  expect(res.status).toBe(200)
  const post = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST',
    headers: { origin: 'https://shop.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'test-1', aid: 'cross-site' }] }),
  })
  expect(post.status).toBe(200)
  expect(post.headers.get('access-control-allow-origin')).toBe('https://shop.example')
  await stack.current.drain()
  await stack.current.drain()
  expect(await count('good')).toBe(2)
}, 120_000)

describe('a request a browser sent from another origin', () => {
  it.each(Object.entries(FOREIGN))('with %s: every state-changing endpoint answers 403, and nothing changed', async (_name, headers) => {
    const generations = await readGenerations(testClients().ddb, stack.current.names.tables.settings)
    for (const [method, path, body] of ENDPOINTS) {
      const r = await call(method, path, body(), headers)
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(403)
      expect(r.text, `${method} ${path}`).toContain('cross-site request refused: ')
      if (path.startsWith('/search-store')) expect(JSON.parse(r.text)).toMatchObject({ status: 403, error: { type: 'security_exception' } })
      else expect(r.type).toMatch(/^text\/plain/)
    }
    expect(await count('good')).toBe(2)
    expect((await call('GET', '/micro/all', undefined)).status).toBe(200) // the credentials are unchanged
    expect((await call('GET', '/micro/all', undefined, { authorization: basicAuth('evil', 'EvilPassword2024') })).status).toBe(401)
    expect(await keygen(SUPER)).toBe(200)
    expect(await keygen(NEW_KEY)).toBe(403)
    expect(JSON.parse((await call('GET', '/control-plane/external-iglu', undefined)).text)).toEqual([])
    expect(await enrichmentStored()).toBe(false)
    expect(JSON.parse((await call('GET', '/control-plane/telemetry', undefined)).text)).toEqual({ 'collector.telemetry.disable': false })
    expect(await readGenerations(testClients().ddb, stack.current.names.tables.settings)).toEqual(generations)
  })

  it('may still read: a GET that changes nothing answers, and the pages open from a link elsewhere', async () => {
    const cross = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }
    expect((await call('GET', '/micro/all', undefined, cross)).status).toBe(200)
    // except the reads that can hold the whole store
    expect((await call('GET', '/micro/good', undefined, cross)).status).toBe(403)
    expect((await call('GET', '/micro/good', undefined)).status).toBe(200)
    expect((await call('GET', '/search-store/good/_count', undefined, cross)).status).toBe(200)
    expect((await call('GET', '/home', undefined, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).status).toBe(200)
  })
})

describe('a request from the deployment’s own origin, or without a browser', () => {
  it('changes the credentials, super API key, registries, enrichments and telemetry', async () => {
    const same = sameOrigin()
    expect(await call('POST', '/control-plane/credentials', { current_password: TEST_CREDENTIALS.password, new_username: 'ops', new_password: 'OpsPassword2024' }, same)).toMatchObject({ status: 200, text: 'changed successfully' })
    auth = basicAuth('ops', 'OpsPassword2024')
    expect(await call('POST', '/control-plane/credentials', { current_password: 'OpsPassword2024', new_username: TEST_CREDENTIALS.username, new_password: TEST_CREDENTIALS.password })).toMatchObject({ status: 200 })
    auth = basicAuth()
    expect(await call('POST', '/control-plane/local-iglu-apikey', { local_iglu_apikey: NEW_KEY }, same)).toMatchObject({ status: 200, text: 'added successfully' })
    expect(await keygen(NEW_KEY)).toBe(200)
    expect(await call('POST', '/control-plane/external-iglu', registry(), same)).toMatchObject({ status: 200, text: 'added successfully' })
    expect(await call('POST', '/control-plane/enrichments', enrichment(), { origin: stack.current.url })).toMatchObject({ status: 200, text: 'uploaded successfully' })
    expect(await enrichmentStored()).toBe(true)
    expect((await call('PUT', '/control-plane/telemetry', { disable: 'true' })).status).toBe(200)
    expect(JSON.parse((await call('GET', '/control-plane/telemetry', undefined)).text)).toEqual({ 'collector.telemetry.disable': true })
    expect((await call('PUT', '/control-plane/restart-services', undefined, { 'sec-fetch-site': 'same-origin' })).status).toBe(200)
  })

  it('empties the search store: DELETE from the pages, GET /micro/reset from curl', async () => {
    expect(await call('DELETE', '/search-store/bad', undefined, sameOrigin())).toMatchObject({ status: 200, text: '{"acknowledged":true}' })
    expect(await call('GET', '/micro/reset', undefined)).toMatchObject({ status: 200, text: '"Reset completed"' })
    expect(await count('good')).toBe(0)
    expect((await call('POST', '/control-plane/reset-service', { service_name: 'searchstore' }, { 'sec-fetch-site': 'same-origin' })).status).toBe(200)
  })
})

describe('APIs authorised by keys a browser does not send by itself', () => {
  it('a cross-site post to the registry carrying the basic credentials writes nothing: it needs the apikey header', async () => {
    const schema = (name: string) => ({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      description: `${name} test schema`,
      self: { vendor: 'com.evil', name, format: 'jsonschema', version: '1-0-0' },
      type: 'object',
      properties: { n: { type: 'integer' } },
      additionalProperties: false,
    })
    const publish = (name: string, headers: Record<string, string>) =>
      fetch(`${stack.current.url}/registry-server/api/schemas`, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body: JSON.stringify(schema(name)) })
    expect((await publish('with-key', { apikey: SUPER })).status).toBe(201) // the same document is written with the key
    const r = await publish('x', { authorization: auth, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect([401, 403]).toContain(r.status)
    const read = await fetch(`${stack.current.url}/registry-server/api/schemas/com.evil/x/jsonschema/1-0-0`, { headers: { apikey: SUPER } })
    expect(read.status).toBe(404)
  })
})
