/**
 * The pages show a bad row as it came: the store's renaming of union-typed
 * fields (`error_str`, `message_str`, `errors_list`, parameters as JSON text)
 * is undone exactly, for the bad rows enrich writes.
 */
import { describe, expect, it } from 'vitest'
import { renameUnions, restoreUnions } from '../../../lib/core/search/unions'
import { schemaViolation } from '../../support/bad-rows'
import { badRows, payload, run, tp2 } from '../enrich/helpers'

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const ue = (schema: string, data: unknown) => b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })

describe('a bad row as it came', () => {
  it('undoes the renaming of the bad rows enrich writes', async () => {
    const rows = [
      JSON.parse(schemaViolation('e-1')),
      // schema not found (ResolutionError), invalid against its schema (ValidationError with data reports)
      ...badRows(await run(tp2(new URLSearchParams({ e: 'ue', p: 'web', tv: 't', ue_px: ue('iglu:com.acme/missing/jsonschema/1-0-0', { a: 1 }) }).toString()))),
      ...badRows(await run(tp2(new URLSearchParams({ e: 'ue', p: 'web', tv: 't', ue_px: ue('iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', { targetUrl: 5 }) }).toString()))),
      // a tracker protocol violation and an adapter failure
      ...badRows(await run(tp2('e=nonsense&p=web&tv=t'))),
      ...badRows(await run(payload({ path: '/com.acme/nowhere', querystring: 'a=1' }))),
      { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/generic_error/jsonschema/1-0-0', data: { failure: { errors: ['one', 'two'], message: 'plain' }, payload: 'text' } },
    ]
    expect(rows.length).toBeGreaterThanOrEqual(5)
    for (const row of rows) {
      const stored = renameUnions(row)
      expect(restoreUnions(stored)).toEqual(row)
      expect(JSON.stringify(restoreUnions(stored))).not.toMatch(/"(error|message|failure|payload|errors)_(str|list)"/)
    }
    const stored = JSON.stringify(rows.map((r) => renameUnions(r)))
    expect(stored).toMatch(/"error_str"/) // the store does rename: there was something to undo
    expect(stored).toMatch(/"message_str"/)
  })

  it('leaves a key that only looks renamed', () => {
    expect(restoreUnions({ error_str: { a: 1 }, colour_str: 'x', message: 'm', message_str: 'n' })).toEqual({ error_str: { a: 1 }, colour_str: 'x', message: 'm', message_str: 'n' })
  })
})
