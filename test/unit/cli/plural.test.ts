/**
 * Counts are written with the right noun, in the command line's summaries
 * and in the pages (`counted` is `plural` with the pages' number format).
 */
import { describe, expect, it } from 'vitest'
import { noun, plural } from '../../../lib/core/plural'
import { lintSummary, pushSummary } from '../../../lib/cli/registry'

// the pages' module (plain browser JavaScript, without types)
const FORMAT: string = '../../../lib/ui/shared/format.js'
const { counted } = (await import(FORMAT)) as { counted: (n: number, one: string, many?: string) => string }

describe('plural', () => {
  it('says one for 1 and many for everything else', () => {
    expect(plural(1, 'schema')).toBe('1 schema')
    expect(plural(0, 'schema')).toBe('0 schemas')
    expect(plural(2, 'schema')).toBe('2 schemas')
    expect(plural(-1, 'degree')).toBe('-1 degree')
    expect(plural(1, 'bad row')).toBe('1 bad row')
    expect(plural(3, 'entry', 'entries')).toBe('3 entries')
    expect(plural(1, 'entry', 'entries')).toBe('1 entry')
    expect(noun(1, 'file was', 'files were')).toBe('file was')
    expect(noun(4, 'file was', 'files were')).toBe('files were')
  })
  it('writes the number as asked (the pages group thousands)', () => {
    expect(plural(1234, 'event', undefined, (n) => n.toLocaleString('en-US'))).toBe('1,234 events')
    expect(counted(1, 'schema')).toBe('1 schema')
    expect(counted(1234, 'failed event')).toBe('1,234 failed events')
    expect(counted(1, 'key')).toBe('1 key')
  })
})

describe("the registry commands' summaries", () => {
  it('push: one schema is 1 schema', () => {
    expect(pushSummary({ created: 1, updated: 0, unchanged: 0, failed: 0 })).toBe('1 schema: 1 created, 0 updated, 0 unchanged, 0 failed')
    expect(pushSummary({ created: 2, updated: 1, unchanged: 3, failed: 1 })).toBe('7 schemas: 2 created, 1 updated, 3 unchanged, 1 failed')
  })
  it('lint: 1 schema, 1 warning', () => {
    expect(lintSummary(1, 0, 1)).toBe('1 schema linted: 1 passed, 0 failed, 1 warning')
    expect(lintSummary(660, 2, 0)).toBe('660 schemas linted: 658 passed, 2 failed, 0 warnings')
  })
})
