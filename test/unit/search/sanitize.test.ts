/**
 * What PostgreSQL refuses (NUL, unpaired surrogates, nesting thousands deep,
 * huge documents) is replaced before a document is stored, and the document
 * says what was replaced; a clean document is left as it is.
 */
import { describe, expect, it } from 'vitest'
import { badDocument, goodDocument } from '../../../lib/core/search/documents'
import { isStoreUnavailable } from '../../../lib/core/search/loader'
import { asciiLine, CUT_STRING_CHARS, fallbackForm, MAX_DEPTH, MAX_DOC_CHARS, NOTES, SANITIZED_KEY, sanitizeDocument } from '../../../lib/core/search/sanitize'
import { batch, enricher, payload } from '../enrich/helpers'

/** No `\u0000` and no unpaired surrogate anywhere in the JSON text, and nothing nested past the limit. */
function acceptable(doc: unknown): void {
  const text = JSON.stringify(doc)
  expect(text).not.toMatch(/\\u0000/)
  expect(text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/)
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '[' || c === '{') max = Math.max(max, ++depth)
    else if (c === ']' || c === '}') depth--
  }
  expect(max).toBeLessThanOrEqual(MAX_DEPTH + 1)
}

const deep = (n: number): unknown => {
  let v: unknown = 'bottom'
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v }
  return v
}

describe('sanitizeDocument', () => {
  it('leaves a clean document as it is, without a marker', () => {
    const doc = { a: 'héllo 😀', b: [1, { c: null }] }
    expect(sanitizeDocument(doc)).toEqual({ doc, notes: [] })
  })

  it('replaces NUL characters in values and keys, and says so', () => {
    const { doc, notes } = sanitizeDocument({ body: 'garbage\u0000\u0001binary', ['k\u0000']: ['x\u0000'] })
    expect(doc).toEqual({ body: 'garbage\ufffd\u0001binary', 'k\ufffd': ['x\ufffd'], [SANITIZED_KEY]: [NOTES.nul] })
    expect(notes).toEqual([NOTES.nul])
    acceptable(doc)
  })

  it('replaces unpaired surrogates and keeps pairs', () => {
    const { doc } = sanitizeDocument({ lone: 'a\ud800b', low: '\udc00', pair: '😀' })
    expect(doc).toEqual({ lone: 'a\ufffdb', low: '\ufffd', pair: '😀', [SANITIZED_KEY]: [NOTES.surrogate] })
    acceptable(doc)
  })

  it('keeps values nested past the limit as their JSON text, even 100,000 levels deep', () => {
    for (const n of [MAX_DEPTH + 5, 5_000, 100_000]) {
      const { doc } = sanitizeDocument({ v: deep(n) })
      expect(doc[SANITIZED_KEY]).toEqual([NOTES.depth])
      acceptable(doc)
    }
    expect(sanitizeDocument({ v: deep(MAX_DEPTH - 2) }).notes).toEqual([])
  })

  it('cuts the strings of a huge document, and keeps only the top-level values of one still too large', () => {
    const big = 'x'.repeat(MAX_DOC_CHARS + 10)
    const cut = sanitizeDocument({ id: 'e1', big, small: 'ok' })
    expect(cut.doc).toEqual({ id: 'e1', big: `${'x'.repeat(CUT_STRING_CHARS)}…`, small: 'ok', [SANITIZED_KEY]: [NOTES.size] })
    const many = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, ['y'.repeat(CUT_STRING_CHARS)]]))
    const top = sanitizeDocument({ id: 'e2', ...many })
    expect(top.doc).toEqual({ id: 'e2', [SANITIZED_KEY]: [NOTES.size, NOTES.tooLarge] })
  })
})

describe('documents of records the store would refuse', () => {
  it('a bad row whose payload holds NUL: the document is sanitized and marked, the line kept as on the stream', () => {
    const row = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/tracker_protocol_violations/jsonschema/1-0-0', data: { failure: { timestamp: '2025-04-30T10:05:00Z', messages: [] }, payload: { body: 'garbage\u0000\u0001binary', deep: 'DEEP' } } }
    // 100,000 levels: more than JSON.stringify (and PostgreSQL) can take
    const line = JSON.stringify(row).replace('"DEEP"', `${'[{"k":'.repeat(50_000)}1${'}]'.repeat(50_000)}`)
    const d = badDocument(line, 0)
    if (!d.ok) throw new Error(d.error)
    expect(d.value.line).toBe(line)
    expect(d.value.doc[SANITIZED_KEY]).toEqual([NOTES.nul, NOTES.depth])
    acceptable(d.value.doc)
    expect(JSON.stringify(d.value.words)).not.toMatch(/\\u0000/)
  })

  it('an enriched event with NUL and a lone surrogate in its fields', async () => {
    const o = await enricher().enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3&aid=shop&page=a%00b' }), batch())
    const good = o.outputs.find((x) => x.kind === 'good') as { tsv: string }
    const line = good.tsv.replace('shop', 'sh\ud800op')
    const d = goodDocument(line, false)
    if (!d.ok) throw new Error(d.error)
    expect(d.value.appId).toBe('sh\ufffdop')
    expect(d.value.line).not.toMatch(/[\u0000\ud800]/)
    expect(d.value.doc[SANITIZED_KEY]).toEqual(expect.arrayContaining([NOTES.surrogate]))
    acceptable(d.value.doc)
  })

  it('the fallback form keeps the line in printable ASCII (the same JSON) and says why', () => {
    const line = '{"a":"é\\u0001"}'
    expect(JSON.parse(asciiLine(line))).toEqual(JSON.parse(line))
    const f = fallbackForm({ doc: { x: 1 }, line, failureType: 'z'.repeat(600) }, 'value too long\nfor type', ['failureType'])
    expect(f.doc).toEqual({ [SANITIZED_KEY]: [expect.stringMatching(/^the store refused the document \(value too long for type\)/)] })
    expect(f.failureType).toHaveLength(255)
  })
})

describe('isStoreUnavailable', () => {
  it('tells a store that cannot be reached from one that refuses a value', () => {
    expect(isStoreUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true)
    expect(isStoreUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(isStoreUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true)
    expect(isStoreUnavailable(Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' }))).toBe(false)
    expect(isStoreUnavailable(Object.assign(new Error('stack depth limit exceeded'), { code: '54001' }))).toBe(false)
    expect(isStoreUnavailable(new Error('ERROR: unsupported Unicode escape sequence; SQLState: 22P05'))).toBe(false)
    expect(isStoreUnavailable(Object.assign(new Error('Database is resuming'), { name: 'DatabaseResumingException' }))).toBe(true)
  })
})
