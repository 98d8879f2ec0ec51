import { describe, expect, it } from 'vitest'
import { addressProblem, certificateHealth, domainProblem, httpsSettings, LETS_ENCRYPT_PRODUCTION, renewalDue } from '../../../lib/core/https/rules'
import { awsDomainAnswer } from '../../../lib/core/https/aws'

const DAY = 24 * 60 * 60 * 1000

describe('the domain submitted for HTTPS', () => {
  it('is normalized, and refused with the reason when a certificate cannot name it', () => {
    expect(domainProblem(' Collector.Acme.COM. ')).toEqual({ domain: 'collector.acme.com' })
    expect(domainProblem('xn--bcher-kva.example')).toEqual({ domain: 'xn--bcher-kva.example' })
    for (const bad of ['localhost', 'not a domain', '-a.com', 'a-.com', 'a..com', '203.0.113.7', 'a.b.1', 'a.c', `${'a'.repeat(64)}.com`, `${'a.'.repeat(130)}com`, 'ab--c.com', 'a_b.com', 'https://acme.com']) {
      expect(domainProblem(bad).problem, bad).toMatch(/is not a domain name/)
    }
    expect(domainProblem('   ').problem).toBe('missing parameter domain_name')
  })
})

describe('the HTTPS settings', () => {
  it('default to Let’s Encrypt on port 443 with the system resolvers', () => {
    expect(httpsSettings({})).toEqual({ ok: true, value: { httpsPort: 443, acmeDirectory: LETS_ENCRYPT_PRODUCTION, acmeEmail: undefined, acmeCaFile: undefined, dnsServers: [], renewBeforeDays: 30 } })
  })
  it('read the DNS servers as host:port', () => {
    const r = httpsSettings({ FLOE_DNS_SERVERS: '127.0.0.1:8053, 10.0.0.2,[::1]:53', FLOE_HTTPS_PORT: '8443', FLOE_ACME_EMAIL: 'ops@acme.com' })
    expect(r).toMatchObject({ ok: true, value: { httpsPort: 8443, acmeEmail: 'ops@acme.com', dnsServers: [{ host: '127.0.0.1', port: 8053 }, { host: '10.0.0.2', port: 53 }, { host: '::1', port: 53 }] } })
  })
  it('that cannot work are refused, each naming its variable', () => {
    const r = httpsSettings({ FLOE_HTTPS_PORT: '0', FLOE_ACME_DIRECTORY: 'http://acme.test/dir', FLOE_ACME_EMAIL: 'nobody', FLOE_DNS_SERVERS: 'dns.google:53,1.2.3.4:99999', FLOE_CERT_RENEW_DAYS: '0' })
    expect(r.ok).toBe(false)
    const errors = (r as { errors: string[] }).errors.join('\n')
    for (const v of ['FLOE_HTTPS_PORT', 'FLOE_ACME_DIRECTORY', 'FLOE_ACME_EMAIL', 'FLOE_CERT_RENEW_DAYS']) expect(errors).toContain(`${v} must`)
    expect(errors.match(/FLOE_DNS_SERVERS must/g)).toHaveLength(2)
  })
})

describe('the address check', () => {
  const ours = new Set(['127.0.0.1', '10.0.0.5'])
  it('passes when every address is this server’s, and says where the name points otherwise', () => {
    expect(addressProblem('a.test', ['10.0.0.5'], ours)).toBeUndefined()
    expect(addressProblem('a.test', ['203.0.113.9'], ours)).toMatch(/^a\.test resolves to 203\.0\.113\.9, which is not an address of this server/)
    expect(addressProblem('a.test', ['10.0.0.5', '203.0.113.9'], ours)).toMatch(/resolves to 203\.0\.113\.9, which is not an address of this server \(besides 10\.0\.0\.5\)/)
    expect(addressProblem('a.test', [], ours)).toMatch(/does not resolve to any address/)
  })
})

describe('renewal and health', () => {
  const now = new Date('2026-01-01T00:00:00Z')
  const state = (daysLeft: number, failed: boolean) => ({
    domain: 'a.test',
    httpsPort: 443,
    certificate: { notBefore: '2025-10-01T00:00:00Z', notAfter: new Date(now.getTime() + daysLeft * DAY).toISOString(), issuer: 'R3' },
    lastError: failed ? { domain: 'a.test', at: now.toISOString(), reason: 'the CA is down', renewal: true } : undefined,
  })
  it('renews within the threshold', () => {
    expect(renewalDue(new Date(now.getTime() + 31 * DAY), now, 30)).toBe(false)
    expect(renewalDue(new Date(now.getTime() + 29 * DAY), now, 30)).toBe(true)
  })
  it('is a /health line when a renewal failed and the certificate expires within 7 days, or has expired', () => {
    expect(certificateHealth(state(20, true), now)).toBeUndefined()
    expect(certificateHealth(state(6, false), now)).toBeUndefined()
    expect(certificateHealth(state(6, true), now)).toMatch(/^the certificate of a\.test expires at .* and its renewal failed: the CA is down$/)
    expect(certificateHealth(state(-1, false), now)).toMatch(/expired at/)
  })
})

describe('the domain form on AWS', () => {
  it('answers with the deploy-time settings: ACM certificate, cdk context, DNS record', () => {
    const a = awsDomainAnswer('collector.acme.com', undefined)
    expect(a).toContain('aws acm request-certificate --domain-name collector.acme.com --validation-method DNS')
    expect(a).toContain('npx cdk deploy --all -c domainName=collector.acme.com -c certificateArn=')
    expect(a).toContain('ApiDomainTarget')
    expect(awsDomainAnswer('collector.acme.com', 'collector.acme.com')).toContain('already deployed with collector.acme.com')
  })
})
