/**
 * Snowplow Mini's renaming of bad-row fields whose type varies, so every
 * field path of the bad index has one type: a union-typed key holding a
 * string becomes `<key>_str`, holding a list `<key>_list`; some objects of
 * varying shape are kept as their JSON text. The store keeps bad rows so
 * (queries written for Mini's indices work unchanged); the pages undo it to
 * show a bad row as it came (`restoreUnions`). Plain code, no imports but
 * the depth limit: the pages bundle it.
 */
import { MAX_DEPTH } from './sanitize'

/** Keys whose value is a string in some bad rows and an object or a list in others. */
export const UNION_KEYS: ReadonlySet<string> = new Set(['failure', 'payload', 'error', 'errors', 'message'])
/** Objects of varying shape, kept as their JSON text (paths by their last keys). */
export const AS_TEXT: readonly (readonly string[])[] = [['payload', 'raw', 'parameters'], ['expectedMapping'], ['json']]

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const endsWith = (path: readonly string[], tail: readonly string[]) => tail.every((seg, i) => path[path.length - tail.length + i] === seg)

/** Mini's renaming (see above). */
export function renameUnions(v: unknown, path: readonly string[] = [], depth = 0): unknown {
  // deeper values are kept as JSON text by the sanitizer: no need to go further (nor to overflow the stack)
  if (depth > MAX_DEPTH) return v
  if (Array.isArray(v)) return v.map((x) => renameUnions(x, path, depth + 1))
  if (!isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) {
    const here = [...path, k]
    if (x !== null && typeof x === 'object' && AS_TEXT.some((p) => endsWith(here, p))) {
      out[k] = JSON.stringify(x)
      continue
    }
    const key = UNION_KEYS.has(k) ? (typeof x === 'string' ? `${k}_str` : Array.isArray(x) ? `${k}_list` : k) : k
    out[key] = renameUnions(x, here, depth + 1)
  }
  return out
}

/** The key a stored key was renamed from, when it is a renamed one holding what its renaming says. */
function originalKey(k: string, x: unknown, siblings: Record<string, unknown>): string {
  const m = /^(.+)_(str|list)$/.exec(k)
  if (!m || !UNION_KEYS.has(m[1]!) || Object.prototype.hasOwnProperty.call(siblings, m[1]!)) return k
  return (m[2] === 'str' && typeof x === 'string') || (m[2] === 'list' && Array.isArray(x)) ? m[1]! : k
}

/** A bad row as it came, from its stored document: `renameUnions` undone (keys named back, JSON texts parsed back). */
export function restoreUnions(v: unknown, path: readonly string[] = [], depth = 0): unknown {
  if (depth > MAX_DEPTH) return v
  if (Array.isArray(v)) return v.map((x) => restoreUnions(x, path, depth + 1))
  if (!isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) {
    const key = originalKey(k, x, v)
    const here = [...path, key]
    if (typeof x === 'string' && key === k && AS_TEXT.some((p) => endsWith(here, p))) {
      try {
        const parsed: unknown = JSON.parse(x)
        if (parsed !== null && typeof parsed === 'object') {
          out[key] = parsed
          continue
        }
      } catch {
        // a text that was a text
      }
    }
    out[key] = restoreUnions(x, here, depth + 1)
  }
  return out
}
