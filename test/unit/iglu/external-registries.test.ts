/**
 * External Iglu registries (added at run time, as the control plane does) are
 * contained: they rank after every built-in repository, their answers are
 * capped in size, they cannot redirect lookups elsewhere, and listing a model
 * on them is bounded and stops with the lookup.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpRepository, MAX_LIST_ENTRIES } from '../../../lib/core/iglu/repositories'
import { orderRepositories, Resolver } from '../../../lib/core/iglu/resolver'
import { defaultResolver, defaultResolverConfig, igluCentralSnapshot } from '../../../lib/runtime/default-resolver'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { resolvingRegistry } from '../../../lib/core/tracking-design/resolving-registry'
import { schema } from './helpers'

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown

const servers: { close: () => Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** An HTTP server on 127.0.0.1:0 counting the requests it receives. */
async function serve(handler: Handler) {
  const paths: string[] = []
  const server = createServer((req, res) => {
    paths.push(req.url ?? '/')
    void handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const s = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    }),
  }
  servers.push(s)
  return s
}

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))

/** A schema document for whatever `/schemas/{vendor}/{name}/{format}/{version}` is asked. */
function anySchema(url: string, extra: Record<string, unknown> = {}) {
  const [vendor = 'x', name = 'x', , version = '1-0-0'] = url.split('?')[0]!.replace(/^.*\/schemas\//, '').split('/')
  return schema(vendor, name, version, { description: 'served by the external registry', ...extra })
}

const CONTEXTS = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0'
const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
const offline = { FLOE_IGLU_CENTRAL_URL: '' }

describe('ranking', () => {
  it('a vendor-matching external registry with priority 0 never overrides the project schemas or the Iglu Central snapshot', async () => {
    const evil = await serve((req, res) => json(res, 200, anySchema(req.url!, { type: 'array', maxItems: 0 })))
    // Declared as it would like to be ranked: first (no rank given, priority 0, the vendor's prefix).
    const external = new HttpRepository(evil.url, { name: 'Evil', priority: 0, vendorPrefixes: ['com.snowplowanalytics'] })
    const r = defaultResolver({ env: offline, loadRepositories: async () => [external] })
    const file = (dir: string, path: string) => JSON.parse(readFileSync(join(dir, 'schemas', path), 'utf8'))
    // The contexts wrapper is in the project's schemas/ (and in the snapshot).
    const contexts = await r.lookupSchema(CONTEXTS)
    expect(contexts).toMatchObject({ ok: true, repository: 'Floe embedded' })
    expect(contexts.ok && contexts.value).toEqual(file(join(igluCentralSnapshot({}), '..', '..'), 'com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0'))
    const webPage = await r.lookupSchema(WEB_PAGE)
    expect(webPage).toMatchObject({ ok: true, repository: 'Iglu Central snapshot' })
    expect(webPage.ok && webPage.value).toEqual(file(igluCentralSnapshot({}), 'com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'))
    expect(evil.paths).toEqual([])
    // The contexts of an event still validate as the built-in schemas say.
    expect(await r.validate({ schema: CONTEXTS, data: [{ schema: WEB_PAGE, data: { id: 'x' } }] })).toMatchObject({ ok: true })
    expect(r.repositories.map((x) => [x.name, r.rankOf(x)]).at(-1)).toEqual(['Evil', 2])
  })

  it("the deployment's own registry wins; the external registry only serves what no built-in repository has", async () => {
    const evil = await serve((req, res) => json(res, 200, anySchema(req.url!)))
    const store = new MemorySchemaStore()
    const own = schema('com.acme', 'e', '1-0-0')
    const { $schema: _, self: __, ...body } = own
    await store.put({ key: { vendor: 'com.acme', name: 'e', format: 'jsonschema', version: { model: 1, revision: 0, addition: 0 } }, body, isPublic: false, createdAt: '', updatedAt: '', supersedes: [] }, { create: true })
    const external = new HttpRepository(evil.url, { name: 'Acme elsewhere', priority: 0, vendorPrefixes: ['com.acme'] })
    const r = defaultResolver({ env: offline, store, loadRepositories: async () => [external] })
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'Floe registry', value: own })
    expect(evil.paths).toEqual([])
    expect(await r.lookupSchema('iglu:com.acme/other/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'Acme elsewhere' })
    expect(evil.paths).toEqual(['/schemas/com.acme/other/jsonschema/1-0-0'])
  })

  it("is not asked while the deployment's own registry fails (it may have the schema)", async () => {
    const evil = await serve((req, res) => json(res, 200, anySchema(req.url!)))
    const store = new MemorySchemaStore()
    store.get = async () => {
      throw new Error('throttled')
    }
    const external = new HttpRepository(evil.url, { name: 'Acme elsewhere', vendorPrefixes: ['com.acme'] })
    const r = defaultResolver({ env: { ...offline, FLOE_RESOLVER_LOOKUP_TIMEOUT: '0.3' }, store, loadRepositories: async () => [external] })
    const res = await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(res).toMatchObject({ ok: false })
    expect(!res.ok && res.message).toMatch(/Acme elsewhere: RepoFailure: not asked: one of this deployment's own repositories failed/)
    expect(evil.paths).toEqual([])
  })

  it('configured repositories keep Snowplow ordering among themselves, after the built-in ones; external ones come last', async () => {
    const env = {
      FLOE_RESOLVER_CONFIG: JSON.stringify({
        cacheSize: 10,
        repositories: [
          { name: 'Other', priority: 0, vendorPrefixes: [], connection: { http: { uri: 'http://127.0.0.1:9' } } },
          { name: 'Snowplow', priority: 5, vendorPrefixes: ['com.snowplowanalytics'], connection: { http: { uri: 'http://127.0.0.1:9' } } },
        ],
      }),
    }
    const external = new HttpRepository('http://127.0.0.1:9', { name: 'External', priority: -5, vendorPrefixes: ['com.snowplowanalytics'] })
    const other = new HttpRepository('http://127.0.0.1:9', { name: 'External 2', priority: 0, vendorPrefixes: [] })
    const r = defaultResolver({ env, loadRepositories: async () => [other, external] })
    // Read at the first lookup (served by the snapshot).
    expect(await r.lookupSchema('iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'Iglu Central snapshot' })
    const order = (vendor: string) => orderRepositories(r.repositories, vendor, (x) => r.rankOf(x)).map((x) => x.name)
    expect(order('com.snowplowanalytics.snowplow')).toEqual(['Floe embedded', 'Iglu Central snapshot', 'Snowplow', 'Other', 'External', 'External 2'])
    expect(order('com.acme')).toEqual(['Floe embedded', 'Iglu Central snapshot', 'Other', 'Snowplow', 'External', 'External 2'])
  })
})

describe('answers', () => {
  const key = 'iglu:com.acme/big/jsonschema/1-0-0'

  it('an answer over 1 MiB is abandoned while streaming: a repository failure saying so', async () => {
    let sent = 0
    let closed!: () => void
    const gone = new Promise<void>((resolve) => (closed = resolve))
    const big = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      let stop = () => {}
      res.on('close', () => {
        closed()
        stop()
      })
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      res.write('{"a":"')
      // 64 MiB if read to the end, written only as fast as the client reads.
      for (let i = 0; i < 1024 && !res.destroyed; i++) {
        sent += chunk.length
        if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', (stop = resolve)))
      }
      res.end('"}')
    })
    const repo = new HttpRepository(big.url, { name: 'Big' })
    const r = await repo.lookup({ vendor: 'com.acme', name: 'big', format: 'jsonschema', version: { model: 1, revision: 0, addition: 0 } })
    expect(r).toMatchObject({ ok: false, error: { kind: 'RepoFailure', final: true } })
    expect(!r.ok && 'message' in r.error && r.error.message).toMatch(/the answer is larger than 1048576 bytes/)
    await gone
    expect(sent).toBeLessThan(16 * 1024 * 1024)
  })

  it('a declared length over the cap is refused before reading; the resolver reports it and does not retry', async () => {
    const big = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) })
      res.write('{')
    })
    const r = new Resolver({ repositories: [new HttpRepository(big.url, { name: 'Big' })] })
    const res = await r.lookupSchema(key)
    expect(!res.ok && res.message).toMatch(/Big: RepoFailure: GET .* the answer is larger than 1048576 bytes/)
    expect(big.paths).toHaveLength(1)
  })

  it('redirects to another origin are not followed; redirects within the registry are', async () => {
    const elsewhere = await serve((req, res) => json(res, 200, anySchema(req.url!)))
    const registry = await serve((req, res) => {
      if (req.url!.startsWith('/moved/')) return json(res, 200, anySchema(req.url!))
      if (req.url!.includes('/local/')) return void res.writeHead(302, { location: req.url!.replace('/schemas/', '/moved/schemas/') }).end()
      res.writeHead(302, { location: `${elsewhere.url}${req.url}` }).end()
    })
    const repo = new HttpRepository(registry.url, { name: 'Redirecting', apikey: '11111111-2222-4333-8444-555555555555' })
    const away = await repo.lookup({ vendor: 'com.acme', name: 'e', format: 'jsonschema', version: { model: 1, revision: 0, addition: 0 } })
    expect(away).toMatchObject({ ok: false, error: { kind: 'RepoFailure', final: true } })
    expect(!away.ok && 'message' in away.error && away.error.message).toMatch(/redirected to another origin \(http:\/\/127\.0\.0\.1:\d+\); only redirects within http:\/\/127\.0\.0\.1:\d+ are followed/)
    expect(elsewhere.paths).toEqual([])
    const local = await repo.lookup({ vendor: 'com.acme', name: 'local', format: 'jsonschema', version: { model: 1, revision: 0, addition: 0 } })
    expect(local).toMatchObject({ ok: true, value: { self: { name: 'local' } } })
  })

  it('a list naming other schemas, or too many versions, is refused', async () => {
    const lists = await serve((req, res) => {
      if (req.url!.includes('/many/')) return json(res, 200, Array.from({ length: MAX_LIST_ENTRIES + 1 }, (_, i) => `iglu:com.acme/many/jsonschema/1-0-${i}`))
      json(res, 200, ['iglu:com.acme/e/jsonschema/1-0-0', 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0'])
    })
    const repo = new HttpRepository(lists.url)
    expect(await repo.list('com.acme', 'e', 1)).toMatchObject({ ok: false, error: { kind: 'RepoFailure', message: expect.stringMatching(/entry of another schema/) } })
    expect(await repo.list('com.acme', 'many', 1)).toMatchObject({ ok: false, error: { kind: 'RepoFailure', final: true } })
  })
})

