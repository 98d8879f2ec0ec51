/**
 * Conversions of tracker parameters into atomic field values, with the
 * semantics (and error texts) of Snowplow Enrich: Java integer, BigDecimal and
 * timestamp rules, TSV-safe strings, commons-codec lenient base64.
 */

export type Conv<T> = { ok: true; value: T | null } | { ok: false; error: string }

const ok = <T>(value: T | null): Conv<T> => ({ ok: true, value })
const err = (error: string): Conv<never> => ({ ok: false, error })

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/

/** TSV-safe text: tabs become 4 spaces, control characters are removed; empty → null. */
export function tsv(s: string): string | null {
  if (!CONTROL.test(s)) return s.length === 0 ? null : s
  // eslint-disable-next-line no-control-regex
  const out = s.replace(/\t/g, '    ').replace(/[\x00-\x1f\x7f]/g, '')
  return out.length === 0 ? null : out
}

const INT_RE = /^[+-]?[0-9]+$/

/** Java Integer.parseInt; the text `null` (any case) is null. */
export function toInt(s: string): Conv<number> {
  const len = s.length
  if (len > 0 && len < 10 && allDigits(s, 0, len)) return { ok: true, value: +s }
  if (s.length === 4 && s.toLowerCase() === 'null') return ok(null)
  if (!INT_RE.test(s)) return err('Cannot be converted to java.lang.Integer')
  const n = Number(s)
  if (n > 2147483647 || n < -2147483648) return err('Cannot be converted to java.lang.Integer')
  return ok(n)
}

/** Exactly `1` or `0`. */
export function toBool(s: string): Conv<number> {
  if (s === '1') return ok(1)
  if (s === '0') return ok(0)
  return err('Cannot be converted to Boolean-like java.lang.Byte')
}

const DEC_RE = /^([+-]?)(?:([0-9]+)(?:\.([0-9]*))?|\.([0-9]+))(?:[eE]([+-]?[0-9]+))?$/

/**
 * Java `new BigDecimal(s)`, rescaled to scale 0 when negative, written with
 * `BigDecimal.toString()` (scientific notation when the adjusted exponent is
 * below −6). The text `null` (any case) is null.
 */
export function toDecimal(s: string): Conv<string> {
  if (s.length === 4 && s.toLowerCase() === 'null') return ok(null)
  const m = DEC_RE.exec(s)
  if (!m) {
    const bad = [...s].find((ch) => !/[0-9.eE+-]/.test(ch))
    const msg = s.length === 0
      ? 'Index 0 out of bounds for length 0'
      : bad !== undefined
        ? `Character ${bad} is neither a decimal digit number, decimal point, nor "e" notation exponential mark.`
        : 'Character array is missing "exponent" mark \'e\' or \'E\'.'
    return err(`Cannot be converted to java.math.BigDecimal. Error : ${msg}`)
  }
  const negative = m[1] === '-'
  const intPart = m[2] ?? ''
  const fracPart = m[3] ?? m[4] ?? ''
  const exp = m[5] === undefined ? 0 : Number(m[5])
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 2147483647) return err('Cannot be converted to java.math.BigDecimal. Error : Exponent overflow.')
  let digits = (intPart + fracPart).replace(/^0+/, '')
  let scale = fracPart.length - exp
  if (scale < 0) {
    if (digits !== '') digits += '0'.repeat(-scale)
    scale = 0
  }
  if (digits === '') digits = '0'
  const sign = negative && digits !== '0' ? '-' : ''
  const adjusted = -scale + (digits.length - 1)
  if (scale === 0) return ok(sign + digits)
  if (adjusted >= -6) {
    // plain notation
    if (digits.length > scale) return ok(sign + digits.slice(0, digits.length - scale) + '.' + digits.slice(digits.length - scale))
    return ok(sign + '0.' + '0'.repeat(scale - digits.length) + digits)
  }
  const mantissa = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits
  return ok(`${sign}${mantissa}E${adjusted}`)
}

