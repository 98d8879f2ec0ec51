/**
 * The names the explorer shows for its columns are field names of queries:
 * on the bad index `app_id:x` is `data.payload.enriched.app_id:x` (same SQL),
 * computed columns are matched on what the page computes, and every column
 * the pages show on either index is searchable by the name they show.
 */
import { describe, expect, it } from 'vitest'
import { parseDsl } from '../../../lib/core/search/dsl'
import { parseQueryString } from '../../../lib/core/search/lucene'
import { condition, Statement } from '../../../lib/core/search/query-sql'
import { SHOWN_FIELDS } from '../../../lib/core/search/shown-fields'
import type { SearchIndex } from '../../../lib/core/search/store'

// the pages' own columns (plain browser JavaScript, without types)
const COLUMNS_MODULE: string = '../../../lib/ui/dashboard/columns.js'
type PageColumn = { id: string; label: string; source: string[] }
const { COLUMNS: PAGE_COLUMNS } = (await import(COLUMNS_MODULE)) as { COLUMNS: Record<SearchIndex, PageColumn[]> }

const NOW = Date.parse('2026-01-02T03:04:05Z')

function sql(index: SearchIndex, q: string, columns = true) {
  const st = new Statement(index, { columns })
  return { where: condition(parseQueryString(q), st, NOW), params: st.params }
}

describe('shown names in queries', () => {
  it('on the bad index, a column name is the path where the bad row holds it: same SQL', () => {
    const aliases: [string, string][] = [
      ['app_id', 'data.payload.enriched.app_id'],
      ['event', 'data.payload.enriched.event'],
      ['event_name', 'data.payload.enriched.event_name'],
      ['event_id', 'data.payload.enriched.event_id'],
      ['failing_schema', 'data.failure.messages.schemaKey'],
      ['failure_timestamp', 'data.failure.timestamp'],
    ]
    for (const [name, path] of aliases) {
      const tails = name === 'failure_timestamp' ? [':"2026-01-01T00:00:00Z"', ':[2026-01-01 TO now]', ':>=now-1h'] : [':shop', ':"floe home"', ':sh*p', ':shop*', ':[a TO m]', ':>=2026-01-01']
      for (const tail of tails) {
        for (const columns of [true, false]) expect(sql('bad', `${name}${tail}`, columns), `${name}${tail}`).toEqual(sql('bad', `${path}${tail}`, columns))
      }
      expect(sql('bad', `_exists_:${name}`)).toEqual(sql('bad', `_exists_:${path}`))
      if (name !== 'failure_timestamp') expect(sql('bad', `NOT ${name}:x OR (${name}:y AND event:z)`)).toEqual(sql('bad', `NOT ${path}:x OR (${path}:y AND data.payload.enriched.event:z)`))
    }
  })

  it('the failure timestamp is the typed, indexed time column', () => {
    const { where, params } = sql('bad', 'failure_timestamp:[2026-01-01 TO 2026-01-02]')
    expect(where).toMatch(/failure_timestamp >= \$1::timestamptz AND failure_timestamp <= \$2::timestamptz/)
    expect(params).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-02T23:59:59.999Z'])
  })

  it('the query DSL takes the same names', () => {
    const st = new Statement('bad', { columns: true })
    const byDsl = condition(parseDsl({ term: { app_id: 'shop' } }), st, NOW)
    expect({ where: byDsl, params: st.params }).toEqual(sql('bad', 'data.payload.enriched.app_id:shop'))
  })

  it('message is any value under the failure, at any depth', () => {
    const { where, params } = sql('bad', 'message:ResolutionError')
    expect(where).toContain('jsonb_path_exists(doc')
    const failure = '."data" ? (@.type() == "object").keyvalue() ? (@.key == "failure" || @.key == "failure_str" || @.key == "failure_list").value'
    expect(params[0]).toBe(`lax $${failure}.** ? (@ == $v0)`)
    expect(sql('bad', 'message:*not\\ found*').params[0]).toBe(`lax $${failure}.**`)
  })

  it('computed columns: the typed column where there is one, else the same text computed from the document', () => {
    expect(sql('bad', 'failure_type:schema_violations')).toEqual({ where: 'recovered IS NULL AND ((failure_type IS NOT NULL AND failure_type IN ($1)))', params: ['schema_violations'] })
    expect(sql('bad', 'failure_type:schema_violations', false).where).toContain(`substring(doc->>'schema' from '^iglu:[^/]+/([^/]+)/') IN ($1)`)
    expect(sql('good', 'schema:"iglu:com.acme/checkout/jsonschema/1-0-0"')).toEqual({ where: '(schema_uri IS NOT NULL AND schema_uri IN ($1))', params: ['iglu:com.acme/checkout/jsonschema/1-0-0'] })
    expect(sql('good', 'schema:iglu\\:com.acme\\/*', false).where).toContain(`('iglu:' || (doc->>'event_vendor') || '/'`)
    expect(sql('bad', 'processor:floe*').where).toContain(`(doc #>> '{data,processor,artifact}')`)
    expect(sql('bad', 'processor:[a TO b]').where).toContain('COLLATE "C" >= $1')
  })

  it('elsewhere a name is the document path it says, and the good index keeps its own fields', () => {
    expect(sql('good', 'app_id:shop')).toEqual({ where: '(app_id IS NOT NULL AND app_id IN ($1))', params: ['shop'] })
    expect(sql('bad', 'schema:x').params[0]).toBe('lax $."schema"[*] ? (@ == $v0)')
    expect(sql('good', 'data.payload.enriched.app_id:shop').params[0]).toBe('lax $."data"."payload"."enriched"."app_id"[*] ? (@ == $v0)')
    expect(sql('good', 'toString:x').params[0]).toBe('lax $."toString"[*] ? (@ == $v0)')
  })

  it('on the bad index, a key the store renames is found by the name it came with, and by the stored one', () => {
    const error = (name: string) => `? (@.type() == "object").keyvalue() ? (@.key == "${name}" || @.key == "${name}_str" || @.key == "${name}_list").value`
    expect(sql('bad', 'data.failure.messages.error.error:ValidationError').params[0]).toBe(`lax $."data" ${error('failure')}."messages" ${error('error')} ${error('error')}[*] ? (@ == $v0)`)
    expect(sql('bad', 'data.failure.messages.error.error_str:ValidationError').params[0]).toBe(`lax $."data" ${error('failure')}."messages" ${error('error')}."error_str"[*] ? (@ == $v0)`)
  })

  it('every column the pages show, on either index, is searchable by the name they show', () => {
    for (const index of ['good', 'bad'] as const) {
      for (const col of PAGE_COLUMNS[index]) {
        const shown = (SHOWN_FIELDS[index] as Record<string, unknown>)[col.label]
        const isPath = col.source.length === 1 && col.source[0] === col.label
        expect(shown !== undefined || isPath, `${index}: column ${col.id} shown as ${col.label}`).toBe(true)
        expect(col.label, 'a name a query can hold').toMatch(/^[A-Za-z0-9_.]+$/)
      }
    }
  })
})
