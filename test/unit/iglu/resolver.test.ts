import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseIgluUri, toIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import {
  CLASS_PRIORITY, EmbeddedRepository, HttpRepository, MemoryRepository, NOT_FOUND, StoreRepository, type Lookup, type Repository,
} from '../../../lib/core/iglu/repositories'
import { attemptDelayMs, orderRepositories, Resolver, retryBackoffMs } from '../../../lib/core/iglu/resolver'
import { igluDirs, parseResolverConfig, resolverFromConfig } from '../../../lib/core/iglu/resolver-config'
import { defaultResolver, defaultResolverConfig } from '../../../lib/runtime/default-resolver'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import type { JsonObject } from '../../../lib/core/iglu/selfdesc'
import { schema } from './helpers'
import { serveStatic } from './static-server'

const key = (uri: string): SchemaKey => (parseIgluUri(uri) as { ok: true; value: SchemaKey }).value

/** A repository whose answers are scripted and whose calls are counted. */
class FakeRepo implements Repository {
  calls: string[] = []
  constructor(
    readonly name: string,
    readonly priority: number,
    readonly vendorPrefixes: string[],
    readonly classPriority: number,
    public answer: (k: SchemaKey) => Lookup<JsonObject>,
  ) {}
  async lookup(k: SchemaKey) {
    this.calls.push(toIgluUri(k))
    return this.answer(k)
  }
  async list(): Promise<Lookup<SchemaKey[]>> {
    return NOT_FOUND
  }
}
const found = (k: SchemaKey): Lookup<JsonObject> => ({ ok: true, value: schema(k.vendor, k.name, `${k.version.model}-${k.version.revision}-${k.version.addition}`) })
const failing = (): Lookup<JsonObject> => ({ ok: false, error: { kind: 'RepoFailure', message: 'HTTP 503' } })

describe('resolver ordering', () => {
  it('tries vendor-matching repositories first, then by class priority, then priority', () => {
    const a = new FakeRepo('http-acme', 5, ['com.acme'], CLASS_PRIORITY.http, found)
    const b = new FakeRepo('embedded-any', 0, [], CLASS_PRIORITY.embedded, found)
    const c = new FakeRepo('http-any-0', 0, [], CLASS_PRIORITY.http, found)
    const d = new FakeRepo('embedded-acme', 9, ['com.ac'], CLASS_PRIORITY.embedded, found)
    const e = new FakeRepo('memory-any', 3, [], CLASS_PRIORITY.memory, found)
    expect(orderRepositories([a, b, c, d, e], 'com.acme.web').map((r) => r.name)).toEqual(['embedded-acme', 'http-acme', 'memory-any', 'embedded-any', 'http-any-0'])
    expect(orderRepositories([a, b, c, d, e], 'org.other').map((r) => r.name)).toEqual(['memory-any', 'embedded-any', 'embedded-acme', 'http-any-0', 'http-acme'])
  })
  it('stops at the first repository that has the schema', async () => {
    const miss = new FakeRepo('miss', 0, [], CLASS_PRIORITY.memory, () => NOT_FOUND)
    const hit = new FakeRepo('hit', 1, [], CLASS_PRIORITY.memory, found)
    const never = new FakeRepo('never', 2, [], CLASS_PRIORITY.memory, found)
    const r = new Resolver({ repositories: [never, hit, miss] })
    const res = await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(res).toMatchObject({ ok: true, repository: 'hit' })
    expect(never.calls).toEqual([])
    expect(miss.calls).toHaveLength(1)
  })
  it('refuses duplicate repository names', () => {
    const a = new FakeRepo('x', 0, [], 1, found)
    expect(() => new Resolver({ repositories: [a, a] })).toThrow(/two repositories named 'x'/)
  })
})