/** Whether `s[start, end)` is only ASCII digits. */
/** The value of the decimal digits `s[start, end)` (exact up to 2^53, only compared beyond), or -1 when one is not a digit. */
function digitsValue(s: string, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

function allDigits(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

/** `WIDTHxHEIGHT` → two integers. */
export function toDims(s: string): { ok: true; value: [number, number] } | { ok: false; error: string } {
  const x = s.indexOf('x')
  const w = x > 0 ? digitsValue(s, 0, x) : -1
  const h = x > 0 && x < s.length - 1 ? digitsValue(s, x + 1, s.length) : -1
  if (w < 0 || h < 0) return { ok: false, error: 'Does not conform to regex (\\d+)x(\\d+)' }
  if (w > 2147483647) return { ok: false, error: `Could not be converted to java.lang.Integer s` }
  if (h > 2147483647) return { ok: false, error: `Could not be converted to java.lang.Integer s` }
  return { ok: true, value: [w, h] }
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n

/** Recently formatted seconds (`yyyy-MM-dd HH:mm:ss.`), by second modulo the table size. */
const SECONDS = 256
const secondKeys = new Float64Array(SECONDS).fill(Number.NaN)
const secondTexts: string[] = new Array<string>(SECONDS).fill('')

/** `yyyy-MM-dd HH:mm:ss.SSS` in UTC (years beyond 9999 printed in full). */
export function formatTimestamp(ms: number): string {
  if (Number.isInteger(ms) && ms >= -8.64e15 && ms <= 8.64e15) {
    const sec = Math.floor(ms / 1000)
    const slot = sec & (SECONDS - 1)
    const m = ms - sec * 1000
    if (secondKeys[slot] !== sec) {
      const full = formatDate(ms)
      secondKeys[slot] = sec
      secondTexts[slot] = full.slice(0, full.length - 3)
      return full
    }
    return secondTexts[slot] + (m < 10 ? '00' : m < 100 ? '0' : '') + m
  }
  return formatDate(ms)
}

function formatDate(ms: number): string {
  const d = new Date(ms)
  const ys = yearText(d.getUTCFullYear())
  return `${ys}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${pad3(d.getUTCMilliseconds())}`
}

/** A year as Snowplow's formatter writes it: at least four digits, a minus sign before years BC. */
function yearText(y: number): string {
  return y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0')
}

/** The proleptic Gregorian [year, month, day] of a day number (days since 1970-01-01). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d]
}

/**
 * Any Java `long` of milliseconds as `yyyy-MM-dd HH:mm:ss.SSS` (UTC), or with
 * `iso` as Joda's `DateTime.toString` (`…T…Z`): years beyond JavaScript
 * dates' range too, as they appear in Snowplow's messages.
 */
export function longTimestampText(ms: bigint, iso = false): string {
  const DAY = 86_400_000n
  let days = ms / DAY
  let rem = ms % DAY
  if (rem < 0n) {
    rem += DAY
    days -= 1n
  }
  const [y, m, d] = civilFromDays(Number(days))
  const r = Number(rem)
  const time = `${pad2(Math.floor(r / 3_600_000))}:${pad2(Math.floor(r / 60_000) % 60)}:${pad2(Math.floor(r / 1000) % 60)}.${pad3(r % 1000)}`
  return `${yearText(y)}-${pad2(m)}-${pad2(d)}${iso ? 'T' : ' '}${time}${iso ? 'Z' : ''}`
}

/** Milliseconds of a `yyyy-MM-dd HH:mm:ss.SSS` UTC timestamp. */
export function parseTimestamp(s: string): number {
  if (s.length === 23 && isTimestampText(s)) {
    const y = digits(s, 0, 4)
    const m = digits(s, 5, 7)
    const time = digits(s, 11, 13) * 3_600_000 + digits(s, 14, 16) * 60_000 + digits(s, 17, 19) * 1000 + digits(s, 20, 23)
    // Date.UTC maps years 0-99 to 1900-1999 and normalises months out of range: left to it
    if (y >= 100 && m >= 1 && m <= 12) return daysFromCivil(y, m, digits(s, 8, 10)) * 86_400_000 + time
    return Date.UTC(y, m - 1, digits(s, 8, 10), digits(s, 11, 13), digits(s, 14, 16), digits(s, 17, 19), digits(s, 20, 23))
  }
  return Date.UTC(
    Number(s.slice(0, 4)), Number(s.slice(5, 7)) - 1, Number(s.slice(8, 10)),
    Number(s.slice(11, 13)), Number(s.slice(14, 16)), Number(s.slice(17, 19)), Number(s.slice(20, 23)),
  )
}

/** Days from 1970-01-01 to a proleptic Gregorian date (month 1-12; days past the month's end run on, as in Date.UTC). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** The number the ASCII digits `s[start, end)` write. */
function digits(s: string, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) n = n * 10 + s.charCodeAt(i) - 48
  return n
}

/** Digits where `yyyy-MM-dd HH:mm:ss.SSS` has them, and its separators. */
function isTimestampText(s: string): boolean {
  for (let i = 0; i < 23; i++) {
    const c = s.charCodeAt(i)
    if (i === 4 || i === 7) {
      if (c !== 45) return false
    } else if (i === 10) {
      if (c !== 32) return false
    } else if (i === 13 || i === 16) {
      if (c !== 58) return false
    } else if (i === 19) {
      if (c !== 46) return false
    } else if (c < 48 || c > 57) return false
  }
  return true
}

const LONG_RE = /^[+-]?[0-9]{1,19}$/
/** Milliseconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z. */
const YEAR_0 = -62167219200000
const YEAR_10000 = 253402300800000

/** Milliseconds since epoch (Java Long) → timestamp text; Redshift-compatible years only. */
export function toTimestamp(s: string): Conv<string> {
  const plain = plainMillis(s)
  if (plain === plain) return { ok: true, value: formatTimestamp(plain) }
  if (!LONG_RE.test(s)) return err('Not in the expected format: ms since epoch')
  const big = BigInt(s)
  if (big > 9223372036854775807n || big < -9223372036854775808n) return err('Not in the expected format: ms since epoch')
  const ms = Number(big)
  // a year before 0 or after 9999 cannot be loaded
  if (ms < YEAR_0 || ms >= YEAR_10000) return err(`Formatting as ${longTimestampText(big)} is not Redshift-compatible`)
  return ok(formatTimestamp(ms))
}

/**
 * The milliseconds of an ordinary `toTimestamp` input (up to 15 digits, no
 * sign, before year 10000: exact as a double, always valid), else NaN (then
 * `toTimestamp` decides).
 */
export function plainMillis(s: string): number {
  const n = s.length
  if (n === 0 || n > 15) return Number.NaN
  // read digit by digit: exact below 2^53, and cheaper than converting the text
  let ms = 0
  for (let i = 0; i < n; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return Number.NaN
    ms = ms * 10 + d
  }
  return ms < YEAR_10000 ? ms : Number.NaN
}

/** Epoch ms of 0100-01-01T00:00:00Z: from there on, `parseTimestamp(formatTimestamp(ms)) === ms`. */
export const YEAR_100 = -59011459200000

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A canonical UUID (any case), lower-cased. */
/** 0: not a canonical ASCII UUID; 1: one in lower case; 2: one with upper-case hex digits. */
function uuidShape(s: string): number {
  if (s.length !== 36) return 0
  let upper = false
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i)
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return 0
    } else if (c >= 97 && c <= 102) continue
    else if (c >= 48 && c <= 57) continue
    else if (c >= 65 && c <= 70) upper = true
    else return 0
  }
  return upper ? 2 : 1
}

