import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { tryShred } from '../../../lib/core/enrich/shred'
import { COLLECTED, enricher, payload, tp2 } from './helpers'

const e = enricher()
const batch = { etlTimestamp: COLLECTED, newEventId: () => '00000000-0000-4000-8000-000000000001' }

/** Every output is a valid bad row or a 131-column event; nothing throws. */
async function check(record: Uint8Array): Promise<void> {
  const o = await e.enrichRecord(record, batch)
  expect(o.outputs.length).toBeGreaterThan(0)
  for (const out of o.outputs) {
    if (out.kind === 'bad') {
      const row = JSON.parse(out.json)
      expect(row.schema).toMatch(/^iglu:com\.snowplowanalytics\.snowplow\.badrows\//)
      expect(row.data.processor.artifact).toBe('floe-enrich')
    } else {
      expect(out.tsv.split('\t')).toHaveLength(131)
      expect(out.tsv).not.toMatch(/[\r\n]/)
      expect(tryShred(out.tsv).ok).toBe(true)
    }
  }
}

describe('the core never throws on arbitrary input', () => {
  it('arbitrary bytes', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (b) => check(b)), { numRuns: 300 })
  })
  it('arbitrary query strings on GET /i and tp2', async () => {
    const qs = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(fc.tuple(fc.constantFrom('e', 'p', 'tv', 'aid', 'dtm', 'stm', 'ttm', 'eid', 'sid', 'res', 'vid', 'tr_tt', 'co', 'cx', 'ue_pr', 'ue_px', 'url', 'refr', 'ip', 'cookie', 'f_pdf', 'x'), fc.string({ maxLength: 30 })), { maxLength: 12 })
        .map((kv) => kv.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')),
    )
    await fc.assert(
      fc.asyncProperty(qs, fc.constantFrom('/i', '/com.snowplowanalytics.snowplow/tp2', '/r/tp2', '/com.snowplowanalytics.iglu/v1'), async (q, path) => check(payload({ path, querystring: q }))),
      { numRuns: 400 },
    )
  })
  it('arbitrary JSON bodies', async () => {
    const body = fc.oneof(
      fc.json(),
      fc.jsonValue().map((d) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: d })),
      fc.array(fc.dictionary(fc.constantFrom('e', 'p', 'tv', 'co', 'ue_pr', 'dtm', 'eid'), fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)))), { minLength: 1, maxLength: 3 })
        .map((data) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data })),
    )
    await fc.assert(fc.asyncProperty(body, async (b) => check(tp2('', { body: b, contentType: 'application/json' }))), { numRuns: 300 })
  })
})
