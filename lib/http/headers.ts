/**
 * Header values on the wire: bytes a client sent as UTF-8 are read as UTF-8
 * (Node's parser hands them over as Latin-1), and a response is checked before
 * anything that must not be undone (a stream write) happens for it.
 */

const fatal = new TextDecoder('utf-8', { fatal: true })

/** A header value Node read as Latin-1, decoded as UTF-8 when its bytes are valid UTF-8 (else unchanged). */
export function decodeHeaderValue(latin1: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(latin1)) return latin1
  try {
    return fatal.decode(Buffer.from(latin1, 'latin1'))
  } catch {
    return latin1
  }
}

/** What an HTTP/1.1 header field value may hold (tab, visible ASCII, space; obs-text 0x80–0xFF as Node allows it). */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Why a response cannot be sent as it is, or undefined when it can. */
export function responseProblem(res: { headers?: Readonly<Record<string, string>>; cookies?: readonly string[] }): string | undefined {
  for (const [name, value] of Object.entries(res.headers ?? {})) {
    if (!TOKEN.test(name)) return `header name ${JSON.stringify(name)} is not a token`
    if (!VALUE.test(value)) return `header ${name} has a character that cannot be sent`
  }
  for (const c of res.cookies ?? []) if (!VALUE.test(c)) return 'a Set-Cookie value has a character that cannot be sent'
  return undefined
}

/** Characters outside printable ASCII percent-encoded as UTF-8, so a URL can go into a `Location` header. */
export function asciiUrl(url: string): string {
  // eslint-disable-next-line no-control-regex
  return url.replace(/[^\x21-\x7e]+/gu, (s) => encodeURIComponent(s))
}
