/**
 * The search store through the RDS Data API adapter (the AWS SDK's client
 * against the Data API's HTTP protocol in front of PGlite): the statements it
 * sends are the ones PGlite runs locally, with the Data API's placeholders;
 * the answers are the same; transactions commit and roll back; a paused
 * cluster that is resuming is waited for.
 */
import { describe, expect, it } from 'vitest'
import { dataApiParameter, namedPlaceholders, rdsDataClient } from '../../../lib/aws/rds-data'
import { loadBatch } from '../../../lib/core/search/loader'
import { count, search } from '../../../lib/core/search/query'
import { micro, microText } from '../../../lib/core/search/micro'
import { countDocuments, deleteIndex, migrate, MIGRATIONS, purgeOlderThan, searchDb, type SearchDb, type SqlClient } from '../../../lib/core/search/store'
import { pgliteClient } from '../../../lib/local/search-store'
import { DATA_API_TARGET, useRdsDataApi } from '../../support/rds-data-server'
import { batch, enricher, payload } from '../../unit/enrich/helpers'

const api = useRdsDataApi()
const target = DATA_API_TARGET

/** A SQL client that records what it runs. */
function recording(inner: SqlClient, log: string[]): SqlClient {
  return {
    query: (sql, params) => {
      log.push(sql)
      return inner.query(sql, params)
    },
    transaction: (fn) => inner.transaction((tx) => fn(recording(tx, log))),
  }
}

async function lines(n: number): Promise<string[]> {
  const e = enricher()
  const b = batch()
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const o = await e.enrichRecord(payload({ path: '/i', querystring: `e=se&p=web&tv=js-3&aid=app-${i % 2}&se_ca=cat&se_ac=a${i}` }), b)
    out.push((o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv)
  }
  return out
}
const badRow = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [] } } })

/** The same work on a store: everything a loader and the APIs do, with the answers. */
async function scenario(db: SearchDb): Promise<unknown[]> {
  const out: unknown[] = []
  out.push(await migrate(db))
  const good = (await lines(6)).map((text, i) => ({ id: String(i), text }))
  out.push(await loadBatch(db, 'good', [...good, { id: 'x', text: 'not an event' }], Date.UTC(2025, 4, 1)))
  out.push(await loadBatch(db, 'good', good.slice(0, 2), Date.UTC(2025, 4, 1)))
  out.push(await loadBatch(db, 'bad', [{ id: 'b', text: badRow }], Date.UTC(2025, 4, 1)))
  out.push(await countDocuments(db, 'good'))
  out.push(await count(db, 'good', { params: { q: 'app_id:app-1' } }))
  const s = await search(db, 'good', { params: {}, body: { query: { bool: { filter: [{ term: { app_id: 'app-0' } }] } }, sort: [{ collector_tstamp: 'desc' }], size: 2, aggs: { apps: { terms: { field: 'app_id' } } } } })
  out.push(s.ok ? { ...s.value, took: 0 } : s)
  const m = await micro(db, { method: 'POST', path: '/micro/good', body: JSON.stringify({ event_type: 'struct', limit: 2 }) }, { lookupSchema: async () => ({ ok: false, errors: [] }) })
  const { stream: _, ...whole } = { ...m, body: await microText(m) }
  out.push(whole)
  out.push(await purgeOlderThan(db, 7, Date.UTC(2025, 4, 2)))
  await deleteIndex(db, 'bad')
  out.push(await countDocuments(db, 'bad'))
  return out
}

describe('the search store over the RDS Data API', () => {
  it('sends the statements PGlite runs, with :name placeholders and typed values, and gets the same answers', async () => {
    const local: string[] = []
    const viaPglite = await scenario(searchDb(recording(pgliteClient(api.current.pg), local), 'direct'))
    const start = api.current.server.statements.length
    const viaDataApi = await scenario(searchDb(rdsDataClient(target, api.current.client), 'dataapi'))
    const sent = api.current.server.statements.slice(start)
    const norm = (sql: string) => sql.replaceAll('"direct"', '"S"').replaceAll('"dataapi"', '"S"')
    expect(sent.map(norm)).toEqual(local.map((s) => norm(namedPlaceholders(s))))
    expect(sent.length).toBeGreaterThan(10)
    expect(viaDataApi).toEqual(viaPglite)
  })

  it('rolls a failed transaction back', async () => {
    const db = searchDb(rdsDataClient(target, api.current.client), 'rollback')
    await migrate(db)
    await expect(
      db.sql.transaction(async (tx) => {
        await loadBatch({ ...db, sql: tx }, 'bad', [{ id: 'b', text: badRow }], Date.now())
        throw new Error('later step failed')
      }),
    ).rejects.toThrow('later step failed')
    expect(await countDocuments(db, 'bad')).toBe(0)
  })

  it('waits for a paused cluster to resume, and gives up after its limit', async () => {
    const db = searchDb(rdsDataClient(target, api.current.client, { resumeWaitMs: 10_000 }), 'resume')
    api.current.server.resumeFor(2)
    expect(await migrate(db)).toEqual(MIGRATIONS.map((m) => m.version))
    const impatient = searchDb(rdsDataClient(target, api.current.client, { resumeWaitMs: 0 }), 'resume')
    api.current.server.resumeFor(1)
    await expect(countDocuments(impatient, 'good')).rejects.toMatchObject({ name: 'DatabaseResumingException' })
  })

  it('passes values as typed parameters, never as SQL text', () => {
    expect(namedPlaceholders('SELECT $1::int, $12, $1')).toBe('SELECT :p1::int, :p12, :p1')
    expect([null, true, 3, 2.5, "x'; DROP TABLE t; --", { a: 1 }].map(dataApiParameter)).toEqual([
      { name: 'p1', value: { isNull: true } },
      { name: 'p2', value: { booleanValue: true } },
      { name: 'p3', value: { longValue: 3 } },
      { name: 'p4', value: { doubleValue: 2.5 } },
      { name: 'p5', value: { stringValue: "x'; DROP TABLE t; --" } },
      { name: 'p6', value: { stringValue: '{"a":1}' } },
    ])
  })
})
