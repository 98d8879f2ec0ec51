import { describe, expect, it } from 'vitest'
import { parseSchemaVer, type SchemaVer } from '../../../lib/core/iglu/keys'
import { CONFLICT, checkPublish, supersedingUpdates, type ExistingVersion } from '../../../lib/core/iglu/versioning'

const v = (s: string): SchemaVer => (parseSchemaVer(s) as { ok: true; value: SchemaVer }).value
const group = (...vs: string[]): ExistingVersion[] => vs.map((x) => ({ format: 'jsonschema', version: v(x), isPublic: false }))
const cand = (s: string, extra: Partial<{ isPublic: boolean; supersedes: SchemaVer[]; format: string }> = {}) => ({
  format: 'jsonschema', version: v(s), isPublic: false, supersedes: [], ...extra,
})

describe('SchemaVer publication rules', () => {
  it('allows 1-0-0 into an empty group and refuses it when it exists', () => {
    expect(checkPublish([], cand('1-0-0'), false)).toEqual({ ok: true, exists: false })
    expect(checkPublish(group('1-0-0'), cand('1-0-0'), false)).toEqual({ ok: false, message: CONFLICT.alreadyExists })
    expect(checkPublish(group('1-0-0'), cand('1-0-0'), true)).toEqual({ ok: true, exists: true })
  })
  it('requires the preceding version', () => {
    expect(checkPublish([], cand('2-0-0'), false)).toEqual({ ok: false, message: CONFLICT.precedingMissing })
    expect(checkPublish([], cand('1-1-0'), false)).toEqual({ ok: false, message: CONFLICT.precedingMissing })
    expect(checkPublish(group('1-0-0'), cand('1-0-2'), false)).toEqual({ ok: false, message: CONFLICT.precedingMissing })
    expect(checkPublish(group('1-0-0', '1-0-1'), cand('1-1-0'), false).ok).toBe(true)
    expect(checkPublish(group('1-0-0', '1-0-1'), cand('1-0-2'), false).ok).toBe(true)
    expect(checkPublish(group('1-0-0', '1-1-0'), cand('2-0-0'), false).ok).toBe(true)
    expect(checkPublish(group('1-0-0', '1-1-0'), cand('1-2-0'), false).ok).toBe(true)
  })
  it('refuses a new addition once a later revision exists', () => {
    expect(checkPublish(group('1-0-0', '1-1-0'), cand('1-0-1'), false)).toEqual({ ok: false, message: CONFLICT.notSequential })
    expect(checkPublish(group('1-0-0', '1-0-1', '1-1-0'), cand('1-0-1'), true)).toEqual({ ok: false, message: CONFLICT.notSequential })
  })
  it('keeps a group all public or all private', () => {
    expect(checkPublish(group('1-0-0'), cand('1-0-1', { isPublic: true }), false)).toEqual({ ok: false, message: CONFLICT.publicAfterPrivate })
    const pub = [{ format: 'jsonschema', version: v('1-0-0'), isPublic: true }]
    expect(checkPublish(pub, cand('1-0-1'), false)).toEqual({ ok: false, message: CONFLICT.privateAfterPublic })
    expect(checkPublish(pub, cand('1-0-0'), true)).toEqual({ ok: false, message: CONFLICT.privateAfterPublic })
  })
  it('looks at every format of the group', () => {
    expect(checkPublish(group('1-0-0'), cand('1-0-0', { format: 'avro' }), false)).toEqual({ ok: false, message: CONFLICT.alreadyExists })
  })
  it('checks $supersedes', () => {
    expect(checkPublish(group('1-0-0'), cand('1-0-1', { supersedes: [v('1-0-5')] }), false)).toEqual({ ok: false, message: CONFLICT.supersededMissing })
    expect(checkPublish(group('1-0-0', '1-0-1'), cand('1-0-1', { supersedes: [v('1-0-1')] }), true)).toEqual({ ok: false, message: CONFLICT.supersededNotBelow })
    expect(checkPublish(group('1-0-0'), cand('1-0-1', { supersedes: [v('1-0-0')] }), false).ok).toBe(true)
  })
  it('propagates superseding transitively, never lowering it', () => {
    const g = [
      { version: v('1-0-0'), supersededBy: v('1-0-1') },
      { version: v('1-0-1') },
      { version: v('1-0-2'), supersededBy: v('1-0-9') },
    ]
    expect(supersedingUpdates(g, [v('1-0-1'), v('1-0-2')], v('1-0-3'))).toEqual([v('1-0-0'), v('1-0-1')])
  })
})
