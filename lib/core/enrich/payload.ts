/**
 * Stream record → collector payloads, as enrich's loader reads them: optional
 * gzip framing of compressed stream records, Thrift decode, schema and path checks, query string,
 * network user id and client IP. Problems are returned as data
 * (collector_payload_format_violation messages).
 */
import { gunzipSync } from 'node:zlib'
import { Decompress as ZstdStream } from 'fzstd'
import { decodeCollectorPayload, type DecodedCollectorPayload } from '../thrift/collector-payload'
import { parseIgluUri } from '../iglu/keys'
import { isUuid } from './convert'
import { parseQuery, type NameValue } from './querystring'
import { memo } from './memo'

/** A CPFormat message: a fallback text or a field problem. */
export type CPFormatMessage =
  | { readonly error: string }
  | { readonly payloadField: string; readonly value: string | null; readonly expectation: string }

/** A collector payload enrich can work with. */
export interface LoadedPayload {
  readonly vendor: string
  readonly version: string
  readonly querystring: readonly NameValue[]
  readonly contentType: string | null
  readonly body: string | null
  readonly collector: string | null
  readonly encoding: string
  readonly hostname: string | null
  /** Collector time, epoch ms. */
  readonly timestamp: number
  /** The client IP: from X-Forwarded-For / Forwarded headers, else the collector's. */
  readonly ipAddress: string | null
  readonly userAgent: string | null
  readonly refererUri: string | null
  readonly headers: readonly string[]
  readonly networkUserId: string | null
}

export type LoadResult =
  | { ok: true; payload: LoadedPayload }
  | { ok: false; loader: string; messages: CPFormatMessage[] }

const SCHEMA_CRITERION = 'iglu:com.snowplowanalytics.snowplow/CollectorPayload/thrift/1-0-*'
const PATH_RE = /^\/?([^/]+)\/([^/]+)\/?$/

/** The last schema URI accepted (every record of a stream carries the same one). */
let acceptedUri = ''

function acceptedSchema(uri: string): boolean {
  if (uri === acceptedUri) return true
  const key = parseIgluUri(uri)
  const ok =
    key.ok &&
    key.value.vendor === 'com.snowplowanalytics.snowplow' &&
    key.value.name === 'CollectorPayload' &&
    key.value.format === 'thrift' &&
    key.value.version.model === 1 &&
    key.value.version.revision === 0
  if (ok) acceptedUri = uri
  return ok
}

/** `(/)vendor/version(/)` of recent paths (a handful of paths carry nearly every request). */
const pathCache = new Map<string, readonly [string, string] | null>()

/** The last path split: the same path recurs record after record, and comparing is cheaper than hashing. */
let lastPath = ''
let lastParts: readonly [string, string] | null = null

function splitPath(path: string): readonly [string, string] | null {
  const m = PATH_RE.exec(path)
  return m ? [m[1]!, m[2]!] : null
}

function pathParts(path: string): readonly [string, string] | null {
  if (path === lastPath) return lastParts
  const r = memo(pathCache, path, 256, splitPath)
  lastPath = path
  lastParts = r
  return r
}

/** Loads one Thrift CollectorPayload (an uncompressed record or one element of a compressed one). */
export function loadThrift(bytes: Uint8Array): LoadResult {
  const d = decodeCollectorPayload(bytes)
  if (!d.ok) return { ok: false, loader: 'thrift', messages: [{ error: `error deserializing raw event: ${d.error}` }] }
  return fromDecoded(d.payload)
}

