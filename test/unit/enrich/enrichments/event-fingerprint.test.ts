/**
 * The event fingerprint's fast path (a tracker's JSON object of parameters,
 * names sorted once per set of names) against its plain definition (the
 * parameter map, sorted every time): the same hash on many random events,
 * including repeated and reordered names, excluded names, integer-like names,
 * non-ASCII values and lone surrogates; and in enriched events sent by POST.
 */
import { describe, expect, it } from 'vitest'
import { fingerprint, fingerprintFields, type FieldOrder } from '../../../../lib/core/enrich/enrichments/event-fingerprint'
import { batch, columns, configuredEnricher, enrichmentConfig, only, payload } from '../helpers'
import { rng } from '../../../support/random'


const NAMES = ['e', 'p', 'tv', 'aid', 'eid', 'stm', 'dtm', 'cx', 'ue_px', 'url', 'refr', 'page', 'duid', 'vid', 'se_ca', 'se_ac', '10', '2', '__proto__', 'Z', 'é', 'a\u001fb', '']
const PIECES = ['a', 'Z', '0', ' ', '=', '&', '\u001f', '\t', 'é', '日本', '\u{1F600}', '\ud800', '\udc00', 'eyJzY2hlbWEiOiJpZ2x1', '-_']

function value(r: () => number): string {
  const n = Math.floor(r() * (r() < 0.1 ? 400 : 12))
  let s = ''
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)]!
  return s
}

function names(r: () => number): string[] {
  const pool = [...NAMES]
  const out: string[] = []
  const n = Math.floor(r() * pool.length)
  for (let i = 0; i < n; i++) out.push(pool.splice(Math.floor(r() * pool.length), 1)[0]!)
  return out
}

describe('event fingerprint fast path', () => {
  it('agrees with the plain definition on many random events', () => {
    const r = rng(33)
    for (const algorithm of ['md5', 'sha1', 'sha256', 'sha384', 'sha512']) {
      const exclude = new Set(['eid', 'stm', 'é', '10'])
      const order: FieldOrder = { keys: [], sorted: [] }
      let keys = names(r)
      for (let i = 0; i < 400; i++) {
        // mostly the same names as the previous event, sometimes new ones or a new order
        const roll = r()
        if (roll < 0.15) keys = names(r)
        else if (roll < 0.25) keys = [...keys].reverse()
        const fields: Record<string, string> = JSON.parse(JSON.stringify(Object.fromEntries(keys.map((k) => [k, value(r)]))))
        const params = new Map<string, string | null>()
        for (const k in fields) params.set(k, fields[k]!)
        expect(fingerprintFields(fields, exclude, algorithm, order)).toBe(fingerprint(params, exclude, algorithm))
      }
    }
  })

  it('keeps the known value of the plain definition', () => {
    const order: FieldOrder = { keys: [], sorted: [] }
    expect(fingerprintFields({ stm: '1', se_ac: 'buy', e: 'se' }, new Set(['stm']), 'md5', order)).toBe('6829c2021516783f1ef03a9e9736ac77')
    // the same names in another order: sorted again, same hash
    expect(fingerprintFields({ e: 'se', stm: '1', se_ac: 'buy' }, new Set(['stm']), 'md5', order)).toBe('6829c2021516783f1ef03a9e9736ac77')
  })

  it('fingerprints events sent by POST as the plain definition does', async () => {
    const e = await configuredEnricher([enrichmentConfig('com.snowplowanalytics.snowplow', 'event_fingerprint_config', '1-0-1', { excludeParameters: ['eid'], hashAlgorithm: 'MD5' })])
    const events = [
      { e: 'pv', p: 'web', tv: 'js-3', eid: '00000000-0000-4000-8000-000000000001', url: 'https://shop.example/é?q=1' },
      { e: 'se', p: 'web', tv: 'js-3', eid: '00000000-0000-4000-8000-000000000002', se_ca: 'c', se_ac: 'a' },
    ]
    const body = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events })
    const o = await e.enrichRecord(payload({ path: '/com.snowplowanalytics.snowplow/tp2', body, contentType: 'application/json' }), batch())
    const got = (only(o, 'good') as { tsv: string }[]).map((g) => columns(g.tsv).event_fingerprint)
    expect(got).toEqual(events.map((ev) => fingerprint(new Map(Object.entries(ev)), new Set(['eid']), 'md5')))
  })
})