describe('resolver caching', () => {
  it('caches hits until the TTL expires', async () => {
    let now = 0
    const repo = new FakeRepo('r', 0, [], 1, found)
    const r = new Resolver({ repositories: [repo], cacheTtl: 10, now: () => now })
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(repo.calls).toHaveLength(1)
    now = 11_000
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(repo.calls).toHaveLength(2)
  })
  it('caches misses until the TTL expires, then tries again', async () => {
    let now = 0
    const repo = new FakeRepo('r', 0, [], 1, () => NOT_FOUND)
    const r = new Resolver({ repositories: [repo], cacheTtl: 10, now: () => now })
    const first = await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(first).toMatchObject({ ok: false })
    if (!first.ok) {
      expect(first.message).toBe('Schema iglu:com.acme/e/jsonschema/1-0-0 could not be resolved (r: not found)')
      expect(first.failures).toEqual([{ repository: 'r', errors: [{ kind: 'NotFound' }], attempts: 1, lastAttempt: 0 }])
    }
    now = 5_000
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(repo.calls).toHaveLength(1)
    repo.answer = found
    now = 10_001
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true })
    expect(repo.calls).toHaveLength(2)
  })
  it('reports each repository of a failed lookup, and tries a failing one again after its cool-down', async () => {
    let now = 0
    const down = new FakeRepo('down', 0, [], 1, failing)
    const empty = new FakeRepo('empty', 1, [], 1, () => NOT_FOUND)
    const r = new Resolver({ repositories: [down, empty], cacheTtl: 600, now: () => now, lookupTimeoutMs: 0 })
    const res = await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(res.ok).toBe(false)
    if (!res.ok) expect(res.message).toBe('Schema iglu:com.acme/e/jsonschema/1-0-0 could not be resolved (down: RepoFailure: HTTP 503 | empty: not found)')
    now = 100
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(down.calls).toHaveLength(1)
    now = retryBackoffMs(1) + 1
    down.answer = found
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'down' })
    expect(empty.calls).toHaveLength(1)
  })
  it('retries a failing repository with backoff within the lookup budget, and answers once it recovers', async () => {
    const waits: number[] = []
    let calls = 0
    const flaky = new FakeRepo('flaky', 0, [], 1, (k) => (++calls < 4 ? failing() : found(k)))
    const r = new Resolver({ repositories: [flaky], lookupTimeoutMs: 10_000, sleep: async (ms) => void waits.push(ms) })
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'flaky' })
    expect(waits).toEqual([attemptDelayMs(0), attemptDelayMs(1), attemptDelayMs(2)])
    expect(waits[0]!).toBeLessThan(waits[2]!)
  })
  it('bounds a lookup by its budget even when the repository never answers, then reports the failure', async () => {
    const hanging: Repository = { name: 'hanging', priority: 0, vendorPrefixes: [], classPriority: 1, lookup: () => new Promise(() => {}), list: async () => NOT_FOUND }
    const r = new Resolver({ repositories: [hanging], lookupTimeoutMs: 50 })
    const res = await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    expect(res.ok).toBe(false)
    if (!res.ok) expect(res.failures[0]).toMatchObject({ repository: 'hanging', errors: [{ kind: 'RepoFailure', message: 'no answer within 50 ms' }] })
  })
  it('a repository that failed a whole lookup is skipped by every lookup until its cool-down ends (circuit breaker)', async () => {
    let now = 0
    const down = new FakeRepo('down', 0, [], 1, failing)
    const other = new FakeRepo('other', 1, [], 1, (k) => (k.name === 'known' ? found(k) : NOT_FOUND))
    const sleeps: number[] = []
    const r = new Resolver({ repositories: [down, other], now: () => now, lookupTimeoutMs: 1_000, sleep: async (ms) => void sleeps.push(ms) })
    const first = await r.lookupSchema('iglu:com.acme/a/jsonschema/1-0-0')
    expect(first.ok).toBe(false)
    const tries = down.calls.length
    expect(tries).toBeGreaterThan(1)
    expect(r.failingRepositories()).toMatchObject([{ repository: 'down', until: retryBackoffMs(1), lastError: 'RepoFailure: HTTP 503' }])
    // Other schemas: answered at once, without waiting or calling the failing repository.
    sleeps.length = 0
    const second = await r.lookupSchema('iglu:com.acme/b/jsonschema/1-0-0')
    expect(second.ok).toBe(false)
    if (!second.ok) {
      expect(second.failures.find((f) => f.repository === 'down')).toMatchObject({ attempts: 0, errors: [{ kind: 'RepoFailure', message: expect.stringMatching(/^not tried: failing \(next attempt after .*\); last error: RepoFailure: HTTP 503$/) }] })
    }
    expect(await r.lookupSchema('iglu:com.acme/known/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'other' })
    expect(down.calls).toHaveLength(tries)
    expect(sleeps).toEqual([])
    // After the cool-down one lookup probes it once (no retries); a failure doubles the cool-down.
    now = retryBackoffMs(1)
    await r.lookupSchema('iglu:com.acme/c/jsonschema/1-0-0')
    expect(down.calls).toHaveLength(tries + 1)
    expect(sleeps).toEqual([])
    expect(r.failingRepositories()[0]!.until).toBe(now + retryBackoffMs(2))
    // Recovery closes it.
    now += retryBackoffMs(2)
    down.answer = found
    expect(await r.lookupSchema('iglu:com.acme/d/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'down' })
    expect(r.failingRepositories()).toEqual([])
  })
  it('serves a stale copy at once instead of spending the budget when the repository fails after the TTL', async () => {
    let now = 0
    const repo = new FakeRepo('r', 0, [], 1, found)
    const sleeps: number[] = []
    const r = new Resolver({ repositories: [repo], cacheTtl: 1, now: () => now, sleep: async (ms) => void sleeps.push(ms) })
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    repo.answer = failing
    now = 5_000
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true })
    expect(sleeps).toEqual([])
  })
  it('keeps serving the last good schema when registries fail after the TTL', async () => {
    let now = 0
    const repo = new FakeRepo('r', 0, [], 1, found)
    const r = new Resolver({ repositories: [repo], cacheTtl: 1, now: () => now })
    await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
    repo.answer = failing
    now = 5_000
    expect(await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')).toMatchObject({ ok: true })
    expect(repo.calls).toHaveLength(2)
  })
  it('does not cache at all with cacheTtl 0 or cacheSize 0', async () => {
    for (const opts of [{ cacheTtl: 0 }, { cacheSize: 0 }]) {
      const repo = new FakeRepo('r', 0, [], 1, found)
      const r = new Resolver({ repositories: [repo], ...opts })
      await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
      await r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')
      expect(repo.calls).toHaveLength(2)
    }
  })
  it('evicts the least recently used entries beyond cacheSize', async () => {
    const repo = new FakeRepo('r', 0, [], 1, found)
    const r = new Resolver({ repositories: [repo], cacheSize: 2 })
    for (const v of ['1-0-0', '1-0-1', '1-0-0', '1-0-2', '1-0-0', '1-0-1']) await r.lookupSchema(`iglu:com.acme/e/jsonschema/${v}`)
    expect(repo.calls.map((u) => u.slice(-5))).toEqual(['1-0-0', '1-0-1', '1-0-2', '1-0-1'])
  })
  it('shares one lookup between concurrent callers of the same key', async () => {
    const repo = new FakeRepo('r', 0, [], 1, found)
    const slow: Repository = { ...repo, name: 'slow', lookup: async (k) => { await new Promise((r) => setTimeout(r, 20)); return repo.lookup(k) }, list: repo.list }
    const r = new Resolver({ repositories: [slow] })
    await Promise.all(Array.from({ length: 10 }, () => r.lookupSchema('iglu:com.acme/e/jsonschema/1-0-0')))
    expect(repo.calls).toHaveLength(1)
  })
  it('backs off longer after more failures, capped at a minute', () => {
    expect(retryBackoffMs(1)).toBeLessThan(retryBackoffMs(5))
    expect(retryBackoffMs(30)).toBe(60_000)
  })
})

describe('resolver validation', () => {
  const repo = new MemoryRepository([schema('com.acme', 'e', '1-0-0')])
  it('validates self-describing data, reusing the compiled validator', async () => {
    const r = new Resolver({ repositories: [repo] })
    expect(await r.validate({ schema: 'iglu:com.acme/e/jsonschema/1-0-0', data: { a: 'ok' } })).toEqual({ ok: true, schema: key('iglu:com.acme/e/jsonschema/1-0-0') })
    const a = await r.validatorFor(key('iglu:com.acme/e/jsonschema/1-0-0'))
    const b = await r.validatorFor(key('iglu:com.acme/e/jsonschema/1-0-0'))
    expect(a.ok && b.ok && a.fn === b.fn).toBe(true)
    const bad = await r.validate({ schema: 'iglu:com.acme/e/jsonschema/1-0-0', data: { a: 'far too long here', b: 1 } })
    expect(bad).toMatchObject({ ok: false, reason: 'invalid-data' })
    if (!bad.ok && bad.reason === 'invalid-data') expect(bad.errors.map((e) => e.keyword).sort()).toEqual(['additionalProperties', 'maxLength'])
  })
  it('explains why validation could not happen', async () => {
    const r = new Resolver({ repositories: [repo] })
    expect(await r.validate({ data: 1 })).toMatchObject({ ok: false, reason: 'not-self-describing' })
    expect(await r.validate({ schema: 'iglu:com.acme/zz/jsonschema/1-0-0', data: 1 })).toMatchObject({
      ok: false, reason: 'resolution', message: 'Schema iglu:com.acme/zz/jsonschema/1-0-0 could not be resolved (In-memory: not found)',
    })
  })
  it('validates thousands of events per second once warm', async () => {
    const r = new Resolver({ repositories: [repo] })
    const ev = { schema: 'iglu:com.acme/e/jsonschema/1-0-0', data: { a: 'x' } }
    await r.validate(ev)
    // CPU time, not elapsed time: other processes on a busy machine do not count against it
    const t0 = process.cpuUsage()
    for (let i = 0; i < 10_000; i++) await r.validate(ev)
    const used = process.cpuUsage(t0)
    expect((used.user + used.system) / 1000).toBeLessThan(2000)
  })
})

describe('repositories', () => {
  let dir: string
  let server: Awaited<ReturnType<typeof serveStatic>>
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-iglu-'))
    const put = (rel: string, body: unknown) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true })
      writeFileSync(join(dir, rel), JSON.stringify(body))
    }
    for (const v of ['1-0-0', '1-0-1', '1-1-0', '2-0-0']) put(`schemas/com.acme/e/jsonschema/${v}`, schema('com.acme', 'e', v))
    put('schemas/com.acme/bad/jsonschema/1-0-0', schema('com.acme', 'other', '1-0-0'))
    put('schemas/com.acme/listed/jsonschema/1', ['iglu:com.acme/listed/jsonschema/1-0-0', 'iglu:com.acme/listed/jsonschema/1-0-1'])
    server = await serveStatic(dir, { status: (p) => (p.includes('/boom/') ? 503 : p.includes('/forbidden/') ? 403 : undefined) })
  })
  afterAll(() => server.close())

  it('embedded directories: schemas, lists, and schemas whose self does not match', async () => {
    for (const path of [dir, join(dir, 'schemas')]) {
      const repo = new EmbeddedRepository(path)
      expect(await repo.lookup(key('iglu:com.acme/e/jsonschema/1-0-1'))).toMatchObject({ ok: true, value: schema('com.acme', 'e', '1-0-1') })
      expect(await repo.lookup(key('iglu:com.acme/e/jsonschema/1-0-9'))).toEqual(NOT_FOUND)
      // served at its path, it is that key's schema whatever its self says (as Snowplow's resolver reads it)
      expect(await repo.lookup(key('iglu:com.acme/bad/jsonschema/1-0-0'))).toEqual({ ok: true, value: schema('com.acme', 'other', '1-0-0') })
      const list = await repo.list('com.acme', 'e', 1)
      expect(list.ok && list.value.map(toIgluUri)).toEqual(['iglu:com.acme/e/jsonschema/1-0-0', 'iglu:com.acme/e/jsonschema/1-0-1', 'iglu:com.acme/e/jsonschema/1-1-0'])
    }
  })
  it('static HTTP registries: lookups, apikey header, status classification, lists with and without list files', async () => {
    const repo = new HttpRepository(`${server.url}/`, { apikey: '11111111-2222-4333-8444-555555555555' })
    expect(await repo.lookup(key('iglu:com.acme/e/jsonschema/2-0-0'))).toMatchObject({ ok: true, value: schema('com.acme', 'e', '2-0-0') })
    expect(server.requests.at(-1)).toEqual({ path: '/schemas/com.acme/e/jsonschema/2-0-0', apikey: '11111111-2222-4333-8444-555555555555' })
    expect(await repo.lookup(key('iglu:com.acme/nope/jsonschema/1-0-0'))).toEqual(NOT_FOUND)
    expect(await repo.lookup(key('iglu:com.acme/bad/jsonschema/1-0-0'))).toEqual({ ok: true, value: schema('com.acme', 'other', '1-0-0') })
    expect(await repo.lookup(key('iglu:com.acme/boom/jsonschema/1-0-0'))).toMatchObject({ ok: false, error: { kind: 'RepoFailure' } })
    expect(await repo.lookup(key('iglu:com.acme/forbidden/jsonschema/1-0-0'))).toMatchObject({ ok: false, error: { kind: 'ClientFailure' } })
    const listed = await repo.list('com.acme', 'listed', 1)
    expect(listed.ok && listed.value.length).toBe(2)
    const discovered = await repo.list('com.acme', 'e', 1)
    expect(discovered.ok && discovered.value.map(toIgluUri)).toEqual(['iglu:com.acme/e/jsonschema/1-0-0', 'iglu:com.acme/e/jsonschema/1-0-1', 'iglu:com.acme/e/jsonschema/1-1-0'])
    expect(await repo.list('com.acme', 'nope', 1)).toEqual(NOT_FOUND)
  })
  it('unreachable HTTP registries are failures, not misses', async () => {
    const repo = new HttpRepository('http://127.0.0.1:1', { timeoutMs: 500 })
    expect(await repo.lookup(key('iglu:com.acme/e/jsonschema/1-0-0'))).toMatchObject({ ok: false, error: { kind: 'RepoFailure' } })
  })
  it('the resolver answers latest versions from lists', async () => {
    const r = new Resolver({ repositories: [new HttpRepository(server.url, { name: 'static' })] })
    expect(await r.latestSchemaKey('com.acme', 'e', 1)).toMatchObject({ ok: true, value: key('iglu:com.acme/e/jsonschema/1-1-0'), repository: 'static' })
    expect(await r.latestSchemaKey('com.acme', 'e', 2)).toMatchObject({ ok: true, value: key('iglu:com.acme/e/jsonschema/2-0-0') })
    expect((await r.latestSchemaKey('com.acme', 'e', 3)).ok).toBe(false)
  })
  it('the deployment registry store is a repository', async () => {
    const store = new MemorySchemaStore()
    const doc = schema('com.acme', 'e', '1-0-0')
    const { $schema: _, self: __, ...body } = doc
    await store.put({ key: key('iglu:com.acme/e/jsonschema/1-0-0'), body, isPublic: false, createdAt: '', updatedAt: '', supersedes: [] }, { create: true })
    const repo = new StoreRepository(store)
    expect(await repo.lookup(key('iglu:com.acme/e/jsonschema/1-0-0'))).toEqual({ ok: true, value: doc })
    expect(await repo.list('com.acme', 'e', 1)).toEqual({ ok: true, value: [key('iglu:com.acme/e/jsonschema/1-0-0')] })
  })
})

