/**
 * `_source` field patterns are matched in time bounded by the field name's
 * length × the pattern's, and their number and length are limited. They were
 * regular expressions `^.*a.*a…$`: with a field name taken from an event (a
 * 300-character property of a schema that allows any) and a GET with
 * `_source=*a*a*a*a*a*a*a*a*a*a*a*a*!`, which a page elsewhere can send with an
 * image, the gateway's event loop never came back.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { filterSource, MAX_SOURCE_PATTERNS, MAX_SOURCE_PATTERN_LENGTH, sourceFilter } from '../../../lib/core/search/hits'

const hits = fileURLToPath(new URL('../../../lib/core/search/hits.ts', import.meta.url))

function filtered(doc: Record<string, unknown>, source: string): unknown {
  const f = sourceFilter({ params: { _source: source } })
  if (f === false) throw new Error('no filter')
  return filterSource(doc, f)
}

describe('_source field patterns', () => {
  it('a pattern with many wildcards against a long field name from the events answers (in a process of its own, so a hang is seen)', () => {
    const code = `
      import { filterSource, sourceFilter } from ${JSON.stringify(hits)}
      const doc = { unstruct_event_com_acme_x_1: { ['a'.repeat(300)]: 1 }, app_id: 'x' }
      const f = sourceFilter({ params: { _source: '*a'.repeat(12) + '*!' } })
      process.stdout.write(JSON.stringify(filterSource(doc, f)))
    `
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 })
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe('{}')
  })

  it('match as Elasticsearch wildcards do: * is any characters, everything else itself', () => {
    const asRegex = (p: string) => new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
    fc.assert(
      fc.property(fc.stringMatching(/^[ab.*]{0,8}$/), fc.stringMatching(/^[ab.]{1,10}$/), (pattern, key) => {
        const kept = filtered({ [key]: 1 }, pattern)
        expect(kept).toEqual(asRegex(pattern).test(key) ? { [key]: 1 } : {})
      }),
      { numRuns: 2000 },
    )
    expect(filtered({ app_id: 'x', event: 'pv', event_name: 'n', unstruct_event_com_acme_x_1: { targetUrl: 'u', other: 1 } }, 'app_id,event*,unstruct_*.targetUrl')).toEqual({
      app_id: 'x', event: 'pv', event_name: 'n', unstruct_event_com_acme_x_1: { targetUrl: 'u' },
    })
  })

  it('refuses too many patterns and too long ones with 400', () => {
    const many = Array.from({ length: MAX_SOURCE_PATTERNS + 1 }, (_, i) => `f${i}`).join(',')
    expect(() => sourceFilter({ params: { _source: many } })).toThrow(expect.objectContaining({ error: expect.objectContaining({ status: 400 }) }))
    expect(() => sourceFilter({ params: {}, body: { _source: { excludes: ['x'.repeat(MAX_SOURCE_PATTERN_LENGTH + 1)] } } })).toThrow(expect.objectContaining({ error: expect.objectContaining({ status: 400 }) }))
    expect(sourceFilter({ params: { _source: Array.from({ length: MAX_SOURCE_PATTERNS }, (_, i) => `f${i}`).join(',') } })).toBeTruthy()
  })
})
