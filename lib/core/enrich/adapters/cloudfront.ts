/**
 * CloudFront web distribution access logs
 * (`/com.amazon.aws.cloudfront/wd_access_log`): the body is one tab-separated
 * log line; its field count (12, 15, 18, 19, 23, 24 or 26) picks the schema
 * version. The line's date and time become the collector timestamp, its client
 * IP and user agent those of the event, its referer the page URL.
 */
import type { LoadedPayload } from '../payload'
import { events, fail, failAll, inputData, unstructParams, type Failure, type Webhook, schemaUri } from './common'
import { JNum, type J, type JObj } from './jtree'

const TRACKER = 'com.amazon.aws.cloudfront/wd_access_log'

const SCHEMA = (addition: number) => `iglu:com.amazon.aws.cloudfront/wd_access_log/jsonschema/1-0-${addition}`

/** Field count → schema (the log format changed over the years). */
export const CLOUDFRONT_SCHEMAS: ReadonlyMap<number, string> = new Map([
  [12, SCHEMA(0)],
  [15, SCHEMA(1)],
  [18, SCHEMA(2)],
  [19, SCHEMA(3)],
  [23, SCHEMA(4)],
  [24, SCHEMA(5)],
  [26, SCHEMA(6)],
])

const FIELD_NAMES = [
  'dateTime', 'xEdgeLocation', 'scBytes', 'cIp', 'csMethod', 'csHost', 'csUriStem', 'scStatus', 'csReferer', 'csUserAgent', 'csUriQuery', 'csCookie',
  'xEdgeResultType', 'xEdgeRequestId', 'xHostHeader', 'csProtocol', 'csBytes', 'timeTaken', 'xForwardedFor', 'sslProtocol', 'sslCipher',
  'xEdgeResponseResultType', 'csProtocolVersion', 'fleStatus', 'fleEncryptedFields',
]

export const cloudfront: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body'))
  const fields = p.body.split('\t')
  const schema = CLOUDFRONT_SCHEMAS.get(fields.length)
  if (schema === undefined) return fail(inputData('body', p.body, `access log contained ${fields.length} fields, expected 12, 15, 18, 19, 23, 24 or 26`))
  const values = [`${fields[0]}T${fields[1]}Z`, ...fields.slice(2)]
  const failures: Failure[] = []
  const data: JObj = new Map()
  for (let i = 0; i < values.length && i < FIELD_NAMES.length; i++) {
    const name = FIELD_NAMES[i]!
    const v = values[i]!
    const r = fieldValue(name, v)
    if (r.ok) data.set(name, r.value)
    else failures.push(r.failure)
  }
  const ts = accessLogTime(fields[0]!, fields[1]!)
  // field failures are reported last first, after a timestamp failure
  failures.reverse()
  if (!ts.ok) failures.unshift(ts.failure)
  if (failures.length > 0 || !ts.ok) return failAll(failures)
  const referer = values[8]!
  const userAgent = values[9]!
  const qs = new Map<string, string | null>(referer === '' ? [] : [['url', referer]])
  const payload: LoadedPayload = {
    ...p,
    timestamp: ts.ms,
    ipAddress: values[3] === '' ? null : values[3]!,
    userAgent: userAgent === '' ? null : singleEncodePcts(userAgent),
    refererUri: null,
    headers: [],
    networkUserId: null,
  }
  return events(payload, [unstructParams(TRACKER, 'srv', qs, schemaUri(ctx, schema), data)])
}

type FieldResult = { ok: true; value: J } | { ok: false; failure: Failure }

function fieldValue(name: string, v: string): FieldResult {
  if (v === '') return { ok: true, value: null }
  if (name === 'timeTaken') {
    const d = javaDouble(v)
    return d === undefined ? { ok: false, failure: inputData(name, v, 'cannot be converted to Double') } : { ok: true, value: new JNum(String(d)) }
  }
  if (name === 'csBytes' || name === 'scBytes') {
    const n = /^[-+]?\d{1,10}$/.test(v) ? Number(v) : Number.NaN
    if (!Number.isInteger(n) || n > 2147483647 || n < -2147483648) return { ok: false, failure: inputData(name, v, 'cannot be converted to Int') }
    return { ok: true, value: new JNum(String(n)) }
  }
  if (name === 'csReferer' || name === 'csUserAgent') {
    const d = javaUrlDecode(singleEncodePcts(v))
    if (!d.ok) return { ok: false, failure: inputData(name, v, `Exception URL-decoding (encoding UTF-8): ${d.error}`) }
    return { ok: true, value: d.value.replace(/[\r\n]/g, '').replace(/\t/g, '    ') }
  }
  if (name === 'csUriQuery') return { ok: true, value: singleEncodePcts(v) }
  return { ok: true, value: v }
}

/** `%25XX` → `%XX` (CloudFront encodes some percents twice). */
export const singleEncodePcts = (s: string): string => s.replace(/%25([0-9a-fA-F]{2})/g, '%$1')

/** A finite Java `Double.parseDouble` of `s`, or undefined. */
function javaDouble(s: string): number | undefined {
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?\s*$/.test(s)) return undefined
  const n = Number(s.trim().replace(/[dDfF]$/, ''))
  return Number.isFinite(n) ? n : undefined
}

