/**
 * Behaviour that must agree with Snowplow enrich 6.10 case for case, each
 * block from the corresponding Snowplow spec's cases.
 */
import { describe, expect, it } from 'vitest'
import { extractIpAddress } from '../../../lib/core/enrich/payload'

describe('forwarded headers (IpAddressExtractorSpec)', () => {
  const fb = '255.255.255.255'
  const cases: [string, string[], string][] = [
    ['no headers', [], fb],
    ['no X-Forwarded-For header', ['Accept-Charset: utf-8', 'Connection: keep-alive'], fb],
    ['unparseable X-Forwarded-For', ['X-Forwarded-For: localhost'], fb],
    ['good X-Forwarded-For', ['Accept-Charset: utf-8', 'X-Forwarded-For: 129.78.138.66, 129.78.64.103', 'Connection: keep-alive'], '129.78.138.66'],
    ['oddly capitalized name', ['Accept-Charset: utf-8', 'x-FoRwaRdeD-FOr: 129.78.138.66, 129.78.64.103', 'Connection: keep-alive'], '129.78.138.66'],
    ['all colons: fifteen tokens at most', ['X-Forwarded-For: ' + ':'.repeat(30)], ':'.repeat(15)],
    ['extra characters after an IPv4 address', ['X-Forwarded-For: 129.78.138.66abcdefg'], '129.78.138.66'],
    ['extra characters after an IPv6 address', ['X-Forwarded-For: 2001:0db8:85a3:0000:0000:8a2e:0370:7334abcdefg'], '2001:0db8:85a3:0000:0000:8a2e:0370:'],
    ['IPv6', ['X-Forwarded-For: 2001:0db8:85a3:0000:0000:8a2e:0370:7334'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['quoted IPv6', ['X-Forwarded-For: "[2001:0db8:85a3:0000:0000:8a2e:0370:7334]"'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['IPv4 in Forwarded', ['Forwarded: for=129.78.138.66, 129.78.64.103'], '129.78.138.66'],
    ['unquoted IPv6 in Forwarded', ['Forwarded: for=2001:0db8:85a3:0000:0000:8a2e:0370:7334, for=129.78.138.56'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['quoted IPv6 in Forwarded', ['Forwarded: for="[2001:0db8:85a3:0000:0000:8a2e:0370:7334]", "129.78.128.66"'], '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['X-Forwarded-For before Forwarded', ['Forwarded: for=2.2.2.2', 'X-Forwarded-For: 1.1.1.1'], '1.1.1.1'],
    ['port removed (IPv4)', ['X-Forwarded-For: 1.1.1.1:8080'], '1.1.1.1'],
    ['port removed (IPv6)', ['X-Forwarded-For: [1fff:0:a88:85a3::ac1f]:8001'], '1fff:0:a88:85a3::ac1f'],
    ['oversized invalid value', ['X-Forwarded-For: ' + 'a'.repeat(1_000_000)], fb],
  ]
  it.each(cases)('%s', (_, headers, expected) => {
    expect(extractIpAddress(headers, fb)).toBe(expected)
  })

  it('on malformed values, gives what the rule gives', () => {
    // a hex group longer than four digits is not a token; a dotted quad needs four numbers
    expect(extractIpAddress(['X-Forwarded-For: 12345'], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For: 1.2.3'], fb)).toBe('1.2.3')
    expect(extractIpAddress(['X-Forwarded-For: 999.1.1.1'], fb)).toBe('999.1.1.1')
    expect(extractIpAddress(['X-Forwarded-For: ::ffff:1.2.3.4'], fb)).toBe('::ffff:1.2.3.4')
    expect(extractIpAddress(['X-Forwarded-For: beef_1'], fb)).toBe(fb)
    // exactly one space after the colon
    expect(extractIpAddress(['X-Forwarded-For:  1.2.3.4'], fb)).toBe(fb)
    expect(extractIpAddress(['X-Forwarded-For:1.2.3.4'], fb)).toBe(fb)
    expect(extractIpAddress(['Forwarded: for= 1.2.3.4'], fb)).toBe(fb)
    // a line break anywhere means no match
    expect(extractIpAddress(['X-Forwarded-For: 1.2.3.4\r\nX: y'], fb)).toBe(fb)
    // a Forwarded address is forgotten when a later header does not match
    expect(extractIpAddress(['Forwarded: for=2.2.2.2', 'Host: a'], fb)).toBe(fb)
    expect(extractIpAddress(['Host: a', 'Forwarded: for=2.2.2.2'], fb)).toBe('2.2.2.2')
    expect(extractIpAddress(['Forwarded: for=2.2.2.2', 'X-Forwarded-For: unknown'], fb)).toBe(fb)
  })
})
