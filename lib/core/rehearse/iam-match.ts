/**
 * The matching rules of IAM policies: wildcards (`*` any run of characters,
 * `?` one character), actions (case-insensitive), ARNs (case-sensitive,
 * colon-separated segment by segment, the sixth segment — the resource —
 * taking the rest; a pattern that starts like an ARN with fewer segments
 * matches nothing), and policy variables (`${aws:username}`, with a default
 * `${aws:username, 'x'}` and the escapes `${*}`, `${?}`, `${$}`).
 */

/** A request's context: condition keys and their values (a list for multivalued keys). */
export type RequestContext = Readonly<Record<string, string | number | boolean | readonly string[]>>

const cache = new Map<string, RegExp>()

/** A wildcard pattern as an anchored regular expression; `literal` keeps `*` and `?` as themselves. */
function wildcardRegExp(pattern: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? 'i' : 's'}${pattern}`
  let re = cache.get(key)
  if (!re) {
    let src = ''
    for (const ch of pattern) {
      if (ch === '*') src += '.*'
      else if (ch === '?') src += '.'
      else src += ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
    }
    re = new RegExp(`^${src}$`, ignoreCase ? 'si' : 's')
    if (cache.size > 10_000) cache.clear()
    cache.set(key, re)
  }
  return re
}

/** Whether `text` matches the wildcard `pattern`. */
export function wildcardMatch(pattern: string, text: string, ignoreCase = false): boolean {
  if (pattern === '*') return true
  if (!pattern.includes('*') && !pattern.includes('?')) return ignoreCase ? pattern.toLowerCase() === text.toLowerCase() : pattern === text
  return wildcardRegExp(pattern, ignoreCase).test(text)
}

/** Whether an action (`service:Action`) matches a policy's action pattern (`s3:Get*`, `*`): case-insensitive. */
export function actionMatches(pattern: string, action: string): boolean {
  return wildcardMatch(pattern, action, true)
}

/** The six segments of an ARN (the resource segment keeps its colons), or undefined if it is not one. */
export function arnSegments(arn: string): string[] | undefined {
  const parts = arn.split(':')
  if (parts.length < 6) return undefined
  return [...parts.slice(0, 5), parts.slice(5).join(':')]
}

/**
 * Whether `arn` matches the policy's ARN pattern: `*` matches any ARN; else
 * each of the six segments is matched on its own, case-sensitively, so a
 * wildcard in one segment never spans a colon into the next (except in the
 * resource segment, which is the rest of the ARN).
 */
export function arnMatches(pattern: string, arn: string): boolean {
  if (pattern === '*') return true
  const p = arnSegments(pattern)
  const a = arnSegments(arn)
  if (!p || !a) return p === undefined && a === undefined && !pattern.startsWith('arn:') && wildcardMatch(pattern, arn)
  return p.every((seg, i) => wildcardMatch(seg, a[i]!))
}

/** A string with characters that policy variables escape (`*`, `?`, `$`), for use inside a wildcard pattern. */
export type Substitution = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly missing: string }

/**
 * Replaces the policy variables of `text` from the request context. A
 * variable with no value (and no default) makes the whole element
 * unmatched: `{ ok: false }`. `wildcards` says whether the element treats
 * `*` and `?` as wildcards; then a variable's value is matched literally.
 */
export function substituteVariables(text: string, context: RequestContext, wildcards: boolean): Substitution {
  if (!text.includes('${')) return { ok: true, text }
  let missing: string | undefined
  const literal = (s: string) => (wildcards ? s.replace(/[*?]/g, (c) => `\u0000${c}`) : s)
  const out = text.replace(/\$\{([^}]*)\}/g, (_, inner: string) => {
    if (inner === '*' || inner === '?' || inner === '$') return literal(inner)
    const m = /^\s*([^,]+?)\s*(?:,\s*'([^']*)'\s*)?$/.exec(inner)
    const key = m?.[1] ?? inner
    const found = lookup(context, key)
    const value = typeof found === 'string' ? found : typeof found === 'number' || typeof found === 'boolean' ? String(found) : undefined
    if (value !== undefined) return literal(value)
    if (m?.[2] !== undefined) return literal(m[2])
    missing ??= key
    return ''
  })
  return missing === undefined ? { ok: true, text: out } : { ok: false, missing }
}

/** A wildcard match where `\u0000*` and `\u0000?` (from substituted variables) are literal characters. */
export function wildcardMatchEscaped(pattern: string, text: string, ignoreCase = false): boolean {
  if (!pattern.includes('\u0000')) return wildcardMatch(pattern, text, ignoreCase)
  let src = ''
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!
    if (ch === '\u0000') { src += `\\${pattern[++i]}`; continue }
    if (ch === '*') src += '.*'
    else if (ch === '?') src += '.'
    else src += ch.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
  }
  return new RegExp(`^${src}$`, ignoreCase ? 'si' : 's').test(text)
}

/** An ARN match where substituted variables' `*` and `?` are literal. */
export function arnMatchesEscaped(pattern: string, arn: string): boolean {
  if (!pattern.includes('\u0000')) return arnMatches(pattern, arn)
  const p = arnSegments(pattern)
  const a = arnSegments(arn)
  if (!p || !a) return p === undefined && a === undefined && !pattern.startsWith('arn:') && wildcardMatchEscaped(pattern, arn)
  return p.every((seg, i) => wildcardMatchEscaped(seg, a[i]!))
}

/** A context key's value; keys are case-insensitive (the tag part after `/` too, as IAM compares them). */
export function lookup(context: RequestContext, key: string): RequestContext[string] | undefined {
  if (key in context) return context[key]
  const k = key.toLowerCase()
  for (const [name, v] of Object.entries(context)) if (name.toLowerCase() === k) return v
  return undefined
}