export function fromDecoded(p: DecodedCollectorPayload): LoadResult {
  const messages: CPFormatMessage[] = []
  if (p.schema === undefined || !acceptedSchema(p.schema)) {
    return { ok: false, loader: 'thrift', messages: [{ error: `verifying record as ${SCHEMA_CRITERION} failed: found ${p.schema ?? 'null'}` }] }
  }
  const encoding = p.encoding ?? 'UTF-8'
  let querystring: NameValue[] = []
  if (p.querystring !== undefined && p.querystring !== null) {
    const q = parseQuery(p.querystring, encoding)
    if (q.ok) querystring = q.pairs
    else messages.push({ payloadField: 'querystring', value: p.querystring, expectation: q.error })
  }
  let vendor = ''
  let version = ''
  if (p.path === undefined || p.path === null) {
    messages.push({ payloadField: 'path', value: null, expectation: 'request does not contain a path' })
  } else {
    const m = pathParts(p.path)
    if (m) {
      vendor = m[0]
      version = m[1]
    } else if (p.path.startsWith('/ice.png') || p.path === '/i' || p.path.startsWith('/i?')) {
      vendor = 'com.snowplowanalytics.snowplow'
      version = 'tp1'
    } else {
      messages.push({ payloadField: 'path', value: p.path, expectation: 'path does not match (/)vendor/version(/) nor is a legacy /i(ce.png) request' })
    }
  }
  if (p.networkUserId !== undefined && p.networkUserId !== null && !isUuid(p.networkUserId)) {
    messages.push({ payloadField: 'networkUserId', value: p.networkUserId, expectation: 'not valid UUID' })
  }
  if (messages.length > 0) return { ok: false, loader: 'thrift', messages }
  const headers = p.headers ?? []
  return {
    ok: true,
    payload: {
      vendor,
      version,
      querystring,
      contentType: p.contentType ?? null,
      body: p.body ?? null,
      collector: p.collector ?? null,
      encoding,
      hostname: p.hostname ?? null,
      timestamp: p.timestamp ?? 0,
      ipAddress: extractIpAddress(headers, p.ipAddress ?? null),
      userAgent: p.userAgent ?? null,
      refererUri: p.refererUri ?? null,
      headers,
      networkUserId: p.networkUserId ?? null,
    },
  }
}

const XFF = 'x-forwarded-for: '
const FWD = 'forwarded: for='
/** Characters a regular expression's `.` does not match: a header holding one matches no forwarding rule. */
const LINE_TERMINATOR = /[\n\r\u0085\u2028\u2029]/
const IPV4_AT_START = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/

const isWordChar = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 95
const isHexChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 102)

/**
 * The address at `from` in a lower-cased header, by Snowplow's rule: after
 * an optional `"` and `[`, a dotted quad of one- to three-digit numbers;
 * else one to fifteen tokens, each `.`, `:` or a word-bounded group of one
 * to four hex digits (so `[2001:db8::1]:8001` gives `2001:db8::1`, and a
 * value that starts with neither gives nothing). Linear in the header's length.
 */
function forwardedAddress(h: string, from: number): string | undefined {
  let i = from
  if (h.charCodeAt(i) === 34) i++ // "
  if (h.charCodeAt(i) === 91) i++ // [
  const v4 = IPV4_AT_START.exec(h.slice(i, i + 15))
  if (v4) return v4[0]
  let j = i
  for (let tokens = 0; tokens < 15; tokens++) {
    const c = h.charCodeAt(j)
    if (c === 46 || c === 58) {
      j++
      continue
    }
    // a hex group: a word boundary before it, one to four hex digits, and a non-word character (or the end) after
    if (!isHexChar(c) || (j > 0 && isWordChar(h.charCodeAt(j - 1)))) break
    let r = j
    while (r < h.length && r - j <= 4 && isHexChar(h.charCodeAt(r))) r++
    if (r - j > 4 || (r < h.length && isWordChar(h.charCodeAt(r)))) break
    j = r
  }
  return j > i ? h.slice(i, j) : undefined
}

/**
 * The client IP, as Snowplow's collectors' headers give it: the first
 * `X-Forwarded-For: <ip>` header that holds an address wins; a
 * `Forwarded: for=<ip>` is remembered, but forgotten when a later header
 * holds no address; else the collector's address. Names are matched in any
 * case, with exactly one space after the colon, as Snowplow matches them.
 */