export function toUuid(s: string): Conv<string> {
  const shape = uuidShape(s)
  if (shape === 1) return { ok: true, value: s }
  const l = s.toLowerCase()
  return UUID_RE.test(l) ? ok(l) : err('Not a valid UUID')
}

export function isUuid(s: string): boolean {
  return uuidShape(s) !== 0 || UUID_RE.test(s.toLowerCase())
}

const PLATFORMS = new Set(['web', 'iot', 'app', 'mob', 'pc', 'cnsl', 'tv', 'srv', 'headset'])

export function toPlatform(s: string): Conv<string> {
  return PLATFORMS.has(s) ? ok(s) : err('Not a valid platform')
}

/** The part before the first `,`, `|` or space, TSV-safe. */
export function toIp(s: string): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 32 || c === 44 || c === 124) return tsv(s.slice(0, i))
  }
  return tsv(s)
}

/** Event type code → event name. */
export const EVENT_CODES: Readonly<Record<string, string>> = {
  se: 'struct', ev: 'struct', ad: 'ad_impression', tr: 'transaction', ti: 'transaction_item', pv: 'page_view', pp: 'page_ping', ue: 'unstruct',
}

export function toEventType(s: string): Conv<string> {
  const e = Object.prototype.hasOwnProperty.call(EVENT_CODES, s) ? EVENT_CODES[s] : undefined
  return e ? ok(e) : err('Not a valid event type')
}

/** The value of each base64 character (both alphabets); -1 for others. */
const B64 = new Int8Array(128).fill(-1)
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i
B64['-'.charCodeAt(0)] = 62
B64['_'.charCodeAt(0)] = 63

/**
 * Lenient base64 as commons-codec decodes it: standard and URL-safe alphabets,
 * padding optional, characters outside the alphabet skipped, decoding stops at
 * the first `=`. A trailing lone character is dropped.
 */
export function decodeBase64Lenient(s: string): Buffer {
  const out = Buffer.allocUnsafe(Math.ceil((s.length * 3) / 4) + 3)
  let n = 0
  let acc = 0
  let bits = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 61) break
    const v = c < 128 ? B64[c]! : -1
    if (v < 0) continue
    acc = ((acc << 6) | v) & 0xffffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[n++] = (acc >> bits) & 0xff
    }
  }
  return out.subarray(0, n)
}

const CLEAN_B64 = /^[A-Za-z0-9+/_-]*={0,2}$/

/** Scratch space for decoding (reused: the decoded text is copied out). */
let scratch = Buffer.allocUnsafe(4096)

/**
 * Lenient base64 → UTF-8 text. Node's decoder reads one-byte text exactly as
 * the lenient decoder does (skipping characters outside both alphabets,
 * stopping at the first `=`), so it serves for ASCII text (`ascii`: the caller
 * knows) and for clean base64 of either alphabet.
 */
export function base64Text(s: string, ascii = false): string {
  if (ascii || (s.length % 4 !== 1 && CLEAN_B64.test(s))) {
    const need = Math.ceil((s.length * 3) / 4) + 3
    if (need > scratch.length) {
      if (need > 1 << 20) return decodeBase64Lenient(s).toString('utf8')
      scratch = Buffer.allocUnsafe(Math.max(need, scratch.length * 2))
    }
    // what write(s, 0, 'base64') and toString('utf8', 0, n) call, without their argument handling
    const b = scratch as unknown as { base64Write(s: string, offset: number, length: number): number; utf8Slice(start: number, end: number): string }
    const n = b.base64Write(s, 0, scratch.length)
    return b.utf8Slice(0, n)
  }
  return decodeBase64Lenient(s).toString('utf8')
}
