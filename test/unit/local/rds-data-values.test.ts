import { describe, expect, it } from 'vitest'
import { fieldValue, jsonValue, positionalSql, RequestError } from '../../../lib/local/rds-data-values'

describe("the Data API's placeholders and values, to PostgreSQL's and back", () => {
  it(':name placeholders become $n, each name one position, cast to its typed value', () => {
    const r = positionalSql('SELECT :a, :b, :a, :c::jsonb, :d', [
      { name: 'a', value: { longValue: 1 } },
      { name: 'b', value: { stringValue: 'x' } },
      { name: 'c', value: { stringValue: '{}' }, typeHint: 'JSON' },
      { name: 'd', value: { isNull: true } },
    ])
    expect(r).toEqual({ text: 'SELECT ($1::int8), $2, ($1::int8), ($3::json)::jsonb, $4', values: ['1', 'x', '{}', null] })
  })

  it('leaves casts, literals, quoted identifiers, dollar quoting and comments alone', () => {
    const sql = `SELECT x::text, ':a', "col:a", $$ :a $$, $t$ :a $t$ -- :a\n, /* :a */ :a`
    expect(positionalSql(sql, [{ name: 'a', value: { booleanValue: true } }]).text).toBe(`SELECT x::text, ':a', "col:a", $$ :a $$, $t$ :a $t$ -- :a\n, /* :a */ ($1::boolean)`)
    expect(positionalSql("SELECT 'it''s :a', $1", []).text).toBe("SELECT 'it''s :a', $1")
  })

  it('a placeholder without its parameter, or an unknown type hint, is refused', () => {
    expect(() => positionalSql('SELECT :missing', [])).toThrow(RequestError)
    expect(() => positionalSql('SELECT :a', [{ name: 'a', value: { stringValue: 'x' }, typeHint: 'MONEY' }])).toThrow('Invalid typeHint: MONEY')
  })

  it("values from PostgreSQL's text by type: numbers, booleans, UTC timestamps, JSON as text, numeric as text", () => {
    expect([jsonValue('42', 20), jsonValue('t', 16), jsonValue('2025-05-01 10:00:00.5+00', 1184), jsonValue('{"a": 1}', 3802), jsonValue('1.50', 1700), jsonValue(null, 25)]).toEqual([42, true, '2025-05-01 10:00:00.5', '{"a": 1}', '1.50', null])
    expect(jsonValue('42', 20, { longReturnType: 'STRING' })).toBe('42')
    expect(jsonValue('1.5', 1700, { decimalReturnType: 'DOUBLE_OR_LONG' })).toBe(1.5)
    expect([fieldValue('42', 23), fieldValue(null, 23), fieldValue('\\x6869', 17), fieldValue('{1,2}', 1007)]).toEqual([{ longValue: 42 }, { isNull: true }, { blobValue: 'aGk=' }, { arrayValue: { longValues: [1, 2] } }])
  })
})