export function extractIpAddress(headers: readonly string[], fallback: string | null): string | null {
  let forwarded: string | undefined
  for (const h of headers) {
    // only headers starting with x or f can match: the others just reset `forwarded`
    const c0 = h.charCodeAt(0) | 0x20
    if (c0 !== 120 && c0 !== 102) {
      forwarded = undefined
      continue
    }
    const lower = h.toLowerCase()
    const prefix = lower.startsWith(XFF) ? XFF : lower.startsWith(FWD) ? FWD : undefined
    const ip = prefix && !LINE_TERMINATOR.test(lower) ? forwardedAddress(lower, prefix.length) : undefined
    if (ip && prefix === XFF) return ip
    forwarded = ip
  }
  return forwarded ?? fallback
}

/** gzip and zstd magic numbers of compressed stream records. */
export function compression(bytes: Uint8Array): 'gzip' | 'zstd' | undefined {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip'
  if (bytes.length >= 4 && bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd) return 'zstd'
  return undefined
}

export const DECOMPRESSOR = 'floe.enrich.Decompressor'

/**
 * A compressed record's payloads, read in order as Snowplow's decompressor
 * reads them: a payload over the size limit is skipped and reported by size
 * (`oversized`), and the ones after it are still read; a record that is
 * corrupt or has an unknown header stops where the problem is (`failure`),
 * keeping the payloads read before it.
 */
export interface Unpacked {
  readonly payloads: Uint8Array[]
  readonly oversized: number[]
  readonly failure?: string
  /** The record decompresses to more than `MAX_DECOMPRESSED_BYTES`: at least this many bytes (decompression stopped there, nothing read). */
  readonly tooLarge?: number
}

/**
 * The most a compressed record may decompress to: a stream record is at most
 * 1 MB compressed (10 MiB on Kinesis at most) and holds payloads of at most
 * `maxBytesSinglePayload` (10 MB by default). Decompression stops as soon
 * as it passes this, so a bomb costs at most this much memory and the time to
 * inflate it (tens of milliseconds), whatever it would unpack to.
 */
export const MAX_DECOMPRESSED_BYTES = 32 * 1024 * 1024

/**
 * `bytes` decompressed, or `tooLarge` (a lower bound of the size) as soon as
 * the output passes `max`, with no more than `max` bytes ever held. Corrupt
 * input throws.
 */
export function inflate(bytes: Uint8Array, kind: 'gzip' | 'zstd', max = MAX_DECOMPRESSED_BYTES): { data: Buffer } | { tooLarge: number } {
  if (kind === 'zstd') {
    const declared = zstdDeclaredSizes(bytes)
    if (declared !== 'corrupt' && declared.some((n) => n > max)) return { tooLarge: Math.max(...declared) }
    const data = zstdDecompress(bytes, max)
    return data === undefined ? { tooLarge: max + 1 } : { data }
  }
  try {
    // zlib inflates into 16 KB chunks and stops at the first one past maxOutputLength
    return { data: gunzipSync(bytes, { maxOutputLength: max }) }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return { tooLarge: max + 1 }
    throw err
  }
}

/**
 * zstd-decompresses `bytes` (every frame), in small steps so that the
 * output is counted as it grows: a record that would decompress beyond
 * `max` stops there (undefined) instead of exhausting memory. Corrupt input throws.
 */
