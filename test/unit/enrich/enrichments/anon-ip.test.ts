/** `anon_ip`: the cases of Snowplow's AnonIpEnrichmentSpec, its properties, and the step in the enricher. */
import { isIPv4, isIPv6 } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import type { EnrichedEvent } from '../../../../lib/core/enrich/event'
import { F } from '../../../../lib/core/enrich/fields'
import { anonymizeIp } from '../../../../lib/core/enrich/enrichments/anon-ip'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { batch, columns, only, payload, resolver } from '../helpers'

const CASES: [string | null, number, number, string | null][] = [
  ['0.23.0.20', 1, 1, '0.23.0.x'],
  ['168.192.102.4', 2, 2, '168.192.x.x'],
  ['54.242.102.43', 3, 3, '54.x.x.x'],
  ['94.15.213.171', 4, 4, 'x.x.x.x'],
  ['777.2', 1, 1, '777.2'],
  ['777.2.23', 4, 4, 'x.x.x'],
  ['999.123.777.2', 3, 3, '999.x.x.x'],
  ['999.aaa.bbb.c', 3, 3, '999.x.x.x'],
  ['hello;goodbye', 3, 3, 'hello;goodbye'],
  [':::::::::::::::', 3, 3, 'x:x:x:x:x:x:x:x'],
  ['::1', 3, 3, '0:0:0:0:0:x:x:x'],
  [null, 2, 2, null],
  ['', 4, 4, 'x'],
  ['4b0c:0:0:0:880c:99a8:4b0:4411', 1, 1, '4b0c:0:0:0:880c:99a8:4b0:x'],
  ['4b0c::880c:99a8:4b0:4411', 2, 2, '4b0c:0:0:0:880c:99a8:x:x'],
  ['2605:2700:0:3:0:0:4713:93e3', 3, 3, '2605:2700:0:3:0:x:x:x'],
  ['2605:2700:0:3::4713:93e3', 4, 4, '2605:2700:0:3:x:x:x:x'],
  ['2605:2700:0:3::4713:93e3', 4, 5, '2605:2700:0:x:x:x:x:x'],
  ['2605:2700:0:3::4713:93e3', 4, 6, '2605:2700:x:x:x:x:x:x'],
  ['2605:2700:0:3::4713:93e3', 4, 7, '2605:x:x:x:x:x:x:x'],
  ['2605:2700:0:3::4713:93e3', 4, 8, 'x:x:x:x:x:x:x:x'],
  ['2605:2700::4713:93e3', 4, 8, 'x:x:x:x:x:x:x:x'],
  ['2700::4713', 4, 8, 'x:x:x:x:x:x:x:x'],
  ['2700:zzzz::gggg', 4, 6, '2700:zzzz:x:x:x:x:x:x'],
  ['f334::40cb:152.16.24.142', 4, 2, 'f334:0:0:0:0:40cb:x:x'],
  ['f334::40cb:152.16.24.142', 4, 4, 'f334:0:0:0:x:x:x:x'],
  ['::192.168.0.1', 4, 1, '0:0:0:0:0:0:c0a8:x'],
  ['::FFFF:152.16.24.123', 2, 4, '::FFFF:152.16.x.x'],
  ['::FFFF:152.16.24.123', 4, 4, '::FFFF:x.x.x.x'],
]

describe('anon_ip', () => {
  it('anonymizes as Snowplow does, malformed addresses included', () => {
    for (const [ip, octets, segments, want] of CASES) expect(anonymizeIp(ip, octets, segments), `${ip} ${octets}/${segments}`).toBe(want)
  })

  it('keeps an oversized value unchanged', () => {
    const big = 'a'.repeat(1_000_000)
    expect(anonymizeIp(big, 4, 6)).toBe(big)
  })

  it('masks exactly N octets of an IPv4 address and N segments of an IPv6 one, still an address once the xs are filled', () => {
    const octet = fc.integer({ min: 0, max: 255 })
    fc.assert(fc.property(fc.tuple(octet, octet, octet, octet), fc.integer({ min: 1, max: 4 }), (parts, n) => {
      const anon = anonymizeIp(parts.join('.'), n, 1)!
      expect(anon.split('').filter((c) => c === 'x')).toHaveLength(n)
      expect(isIPv4(anon.replace(/x/g, '1'))).toBe(true)
    }))
    const group = fc.stringMatching(/^[0-9a-f]{4}$/)
    const full = fc.array(group, { minLength: 8, maxLength: 8 }).map((g) => g.join(':'))
    const short = fc.array(group, { minLength: 2, maxLength: 7 }).map((g) => `${g.slice(0, -1).join(':')}::${g.at(-1)}`)
    fc.assert(fc.property(fc.oneof(full, short), fc.integer({ min: 1, max: 8 }), (ip, n) => {
      const anon = anonymizeIp(ip, 1, n)!
      expect(anon.split('').filter((c) => c === 'x')).toHaveLength(n)
      expect(isIPv6(anon.replace(/x/g, '1'))).toBe(true)
    }))
  })

  it('rewrites user_ipaddress in enriched events; anonSegments defaults to anonOctets', async () => {
    const config = (parameters: unknown) => ({ source: 'anon_ip.json', text: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'anon_ip', enabled: true, parameters } }) })
    for (const [parameters, ip, want] of [[{ anonOctets: 2 }, '175.16.199.12', '175.16.x.x'], [{ anonOctets: 2 }, '2001:db8::1', '2001:db8:0:0:0:0:x:x'], [{ anonOctets: 1, anonSegments: 4 }, '2001:db8::1', '2001:db8:0:0:x:x:x:x']] as const) {
      const r = await loadEnrichmentConfigs([config(parameters)], resolver)
      if (!r.ok) throw new Error(r.errors.join())
      const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
      if (!built.ok) throw new Error(built.errors.join())
      const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
      const o = await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', ipAddress: ip }), batch())
      expect(columns((only(o, 'good')[0] as { tsv: string }).tsv).user_ipaddress).toBe(want)
    }
  })

  it('gives the same address the same answer event after event, as the plain definition does', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'anon_ip', enabled: true, parameters: { anonOctets: 2, anonSegments: 3 } } })
    const r = await loadEnrichmentConfigs([{ source: 'anon_ip.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const step = built.enrichments.find((x) => x.id === 'anon-ip')!
    const ips = [...CASES.map(([ip]) => ip), '10.0.0.1', '2001:db8::1', '10.0.0.1', '::FFFF:152.16.24.123', '']
    for (const ip of [...ips, ...ips]) {
      const ev = { f: { [F.user_ipaddress]: ip } } as unknown as EnrichedEvent
      step.run(ev, {} as never)
      expect(ev.f[F.user_ipaddress]).toBe(anonymizeIp(ip, 2, 3))
    }
  })
})