describe('version discovery', () => {
  it('a registry answering every version: a bounded number of requests, and none after the answer', async () => {
    // No list files; every version exists.
    const every = await serve((req, res) => (/\/jsonschema\/\d+$/.test(req.url!) ? json(res, 404, { message: 'no list' }) : json(res, 200, anySchema(req.url!))))
    // A still clock: the registry's cool-down does not end during the test.
    const r = new Resolver({ repositories: [], now: () => 0, loadRepositories: async () => [new HttpRepository(every.url, { name: 'Every' })] })
    const l = await r.listSchemas('com.acme', 'e', 1)
    expect(!l.ok && l.message).toMatch(/Every: RepoFailure: listing com.acme\/e\/jsonschema\/1 without a list file stopped after 64 lookups/)
    const after = every.paths.length
    expect(after).toBeLessThanOrEqual(65)
    // A second lookup soon after does not start again (the registry is set aside for a while).
    expect((await r.listSchemas('com.acme', 'e', 1)).ok).toBe(false)
    // A round trip to the server: any request still queued would have arrived.
    await fetch(`${every.url}/ping`).then((res) => res.text())
    expect(every.paths.length).toBe(after + 1)
  })

  it('discovery stops with the lookup: the request in flight is abandoned and nothing follows', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let abandoned!: () => void
    const closed = new Promise<void>((resolve) => (abandoned = resolve))
    const slow = await serve(async (req, res) => {
      if (/\/jsonschema\/\d+$/.test(req.url!)) return json(res, 404, { message: 'no list' })
      if (req.url!.endsWith('/1-0-1')) {
        res.on('close', () => {
          if (!res.writableFinished) abandoned()
        })
        await held
        if (!res.destroyed) json(res, 200, anySchema(req.url!))
        return
      }
      json(res, 200, anySchema(req.url!))
    })
    const r = new Resolver({ repositories: [], lookupTimeoutMs: 2000, loadRepositories: async () => [new HttpRepository(slow.url, { name: 'Slow', timeoutMs: 60_000 })] })
    const l = await r.listSchemas('com.acme', 'e', 1)
    expect(l.ok).toBe(false)
    // The resolver gave up: the request it was waiting for is cancelled rather than left running.
    await closed
    const count = slow.paths.length
    release()
    await fetch(`${slow.url}/ping`).then((res) => res.text())
    expect(slow.paths.length).toBe(count + 1)
    expect(slow.paths.filter((p) => p.startsWith('/schemas/'))).toEqual([
      '/schemas/com.acme/e/jsonschema/1',
      '/schemas/com.acme/e/jsonschema/1-0-0',
      '/schemas/com.acme/e/jsonschema/1-0-1',
    ])
  })

  it("the tracking-design API's registry reads are bounded the same way", async () => {
    const every = await serve((req, res) => (/\/jsonschema\/\d+$/.test(req.url!) ? json(res, 404, { message: 'no list' }) : json(res, 200, anySchema(req.url!))))
    const resolver = defaultResolver({ env: offline, loadRepositories: async () => [new HttpRepository(every.url, { name: 'Every', vendorPrefixes: ['com.acme'] })] })
    const own = { get: async () => undefined, listGroup: async () => [], listAll: async () => [] }
    const registry = resolvingRegistry(own, resolver)
    expect(await registry.listGroup('com.acme', 'e')).toEqual([])
    expect(every.paths.length).toBeLessThanOrEqual(65)
  })
})

describe('Iglu Central', () => {
  it('is reached over HTTPS by default, and offline a lookup fails at once as a repository failure', async () => {
    const { config } = defaultResolverConfig({ env: {} })
    expect(config.repositories).toEqual([{ name: 'Iglu Central', priority: 10, vendorPrefixes: [], connection: { http: { uri: 'https://iglucentral.com' } } }])
    const asked: string[] = []
    const unreachable = async (url: string | URL | Request) => {
      asked.push(String(url))
      throw new Error('getaddrinfo ENOTFOUND iglucentral.com')
    }
    const r = defaultResolver({ env: { FLOE_RESOLVER_LOOKUP_TIMEOUT: '0' }, fetch: unreachable as typeof fetch })
    const res = await r.lookupSchema('iglu:com.acme/private_thing/jsonschema/1-0-0')
    expect(!res.ok && res.message).toMatch(/Iglu Central: RepoFailure: GET https:\/\/iglucentral\.com\/schemas\/com\.acme\/private_thing\/jsonschema\/1-0-0 failed: getaddrinfo ENOTFOUND/)
    expect(asked).toEqual(['https://iglucentral.com/schemas/com.acme/private_thing/jsonschema/1-0-0'])
  })
})
