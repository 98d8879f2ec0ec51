/**
 * The domain check before a certificate is requested: what the name resolves
 * to (through `FLOE_DNS_SERVERS`, or the system's resolvers), and whether
 * those addresses are this server's.
 */
import { Resolver } from 'node:dns/promises'
import { networkInterfaces } from 'node:os'
import type { DnsServer } from '../../core/https/rules'

/** How long the whole resolution may take. */
const RESOLVE_TIMEOUT_MS = 5_000

export type Resolution = { readonly addresses: readonly string[]; readonly error?: undefined } | { readonly error: string; readonly status: number }

const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'NODATA'])

/** The IPv4 and IPv6 addresses of `domain`; an error (with its status: 502 for a DNS failure, 504 for a timeout) when the servers do not answer. */
export async function resolveDomain(domain: string, servers: readonly DnsServer[]): Promise<Resolution> {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 })
  if (servers.length > 0) resolver.setServers(servers.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)))
  const via = servers.length > 0 ? `the DNS servers ${servers.map((s) => `${s.host}:${s.port}`).join(', ')} (FLOE_DNS_SERVERS)` : "the system's DNS resolvers"
  const one = async (kind: 4 | 6): Promise<{ ok: string[] } | { code: string }> => {
    try {
      return { ok: kind === 4 ? await resolver.resolve4(domain) : await resolver.resolve6(domain) }
    } catch (err) {
      return { code: (err as NodeJS.ErrnoException).code ?? String(err) }
    }
  }
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), RESOLVE_TIMEOUT_MS)
  })
  const answered = await Promise.race([Promise.all([one(4), one(6)]), timeout])
  clearTimeout(timer)
  if (answered === 'timeout') {
    resolver.cancel()
    return { error: `${domain} could not be resolved: ${via} did not answer within ${RESOLVE_TIMEOUT_MS / 1000} s. Nothing was changed.`, status: 504 }
  }
  const addresses = answered.flatMap((r) => ('ok' in r ? r.ok : []))
  const failures = answered.flatMap((r) => ('code' in r && !NO_ADDRESS.has(r.code) ? [r.code] : []))
  if (addresses.length === 0 && failures.length > 0) {
    return { error: `${domain} could not be resolved through ${via}: ${[...new Set(failures)].join(', ')}. Nothing was changed.`, status: 502 }
  }
  return { addresses: [...new Set(addresses)] }
}

/** The addresses of this machine's network interfaces. */
export function interfaceAddresses(): Set<string> {
  const out = new Set<string>()
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.replace(/%.*$/, ''))
  return out
}

/**
 * Whether `address` reaches this server on port 80 (a public address that is
 * not on an interface, behind NAT): GET of the challenge path of a one-time
 * token, answered with `expect` by this server only.
 */
export async function answersAsUs(address: string, token: string, expect: string, port = 80): Promise<boolean> {
  const host = address.includes(':') ? `[${address}]` : address
  try {
    const res = await fetch(`http://${host}:${port}/.well-known/acme-challenge/${token}`, { redirect: 'manual', signal: AbortSignal.timeout(3_000) })
    const body = (await res.text()).slice(0, 1000)
    return res.status === 200 && body === expect
  } catch {
    return false
  }
}
