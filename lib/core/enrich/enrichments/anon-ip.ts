/**
 * `anon_ip`: replaces the last `anonOctets` octets of an IPv4 `user_ipaddress`
 * (or the last `anonSegments` segments of an IPv6 one, written out in full)
 * with `x`. Runs after the enrichments that need the real address.
 */
import { isIPv4, isIPv6 } from 'node:net'
import { F } from '../fields'
import type { Enrichment } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'

const MASK = 'x'
/** Addresses whose anonymized form is remembered. */
const MEMO_SIZE = 4_096

/** Splits as Java's `String.split` does: trailing empty parts are dropped (an input without the separator is kept whole). */
function javaSplit(s: string, sep: string): string[] {
  const parts = s.split(sep)
  if (parts.length === 1) return parts
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

/** IPv6 groups: the first `keep` kept, padded with the mask to `total`. */
function maskParts(parts: string[], keep: number, total: number): string {
  const out = parts.slice(0, Math.max(0, keep))
  while (out.length < total) out.push(MASK)
  return out.join(':')
}

function maskV4(ip: string, octets: number): string {
  const parts = javaSplit(ip, '.')
  const out = parts.slice(0, Math.max(0, 4 - octets))
  while (out.length < parts.length) out.push(MASK)
  return out.join('.')
}

/** An IPv6 address as 8 hex groups, lower case, no leading zeros, no `::` (an embedded IPv4 tail as two groups). */
export function fullIPv6(ip: string): string {
  let s = ip.toLowerCase().replace(/%.*$/, '')
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number]
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = s.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16).toString(16)).join(':')
}

/** The anonymized address (null stays null), by Snowplow's rules including those for malformed values. */
export function anonymizeIp(ip: string | null, octets: number, segments: number): string | null {
  if (ip === null) return null
  if (isIPv4(ip) || (isIPv6(ip) && /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip))) {
    // IPv4, including an IPv4-mapped IPv6 address (whose `::FFFF:` prefix is kept as written)
    return ip.startsWith('::FFFF:') ? `::FFFF:${maskV4(ip.slice(7), octets)}` : maskV4(ip, octets)
  }
  if (isIPv6(ip)) return maskParts(fullIPv6(ip).split(':'), 8 - segments, 8)
  if (ip.includes('.') || ip === '') return maskV4(ip, octets)
  if (ip.includes(':')) return maskParts(javaSplit(ip, ':'), 8 - segments, 8)
  return ip
}

export const anonIp: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'anon_ip',
  models: [1],
  create(config): Enrichment {
    const p = config.parameters
    const octets = Number(p.anonOctets)
    const segments = p.anonSegments === undefined ? octets : Number(p.anonSegments)
    if (!Number.isInteger(octets) || octets < 1 || octets > 4) throw new ConfigError(`anonOctets must be a whole number from 1 to 4, got ${JSON.stringify(p.anonOctets)}`)
    if (!Number.isInteger(segments) || segments < 1 || segments > 8) throw new ConfigError(`anonSegments must be a whole number from 1 to 8, got ${JSON.stringify(p.anonSegments)}`)
    // The same addresses recur batch after batch: their answers (`anonymizeIp`, a pure function) are kept.
    const seen = new Map<string, string | null>()
    return {
      id: 'anon-ip',
      order: ORDER.anonIp,
      run(ev) {
        const ip = ev.f[F.user_ipaddress] as string | null
        if (ip === null) return {}
        let masked = seen.get(ip)
        if (masked === undefined) {
          masked = anonymizeIp(ip, octets, segments)
          if (seen.size >= MEMO_SIZE) seen.clear()
          if (ip.length <= 64) seen.set(ip, masked)
        }
        ev.f[F.user_ipaddress] = masked
        return {}
      },
    }
  },
}
