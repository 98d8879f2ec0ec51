/**
 * Free text on the `bad` index: a bare word in a query finds the bad rows
 * whose text has it, inside the raw parameters (kept in the document as one
 * JSON text), inside base64 parameters and in the error messages, as
 * Elasticsearch's analysed text does; a store made before the words were
 * kept gets them for its rows when it is migrated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { badDocument } from '../../../lib/core/search/documents'
import { loadBatch } from '../../../lib/core/search/loader'
import { count, search } from '../../../lib/core/search/query'
import { migrate, MIGRATIONS, searchDb, type SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { badRows, batch, enricher, tp2 } from '../../unit/enrich/helpers'

const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

let store: LocalSearchStore
const rows: string[] = []

/** Bad rows as enrich writes them: a link click without its required targetUrl, from app `bad-zzz<i>`. */
beforeAll(async () => {
  store = await openLocalSearchStore()
  const e = enricher()
  for (let i = 1; i <= 3; i++) {
    const ue = b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { elementId: `Button-Qx${i}` } } })
    const o = await e.enrichRecord(tp2(`e=ue&p=web&tv=js-3&aid=bad-zzz${i}&ue_px=${ue}`), batch())
    const bad = badRows(o)
    expect(bad.length).toBe(1)
    rows.push(JSON.stringify(bad[0]))
  }
  expect(await loadBatch(store.db, 'bad', rows.map((text, i) => ({ id: String(i), text })), Date.now())).toMatchObject({ loaded: 3 })
}, 60_000)
afterAll(async () => {
  await store?.close()
})

const hits = async (db: SearchDb, q: string) => {
  const r = await search(db, 'bad', { params: { q } })
  if (!r.ok) throw new Error(JSON.stringify(r.error))
  return (r.value as { hits: { total: { value: number } } }).hits.total.value
}

describe('bare words on the bad index', () => {
  it('find the words inside the raw parameters, decoded base64 parameters and error messages', async () => {
    const db = store.db
    expect(await hits(db, 'bad-zzz1')).toBe(1)
    expect(await hits(db, '*bad-zzz1*')).toBe(1)
    expect(await hits(db, 'BAD-ZZZ2')).toBe(1) // analysed text is lower-cased
    expect(await hits(db, 'zzz3')).toBe(1)
    expect(await hits(db, 'button-qx2')).toBe(1) // inside ue_px, base64
    expect(await hits(db, 'targetUrl')).toBe(3) // the validation message names the missing property
    expect(await hits(db, 'bad-zzz1 OR bad-zzz2')).toBe(2)
    expect(await hits(db, 'bad-zzz1 AND button-qx2')).toBe(0)
    expect(await hits(db, 'bad-zzz9')).toBe(0)
    const c = await count(db, 'bad', { params: {}, body: { query: { query_string: { query: 'bad-zzz2' } } } })
    expect(c).toMatchObject({ ok: true, value: { count: 1 } })
  })

  it('leave fielded queries whole-value (keyword) matches', async () => {
    expect(await hits(store.db, 'data.processor.artifact:zzz1')).toBe(0)
  })

  it('work on a store made before the words were kept, once it is migrated', async () => {
    const old = searchDb(store.db.sql, 'before_words')
    expect(await migrate(old, MIGRATIONS.filter((m) => m.version === 1))).toEqual([1])
    const d = badDocument(rows[0]!, Date.now())
    if (!d.ok) throw new Error(d.error)
    await old.sql.query(`INSERT INTO "before_words".bad_rows (id, failure_timestamp, failure_type, doc, line) VALUES ('x', now(), 'schema_violations', $1::jsonb, $2)`, [JSON.stringify(d.value.doc), d.value.line])
    expect(await migrate(old)).toEqual([2, 3, 4])
    expect(await hits(old, 'bad-zzz1')).toBe(1)
    expect(await hits(old, 'button-qx1')).toBe(1)
  })
})
