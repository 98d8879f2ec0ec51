/**
 * One search cannot stall the stack: while the store runs a long statement,
 * the gateway still answers `/health` and the collector, since PGlite runs in
 * the search store's worker thread; a slow search (many wildcard terms over
 * any field, thousands of documents) is abandoned at its budget with a 504, and a
 * query string past the parser's limits is a 400, all in Elasticsearch's
 * error shape. The store's URL carries its password; without it, no entry.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { migrate, schemaForPrefix, searchDb } from '../../../lib/core/search/store'
import { newPostgresPassword } from '../../../lib/local/postgres-server'
import { startSearchServer, type SearchServer } from '../../../lib/local/search-server'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { postgresClient } from '../../../lib/runtime/postgres'
import { sharedEndpoints, TEST_CREDENTIALS, uniquePrefix, withAuth } from '../../support/stack'
import { batch, enricher, tp2 } from '../../unit/enrich/helpers'

const DOCS = 4_000
const BUDGET_MS = 4_000
let store: SearchServer
let stack: LocalStack

beforeAll(async () => {
  // the abandoned search goes on in the worker until it ends or the limit ends it
  store = await startSearchServer({ password: newPostgresPassword(), statementLimitMs: 6_000 })
  const prefix = uniquePrefix('slow')
  stack = await startLocalStack({
    endpoints: { ...sharedEndpoints(), postgres: store.url },
    namePrefix: prefix,
    triggers: false,
    environment: { FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password, FLOE_SEARCH_TIMEOUT_MS: String(BUDGET_MS) },
  })
  // documents straight into this stack's schema, as the loader writes them
  const o = await enricher().enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=shop&url=https%3A%2F%2Fwww.example.com%2Fp&page=Home'), batch())
  const line = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
  const sql = postgresClient(store.url)
  const db = searchDb(sql, schemaForPrefix(prefix))
  await migrate(db)
  for (let start = 0; start < DOCS; start += 500) {
    const recs = Array.from({ length: 500 }, (_, j) => {
      const cols = line.split('\t')
      cols[6] = `a0000000-0000-4000-8000-${String(start + j).padStart(12, '0')}`
      return { id: String(start + j), text: cols.join('\t') }
    })
    await loadBatch(db, 'good', recs, Date.now())
  }
  await sql.close()
  // the search function has connected and migrated before the tests measure anything
  const warm = await fetch(`${stack.url}/search-store/good/_count`, { headers: withAuth() })
  expect(await warm.json()).toMatchObject({ count: DOCS })
  // and so have the health check and the collector (their modules loaded)
  expect((await fetch(`${stack.url}/health`)).status).toBe(200)
  expect((await fetch(`${stack.url}/i?e=pv&eid=warm&url=http%3A%2F%2Fa.test%2F`)).status).toBe(200)
}, 240_000)

afterAll(async () => {
  await stack?.stop()
  await store?.close()
}, 120_000)

type EsAnswer = { status: number; body: { error: { root_cause: { type: string; reason: string }[]; type: string; reason: string }; status: number } }
const search = async (q: string, inBody = false): Promise<EsAnswer> => {
  const r = inBody
    ? await fetch(`${stack.url}/search-store/good/_search`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify({ query: { query_string: { query: q } } }) })
    : await fetch(`${stack.url}/search-store/good/_search?q=${encodeURIComponent(q)}`, { headers: withAuth() })
  return { status: r.status, body: (await r.json()) as { error: { root_cause: { type: string; reason: string }[]; type: string; reason: string }; status: number } }
}

describe('the store’s credentials', () => {
  it('are in the URL the stack was given; with another password the store refuses', async () => {
    const u = new URL(stack.endpoints.postgres!)
    expect(u.password.length).toBeGreaterThanOrEqual(20)
    u.password = 'postgres'
    const c = new pg.Client({ connectionString: u.toString() })
    c.on('error', () => {})
    await expect(c.connect()).rejects.toMatchObject({ code: '28P01' })
    await c.end().catch(() => {})
  })
})

describe('query strings past the limits', () => {
  it('5,000 nested parentheses, and more than 1,024 clauses, are 400s in Elasticsearch’s shape', async () => {
    const deep = await search(`${'('.repeat(5000)}a${')'.repeat(5000)}`, true)
    expect(deep).toMatchObject({ status: 400, body: { error: { root_cause: [{ type: 'parsing_exception' }], type: 'parsing_exception', reason: expect.stringMatching(/nested deeper than 32 levels/) }, status: 400 } })
    const wide = await search(Array.from({ length: 1100 }, (_, i) => `app_id:a${i}`).join(' OR '), true)
    expect(wide).toMatchObject({ status: 400, body: { error: { root_cause: [{ type: 'too_many_clauses' }], type: 'too_many_clauses' }, status: 400 } })
  })
})

describe('a slow search', () => {
  it('leaves /health and the collector answering while the store is busy with a long statement', async () => {
    // pg_sleep holds PGlite as a long search does (under the statement limit of 6 s)
    const sql = postgresClient(store.url)
    let settled = false
    const busy = sql.query('SELECT pg_sleep(4)').then(
      () => (settled = true),
      () => (settled = true),
    )
    const answered: string[] = []
    for (let i = 0; i < 500 && !settled; i++) {
      const h = await fetch(`${stack.url}/health`)
      expect(await h.text()).toBe('ok')
      if (!settled) answered.push('health')
      const c = await fetch(`${stack.url}/i?e=pv&eid=slow-${i}&url=http%3A%2F%2Fa.test%2F`)
      await c.arrayBuffer()
      expect(c.status).toBe(200)
      if (!settled) answered.push('collector')
    }
    await busy
    await sql.close()
    // both kinds of requests were answered before the statement ended
    expect(answered.filter((a) => a === 'health').length).toBeGreaterThanOrEqual(2)
    expect(answered.filter((a) => a === 'collector').length).toBeGreaterThanOrEqual(2)
  }, 120_000)

  it('is abandoned at its budget with a 504 in Elasticsearch’s shape', async () => {
    const q = Array.from({ length: 200 }, (_, i) => `*x${i}y*`).join(' OR ')
    const r = await search(q)
    expect(r).toEqual({ status: 504, body: { error: { root_cause: [{ type: 'timeout_exception', reason: expect.stringMatching(/budget of 4000 ms/) }], type: 'timeout_exception', reason: expect.any(String) }, status: 504 } })
  }, 120_000)
})
