/**
 * Counts in words: `1 schema`, `2 schemas`, `0 bad rows`, `1 entry`,
 * `3 entries`. Used by the command line and by the pages (bundled into them),
 * so that no message says "1 schemas".
 */

/** The noun for a count: `one` for exactly 1 (and -1), else `many` (`one` + `s` unless given). */
export function noun(count: number, one: string, many: string = `${one}s`): string {
  return Math.abs(count) === 1 ? one : many
}

/** The count and its noun: `plural(1, 'schema')` is `1 schema`; `format` writes the number (`1,234` in the pages). */
export function plural(count: number, one: string, many?: string, format: (n: number) => string = String): string {
  return `${format(count)} ${noun(count, one, many)}`
}
