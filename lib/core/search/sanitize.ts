/**
 * What PostgreSQL refuses, made into what it takes. A document is stored as
 * `jsonb` and its line as `text`: `jsonb` refuses the escape `\u0000` (22P05)
 * and unpaired UTF-16 surrogates (22P02), `text` refuses the NUL character
 * (22021), and a document nested thousands of levels deep exhausts the
 * server's stack (PGlite stops answering). A record carrying any of these
 * is still stored: the offending parts are replaced, and the document says so
 * under `floe_sanitized` (a list of what was replaced, shown by the
 * dashboard). The line keeps the record's text as it was on the stream
 * (JSON escapes such as `\u0000` are plain characters of a text), unless it
 * holds a NUL character itself.
 */

/** The document key listing what was replaced to store it; absent when nothing was. */
export const SANITIZED_KEY = 'floe_sanitized'
/** Deepest nesting of objects and lists kept as such; deeper values are kept as their JSON text. */
export const MAX_DEPTH = 100
/** Largest document (characters of its JSON); a larger one has its long strings cut. */
export const MAX_DOC_CHARS = 2 * 1024 * 1024
/** What a string is cut to when its document is over `MAX_DOC_CHARS`. */
export const CUT_STRING_CHARS = 1024
/** Longest value of a column kept apart from the document (indexed: a B-tree entry holds at most about 2.7 KB, and a character takes up to 4 bytes). */
export const MAX_COLUMN_CHARS = 512

const REPLACEMENT = '\ufffd'
const SUSPECT = /[\u0000\ud800-\udfff]/
const NUL = /\u0000/g
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

export const NOTES = {
  nul: 'NUL characters (U+0000) replaced by U+FFFD',
  surrogate: 'unpaired UTF-16 surrogates (invalid Unicode) replaced by U+FFFD',
  depth: `values nested deeper than ${MAX_DEPTH} levels kept as their JSON text`,
  size: `strings cut to ${CUT_STRING_CHARS} characters: the document was over ${MAX_DOC_CHARS} characters`,
  tooLarge: `the document was over ${MAX_DOC_CHARS} characters even with its strings cut: only its top-level values are kept (the whole record is its line)`,
  lineNul: 'NUL characters in the line replaced by U+FFFD',
  column: `values of searchable columns cut to ${MAX_COLUMN_CHARS} characters`,
} as const

/** A string PostgreSQL's `text` and `jsonb` both take, and what was replaced in it. */
export function cleanString(s: string, notes: Set<string>): string {
  if (!SUSPECT.test(s)) return s
  let out = s
  if (out.includes('\u0000')) {
    out = out.replace(NUL, REPLACEMENT)
    notes.add(NOTES.nul)
  }
  const fixed = out.replace(LONE_SURROGATE, REPLACEMENT)
  if (fixed !== out) notes.add(NOTES.surrogate)
  return fixed
}

/** JSON text of a value, or a placeholder when it is too deep even for that. */
function jsonText(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null'
  } catch {
    return '[nested too deep to be written as JSON]'
  }
}

/** Whether a value needs nothing replaced (no suspect character, not too deep), adding up its strings' lengths (a lower bound of its JSON's). */
function isClean(v: unknown, depth: number, size: { chars: number }): boolean {
  if (typeof v === 'string') {
    size.chars += v.length
    return !SUSPECT.test(v)
  }
  if (v === null || typeof v !== 'object') return true
  if (depth >= MAX_DEPTH) return false
  if (Array.isArray(v)) {
    for (const x of v) if (!isClean(x, depth + 1, size)) return false
    return true
  }
  for (const k in v as Record<string, unknown>) {
    size.chars += k.length
    if (SUSPECT.test(k) || !isClean((v as Record<string, unknown>)[k], depth + 1, size)) return false
  }
  return true
}

function walk(v: unknown, depth: number, notes: Set<string>, cut: number | undefined): unknown {
  if (typeof v === 'string') {
    const s = cleanString(v, notes)
    return cut !== undefined && s.length > cut ? `${s.slice(0, cut)}…` : s
  }
  if (v === null || typeof v !== 'object') return v
  if (depth >= MAX_DEPTH) {
    notes.add(NOTES.depth)
    return walk(jsonText(v), depth, notes, cut ?? CUT_STRING_CHARS * 64)
  }
  if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1, notes, cut))
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[cleanString(k, notes)] = walk(x, depth + 1, notes, cut)
  return out
}

