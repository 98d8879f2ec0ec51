/**
 * The words of a bad row, for free-text search on the `bad` index: what
 * Elasticsearch's standard analyser makes of the row's text (runs of letters,
 * digits and underscores, lower-cased; other characters split words). The row's raw parameters are kept in the
 * document as one JSON text (their shape varies), and a tracker's
 * `ue_px`/`cx` are base64: their words are taken from the decoded values, so
 * a bare word in a query finds the rows whose text contains it.
 */

/** Words kept per bad row (the rest of a huge row is still found with wildcards). */
export const MAX_WORDS = 2000
/** Longest word kept (Lucene's standard tokenizer splits at 255). */
export const MAX_WORD_LENGTH = 255
/** Largest base64 parameter decoded for its words. */
const MAX_DECODED = 256 * 1024

/** Nesting walked for words (deeper values are stored as JSON text, found with wildcards). */
const MAX_WALK_DEPTH = 100

const WORD = /[\p{L}\p{N}_]*[\p{L}\p{N}][\p{L}\p{N}_]*/gu
const BASE64 = /^[A-Za-z0-9+/_-]+=*$/

/** The words of a text: runs of letters, digits and underscores, lower-cased, at most `MAX_WORD_LENGTH` long. */
export function wordsOf(text: string): string[] {
  const out: string[] = []
  for (const m of text.toLowerCase().matchAll(WORD)) out.push(m[0].length > MAX_WORD_LENGTH ? m[0].slice(0, MAX_WORD_LENGTH) : m[0])
  return out
}

/** A base64 parameter's text, when it decodes to well-formed UTF-8. */
function decodedBase64(v: string): string | undefined {
  if (v.length < 8 || v.length > MAX_DECODED || !BASE64.test(v)) return undefined
  const s = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(s)
  } catch {
    return undefined
  }
}

/** The distinct words of every string in a bad row (as it was on the stream), with its base64 parameters decoded. */
export function badRowWords(row: unknown): string[] {
  const words = new Set<string>()
  const add = (s: string) => {
    for (const w of wordsOf(s)) {
      if (words.size >= MAX_WORDS) return
      words.add(w)
    }
  }
  const walk = (v: unknown, key: string | undefined, depth = 0): void => {
    if (words.size >= MAX_WORDS || depth > MAX_WALK_DEPTH) return
    if (typeof v === 'string') {
      add(v)
      if (key === 'value' || key === 'ue_px' || key === 'cx') {
        const d = decodedBase64(v)
        if (d !== undefined) add(d)
      }
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key, depth + 1)
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, k, depth + 1)
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      add(String(v))
    }
  }
  walk(row, undefined)
  return [...words]
}
