/** Search documents: enriched events shredded and keyed by event id, bad rows keyed by their text with Mini's renaming. */
import { describe, expect, it } from 'vitest'
import { badDocument, goodDocument, renameUnions } from '../../../lib/core/search/documents'
import { documentsOf } from '../../../lib/core/search/loader'
import { batch, enricher, goodColumns, payload } from '../enrich/helpers'

async function enrichedLine(qs: string): Promise<string> {
  const o = await enricher().enrichRecord(payload({ path: '/i', querystring: qs }), batch())
  goodColumns(o)
  return (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
}

describe('search documents', () => {
  it('keeps an enriched event as shredded JSON with its filter columns', async () => {
    const line = await enrichedLine('e=se&p=web&tv=js-3&aid=shop&se_ca=c&se_ac=a')
    const d = goodDocument(line, false)
    if (!d.ok) throw new Error(d.error)
    expect(d.value).toMatchObject({ id: '00000000-0000-4000-8000-000000000001', appId: 'shop', eventType: 'struct', eventName: 'event', schema: 'iglu:com.google.analytics/event/jsonschema/1-0-0', failed: false })
    expect(d.value.collectorTstamp).toBe(Date.UTC(2025, 3, 30, 10, 0))
    expect(d.value.doc).toMatchObject({ app_id: 'shop', se_category: 'c', se_action: 'a', event_id: d.value.id })
    expect(goodDocument(line, true).ok && (goodDocument(line, true) as { value: { failed: boolean } }).value.failed).toBe(true)
  })

  it('refuses what is not an enriched event', () => {
    expect(goodDocument('hello', false)).toMatchObject({ ok: false, error: expect.stringMatching(/^not an enriched event/) })
    expect(goodDocument('\t'.repeat(130), false)).toMatchObject({ ok: false })
  })

  it('keys a bad row by its text and renames fields whose type varies', () => {
    const row = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [{ error: 'x', json: { a: 1 }, expectedMapping: { b: 2 } }, { error: { error_str: 'ValidationError' } }] }, payload: { raw: { parameters: [{ name: 'e', value: 'pv' }] } } } }
    const d = badDocument(JSON.stringify(row), 0)
    if (!d.ok) throw new Error(d.error)
    expect(d.value.id).toMatch(/^[0-9a-f]{64}$/)
    expect(d.value).toMatchObject({ timestamp: Date.UTC(2025, 3, 30, 10, 5), failureType: 'schema_violations' })
    expect(d.value.doc).toEqual({ schema: row.schema, data: {
      failure: { timestamp: '2025-04-30T10:05:00Z', messages: [{ error_str: 'x', json: '{"a":1}', expectedMapping: '{"b":2}' }, { error: { error_str: 'ValidationError' } }] },
      payload: { raw: { parameters: '[{"name":"e","value":"pv"}]' } },
    } })
    expect(renameUnions({ data: { failure: 'text', payload: 'raw', errors: ['a'], message: 'm' } })).toEqual({ data: { failure_str: 'text', payload_str: 'raw', errors_list: ['a'], message_str: 'm' } })
    expect(badDocument(JSON.stringify(row), 0).ok && badDocument(JSON.stringify(row) + '\n', 0)).toMatchObject({ value: { id: d.value.id } })
  })

  it('reports what cannot become a document, with a sample', () => {
    const r = documentsOf('bad', [{ id: '1', text: 'not json' }, { id: '2', text: '[1]' }], 0)
    expect(r.rejected.map((x) => [x.id, x.error.split(':')[0]])).toEqual([['1', 'not JSON'], ['2', 'not a bad row']])
    expect(documentsOf('good', [{ id: '3', text: 'x'.repeat(500) }], 0).rejected[0]!.sample).toHaveLength(200)
  })
})