describe('resolver configuration', () => {
  const config = {
    schema: 'iglu:com.snowplowanalytics.iglu/resolver-config/jsonschema/1-0-3',
    data: {
      cacheSize: 500,
      cacheTtl: 600,
      repositories: [
        { name: 'Iglu Central', priority: 0, vendorPrefixes: ['com.snowplowanalytics'], connection: { http: { uri: 'http://iglucentral.com' } } },
        { name: 'Mine', priority: 1, vendorPrefixes: ['com.acme'], connection: { http: { uri: 'https://iglu.acme.com/api', apikey: '11111111-2222-4333-8444-555555555555' } } },
        { name: 'Local', priority: 0, vendorPrefixes: [], connection: { embedded: { path: '/iglu-embedded' } } },
      ],
    },
  }
  it('parses the Iglu resolver-config format', () => {
    const p = parseResolverConfig(config)
    expect(p.ok).toBe(true)
    if (!p.ok) return
    const r = resolverFromConfig(p.value)
    expect(r.repositories.map((x) => x.name)).toEqual(['Iglu Central', 'Mine', 'Local'])
    expect(r.repositories[1]).toBeInstanceOf(HttpRepository)
    expect(r.repositories[2]).toBeInstanceOf(EmbeddedRepository)
    expect(parseResolverConfig(config.data).ok).toBe(true)
  })
  it('reports configuration errors', () => {
    const dup = { ...config.data, repositories: [config.data.repositories[0], config.data.repositories[0]] }
    expect(parseResolverConfig(dup)).toMatchObject({ ok: false, errors: ["repositories[1].name 'Iglu Central' is used twice"] })
    expect(parseResolverConfig({ schema: 'iglu:com.acme/x/jsonschema/1-0-0', data: {} }).ok).toBe(false)
    expect(parseResolverConfig({ cacheSize: 1, repositories: [{ name: 'x', priority: 0, vendorPrefixes: [], connection: {} }] })).toMatchObject({
      ok: false, errors: ['repositories[0].connection must have embedded.path or http.uri'],
    })
  })
  it('the default configuration: own registry, project schemas, FLOE_IGLU_DIRS, the Iglu Central snapshot, Iglu Central', () => {
    expect(igluDirs('a:b,c')).toEqual(['a', 'b', 'c'])
    const { config: c, extra, lookupTimeoutMs } = defaultResolverConfig({ env: { FLOE_IGLU_DIRS: '/x:/y' }, store: new MemorySchemaStore() })
    expect(c.repositories.map((r) => [r.name, 'http' in r.connection && r.connection.http.uri])).toEqual([['Iglu Central', 'https://iglucentral.com']])
    expect(extra.map((r) => r.name)).toEqual(['Floe registry', 'Floe embedded', 'Embedded /x', 'Embedded /y', 'Iglu Central snapshot'])
    expect(lookupTimeoutMs).toBeUndefined()
    const r = resolverFromConfig(c, { extra })
    // Every vendor: the deployment's registry first, Iglu Central over HTTP last.
    for (const vendor of ['com.snowplowanalytics.snowplow', 'com.google.analytics', 'com.acme']) {
      expect(orderRepositories(r.repositories, vendor).map((x) => x.name)).toEqual(['Floe registry', 'Floe embedded', 'Embedded /x', 'Embedded /y', 'Iglu Central snapshot', 'Iglu Central'])
    }
    expect(defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: '' } }).config.repositories).toEqual([])
    const tuned = defaultResolverConfig({ env: { FLOE_RESOLVER_CACHE_TTL: '5', FLOE_RESOLVER_LOOKUP_TIMEOUT: '2.5' } })
    expect([tuned.config.cacheTtl, tuned.lookupTimeoutMs]).toEqual([5, 2500])
    expect(() => defaultResolverConfig({ env: { FLOE_RESOLVER_LOOKUP_TIMEOUT: 'soon' } })).toThrow("FLOE_RESOLVER_LOOKUP_TIMEOUT must be a number of seconds (0 or more), got 'soon'")
  })
  it('resolves the trackers\' schemas from the Iglu Central snapshot with no network and no variable', async () => {
    const unreachable = async () => { throw new Error('getaddrinfo ENOTFOUND iglucentral.com') }
    const r = defaultResolver({ env: {}, fetch: unreachable as typeof fetch })
    for (const uri of [
      'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0',
      'iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-2',
      'iglu:com.google.analytics/cookies/jsonschema/1-0-0',
      'iglu:org.w3/PerformanceTiming/jsonschema/1-0-0',
      'iglu:nl.basjes/yauaa_context/jsonschema/1-0-4',
      'iglu:com.iab.snowplow/spiders_and_robots/jsonschema/1-0-0',
    ]) expect(await r.lookupSchema(uri)).toMatchObject({ ok: true, repository: 'Iglu Central snapshot' })
  })
  it('configurations validate against the bundled resolver-config schema', async () => {
    const { config: c, extra } = defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
    const r = resolverFromConfig(c, { extra })
    expect(await r.validate(config)).toEqual({ ok: true, schema: key(config.schema) })
    const broken = { ...config, data: { ...config.data, repositories: [{ name: 'x', priority: 0, vendorPrefixes: [], connection: { ftp: {} } }] } }
    expect(await r.validate(broken)).toMatchObject({ ok: false, reason: 'invalid-data' })
  })
  it('the project schemas directory is always available', async () => {
    const { config: c, extra } = defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
    const r = resolverFromConfig(c, { extra })
    expect(await r.lookupSchema('iglu:com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0')).toMatchObject({ ok: true, repository: 'Floe embedded' })
  })
})
