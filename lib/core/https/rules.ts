/**
 * HTTPS of the single instance: the rules behind a domain submitted on the
 * control plane, the settings of the ACME client, when a certificate is
 * renewed and what `/health` says about it. Plain data in, plain data out:
 * the local stack (lib/local/https) does the resolving, the ACME exchange and
 * the serving.
 */

/** Let's Encrypt's production directory (the default of `FLOE_ACME_DIRECTORY`). */
export const LETS_ENCRYPT_PRODUCTION = 'https://acme-v02.api.letsencrypt.org/directory'
/** Let's Encrypt's staging directory: untrusted certificates, generous rate limits. */
export const LETS_ENCRYPT_STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory'

/** Where ACME's HTTP-01 challenge is answered on the HTTP port. */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/'

/** A certificate that failed to renew and expires within this many days makes `/health` answer 503. */
export const EXPIRY_WARNING_DAYS = 7

const DAY_MS = 24 * 60 * 60 * 1000

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * The domain name as submitted, normalized (trimmed, lower case, without a
 * final dot), or why it is not a name a certificate can be issued for: at
 * least two labels, letters, digits and inner hyphens, a top-level label that
 * is not numeric (so no IP address), 253 characters at most.
 */
export function domainProblem(input: string): { domain: string; problem?: undefined } | { problem: string } {
  const domain = input.trim().toLowerCase().replace(/\.$/, '')
  const show = `'${domain.slice(0, 255)}'`
  const example = '(e.g. collector.acme.com)'
  if (domain.length === 0) return { problem: 'missing parameter domain_name' }
  if (domain.length > 253) return { problem: `${show.slice(0, 60)}…' is not a domain name: longer than 253 characters ${example}` }
  const labels = domain.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return { problem: `${show} is not a domain name ${example}` }
  if (!/^[a-z][a-z0-9-]*$/.test(labels.at(-1)!) || labels.at(-1)!.length < 2) {
    return { problem: `${show} is not a domain name: its last label must be a top-level domain such as com (an IP address cannot have a certificate here) ${example}` }
  }
  if (labels.some((l) => l.startsWith('xn--') === false && l.length > 3 && l[2] === '-' && l[3] === '-')) {
    return { problem: `${show} is not a domain name: a label has '--' in 3rd and 4th position without being an xn-- label ${example}` }
  }
  return { domain }
}

export interface DnsServer {
  readonly host: string
  readonly port: number
}

