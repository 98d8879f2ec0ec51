/**
 * The explorer's column names as query fields, run on PGlite: each finds the
 * rows whose column shows that value, through the typed columns and through
 * the document alone (the two translations agree).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { count } from '../../../lib/core/search/query'
import { type SearchIndex } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { schemaViolation } from '../../support/bad-rows'
import { batch, COLLECTED, enricher, tp2 } from '../../unit/enrich/helpers'

const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const NOW = Date.parse('2026-11-28T12:00:00Z')

let store: LocalSearchStore

beforeAll(async () => {
  store = await openLocalSearchStore()
  const e = enricher()
  const lines: string[] = []
  for (let i = 0; i < 3; i++) {
    const q = new URLSearchParams({ p: 'web', tv: 'js-3', eid: `5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e000${i}`, aid: 'shop', e: 'ue', ue_px: b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { targetUrl: `https://out.example.com/${i}` } } }) })
    if (i === 2) q.set('e', 'pv')
    const o = await e.enrichRecord(tp2(q.toString(), { timestamp: COLLECTED + i * 60_000 }), batch())
    lines.push((o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv)
  }
  expect(await loadBatch(store.db, 'good', lines.map((text, i) => ({ id: `g${i}`, text })), NOW)).toMatchObject({ loaded: 3 })
  const bad = [schemaViolation('e-1', Date.parse('2026-11-28T10:00:00Z'), 'shop'), schemaViolation('e-2', Date.parse('2026-11-28T11:00:00Z'), 'blog'), schemaViolation('e-3', Date.parse('2026-11-28T11:30:00Z'), 'shop')]
  // a bad row whose failure holds a plain text and a string error (stored as error_str), its payload a text (payload_str)
  bad.push(JSON.stringify({ schema: 'iglu:com.acme.badrows/generic_error/jsonschema/1-0-0', data: { failure: { timestamp: '2026-11-28T09:00:00Z', messages: ['plain text', { error: 'direct' }] }, payload: 'text' } }))
  expect(await loadBatch(store.db, 'bad', bad.map((text, i) => ({ id: `b${i}`, text })), NOW)).toMatchObject({ loaded: 4 })
}, 60_000)
afterAll(async () => {
  await store?.close()
})

async function n(index: SearchIndex, q: string): Promise<number[]> {
  const out: number[] = []
  for (const columns of [true, false]) {
    const r = await count(store.db, index, { params: { q } }, { columns }, NOW)
    if (!r.ok) throw new Error(`${q}: ${JSON.stringify(r.error)}`)
    out.push(r.value.count)
  }
  return out
}

describe('column names as query fields', () => {
  it('on the bad index, each finds what its column shows', async () => {
    const cases: [string, number][] = [
      ['app_id:shop', 2],
      ['app_id:blog', 1],
      ['app_id:sh*', 2],
      ['_exists_:app_id', 3],
      ['event_id:"e-2"', 1],
      ['failure_type:schema_violations', 3],
      ['failure_type:schema_*', 3],
      ['failure_type:adapter_failures', 0],
      ['failing_schema:"iglu:com.acme/click/jsonschema/1-0-0"', 3],
      ['failure_timestamp:[2026-11-28T10:30:00Z TO now]', 2],
      ['message:ResolutionError', 3],
      ['message:*Resolution*', 3],
      ['processor:"floe-enrich 1.0.0"', 3],
      ['processor:floe-enrich*', 3],
      ['processor:[a TO g]', 3],
      ['schema:"iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1"', 3],
      ['app_id:shop AND NOT failure_timestamp:<now-1h', 1],
    ]
    for (const [q, want] of cases) expect(await n('bad', q), q).toEqual([want, want])
  })

  it('on the bad index, a field is found by the name it came with (as the pages show it) and by the name the store keeps', async () => {
    const cases: [string, number][] = [
      ['data.failure.messages.error.error:ResolutionError', 3],
      ['data.failure.messages.error.error_str:ResolutionError', 3],
      ['data.failure.messages.error:direct', 1],
      ['data.failure.messages.error_str:direct', 1],
      ['data.failure.messages.error:*', 4],
      ['data.payload:text', 1],
      ['data.payload_str:text', 1],
      ['message:direct', 1],
      ['message:plain*', 1],
      ['data.failure.messages.schemaKey:"iglu:com.acme/click/jsonschema/1-0-0"', 3],
    ]
    for (const [q, want] of cases) expect(await n('bad', q), q).toEqual([want, want])
  })

  it('on the good index, schema is the event’s schema URI', async () => {
    expect(await n('good', `schema:"${LINK_CLICK}"`)).toEqual([2, 2])
    expect(await n('good', 'schema:iglu\\:com.snowplowanalytics.snowplow\\/link_click\\/*')).toEqual([2, 2])
    expect(await n('good', '_exists_:schema')).toEqual([3, 3])
    expect(await n('good', 'app_id:shop')).toEqual([3, 3])
  })
})
