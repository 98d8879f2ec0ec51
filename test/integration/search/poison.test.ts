/**
 * A record the store cannot take as it is never costs its neighbours their
 * place: one anonymous request with NUL bytes among 20 schema violations is
 * stored (sanitized, marked) beside all 20 of them, through the whole local
 * stack; and a record the store refuses even sanitized is stored in its
 * fallback form while the rest of its batch is stored as it is.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { SANITIZED_KEY } from '../../../lib/core/search/sanitize'
import { tablesOf } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'

const search = async (q: string) => {
  const r = await fetch(`${stack.current.url}/search-store/bad/_search?size=100&q=${encodeURIComponent(q)}`, { headers: withAuth() })
  expect(r.status).toBe(200)
  return ((await r.json()) as { hits: { total: { value: number }; hits: { _source: Record<string, unknown> }[] } }).hits
}

/** Sends `n` link clicks without their required targetUrl (a schema violation each), one request each, all acknowledged. */
async function sendViolations(n: number, from: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    const ue = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { elementId: `n${i}` } } })
    const r = await fetch(`${stack.current.url}/i?e=ue&p=web&tv=js-3&aid=poison-neighbour&eid=${randomUUID()}&ue_pr=${encodeURIComponent(ue)}`)
    await r.arrayBuffer()
    expect(r.status).toBe(200)
  }
}

describe('a poison record among schema violations, through the stack', () => {
  it('all 20 bad rows and the garbage request’s own bad row are stored, the garbage one marked', async () => {
    const s = stack.current
    await sendViolations(10, 0)
    const garbage = await fetch(`${s.url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('garbage\x00\x01binary', 'latin1') })
    expect(garbage.status).toBe(200)
    await sendViolations(10, 10)
    await s.drain()
    await s.drain()
    const all = await search('*')
    expect(all.total.value).toBe(21)
    expect((await search('schema:*schema_violations*')).total.value).toBe(20)
    const marked = await search(`_exists_:${SANITIZED_KEY}`)
    expect(marked.total.value).toBe(1)
    const doc = marked.hits[0]!._source
    expect(doc[SANITIZED_KEY]).toEqual([expect.stringMatching(/^NUL characters/)])
    expect(JSON.stringify(doc)).toContain('garbage\ufffd\\u0001binary')
  }, 180_000)
})

describe('a record the store refuses even sanitized', () => {
  let store: LocalSearchStore
  afterAll(async () => {
    await store?.close()
  })

  it('takes its fallback form; the rest of the batch is stored as it is', async () => {
    store = await openLocalSearchStore()
    // the store refuses any document holding `poison`: only the record's own document can be the cause
    await store.db.sql.query(`ALTER TABLE ${tablesOf(store.db).bad} ADD CONSTRAINT no_poison CHECK (NOT doc->'data' ? 'poison')`)
    const row = (i: number, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [{ error: `e${i}` }] }, ...extra } })
    const records = Array.from({ length: 21 }, (_, i) => ({ id: String(i), text: i === 7 ? row(i, { poison: 'é' }) : row(i) }))
    const out = await loadBatch(store.db, 'bad', records, Date.now())
    expect(out).toMatchObject({ loaded: 21, rejected: [], fallbacks: [{ error: expect.stringMatching(/no_poison/) }] })
    const stored = await store.db.sql.query<{ line: string; doc: Record<string, unknown> }>(`SELECT line, doc FROM ${tablesOf(store.db).bad} ORDER BY seq`)
    expect(stored.rows).toHaveLength(21)
    const fallback = stored.rows.filter((r) => r.doc[SANITIZED_KEY] !== undefined)
    expect(fallback).toHaveLength(1)
    expect(fallback[0]!.doc).toEqual({ [SANITIZED_KEY]: [expect.stringMatching(/^the store refused the document .*no_poison/)] })
    // the line is the record, in printable ASCII
    expect(JSON.parse(fallback[0]!.line)).toEqual(JSON.parse(records[7]!.text))
    // in arrival order, the neighbours as they were
    expect(stored.rows.map((r) => (JSON.parse(r.line) as { data: { failure: { messages: { error: string }[] } } }).data.failure.messages[0]!.error)).toEqual(records.map((_, i) => `e${i}`))
  }, 60_000)
})