/**
 * A document PostgreSQL's `jsonb` takes: strings and keys without NUL or
 * unpaired surrogates, at most `MAX_DEPTH` deep, at most about
 * `MAX_DOC_CHARS` long; what was replaced is listed under `SANITIZED_KEY`
 * (with `extra` notes, e.g. about the line). Unchanged (the same object) when
 * nothing was replaced.
 */
export function sanitizeDocument(doc: Record<string, unknown>, extra: Iterable<string> = []): { doc: Record<string, unknown>; notes: string[] } {
  const notes = new Set<string>(extra)
  // the common case, a clean document of ordinary size, is only read (no copy, no JSON text)
  const size = { chars: 0 }
  if (notes.size === 0 && isClean(doc, 0, size) && size.chars < MAX_DOC_CHARS / 2) return { doc, notes: [] }
  let out = walk(doc, 0, notes, undefined) as Record<string, unknown>
  if (jsonText(out).length > MAX_DOC_CHARS) {
    notes.add(NOTES.size)
    out = walk(doc, 0, notes, CUT_STRING_CHARS) as Record<string, unknown>
    if (jsonText(out).length > MAX_DOC_CHARS) {
      notes.add(NOTES.tooLarge)
      const top: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(out).slice(0, 256)) if (x === null || typeof x !== 'object') top[k] = x
      out = top
    }
  }
  if (notes.size === 0) return { doc, notes: [] }
  const list = [...notes]
  return { doc: { ...out, [SANITIZED_KEY]: list }, notes: list }
}

/** A line PostgreSQL's `text` takes (no NUL character; unpaired surrogates, which the driver would replace anyway, replaced here). */
export function sanitizeLine(line: string, notes: Set<string>): string {
  if (!SUSPECT.test(line)) return line
  const inner = new Set<string>()
  const out = cleanString(line, inner)
  if (inner.has(NOTES.nul)) notes.add(NOTES.lineNul)
  if (inner.has(NOTES.surrogate)) notes.add(NOTES.surrogate)
  return out
}

/** A value for a searchable column: clean, and cut to `MAX_COLUMN_CHARS`. */
export function sanitizeColumn(v: string | null, notes: Set<string>): string | null {
  if (v === null) return null
  const s = cleanString(v, notes)
  if (s.length <= MAX_COLUMN_CHARS) return s
  notes.add(NOTES.column)
  return s.slice(0, MAX_COLUMN_CHARS)
}

/** A list of strings (words, specification ids) the store takes: clean, without the ones that had to change. */
export function sanitizeStrings(list: readonly string[]): string[] {
  return list.filter((s) => !SUSPECT.test(s) && s.length <= MAX_COLUMN_CHARS)
}

/** Longest column value in the fallback form. */
const FALLBACK_COLUMN_CHARS = 255

/** A line in printable ASCII: every other character as a JSON escape (`\uXXXX`), so a JSON line stays the same JSON. */
export function asciiLine(line: string): string {
  return line.replace(/[^\x20-\x7e\t]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * The form a record takes when the store refused its document even
 * sanitized: its columns (cut short), its line in printable ASCII, and a
 * document holding only the marker, which says why.
 */
export function fallbackForm<T extends { doc: Record<string, unknown>; line: string }>(d: T, error: string, columns: readonly (keyof T)[]): T {
  const before = Array.isArray(d.doc[SANITIZED_KEY]) ? (d.doc[SANITIZED_KEY] as string[]) : []
  const reason = asciiLine(error.replace(/\s+/g, ' ')).slice(0, 300)
  const out = { ...d, doc: { [SANITIZED_KEY]: [...before, `the store refused the document (${reason}): only the record's line (in printable ASCII) and its columns are kept`] }, line: asciiLine(d.line) } as T
  for (const c of columns) {
    const v = d[c]
    if (typeof v === 'string') (out as Record<keyof T, unknown>)[c] = asciiLine(v).slice(0, FALLBACK_COLUMN_CHARS)
  }
  return out
}