export interface HttpsSettings {
  readonly httpsPort: number
  readonly acmeDirectory: string
  readonly acmeEmail?: string
  /** Path of a PEM file of roots trusted for the ACME directory's own TLS (added to the system's). */
  readonly acmeCaFile?: string
  /** Servers the domain check resolves with; the system's resolvers when empty. */
  readonly dnsServers: readonly DnsServer[]
  /** Renew when the certificate expires within this many days. */
  readonly renewBeforeDays: number
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

/** `host:port`, `[v6]:port`, or a bare address (port 53), each an IP address. */
function dnsServer(s: string): DnsServer | undefined {
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(s)
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(s)
  const m = v6 ?? v4
  if (!m) return undefined
  if (v4 && !IPV4.test(m[1]!)) return undefined
  if (v6 && !m[1]!.includes(':')) return undefined
  const port = m[2] === undefined ? 53 : Number(m[2])
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined
  return { host: m[1]!, port }
}

const EMAIL = /^[^\s@<>(),;:"[\]]{1,64}@[a-z0-9-]+(\.[a-z0-9-]+)+$/i

/**
 * The HTTPS settings of the environment, or every problem with them (each
 * naming its variable). The CA file is only named here: the shell reads it.
 */
export function httpsSettings(env: Readonly<Record<string, string | undefined>>): { ok: true; value: HttpsSettings } | { ok: false; errors: string[] } {
  const errors: string[] = []
  const get = (name: string) => {
    const v = env[name]?.trim()
    return v === undefined || v === '' ? undefined : v
  }
  const portText = get('FLOE_HTTPS_PORT')
  const httpsPort = portText === undefined ? 443 : Number(portText)
  if (!/^\d{1,5}$/.test(portText ?? '443') || httpsPort < 1 || httpsPort > 65535) errors.push(`FLOE_HTTPS_PORT must be a port number from 1 to 65535, got '${portText?.slice(0, 40)}'`)
  const acmeDirectory = get('FLOE_ACME_DIRECTORY') ?? LETS_ENCRYPT_PRODUCTION
  let url: URL | undefined
  try {
    url = new URL(acmeDirectory)
  } catch {
    url = undefined
  }
  if (!url || url.protocol !== 'https:' || acmeDirectory.length > 2000) {
    errors.push(`FLOE_ACME_DIRECTORY must be the https:// URL of an ACME directory (Let's Encrypt: ${LETS_ENCRYPT_PRODUCTION}, staging: ${LETS_ENCRYPT_STAGING}), got '${acmeDirectory.slice(0, 100)}'`)
  }
  const acmeEmail = get('FLOE_ACME_EMAIL')
  if (acmeEmail !== undefined && (acmeEmail.length > 254 || !EMAIL.test(acmeEmail))) errors.push(`FLOE_ACME_EMAIL must be an email address such as ops@acme.com, got '${acmeEmail.slice(0, 100)}'`)
  const dnsText = get('FLOE_DNS_SERVERS')
  const dnsServers: DnsServer[] = []
  if (dnsText !== undefined) {
    const parts = dnsText.split(',').map((s) => s.trim()).filter(Boolean)
    if (parts.length > 8) errors.push(`FLOE_DNS_SERVERS lists at most 8 servers, got ${parts.length}`)
    for (const p of parts.slice(0, 8)) {
      const s = dnsServer(p)
      if (s) dnsServers.push(s)
      else errors.push(`FLOE_DNS_SERVERS must be a comma-separated list of IP addresses with an optional port (127.0.0.1:8053, [::1]:53, 10.0.0.2), got '${p.slice(0, 60)}'`)
    }
  }
  const renewText = get('FLOE_CERT_RENEW_DAYS')
  const renewBeforeDays = renewText === undefined ? 30 : Number(renewText)
  if (!/^\d{1,5}$/.test(renewText ?? '30') || renewBeforeDays < 1 || renewBeforeDays > 36500) errors.push(`FLOE_CERT_RENEW_DAYS must be a whole number of days from 1 to 36500, got '${renewText?.slice(0, 40)}'`)
  if (errors.length) return { ok: false, errors }
  return { ok: true, value: { httpsPort, acmeDirectory, acmeEmail, acmeCaFile: get('FLOE_ACME_CA_FILE'), dnsServers, renewBeforeDays } }
}

/** Whether a certificate valid until `notAfter` is due for renewal at `now`. */
export function renewalDue(notAfter: Date, now: Date, renewBeforeDays: number): boolean {
  return notAfter.getTime() - now.getTime() <= renewBeforeDays * DAY_MS
}

/** What the domain check found: the addresses the name resolves to, and this server's. */
export function addressProblem(domain: string, resolved: readonly string[], ours: ReadonlySet<string>): string | undefined {
  if (resolved.length === 0) return `${domain} does not resolve to any address: create an A (or AAAA) record for it pointing at this server's public address`
  const mine = resolved.filter((a) => ours.has(a))
  if (mine.length === resolved.length) return undefined
  const others = resolved.filter((a) => !ours.has(a))
  return `${domain} resolves to ${others.join(', ')}, which ${others.length === 1 ? 'is not an address' : 'are not addresses'} of this server${mine.length ? ` (besides ${mine.join(', ')})` : ''}: point its DNS records at this server's public address (the certificate authority connects to every address on port 80)`
}

/** The state of HTTPS, as the control plane, the Overview page and the logs show it. */
export interface HttpsState {
  /** The domain served over HTTPS (with a certificate), if any. */
  readonly domain?: string
  readonly httpsPort: number
  /** The origin plain HTTP pages and APIs redirect to, while HTTPS serves. */
  readonly url?: string
  readonly certificate?: { readonly notBefore: string; readonly notAfter: string; readonly issuer: string }
  /** A certificate being obtained: for which domain, since when, at which step. */
  readonly pending?: { readonly domain: string; readonly since: string; readonly step: string }
  /** The last attempt that failed (a new domain, or a renewal), with its reason. */
  readonly lastError?: { readonly domain: string; readonly at: string; readonly reason: string; readonly renewal: boolean }
  readonly lastRenewal?: { readonly at: string; readonly ok: boolean }
  /** Why HTTPS is not served although a certificate is stored (e.g. the port cannot be opened). */
  readonly serving?: boolean
  readonly problem?: string
}

/**
 * The `/health` reason for the certificate, or undefined when it is fine: a
 * renewal failed and the certificate expires within `EXPIRY_WARNING_DAYS`
 * (or has expired), or HTTPS cannot be served.
 */
export function certificateHealth(state: HttpsState, now: Date): string | undefined {
  if (state.problem) return state.problem
  const cert = state.certificate
  if (!cert || !state.domain) return undefined
  const left = new Date(cert.notAfter).getTime() - now.getTime()
  const failed = state.lastError?.renewal === true && state.lastError.domain === state.domain
  if (left <= 0) return `the certificate of ${state.domain} expired at ${cert.notAfter}${failed ? `; renewal failed: ${state.lastError!.reason}` : ''}`
  if (failed && left <= EXPIRY_WARNING_DAYS * DAY_MS) return `the certificate of ${state.domain} expires at ${cert.notAfter} and its renewal failed: ${state.lastError!.reason}`
  return undefined
}
