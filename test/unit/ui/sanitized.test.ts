/**
 * The dashboard's drawer shows a "stored sanitized" badge with what the
 * search store replaced, read from the document's `floe_sanitized` (the key
 * the loader writes).
 */
import { describe, expect, it } from 'vitest'
import { NOTES, SANITIZED_KEY, sanitizeDocument } from '../../../lib/core/search/sanitize'

// the pages' module (plain browser JavaScript, without types)
const COLUMNS: string = '../../../lib/ui/dashboard/columns.js'
const ui = (await import(COLUMNS)) as { SANITIZED_KEY: string; sanitizedNotes: (doc: unknown) => string[] }

describe('a sanitized document in the dashboard', () => {
  it('reads the notes the loader wrote, under the same key', () => {
    expect(ui.SANITIZED_KEY).toBe(SANITIZED_KEY)
    expect(ui.sanitizedNotes(sanitizeDocument({ body: 'a\u0000b' }).doc)).toEqual([NOTES.nul])
  })
  it('shows nothing for a document stored as it came', () => {
    expect(ui.sanitizedNotes({ body: 'ab' })).toEqual([])
    expect(ui.sanitizedNotes(undefined)).toEqual([])
  })
})