/** Java's `URLDecoder.decode(s, "UTF-8")`: `+` is a space, `%XX` runs are UTF-8 bytes. */
export function javaUrlDecode(s: string): { ok: true; value: string } | { ok: false; error: string } {
  let out = ''
  let i = 0
  const n = s.length
  while (i < n) {
    const c = s[i]!
    if (c === '+') {
      out += ' '
      i++
    } else if (c === '%') {
      const bytes: number[] = []
      while (i + 2 < n && s[i] === '%') {
        const hex = s.slice(i + 1, i + 3)
        // Integer.parseInt(hex, 16): a sign then a digit, or two digits
        const signed = (hex[0] === '-' || hex[0] === '+') && /[0-9a-fA-F]/.test(hex[1]!)
        const bad = signed ? -1 : [...hex].findIndex((h) => !/[0-9a-fA-F]/.test(h))
        if (bad >= 0) return { ok: false, error: `URLDecoder: Illegal hex characters in escape (%) pattern - Error at index ${bad} in: "${hex}"` }
        const v = parseInt(hex, 16)
        if (v < 0) return { ok: false, error: 'URLDecoder: Illegal hex characters in escape (%) pattern - negative value' }
        bytes.push(v)
        i += 3
      }
      if (i < n && s[i] === '%') return { ok: false, error: 'URLDecoder: Incomplete trailing escape (%) pattern' }
      out += Buffer.from(bytes).toString('utf8')
    } else {
      out += c
      i++
    }
  }
  return { ok: true, value: out }
}

/** The moment of a log line's date and time (UTC), as Joda's ISO parser reads `<date>T<time>+00:00`. */
export function accessLogTime(date: string, time: string): { ok: true; ms: number } | { ok: false; failure: Failure } {
  const text = `${date}T${time}+00:00`
  const r = parseIsoDateTime(text)
  if (r.ok) return r
  return { ok: false, failure: inputData('dateTime', `${date} ${time}`, `could not convert access log timestamp: ${r.error}`) }
}

/** Joda's message for text that does not parse at `pos`. */
function formatError(text: string, pos: number): string {
  const sample = text.length <= pos + 32 + 3 ? text : text.slice(0, pos + 32) + '...'
  if (pos <= 0) return `Invalid format: "${sample}"`
  if (pos >= text.length) return `Invalid format: "${sample}" is too short`
  return `Invalid format: "${sample}" is malformed at "${sample.slice(pos)}"`
}

/** An ISO-8601 date-time (`yyyy-MM-dd'T'HH:mm:ss.SSS±HH:mm`, parts optional as Joda's parser allows). */
function parseIsoDateTime(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  let pos = 0
  const take = (re: RegExp): string | undefined => {
    re.lastIndex = pos
    const m = re.exec(text)
    if (!m) return undefined
    pos += m[0].length
    return m[0]
  }
  const fields: Record<string, number> = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 }
  let offsetMin = 0
  const err = () => ({ ok: false as const, error: formatError(text, pos) })
  if (text[0] !== 'T') {
    const y = take(/[-+]?\d{1,9}/y)
    if (y === undefined) return err()
    fields.year = Number(y)
    if (take(/-/y) !== undefined) {
      const mo = take(/\d{1,2}/y)
      if (mo === undefined) return err()
      fields.month = Number(mo)
      if (take(/-/y) !== undefined) {
        const d = take(/\d{1,2}/y)
        if (d === undefined) return err()
        fields.day = Number(d)
      }
    }
  }
  if (take(/T/y) !== undefined) {
    const h = take(/\d{1,2}/y)
    if (h === undefined) return err()
    fields.hour = Number(h)
    if (take(/:/y) !== undefined) {
      const mi = take(/\d{1,2}/y)
      if (mi === undefined) return err()
      fields.minute = Number(mi)
      if (take(/:/y) !== undefined) {
        const s = take(/\d{1,2}/y)
        if (s === undefined) return err()
        fields.second = Number(s)
        if (take(/[.,]/y) !== undefined) {
          const f = take(/\d+/y)
          if (f === undefined) return err()
          fields.ms = Number((f + '00').slice(0, 3))
        }
      }
    }
    if (take(/Z/y) === undefined) {
      const o = take(/[-+]\d{1,2}(?::?\d{2})?/y)
      if (o !== undefined) {
        const digits = o.slice(1).replace(':', '')
        const hh = digits.length > 2 ? digits.slice(0, digits.length - 2) : digits
        const mm = digits.length > 2 ? digits.slice(-2) : '0'
        offsetMin = (o[0] === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm))
      }
    }
  }
  if (pos < text.length) return err()
  const range = (name: string, v: number, lo: number, hi: number) => (v < lo || v > hi ? `Cannot parse "${text}": Value ${v} for ${name} must be in the range [${lo},${hi}]` : undefined)
  const daysIn = new Date(Date.UTC(fields.year!, fields.month!, 0)).getUTCDate()
  const problem =
    range('monthOfYear', fields.month!, 1, 12) ??
    range('dayOfMonth', fields.day!, 1, daysIn) ??
    range('hourOfDay', fields.hour!, 0, 23) ??
    range('minuteOfHour', fields.minute!, 0, 59) ??
    range('secondOfMinute', fields.second!, 0, 59)
  if (problem !== undefined) return { ok: false, error: problem }
  const d = new Date(0)
  d.setUTCFullYear(fields.year!, fields.month! - 1, fields.day!)
  d.setUTCHours(fields.hour!, fields.minute!, fields.second!, fields.ms!)
  const ms = d.getTime() - offsetMin * 60000
  // beyond what a date can hold (about ±275,000 years)
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return { ok: false, error: `Cannot parse "${text}": Value ${fields.year} for year must be in the range [-271821,275760]` }
  return { ok: true, ms }
}
