/**
 * The regular expressions of event-recovery configurations (Java syntax in
 * the tool) run on the linear-time engine (RE2JS): `find` (found anywhere),
 * `full` (the whole text) and `replaceAll` with `$1` group references. A
 * pattern the engine cannot run in linear time (backreferences, lookaround)
 * is refused with the reason; callers add the place.
 */
import { RE2JS } from 're2js'
import { toRe2, UnsupportedPattern } from '../../iglu/regex-engine'

export interface RecoveryRegex {
  readonly source: string
  find(text: string): boolean
  full(text: string): boolean
  replaceAll(text: string, replacement: string): string
}

/** Compiles a pattern; throws `UnsupportedPattern` with the reason. */
export function recoveryRegex(pattern: string): RecoveryRegex {
  // Java's `(?U)` (Unicode character classes) is RE2's "ungreedy": dropped, ECMA classes are kept by toRe2.
  const body = pattern.replace(/^\(\?U\)/, '')
  let re: ReturnType<typeof RE2JS.compile>
  try {
    // syntax as a JavaScript pattern first (what toRe2 translates), then RE2's
    new RegExp(body)
    re = RE2JS.compile(toRe2(body))
  } catch (err) {
    if (err instanceof UnsupportedPattern) throw err
    throw new UnsupportedPattern(`'${pattern}' cannot run on the linear-time regular expression engine: ${(err as Error).message}`)
  }
  return {
    source: pattern,
    find: (text) => re.matcher(text).find(),
    full: (text) => re.matches(text),
    replaceAll: (text, replacement) => re.matcher(text).replaceAll(replacement),
  }
}
