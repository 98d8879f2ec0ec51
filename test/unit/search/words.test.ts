import { describe, expect, it } from 'vitest'
import { badDocument } from '../../../lib/core/search/documents'
import { badRowWords, MAX_WORD_LENGTH, MAX_WORDS, wordsOf } from '../../../lib/core/search/words'

describe('words of a bad row', () => {
  it('are runs of letters, digits and underscores, lower-cased', () => {
    expect(wordsOf('Bad-ZZZ1 failed: "targetUrl" /é_x 42 _ ue_px')).toEqual(['bad', 'zzz1', 'failed', 'targeturl', 'é_x', '42', 'ue_px'])
    expect(wordsOf('a'.repeat(300))).toEqual(['a'.repeat(MAX_WORD_LENGTH)])
  })

  it('come from every string, with base64 parameter values decoded, once each', () => {
    const ue = Buffer.from(JSON.stringify({ data: { elementId: 'Hidden-Word' } })).toString('base64url')
    const row = { schema: 'iglu:x/schema_violations/jsonschema/2-0-0', data: { payload: { raw: { parameters: [{ name: 'aid', value: 'bad-zzz1' }, { name: 'ue_px', value: ue }] } }, failure: { messages: [{ error: 'no targetUrl', n: 7 }] }, again: 'BAD' } }
    const words = badRowWords(row)
    expect(words).toEqual(expect.arrayContaining(['bad', 'zzz1', 'aid', 'ue_px', 'hidden', 'word', 'elementid', 'no', 'targeturl', '7']))
    expect(words.filter((w) => w === 'bad')).toHaveLength(1)
  })

  it('are bounded per row', () => {
    const row = { data: Array.from({ length: MAX_WORDS + 500 }, (_, i) => `w${i}`) }
    expect(badRowWords(row)).toHaveLength(MAX_WORDS)
  })

  it('are kept with the bad document', () => {
    const d = badDocument(JSON.stringify({ schema: 'iglu:x/adapter_failures/jsonschema/1-0-0', data: { payload: { raw: { parameters: [{ name: 'aid', value: 'bad-zzz1' }] } } } }), 0)
    expect(d.ok && d.value.words).toEqual(expect.arrayContaining(['bad', 'zzz1']))
    expect(d.ok && d.value.doc).toMatchObject({ data: { payload: { raw: { parameters: '[{"name":"aid","value":"bad-zzz1"}]' } } } })
  })
})