export function zstdDecompress(bytes: Uint8Array, max = MAX_DECOMPRESSED_BYTES): Buffer | undefined {
  // a frame that declares more than `max` is refused before the decoder allocates it
  const declared = zstdDeclaredSizes(bytes)
  if (declared === 'corrupt') throw new Error('corrupt zstd frame')
  if (declared.some((n) => n > max)) return undefined
  const chunks: Uint8Array[] = []
  let total = 0
  let over = false
  const stream = new ZstdStream((data) => {
    total += data.length
    if (total > max) over = true
    else chunks.push(Uint8Array.from(data)) // the decoder reuses its window
  })
  // at most 1 KB of input per step: even RLE blocks (4 bytes for up to 128 KB each) give at most 32 MB per step
  const STEP = 1024
  for (let i = 0; i < bytes.length && !over; i += STEP) stream.push(bytes.subarray(i, Math.min(bytes.length, i + STEP)), i + STEP >= bytes.length)
  if (bytes.length === 0) stream.push(bytes, true)
  return over ? undefined : Buffer.concat(chunks)
}

/**
 * The content sizes the zstd frames of `bytes` declare (frames that do not
 * declare one are left out), read from the frame headers while walking the
 * blocks; 'corrupt' when the framing does not hold together. Skippable
 * frames are skipped.
 */
export function zstdDeclaredSizes(bytes: Uint8Array): number[] | 'corrupt' {
  const sizes: number[] = []
  const u32 = (at: number) => (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)) + bytes[at + 3]! * 2 ** 24
  let pos = 0
  while (pos < bytes.length) {
    if (pos + 8 <= bytes.length && (u32(pos) & 0xfffffff0) >>> 0 === 0x184d2a50) {
      pos += 8 + u32(pos + 4) // skippable frame
      continue
    }
    if (pos + 5 > bytes.length || u32(pos) !== 0xfd2fb528) return 'corrupt'
    const fhd = bytes[pos + 4]!
    const single = (fhd >> 5) & 1
    const fcsBytes = [single, 2, 4, 8][fhd >> 6]!
    pos += 5 + (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3]!
    if (pos + fcsBytes > bytes.length) return 'corrupt'
    if (fcsBytes > 0) {
      let n = 0
      for (let i = fcsBytes - 1; i >= 0; i--) n = n * 256 + bytes[pos + i]!
      sizes.push(fcsBytes === 2 ? n + 256 : n)
    }
    pos += fcsBytes
    for (;;) {
      if (pos + 3 > bytes.length) return 'corrupt'
      const h = bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16)
      const type = (h >> 1) & 3
      if (type === 3) return 'corrupt'
      pos += 3 + (type === 1 ? 1 : h >>> 3)
      if (h & 1) break
    }
    if ((fhd >> 2) & 1) pos += 4 // content checksum
    if (pos > bytes.length) return 'corrupt'
  }
  return sizes
}

/**
 * A compressed record (gzip or zstd, as Snowplow's collectors and enrich
 * write them): decompressed, header bytes `1, 1`, then
 * `[i32 length][Thrift payload]` until the end.
 */
export function unpackCompressed(bytes: Uint8Array, kind: 'gzip' | 'zstd', maxBytesSinglePayload = 10_000_000, maxDecompressed = MAX_DECOMPRESSED_BYTES): Unpacked {
  const payloads: Uint8Array[] = []
  const oversized: number[] = []
  const corrupt = { payloads, oversized, failure: 'corrupt compressed payload' }
  let data: Buffer
  try {
    const r = inflate(bytes, kind, maxDecompressed)
    if ('tooLarge' in r) return { payloads, oversized, tooLarge: r.tooLarge }
    data = r.data
  } catch {
    return corrupt
  }
  if (data.length < 2) return corrupt
  if (data[0] !== 1 || data[1] !== 1) return { payloads, oversized, failure: `Unsupported versions in compressed record header: ${data[0]}, ${data[1]}` }
  let pos = 2
  while (pos < data.length) {
    if (pos + 4 > data.length) return corrupt
    const len = data.readInt32BE(pos)
    pos += 4
    if (len > maxBytesSinglePayload) {
      oversized.push(len)
      pos += len
      continue
    }
    if (len < 0 || pos + len > data.length) return corrupt
    payloads.push(data.subarray(pos, pos + len))
    pos += len
  }
  return { payloads, oversized }
}
