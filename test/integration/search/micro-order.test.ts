/**
 * The Micro API's order for events sent together: 20 page views in one
 * request share their collector time, and come back newest first as Micro
 * gives them: the last one sent first. The same for the bad rows of a batch.
 * With 21 distinct values, a column's stats still list the first 20.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBatch } from '../../../lib/core/search/loader'
import { micro, microText } from '../../../lib/core/search/micro'
import type { SearchDb } from '../../../lib/core/search/store'
import { openLocalSearchStore, type LocalSearchStore } from '../../../lib/local/search-store'
import { batch, COLLECTED, enricher, tp2 } from '../../unit/enrich/helpers'

let store: LocalSearchStore
let db: SearchDb
const call = async (method: string, path: string, body: unknown = {}) => JSON.parse(await microText(await micro(db, { method, path, body: JSON.stringify(body) }, { lookupSchema: async () => ({ ok: false, errors: {} }) })))
const badRow = (i: number) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [{ n: i }] }, payload: { raw: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2', parameters: [{ name: 'se_la', value: `b${i}` }] } } } })

beforeAll(async () => {
  store = await openLocalSearchStore()
  db = store.db
  const e = enricher()
  const b = batch()
  const good: string[] = []
  for (let i = 0; i < 21; i++) {
    const o = await e.enrichRecord(tp2(`e=pv&p=web&tv=js-3&page=p${i}`, { timestamp: COLLECTED }), b)
    good.push((o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv)
  }
  await loadBatch(db, 'good', good.map((text, i) => ({ id: String(i), text })), COLLECTED)
  await loadBatch(db, 'bad', Array.from({ length: 20 }, (_, i) => ({ id: `b${i}`, text: badRow(i) })), COLLECTED)
}, 60_000)
afterAll(async () => {
  await store?.close()
})

describe('Micro order for events sent together', () => {
  it('/micro/columnStats: more than 20 distinct values, the first 20 given', async () => {
    const stats = await call('POST', '/micro/columnStats', { columns: ['page_title'] })
    expect(stats.page_title).toMatchObject({ sortable: true, filterable: true })
    expect(stats.page_title.values).toHaveLength(20)
    expect(stats.page_title.values.slice(0, 4)).toEqual(['p0', 'p1', 'p10', 'p11'])
  })

  it('/micro/good: newest first is the last one sent first', async () => {
    expect((await call('POST', '/micro/good', { limit: 1 }))[0].event.page_title).toBe('p20')
    const all = await call('GET', '/micro/good')
    expect(all.map((g: any) => g.event.page_title)).toEqual(Array.from({ length: 21 }, (_, i) => `p${20 - i}`))
  })

  it('/micro/events: the same order', async () => {
    const page = await call('POST', '/micro/events', { pageSize: 5 })
    expect(page.events.map((e: any) => e.page_title)).toEqual(['p20', 'p19', 'p18', 'p17', 'p16'])
  })

  it('/micro/bad: the bad rows of one batch, last first', async () => {
    const bad = await call('GET', '/micro/bad')
    expect(bad.map((x: any) => x.rawEvent.parameters.se_la)).toEqual(Array.from({ length: 20 }, (_, i) => `b${19 - i}`))
  })
})
