/**
 * Nesting depth of JSON, measured without recursion so that no input, however
 * deep, can overflow the stack. Every walk over user-supplied JSON in the
 * registry runs only after one of these has bounded its depth.
 */

/** The deepest nesting of `[`/`{` in JSON text, read without parsing. */
export function jsonTextDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: the next character is escaped
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth
    } else if (c === 93 || c === 125) depth--
  }
  return max
}

/** The nesting depth of a parsed JSON value (a scalar is 0, `[]` is 1), with an explicit stack. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  let max = 0
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (d > max) max = d
    for (const x of Array.isArray(v) ? v : Object.values(v as object)) {
      if (x !== null && typeof x === 'object') stack.push([x, d + 1])
    }
  }
  return max
}
